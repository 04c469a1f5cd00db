import Foundation
import Testing
@testable import CoreData
import TestSupport

/// A store written against the public API only (`JSONFileStore`) gets fetches, faults,
/// relationships, optimistic locking and all-or-nothing saves through `NSAtomicStore`, and its
/// file reads back in a new coordinator.
@Suite("NSAtomicStore: a file store written against Apple's API")
struct AtomicStoreTests {
    final class Stack {
        let folder: TemporaryFolder
        let url: URL
        let model = TestModel.make()
        var coordinator: NSPersistentStoreCoordinator
        var store: JSONFileStore

        init() throws {
            JSONFileStore.register()
            folder = try TemporaryFolder()
            url = folder.url.appendingPathComponent("Store.json")
            (coordinator, store) = try Self.open(model, url)
        }

        static func open(_ model: NSManagedObjectModel, _ url: URL) throws -> (NSPersistentStoreCoordinator, JSONFileStore) {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(ofType: JSONFileStore.storeType, configurationName: nil, at: url)
            return (coordinator, try #require(store as? JSONFileStore))
        }

        /// A new coordinator on the same file.
        func reopen() throws { (coordinator, store) = try Self.open(model, url) }

        func context() -> NSManagedObjectContext {
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            return context
        }

        func insert(_ entity: String, _ values: [String: Any], in context: NSManagedObjectContext) -> NSManagedObject {
            let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
            for (key, value) in values { object.setValue(value, forKey: key) }
            return object
        }
    }

    static func names(_ objects: [NSManagedObject], _ key: String = "name") -> [String] { objects.map { $0.value(forKey: key) as? String ?? "?" } }

    /// A reference object that names another new object, or an object the store holds (a key
    /// made of an attribute that repeats), is refused (134030) with nothing saved, rather than
    /// one row taking the other's values.
    @Test func aRepeatedReferenceObjectIsRefused() throws {
        let stack = try Stack()
        stack.store.referenceObject = { $0.value(forKey: "name") as? String ?? "" }
        let context = stack.context()
        _ = stack.insert("Car", ["name": "kept", "year": 1999], in: context)
        try context.save()
        _ = stack.insert("Car", ["name": "twin"], in: context)
        _ = stack.insert("Car", ["name": "twin"], in: context)
        let twins = #expect(throws: NSError.self) { try context.save() }
        #expect(twins?.code == NSPersistentStoreSaveError && twins?.localizedDescription.contains("another new object") == true)
        context.rollback()
        _ = stack.insert("Car", ["name": "kept", "year": 2024], in: context)
        let taken = #expect(throws: NSError.self) { try context.save() }
        #expect(taken?.localizedDescription.contains("an object the store holds") == true)
        context.rollback()
        try stack.reopen()
        let cars = try stack.context().fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
        #expect(cars.map { $0.value(forKey: "year") as? Int } == [1999])
    }

