import Foundation
import Testing
@testable import CoreData
import TestSupport

/// A coordinator with a SQLite store and a store you write, one configuration each: many-to-many
/// join rows go to the store of their objects, and a many-to-many relationship across the two
/// stores is refused (133010), as Apple allows no relationship across stores.
@Suite("A SQLite store beside an NSIncrementalStore: many-to-many relationships")
struct MixedStoresTests {
    final class Stack {
        let folder: TemporaryFolder
        let coordinator: NSPersistentStoreCoordinator
        let sqlite: NSPersistentStore
        let store: DictionaryStore

        /// `cars` go to the dictionary store, `music` to the SQLite file.
        init(cars: [String], music: [String]) throws {
            DictionaryStore.register()
            let model = TestModel.make()
            model.setEntities(cars.map { model.entitiesByName[$0]! }, forConfigurationName: "Cars")
            model.setEntities(music.map { model.entitiesByName[$0]! }, forConfigurationName: "Music")
            folder = try TemporaryFolder()
            coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            sqlite = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Music",
                                                        at: folder.url.appendingPathComponent("Music.sqlite"))
            store = try #require(try coordinator.addPersistentStore(ofType: DictionaryStore.storeType, configurationName: "Cars",
                                                                   at: URL(string: "dictionary://cars")!) as? DictionaryStore)
        }

        func context() -> NSManagedObjectContext {
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            return context
        }
    }

    @Test("Join rows of the custom store's many-to-many stay out of the SQLite store, which saves in the same save")
    func joinRowsGoToTheirStore() throws {
        let stack = try Stack(cars: ["Person", "Car", "Tag"], music: ["Playlist", "Song"])
        let context = stack.context()
        let playlist = NSEntityDescription.insertNewObject(forEntityName: "Playlist", into: context)
        playlist.setValue("Road trip", forKey: "title")
        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
        car.setValue("Beetle", forKey: "name")
        let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
        tag.setValue("classic", forKey: "label")
        car.mutableSetValue(forKey: "tags").add(tag)
        try context.save()
        #expect(playlist.objectID.persistentStore === stack.sqlite)
        // The SQLite file has no join rows (its configuration has no Car or Tag).
        let sqlitePath = stack.sqlite.url!.path
        let joinTables = try RawSQLite.query(sqlitePath, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\'")
            .compactMap { $0.first ?? nil }.filter { $0 != "Z_PRIMARYKEY" && $0 != "Z_METADATA" && $0 != "Z_MODELCACHE" }
        for table in joinTables {
            #expect(try RawSQLite.query(sqlitePath, "SELECT COUNT(*) FROM \(table)").first?.first == "0", "\(table)")
        }
        #expect(stack.store.records[stack.store.referenceObject(for: car.objectID) as! String]?.toMany["tags"]
                == [stack.store.referenceObject(for: tag.objectID) as! String])

        car.mutableSetValue(forKey: "tags").remove(tag)
        playlist.setValue("Long road trip", forKey: "title")
        try context.save()
        #expect(stack.store.records[stack.store.referenceObject(for: car.objectID) as! String]?.toMany["tags"] == [])

        let reader = stack.context()
        #expect((reader.object(with: car.objectID).value(forKey: "tags") as? Set<NSManagedObject>)?.isEmpty == true)
        #expect(reader.object(with: playlist.objectID).value(forKey: "title") as? String == "Long road trip")
    }

    @Test("A many-to-many relationship across the two stores is refused with 133010, and nothing is saved")
    func acrossStoresIsRefused() throws {
        let stack = try Stack(cars: ["Person", "Car"], music: ["Playlist", "Song", "Tag"])
        let context = stack.context()
        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
        car.setValue("Beetle", forKey: "name")
        let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
        tag.setValue("classic", forKey: "label")
        car.mutableSetValue(forKey: "tags").add(tag)
        let error = try #require(throws: NSError.self) { try context.save() }
        #expect(error.domain == NSCocoaErrorDomain && error.code == NSManagedObjectExternalRelationshipError)
        #expect(stack.store.records.isEmpty)
        #expect(try stack.context().count(for: NSFetchRequest<NSManagedObject>(entityName: "Tag")) == 0)
        #expect(context.hasChanges)
    }
}
