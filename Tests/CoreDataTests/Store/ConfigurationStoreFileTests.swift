import Foundation
import Testing
@testable import CoreData
import TestSupport

/// A SQLite store added for a named configuration holds, as Apple's does, only that
/// configuration's tables and `Z_PRIMARYKEY` rows: it opens, and a change to an entity of
/// another configuration does not make it incompatible.
@Suite("SQLite store of a configuration")
struct ConfigurationStoreFileTests {
    private static func entity(_ name: String, _ attributes: [String]) -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity.name = name
        entity.properties = attributes.map { ManagedTestModel.attribute($0, .stringAttributeType) }
        return entity
    }

    /// Note in "Local", Item (with `itemAttributes`) in "Cloud".
    private static func model(itemAttributes: [String] = ["title"]) -> NSManagedObjectModel {
        let note = entity("Note", ["text"]), item = entity("Item", itemAttributes)
        let model = NSManagedObjectModel()
        model.entities = [item, note]
        model.setEntities([note], forConfigurationName: "Local")
        model.setEntities([item], forConfigurationName: "Cloud")
        return model
    }

    /// A file as Apple writes the "Local" store: Note's table, row and hash only.
    private static func localFile(in folder: TemporaryFolder) throws -> URL {
        let url = folder.url.appendingPathComponent("Local.sqlite")
        let noteOnly = NSManagedObjectModel()
        noteOnly.entities = [entity("Note", ["text"])]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: noteOnly)
        let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        NSEntityDescription.insertNewObject(forEntityName: "Note", into: context).setValue("kept", forKey: "text")
        try context.save()
        try coordinator.remove(store)
        return url
    }

    private func notes(_ model: NSManagedObjectModel, _ url: URL) throws -> [String] {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Local", at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Note")).map { $0.value(forKey: "text") as? String ?? "" }
    }

    /// It was refused: 134100 (Item "not in the store"), or with the hashes ignored 134020 (no
    /// `Z_PRIMARYKEY` row for Item).
    @Test func aStoreWithOnlyItsConfigurationsEntitiesOpens() throws {
        let folder = try TemporaryFolder()
        let url = try Self.localFile(in: folder)
        #expect(try notes(Self.model(), url) == ["kept"])
        // Item changed in another model version: the Local store is still compatible.
        #expect(try notes(Self.model(itemAttributes: ["title", "price"]), url) == ["kept"])
        // Without a configuration the store is the whole model's, and this file lacks Item.
        let whole = NSPersistentStoreCoordinator(managedObjectModel: Self.model())
        #expect(throws: NSError.self) { try whole.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil) }
    }
    /// A sub-entity the configuration does not list shares its parent's table: a change to it
    /// makes the store incompatible (134100, which a migration answers), where the version check
    /// passed and the open then failed (134020, a column missing).
    @Test func aChangedSubentityOfAListedEntityIsMigrated() throws {
        func model(carAttributes: [String]) -> NSManagedObjectModel {
            let vehicle = Self.entity("Vehicle", ["name"]), car = Self.entity("Car", carAttributes)
            vehicle.subentities = [car]
            let model = NSManagedObjectModel()
            model.entities = [vehicle, car]
            model.setEntities([vehicle], forConfigurationName: "Local")
            return model
        }
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Local.sqlite")
        let v1 = NSPersistentStoreCoordinator(managedObjectModel: model(carAttributes: ["seats"]))
        let store = try v1.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Local", at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = v1
        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("Beetle", forKey: "name")
        try context.save()
        try v1.remove(store)

        // 134100, which automatic migration answers (with the source model found).
        let v2 = NSPersistentStoreCoordinator(managedObjectModel: model(carAttributes: ["seats", "trim"]))
        let error = #expect(throws: NSError.self) { try v2.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Local", at: url, options: nil) }
        #expect(error?.code == NSPersistentStoreIncompatibleVersionHashError)
    }
}