    @Test("Saved objects and relationships are written to the file and read back by a new coordinator")
    func roundTrip() throws {
        let stack = try Stack()
        let context = stack.context()
        let ada = stack.insert("Person", ["name": "Ada", "age": 36], in: context)
        let bea = stack.insert("Person", ["name": "Bea", "age": 22], in: context)
        for (name, owner) in [("Beetle", ada), ("Mini", ada), ("Fiat", bea)] { _ = stack.insert("Car", ["name": name, "owner": owner], in: context) }
        let playlist = stack.insert("Playlist", ["title": "mix"], in: context)
        for title in ["one", "two", "three"] {
            playlist.mutableOrderedSetValue(forKey: "songs").add(stack.insert("Song", ["title": title], in: context))
        }
        try context.save()
        #expect(stack.store.saves == 1)
        #expect(!ada.objectID.isTemporaryID)
        let uuid = stack.store.identifier

        try stack.reopen()
        #expect(stack.store.identifier == uuid)
        let reader = stack.context()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.predicate = NSPredicate(format: "owner.name == %@", "Ada")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: false)]
        let cars = try reader.fetch(request)
        #expect(Self.names(cars) == ["Mini", "Beetle"])
        let owner = try #require(cars.first?.value(forKey: "owner") as? NSManagedObject)
        #expect(owner.value(forKey: "name") as? String == "Ada")
        #expect((owner.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
        #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 2)
        let lists = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Playlist"))
        let songs = try #require(lists.first?.value(forKey: "songs") as? NSOrderedSet)
        #expect(Self.names(songs.array as! [NSManagedObject], "title") == ["one", "two", "three"])
        let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Person")
        ids.resultType = .managedObjectIDResultType
        #expect(try reader.fetch(ids).count == 2)
        #expect(stack.coordinator.managedObjectID(forURIRepresentation: owner.objectID.uriRepresentation()) == owner.objectID)
    }

    @Test("Updates and deletes reach the file")
    func updatesAndDeletes() throws {
        let stack = try Stack()
        let context = stack.context()
        let ada = stack.insert("Person", ["name": "Ada", "age": 36], in: context)
        _ = stack.insert("Car", ["name": "Beetle", "owner": ada], in: context)
        try context.save()
        ada.setValue(37, forKey: "age")
        try context.save()
        try stack.reopen()
        let reader = stack.context()
        let people = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        #expect(people.first?.value(forKey: "age") as? Int == 37)
        reader.delete(try #require(people.first)) // cascades to the car
        try reader.save()
        try stack.reopen()
        #expect(try stack.context().count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == 0)
        #expect(try stack.context().count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 0)
    }

    @Test("A save() that throws leaves the nodes and the file as they were; the context keeps its changes")
    func failedSave() throws {
        let stack = try Stack()
        let context = stack.context()
        let ada = stack.insert("Person", ["name": "Ada", "age": 36], in: context)
        try context.save()
        ada.setValue(99, forKey: "age")
        _ = stack.insert("Person", ["name": "Bea"], in: context)
        stack.store.failNextSave = NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreSaveError, userInfo: [NSLocalizedDescriptionKey: "disk full"])
        let error = try #require(throws: NSError.self) { try context.save() }
        #expect(error.code == NSPersistentStoreSaveError)
        #expect(context.hasChanges)
        let other = stack.context()
        #expect(try other.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 1)
        #expect(other.object(with: ada.objectID).value(forKey: "age") as? Int == 36)
        try context.save()
        try stack.reopen()
        #expect(try stack.context().count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 2)
    }

    @Test("Two contexts saving the same object: the second meets an optimistic-locking conflict")
    func optimisticLocking() throws {
        let stack = try Stack()
        let first = stack.context()
        let ada = stack.insert("Person", ["name": "Ada", "age": 36], in: first)
        try first.save()
        let second = stack.context()
        let other = second.object(with: ada.objectID)
        #expect(other.value(forKey: "age") as? Int == 36)
        ada.setValue(37, forKey: "age")
        try first.save()
        other.setValue(50, forKey: "age")
        let error = try #require(throws: NSError.self) { try second.save() }
        #expect(error.code == NSManagedObjectMergeError)
    }

    @Test("Dictionary fetches are computed from the nodes")
    func dictionaries() throws {
        let stack = try Stack()
        let context = stack.context()
        for (name, age) in [("Ada", 36), ("Bea", 22)] { _ = stack.insert("Person", ["name": name, "age": age], in: context) }
        try context.save()
        let request = NSFetchRequest<NSDictionary>(entityName: "Person")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name"]
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        #expect(try context.fetch(request).map { $0["name"] as? String } == ["Ada", "Bea"])
    }

    @Test("A node holding a value of the wrong type is an error naming it, not a crash")
    func wrongNodeValue() throws {
        let stack = try Stack()
        let context = stack.context()
        let ada = stack.insert("Person", ["name": "Ada"], in: context)
        try context.save()
        try #require(stack.store.cacheNode(for: ada.objectID)).setValue(Data([1]), forKey: "name")
        let error = try #require(throws: NSError.self) { try stack.coordinator.row(for: ada.objectID, usingCache: false) }
        #expect(error.code == NSPersistentStoreOperationError)
        #expect(error.localizedDescription.contains("'name'"))
    }

    @Test("The metadata an atomic store saves carries the model's version hashes; another model version is refused (134100)")
    func versionHashesAreKeptAndChecked() throws {
        let stack = try Stack()
        let context = stack.context()
        _ = stack.insert("Person", ["name": "Ada"], in: context)
        try context.save()
        #expect(stack.store.metadata[NSStoreModelVersionHashesKey] != nil)
        let disk = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: JSONFileStore.storeType, at: stack.url)
        #expect(stack.model.isConfiguration(withName: nil, compatibleWithStoreMetadata: disk))
        // Another version of the model: one more attribute.
        let changed = TestModel.make()
        let nickname = NSAttributeDescription()
        nickname.name = "nickname"
        nickname.attributeType = .stringAttributeType
        changed.entitiesByName["Person"]!.properties.append(nickname)
        let before = try Data(contentsOf: stack.url)
        let error = #expect(throws: NSError.self) {
            try NSPersistentStoreCoordinator(managedObjectModel: changed)
                .addPersistentStore(ofType: JSONFileStore.storeType, configurationName: nil, at: stack.url)
        }
        #expect(error?.code == NSPersistentStoreIncompatibleVersionHashError)
        #expect(try Data(contentsOf: stack.url) == before, "the file was left untouched")
        // Unless versioning is ignored, or the store migrates automatically (a container's default).
        _ = try NSPersistentStoreCoordinator(managedObjectModel: changed)
            .addPersistentStore(ofType: JSONFileStore.storeType, configurationName: nil, at: stack.url,
                                options: [NSIgnorePersistentStoreVersioningOption: true])
        let migrating = NSPersistentStoreCoordinator(managedObjectModel: changed)
        _ = try migrating.addPersistentStore(ofType: JSONFileStore.storeType, configurationName: nil, at: stack.url,
                                             options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        reader.persistentStoreCoordinator = migrating
        #expect(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).map { $0.value(forKey: "name") as? String } == ["Ada"])
    }
}
