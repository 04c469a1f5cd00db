import CoreDataExamples
import Foundation
import Synchronization
import Testing
@testable import CoreData
import TestSupport

/// `coredata migrate STORE --model PATH.xcdatamodeld [--to VERSION] [--dry-run]` (`StoreMigrationTool`).
@Suite("coredata migrate")
struct StoreMigrationToolTests {
    /// `Items.xcdatamodeld`: `Items` (Item: name, n), `Items 2` (n renamed count, non-optional,
    /// default 0; flag added; a new entity Tag), current version `Items 2`.
    static func writeBundle(in folder: URL) throws -> URL {
        let name = #"<attribute name="name" optional="YES" attributeType="String"/>"#
        return try XcodeModelFiles.writeBundle("Items", in: folder, versions: [
            ("Items", XcodeModelFiles.entity("Item", [name, #"<attribute name="n" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>"#])),
            ("Items 2", XcodeModelFiles.entity("Item", [name,
                #"<attribute name="count" attributeType="Integer 64" defaultValueString="0" renamingIdentifier="n" usesScalarValueType="YES"/>"#,
                #"<attribute name="flag" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>"#])
                + XcodeModelFiles.entity("Tag", [#"<attribute name="label" optional="YES" attributeType="String"/>"#])),
        ], current: "Items 2")
    }

    /// A store written by version `Items` in `folder` (`Test.sqlite`) with two items, one without `n`.
    static func writeStore(in folder: URL, bundle: URL) throws -> URL {
        let model = try #require(NSManagedObjectModel(contentsOf: bundle.appendingPathComponent("Items.xcdatamodel")))
        let stack = try TestStack(model: model, directory: folder)
        stack.insert("Item", ["name": "a", "n": 5])
        stack.insert("Item", ["name": "b"])
        try stack.context.save()
        try stack.coordinator.remove(stack.coordinator.persistentStores[0])
        return stack.url
    }

    @Test func planSaysWhichVersionsAndWhatIsInferredAndMigrateDoesIt() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeBundle(in: folder.url)
        let url = try Self.writeStore(in: folder.url, bundle: bundle)
        let before = try Data(contentsOf: url)
        let tool = StoreMigrationTool(store: url, model: bundle)
        let plan = try tool.plan().split(separator: "\n").map(String.init)
        #expect(plan.contains("Written by version: Items") && plan.contains("Migrate to version: Items 2"), "\(plan)")
        #expect(plan.contains("      count ← $source.n (its default where nil)") && plan.contains("      + flag (new: its default value, or nil)"), "\(plan)")
        #expect(plan.contains("  + Tag (new entity)"), "\(plan)")
        #expect(try Data(contentsOf: url) == before) // a plan changes nothing

        #expect(try tool.migrate().hasPrefix("Migrated \(url.path) from version Items to Items 2 in "))
        #expect(try RawSQLite.query(url.path, "SELECT ZNAME, ZCOUNT FROM ZITEM ORDER BY Z_PK") == [["a", "5"], ["b", "0"]])
        #expect(try tool.plan().contains("Nothing to migrate: the store is at that version."))
        #expect(try tool.migrate().hasPrefix("Nothing to migrate"))
    }

    @Test(PostgreSQLTestDatabase.skipUnlessServer())
    func aPostgreSQLStoreIsPlannedAndMigratedByItsURL() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeBundle(in: folder.url)
        let model = try #require(NSManagedObjectModel(contentsOf: bundle.appendingPathComponent("Items.xcdatamodel")))
        let stack = try TestStack(.postgreSQL, model: model)
        stack.insert("Item", ["name": "a", "n": 5])
        stack.insert("Item", ["name": "b"])
        try stack.context.save()
        try stack.coordinator.remove(stack.coordinator.persistentStores[0])
        let tool = StoreMigrationTool(store: stack.url, model: bundle)
        let plan = try tool.plan()
        #expect(plan.contains("Written by version: Items") && plan.contains("Migrate to version: Items 2"), "\(plan)")
        #expect(try stack.rawRows("SELECT \"ZNAME\", \"ZN\" FROM \"ZITEM\" ORDER BY \"Z_PK\"") == [["a", "5"], ["b", nil]]) // a plan changes nothing
        let report = try tool.migrate()
        #expect(report.contains("from version Items to Items 2"), "\(report)")
        #expect(try stack.rawRows("SELECT \"ZNAME\", \"ZCOUNT\" FROM \"ZITEM\" ORDER BY \"Z_PK\"") == [["a", "5"], ["b", "0"]])
        #expect(try tool.migrate().hasPrefix("Nothing to migrate"))
    }

    @Test func unknownVersionsAreErrorsAndTheStoreIsLeftAlone() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeBundle(in: folder.url)
        let url = try Self.writeStore(in: folder.url, bundle: bundle)
        let before = try Data(contentsOf: url)
        let missing = #expect(throws: NSError.self) { try StoreMigrationTool(store: url, model: bundle, to: "Items 9").migrate() }
        #expect(missing?.localizedDescription.contains("has no version named 'Items 9' (it has Items, Items 2)") == true)
        try FileManager.default.removeItem(at: bundle.appendingPathComponent("Items.xcdatamodel"))
        let orphan = #expect(throws: NSError.self) { try StoreMigrationTool(store: url, model: bundle).plan() }
        #expect(orphan?.code == NSMigrationMissingSourceModelError)
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func migrateReportsItsProgressEndingAtOne() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeBundle(in: folder.url)
        let url = try Self.writeStore(in: folder.url, bundle: bundle)
        let fractions = Mutex<[Double]>([])
        _ = try StoreMigrationTool(store: url, model: bundle).migrate { fraction in fractions.withLock { $0.append(fraction) } }
        let seen = fractions.withLock { $0 }
        #expect(seen.last == 1 && seen.allSatisfy { (0...1).contains($0) }, "\(seen)")
        #expect(try RawSQLite.query(url.path, "SELECT ZNAME, ZCOUNT FROM ZITEM ORDER BY Z_PK") == [["a", "5"], ["b", "0"]])
    }

    @Test func theProgressBar() {
        #expect(StoreMigrationTool.progressBar(0, width: 4) == "[····]   0%")
        #expect(StoreMigrationTool.progressBar(0.5, width: 4) == "[##··]  50%")
        #expect(StoreMigrationTool.progressBar(1, width: 4) == "[####] 100%")
        #expect(StoreMigrationTool.progressBar(.nan, width: 4) == "[····]   0%")
    }
}

extension StoreMigrationToolTests {
    typealias H = HeavyweightMigrationTests

    @Test func aMappingModelInTheMappingFolderIsPlannedThenRunWithItsPoliciesAndProgress() throws {
        let folder = try TemporaryFolder()
        let bundle = try H.writeNotes(in: folder.url)
        let mappings = folder.url.appendingPathComponent("mappings", isDirectory: true)
        try FileManager.default.createDirectory(at: mappings, withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: folder.url.appendingPathComponent("NotesV1ToV2.xcmappingmodel"),
                                         to: mappings.appendingPathComponent("NotesV1ToV2.xcmappingmodel"))
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        try H.writeVersion1Store(at: url, bundle: bundle, people: 3)
        let before = try Data(contentsOf: url)

        // Not beside the model: only inference, which would lose what the policy computes.
        #expect(try StoreMigrationTool(store: url, model: bundle).plan().contains("Inferred mapping (lightweight migration, in place):"))
        let tool = StoreMigrationTool(store: url, model: bundle, mappingFolder: mappings)
        let plan = try tool.plan().split(separator: "\n").map(String.init)
        let policy = String(reflecting: NotesPolicy.self)
        #expect(plan.contains("Mapping model (heavyweight migration into a new file, then moved into the store):"), "\(plan)")
        #expect(plan.contains("  Attachment (policy \(policy))") && plan.contains("  + Tag (new entity)")
                && plan.contains("  - Draft (removed, its rows deleted)"), "\(plan)")
        #expect(plan.contains(#"      bonusPoints ← FUNCTION($entityPolicy, "toInt16WithValue:" , $source.bonusPoints)"#), "\(plan)")
        // New where the source has no such property; copied (not listed) where it has.
        #expect(plan.contains("      + createdAt (new: its default value, or nil)") && !plan.contains { $0.contains("+ notes") }, "\(plan)")
        #expect(try Data(contentsOf: url) == before)

        let fractions = Mutex<[Double]>([])
        #expect(try tool.migrate { fraction in fractions.withLock { $0.append(fraction) } }.hasPrefix("Migrated \(url.path) from version Notes to Notes 2 in "))
        let seen = fractions.withLock { $0 }
        #expect(seen.last == 1 && seen.allSatisfy { (0...1).contains($0) }, "\(seen)")
        try H.open(url, try H.model(bundle, "Notes 2"), options: nil) { try H.expectMigratedThroughTheMapping($0) }
        #expect(try H.files(besides: url) == [".Notes_SUPPORT", "Notes.sqlite"])

        let missing = #expect(throws: NSError.self) {
            try StoreMigrationTool(store: url, model: bundle, mappingFolder: folder.url.appendingPathComponent("none")).plan()
        }
        #expect(missing?.code == NSFileReadNoSuchFileError)
    }

    @Test func aMappingFolderWithoutTheVersionsMappingIsRefusedNotInferred() throws {
        let folder = try TemporaryFolder()
        let bundle = try H.writeNotes(in: folder.url)
        let mapping = folder.url.appendingPathComponent("NotesV1ToV2.xcmappingmodel")
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        try H.writeVersion1Store(at: url, bundle: bundle, people: 3)
        let before = try Data(contentsOf: url)
        // A folder holding no mapping of the two versions: refused (it ran the inferred
        // migration, dropping what the mapping's policy computes).
        let empty = folder.url.appendingPathComponent("empty", isDirectory: true)
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        for attempt in [{ try StoreMigrationTool(store: url, model: bundle, mappingFolder: empty).plan() },
                        { try StoreMigrationTool(store: url, model: bundle, mappingFolder: empty).migrate() }] {
            let error = #expect(throws: NSError.self) { _ = try attempt() }
            #expect(error?.code == NSMigrationMissingMappingModelError, "\(String(describing: error))")
        }
        #expect(try Data(contentsOf: url) == before)
        // The mapping model's own folder given for --mapping is read as the folder holding it.
        #expect(try StoreMigrationTool(store: url, model: bundle, mappingFolder: mapping).plan()
            .contains("Mapping model (heavyweight migration into a new file, then moved into the store):"))
    }

    @Test(PostgreSQLTestDatabase.skipUnlessServer())
    func aMappingModelMigratesAPostgreSQLStoreByItsURL() throws {
        let folder = try TemporaryFolder()
        let bundle = try H.writeNotes(in: folder.url)
        let database = try MigrationTestDatabase()
        try H.writeVersion1Store(at: database.url, bundle: bundle, type: NSPostgreSQLStoreType)
        let tool = StoreMigrationTool(store: database.url, model: bundle, mappingFolder: folder.url)
        #expect(try tool.plan().contains("Mapping model (heavyweight migration into a new schema, then moved into the store):"))
        #expect(try tool.migrate().contains("from version Notes to Notes 2"))
        try H.open(database.url, try H.model(bundle, "Notes 2"), options: nil, type: NSPostgreSQLStoreType) { try H.expectMigratedThroughTheMapping($0) }
    }
}
