import Foundation
import Testing
@testable import CoreData
import TestSupport

/// The store options Apple declares that the SQLite store acts on: `NSSQLiteManualVacuumOption`,
/// `NSSQLiteAnalyzeOption`, `NSIgnorePersistentStoreVersioningOption`; Apple's values of the keys.
@Suite("Store options")
struct StoreOptionsTests {
    /// A store whose cars were saved and then deleted: their pages are free but still in the file
    /// (the store's auto-vacuum is incremental, so nothing gives them back by itself).
    private func storeWithFreePages() throws -> (folder: TemporaryFolder, url: URL) {
        let folder = try TemporaryFolder()
        let stack = try TestStack(directory: folder.url)
        for index in 0..<300 { stack.insert("Car", ["name": String(repeating: "x", count: 1000) + "\(index)"]) }
        try stack.context.save()
        for car in try stack.fetch("Car") { stack.context.delete(car) }
        try stack.context.save()
        try stack.coordinator.remove(stack.coordinator.persistentStores[0])
        return (folder, stack.url)
    }

    private func freePages(_ url: URL) throws -> Int {
        Int(try RawSQLite.query(url.path, "PRAGMA freelist_count")[0][0] ?? "") ?? -1
    }

    /// Adds the store at `url` with `options` to a new coordinator, and removes it again.
    private func addAndRemove(_ url: URL, model: NSManagedObjectModel = TestModel.make(), options: [AnyHashable: Any]?) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        try coordinator.remove(store)
    }

    @Test func manualVacuumRebuildsTheFileWhenTheStoreIsAdded() throws {
        let (folder, url) = try storeWithFreePages()
        let free = try freePages(url)
        #expect(free > 0)
        try addAndRemove(url, options: nil)
        #expect(try freePages(url) == free)
        try addAndRemove(url, options: [NSSQLiteManualVacuumOption: false])
        #expect(try freePages(url) == free)
        try addAndRemove(url, options: [NSSQLiteManualVacuumOption: true])
        #expect(try freePages(url) == 0)
        // The store still works.
        let stack = try TestStack(directory: folder.url)
        #expect(try stack.fetch("Car").isEmpty)
        stack.insert("Car", ["name": "after"])
        try stack.context.save()
        withExtendedLifetime(folder) {}
    }

    @Test func manualVacuumIsIgnoredByAReadOnlyStore() throws {
        let (folder, url) = try storeWithFreePages()
        let free = try freePages(url)
        try addAndRemove(url, options: [NSSQLiteManualVacuumOption: NSNumber(value: true), NSReadOnlyPersistentStoreOption: true])
        #expect(try freePages(url) == free)
        withExtendedLifetime(folder) {}
    }

    @Test func analyzeGathersStatisticsWhenTheStoreIsAdded() throws {
        let (folder, url) = try storeWithFreePages()
        let statistics = "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'"
        try addAndRemove(url, options: nil)
        #expect(try RawSQLite.query(url.path, statistics) == [["0"]])
        try addAndRemove(url, options: [NSSQLiteAnalyzeOption: "YES"])
        #expect(try RawSQLite.query(url.path, statistics) == [["1"]])
        withExtendedLifetime(folder) {}
    }

    @Test func ignoringVersioningOpensAStoreOfAnotherModel() throws {
        let folder = try TemporaryFolder()
        let stack = try TestStack(directory: folder.url)
        stack.insert("Person", ["name": "Ada"])
        try stack.context.save()
        let written = try #require(stack.coordinator.persistentStores.first?.metadata[NSStoreModelVersionHashesKey] as? [String: Data])
        try stack.coordinator.remove(stack.coordinator.persistentStores[0])

        // The same entities, one more attribute on Tag: another version hash for Tag.
        let changed = TestModel.make()
        let label = NSAttributeDescription()
        label.name = "color"
        label.attributeType = .stringAttributeType
        changed.entitiesByName["Tag"]!.properties.append(label)

        let refused = #expect(throws: NSError.self) { try addAndRemove(stack.url, model: changed, options: nil) }
        #expect(refused?.code == NSPersistentStoreIncompatibleVersionHashError)

        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: changed)
        let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: stack.url,
                                                       options: [NSIgnorePersistentStoreVersioningOption: true])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        #expect(people.map { $0.value(forKey: "name") as? String } == ["Ada"])
        // The hashes in the file are those it was written with.
        #expect(store.metadata[NSStoreModelVersionHashesKey] as? [String: Data] == written)
        try coordinator.remove(store)
        #expect(try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: stack.url)[NSStoreModelVersionHashesKey] as? [String: Data] == written)
        withExtendedLifetime(folder) {}
    }

    /// A file of another model version opened with `NSIgnorePersistentStoreVersioningOption`
    /// keeps its external data files, though this model does not store the column externally.
    @Test func anOpenIgnoringVersionsKeepsTheFilesExternalDataFiles() throws {
        let folder = try TemporaryFolder()
        func model(external: Bool) -> NSManagedObjectModel {
            let model = TestModel.make()
            (model.entitiesByName["Car"]!.attributesByName["photo"]!).allowsExternalBinaryDataStorage = external
            return model
        }
        let photo = Data(repeating: 7, count: 200_000)
        let stack = try TestStack(model: model(external: true), directory: folder.url)
        stack.insert("Car", ["name": "a", "photo": photo])
        try stack.context.save()
        try stack.coordinator.remove(stack.coordinator.persistentStores[0])
        let lenient = NSPersistentStoreCoordinator(managedObjectModel: model(external: false))
        let store = try lenient.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: stack.url,
                                                   options: [NSIgnorePersistentStoreVersioningOption: true])
        try lenient.remove(store)
        let again = try TestStack(model: model(external: true), directory: folder.url)
        let car = try #require(try again.fetch("Car").first)
        #expect(car.value(forKey: "photo") as? Data == photo)
        withExtendedLifetime(folder) {}
    }

    @Test func aPropertyTheOtherVersionsFileLacksIsNeverSilentlyDropped() throws {
        let folder = try TemporaryFolder()
        let stack = try TestStack(directory: folder.url)
        stack.insert("Tag", ["label": "red"])
        try stack.context.save()
        try stack.coordinator.remove(stack.coordinator.persistentStores[0])
        let changed = TestModel.make()
        changed.entitiesByName["Tag"]!.properties.append(attribute("color", .stringAttributeType))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: changed)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: stack.url,
                                           options: [NSIgnorePersistentStoreVersioningOption: true])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        // Read: the file has no column, the value is nil; a predicate on it throws, naming it.
        let tag = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Tag")).first)
        #expect(tag.value(forKey: "label") as? String == "red" && tag.value(forKey: "color") == nil)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Tag")
        request.predicate = NSPredicate(format: "color == 'blue'")
        let fetchError = #expect(throws: NSError.self) { _ = try context.fetch(request) }
        #expect(fetchError?.localizedDescription.contains("Tag.color") == true)
        // Written: a value for it is refused, not dropped; objects without one save.
        tag.setValue("blue", forKey: "color")
        #expect(throws: NSError.self) { try context.save() }
        context.rollback()
        let plain = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
        plain.setValue("green", forKey: "label")
        try context.save()
        let colored = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
        colored.setValue("blue", forKey: "color")
        let saveError = #expect(throws: NSError.self) { try context.save() }
        #expect(saveError?.code == NSPersistentStoreIncompatibleSchemaError)
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZLABEL FROM ZTAG ORDER BY Z_PK") == [["red"], ["green"]])
        withExtendedLifetime(folder) {}
    }

    /// Apple's values of the keys (not always the constant's name), and the XML store type refused.
    @Test func keysHaveApplesValues() throws {
        #expect(NSPersistentStoreConnectionPoolMaxSizeKey == "NSPersistentStoreConnectionPoolMaxSize")
        #expect(NSPersistentStoreRemoteChangeNotificationPostOptionKey == "NSPersistentStoreRemoteChangeNotificationOptionKey")
        #expect(NSPersistentStoreModelVersionChecksumKey == "NSStoreModelVersionChecksumKey")
        #expect(NSSQLiteManualVacuumOption == "NSSQLiteManualVacuumOption")
        #expect(NSIgnorePersistentStoreVersioningOption == "NSIgnorePersistentStoreVersioningOption")
        let stack = try TestStack()
        #expect(stack.coordinator.persistentStores[0].metadata[NSPersistentStoreModelVersionChecksumKey] as? String == stack.model.versionChecksum)
        let error = #expect(throws: NSError.self) {
            try stack.coordinator.addPersistentStore(ofType: NSXMLStoreType, configurationName: nil,
                                                     at: stack.directory.appendingPathComponent("x.xml"), options: nil)
        }
        #expect(error?.code == NSPersistentStoreInvalidTypeError)
    }
}
