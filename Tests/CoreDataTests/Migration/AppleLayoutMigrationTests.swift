import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Issue 22: a store in Apple's layout, with the history Apple's names carry (columns appended by
/// an earlier migration, `1`-suffixed join columns, tables named after either side:
/// ``AppleLayoutFixture``), migrates to a new version in place and through a migration manager,
/// and every value and relationship reads back.
@Suite("Migration: stores laid out by Apple's framework")
struct AppleLayoutMigrationTests {
    /// Version 2 of the fixture's model: Note gains an optional `archived`, User's `name` is
    /// renamed `handle` (renaming identifier `name`).
    static func version2() -> NSManagedObjectModel {
        let model = AppleLayoutFixture.makeModel()
        let note = model.entitiesByName["Note"]!
        note.properties = note.properties.filter { $0.entity === note } + [attribute("archived", .booleanAttributeType)] // its own, not Item's
        let name = model.entitiesByName["User"]!.attributesByName["name"]!
        name.name = "handle"
        name.renamingIdentifier = "name"
        return model
    }

    /// What the fixture's rows read as in version 2 (`url` is a TestStack's `Test.sqlite`).
    static func expectFixtureData(at url: URL, _ model: NSManagedObjectModel) throws {
        let stack = try TestStack(model: model, directory: url.deletingLastPathComponent())
        func fetch(_ entity: String, by key: String) throws -> [NSManagedObject] {
            try stack.fetch(entity) { $0.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)] }
        }
        let notes = try fetch("Note", by: "title")
        #expect(notes.map { $0.value(forKey: "title") as? String } == ["Groceries", "Ideas"])
        #expect(notes.allSatisfy { $0.value(forKey: "archived") == nil })
        #expect(notes.map { ($0.value(forKey: "account") as? NSManagedObject)?.value(forKey: "name") as? String } == ["Work", "Work"])
        let folder = try #require(try fetch("Folder", by: "title").first)
        #expect(folder.value(forKey: "title") as? String == "Home")
        // The ordered notes of the folder keep their order (Ideas first, as Z_FOK_FOLDER says).
        #expect((folder.value(forKey: "notes") as? NSOrderedSet)?.array.map { ($0 as? NSManagedObject)?.value(forKey: "title") as? String } == ["Ideas", "Groceries"])
        let users = try fetch("User", by: "handle")
        #expect(users.map { $0.value(forKey: "handle") as? String } == ["ann", "bob", "cy"])
        func handles(_ value: Any?) -> [String] {
            ((value as? Set<NSManagedObject>) ?? []).compactMap { $0.value(forKey: "handle") as? String }.sorted()
        }
        #expect(handles(users[0].value(forKey: "ignoredClients")) == ["bob"])
        #expect(handles(users[1].value(forKey: "friends")) == ["cy"] && handles(users[2].value(forKey: "friends")) == ["bob"])
        let message = try #require(try fetch("Message", by: "text").first)
        #expect(handles(message.value(forKey: "users")) == ["ann", "bob"])
        #expect((message.value(forKey: "attachment") as? NSManagedObject)?.value(forKey: "title") as? String == "Groceries")
        try stack.coordinator.remove(stack.coordinator.persistentStores[0])
    }

    @Test func inPlaceThroughTheInferredMapping() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Test.sqlite") // TestStack's file name
        let source = AppleLayoutFixture.makeModel()
        try AppleLayoutFixture.write(to: url, model: source)
        try SQLiteLightweightMigration.migrateStore(at: url, from: source, to: Self.version2())
        try Self.expectFixtureData(at: url, Self.version2())
        withExtendedLifetime(folder) {}
    }

    @Test func throughAMigrationManagerIntoTheStore() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Test.sqlite") // TestStack's file name
        let source = AppleLayoutFixture.makeModel()
        try AppleLayoutFixture.write(to: url, model: source)
        let destination = Self.version2()
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
        try SQLiteHeavyweightMigration.migrateStore(at: url, options: nil, from: source, to: destination, mapping: mapping, progress: nil)
        // Apple's join tables are gone; the new store's names are in their place.
        let tables = try RawSQLite.query(url.path, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap { $0.first ?? nil }
        #expect(!tables.contains("Z_9USERS") && tables.contains("ZNOTE") == false && tables.contains("ZITEM"))
        try Self.expectFixtureData(at: url, destination)
        withExtendedLifetime(folder) {}
    }
}
