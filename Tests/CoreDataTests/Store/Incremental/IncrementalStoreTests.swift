import Foundation
import Testing
@testable import CoreData

/// A store written against the public API only (`DictionaryStore`) gets every context feature
/// through `NSIncrementalStore`: fetches (predicates, sorts, limits, counts, IDs), faults,
/// relationships, nested contexts, merging, validation, optimistic locking, a fetched results
/// controller; and a store class that misbehaves ends in a thrown error.
@Suite("NSIncrementalStore: a store written against Apple's API")
struct IncrementalStoreTests {
    /// A coordinator on the test model with one `DictionaryStore`.
    final class Stack {
        let coordinator: NSPersistentStoreCoordinator
        let store: DictionaryStore

        init() throws {
            DictionaryStore.register()
            coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
            let added = try coordinator.addPersistentStore(ofType: DictionaryStore.storeType, configurationName: nil,
                                                            at: URL(string: "dictionary://tests")!)
            store = try #require(added as? DictionaryStore)
        }

        /// Saves `context`, returning its did-save notification.
        func save(_ context: NSManagedObjectContext) throws -> Notification {
            nonisolated(unsafe) var saved: Notification?
            let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: context, queue: nil) { saved = $0 }
            defer { NotificationCenter.default.removeObserver(observer) }
            try context.save()
            return try #require(saved)
        }

        func context() -> NSManagedObjectContext {
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            return context
        }

        func person(_ name: String, age: Int = 30, in context: NSManagedObjectContext) -> NSManagedObject {
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            person.setValue(name, forKey: "name")
            person.setValue(age, forKey: "age")
            return person
        }

        func car(_ name: String, year: Int = 2001, owner: NSManagedObject?, in context: NSManagedObjectContext) -> NSManagedObject {
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            car.setValue(name, forKey: "name")
            car.setValue(year, forKey: "year")
            car.setValue(owner, forKey: "owner")
            return car
        }
    }

    static func names(_ objects: [NSManagedObject]) -> [String] { objects.map { $0.value(forKey: "name") as? String ?? "?" } }

    @Test("addPersistentStore makes the registered class, which loads its metadata")
    func adding() throws {
        let stack = try Stack()
        #expect(stack.store.calls["loadMetadata"] == 1)
        #expect(stack.store.type == DictionaryStore.storeType)
        #expect(stack.store.identifier == stack.store.metadata[NSStoreUUIDKey] as? String)
        #expect(stack.coordinator.persistentStores.count == 1)
        #expect(NSPersistentStoreCoordinator.registeredStoreTypes[DictionaryStore.storeType].map(ObjectIdentifier.init) == ObjectIdentifier(DictionaryStore.self))
        #expect(NSPersistentStoreCoordinator.registeredStoreTypes[NSSQLiteStoreType] != nil)
    }

    @Test("An unknown store type still throws 134000")
    func unknownType() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let error = try #require(throws: NSError.self) {
            try coordinator.addPersistentStore(ofType: "NoSuchStore", configurationName: nil, at: URL(string: "x://y")!)
        }
        #expect(error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreInvalidTypeError)
        #expect(coordinator.persistentStores.isEmpty)
    }

    @Test("Inserted objects get the store's IDs, are saved through execute, and fetched with predicates and sorts")
    func saveAndFetch() throws {
        let stack = try Stack()
        let context = stack.context()
        let people = [("Cleo", 41), ("Ada", 36), ("Bea", 22), ("Dan", 58)].map { stack.person($0, age: $1, in: context) }
        try context.save()
        #expect(stack.store.records.count == 4)
        #expect(stack.store.calls["obtainPermanentIDs"] == 1)
        let saved = people[0]
        #expect(!saved.objectID.isTemporaryID)
        #expect(stack.store.records[stack.store.referenceObject(for: saved.objectID) as! String] != nil)

        let reader = stack.context()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "age > %d", 30)
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: false)]
        #expect(Self.names(try reader.fetch(request)) == ["Dan", "Cleo", "Ada"])
        request.fetchLimit = 2
        request.fetchOffset = 1
        #expect(Self.names(try reader.fetch(request)) == ["Cleo", "Ada"])
        #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 4)
        let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Person")
        ids.resultType = .managedObjectIDResultType
        #expect(Set(try reader.fetch(ids)) == Set(people.map(\.objectID)))
    }

    @Test("A dictionary fetch is passed to execute and its dictionaries come back typed")
    func dictionaries() throws {
        let stack = try Stack()
        let context = stack.context()
        let ada = stack.person("Ada", age: 36, in: context)
        _ = stack.car("Beetle", year: 1960, owner: ada, in: context)
        try context.save()
        let request = NSFetchRequest<NSDictionary>(entityName: "Car")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name", "year", "owner"]
        let rows = try stack.context().fetch(request)
        #expect(rows.count == 1)
        #expect(rows.first?["name"] as? String == "Beetle")
        #expect((rows.first?["year"] as? NSNumber)?.intValue == 1960)
        #expect(rows.first?["owner"] as? NSManagedObjectID == ada.objectID)
    }

    @Test("A fault fires through newValuesForObject; an object the store no longer has is a deleted one")
    func faults() throws {
        let stack = try Stack()
        let writer = stack.context()
        let ada = stack.person("Ada", age: 36, in: writer)
        try writer.save()
        let reader = stack.context()
        let fault = reader.object(with: ada.objectID)
        #expect(fault.isFault)
        let before = stack.store.calls["newValuesForObject"] ?? 0
        #expect(fault.value(forKey: "name") as? String == "Ada")
        #expect(fault.value(forKey: "age") as? Int == 36)
        #expect(stack.store.calls["newValuesForObject"] == before + 1)

        stack.store.records.removeAll()
        let gone = stack.context()
        #expect(throws: NSError.self) { try gone.existingObject(with: ada.objectID) }
    }

    @Test("To-one, to-many, many-to-many and ordered relationships round-trip")
    func relationships() throws {
        let stack = try Stack()
        let writer = stack.context()
        let ada = stack.person("Ada", in: writer)
        let first = stack.car("Beetle", owner: ada, in: writer)
        _ = stack.car("Mini", owner: ada, in: writer)
        let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: writer)
        tag.setValue("classic", forKey: "label")
        first.mutableSetValue(forKey: "tags").add(tag)
        let playlist = NSEntityDescription.insertNewObject(forEntityName: "Playlist", into: writer)
        for title in ["one", "two", "three"] {
            let song = NSEntityDescription.insertNewObject(forEntityName: "Song", into: writer)
            song.setValue(title, forKey: "title")
            playlist.mutableOrderedSetValue(forKey: "songs").add(song)
        }
        try writer.save()

        let reader = stack.context()
        let person = reader.object(with: ada.objectID)
        let cars = try #require(person.value(forKey: "cars") as? Set<NSManagedObject>)
        #expect(Set(cars.compactMap { $0.value(forKey: "name") as? String }) == ["Beetle", "Mini"])
        let beetle = reader.object(with: first.objectID)
        #expect((beetle.value(forKey: "owner") as? NSManagedObject)?.objectID == ada.objectID)
        let tags = try #require(beetle.value(forKey: "tags") as? Set<NSManagedObject>)
        #expect(tags.map(\.objectID) == [tag.objectID])
        #expect((reader.object(with: tag.objectID).value(forKey: "cars") as? Set<NSManagedObject>)?.map(\.objectID) == [first.objectID])
        let songs = try #require(reader.object(with: playlist.objectID).value(forKey: "songs") as? NSOrderedSet)
        #expect(songs.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String } == ["one", "two", "three"])
        #expect((stack.store.calls["newValueForRelationship"] ?? 0) > 0)

        // A fetch through a to-one key path and an object argument.
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.predicate = NSPredicate(format: "owner == %@", person)
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        #expect(Self.names(try reader.fetch(request)) == ["Beetle", "Mini"])

        // Deleting the owner cascades to its cars.
        reader.delete(person)
        try reader.save()
        #expect(stack.store.records.values.filter { $0.entityName == "Car" || $0.entityName == "Person" }.isEmpty)
    }

    @Test("A to-many given as an NSOrderedSet, and Swift nils in a node, read as Apple's bridging reads them")
    func orderedSetsAndSwiftNils() throws {
        let stack = try Stack()
        let writer = stack.context()
        let ada = stack.person("Ada", in: writer)
        let loose = stack.car("Loose", owner: nil, in: writer)
        loose.setValue(nil, forKey: "name")
        _ = stack.car("Beetle", owner: ada, in: writer)
        let playlist = NSEntityDescription.insertNewObject(forEntityName: "Playlist", into: writer)
        for title in ["one", "two"] {
            let song = NSEntityDescription.insertNewObject(forEntityName: "Song", into: writer)
            song.setValue(title, forKey: "title")
            playlist.mutableOrderedSetValue(forKey: "songs").add(song)
        }
        try writer.save()
        stack.store.swiftyValues = true
        let reader = stack.context()
        let songs = try #require(reader.object(with: playlist.objectID).value(forKey: "songs") as? NSOrderedSet)
        #expect(songs.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String } == ["one", "two"])
        #expect((reader.object(with: ada.objectID).value(forKey: "cars") as? Set<NSManagedObject>)?.count == 1)
        let car = reader.object(with: loose.objectID)
        #expect(car.value(forKey: "owner") == nil)
        #expect(car.value(forKey: "name") == nil)
        try reader.save() // no fault failed: nothing to throw
    }

    @Test("A to-one the node leaves out comes from newValue(forRelationship:)")
    func lazyToOne() throws {
        let stack = try Stack()
        let writer = stack.context()
        let ada = stack.person("Ada", in: writer)
        let car = stack.car("Beetle", owner: ada, in: writer)
        try writer.save()
        stack.store.lazyToOnes = true
        let before = stack.store.calls["newValueForRelationship"] ?? 0
        let reader = stack.context()
        let owner = reader.object(with: car.objectID).value(forKey: "owner") as? NSManagedObject
        #expect(owner?.objectID == ada.objectID)
        #expect(stack.store.calls["newValueForRelationship"] == before + 1)
    }

    @Test("A save the store refuses throws its error; the context keeps its changes and saves them later")
    func refusedSave() throws {
        let stack = try Stack()
        let context = stack.context()
        let ada = stack.person("Ada", in: context)
        stack.store.failNextSave = NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreSaveError, userInfo: [NSLocalizedDescriptionKey: "server down"])
        let error = try #require(throws: NSError.self) { try context.save() }
        #expect(error.code == NSPersistentStoreSaveError)
        #expect(stack.store.records.isEmpty)
        #expect(context.insertedObjects.contains(ada))
        try context.save()
        #expect(stack.store.records[stack.store.referenceObject(for: ada.objectID) as! String]?.values["name"] as? String == "Ada")
        #expect(!context.hasChanges)
    }

    @Test("A child context saves through its parent into the store")
    func childContext() throws {
        let stack = try Stack()
        let parent = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        parent.persistentStoreCoordinator = stack.coordinator
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        let id = try child.performAndWait {
            let ada = stack.person("Ada", in: child)
            try child.save()
            return ada.objectID
        }
        #expect(stack.store.records.isEmpty)
        try parent.performAndWait { try parent.save() }
        #expect(stack.store.records.count == 1)
        let reader = stack.context()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        #expect(Self.names(try reader.fetch(request)) == ["Ada"])
        let saved = try child.performAndWait { try child.existingObject(with: id).objectID }
        #expect(!saved.isTemporaryID)
    }

    @Test("A save merges into another context")
    func merging() throws {
        let stack = try Stack()
        let writer = stack.context()
        let ada = stack.person("Ada", age: 36, in: writer)
        try writer.save()
        let viewer = stack.context()
        let seen = viewer.object(with: ada.objectID)
        #expect(seen.value(forKey: "age") as? Int == 36)

        ada.setValue(37, forKey: "age")
        _ = stack.person("Bea", in: writer)
        viewer.mergeChanges(fromContextDidSave: try stack.save(writer))
        #expect(seen.value(forKey: "age") as? Int == 37)
        #expect(try viewer.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 2)
    }

    @Test("An invalid object fails validation and nothing reaches the store")
    func validation() throws {
        let stack = try Stack()
        let context = stack.context()
        _ = stack.person("Ada", in: context)
        _ = stack.car("Too old", year: 1800, owner: nil, in: context)
        let error = try #require(throws: NSError.self) { try context.save() }
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == NSValidationNumberTooSmallError)
        #expect(stack.store.records.isEmpty)
        #expect((stack.store.calls["execute"] ?? 0) == 0)
    }

    @Test("A save over a record another context saved since meets an optimistic-locking conflict, by the node's version")
    func optimisticLocking() throws {
        let stack = try Stack()
        let first = stack.context()
        let ada = stack.person("Ada", age: 36, in: first)
        try first.save()
        let second = stack.context()
        let other = second.object(with: ada.objectID)
        #expect(other.value(forKey: "age") as? Int == 36)

        ada.setValue(37, forKey: "age")
        try first.save()
        let key = stack.store.referenceObject(for: ada.objectID) as! String
        #expect(stack.store.records[key]?.version == 2)

        other.setValue(50, forKey: "age")
        let error = try #require(throws: NSError.self) { try second.save() }
        #expect(error.code == NSManagedObjectMergeError)
        #expect(stack.store.records[key]?.values["age"] as? Int == 37)

        second.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        try second.save()
        #expect(stack.store.records[key]?.values["age"] as? Int == 50)
        #expect(stack.store.records[key]?.version == 3)
    }

    @Test("An object marked by detectConflicts(for:) is checked by its node's version and handed to the store as locked")
    func detectConflicts() throws {
        let stack = try Stack()
        let first = stack.context()
        let ada = stack.person("Ada", in: first)
        let bob = stack.person("Bob", in: first)
        try first.save()
        let second = stack.context()
        let marked = second.object(with: ada.objectID)
        _ = marked.value(forKey: "name")
        second.detectConflicts(for: marked)
        second.object(with: bob.objectID).setValue(31, forKey: "age")
        try second.save()
        #expect(stack.store.lastLocked == [stack.store.referenceObject(for: ada.objectID) as! String])

        second.detectConflicts(for: marked)
        ada.setValue(37, forKey: "age")
        try first.save()
        second.object(with: bob.objectID).setValue(32, forKey: "age")
        let error = try #require(throws: NSError.self) { try second.save() }
        #expect(error.code == NSManagedObjectMergeError)
        #expect(stack.store.records[stack.store.referenceObject(for: bob.objectID) as! String]?.values["age"] as? Int == 31)
    }

    @Test("A store whose records keep one version saves the same object again and again without conflicts")
    func constantVersions() throws {
        let stack = try Stack()
        stack.store.constantVersions = true
        let context = stack.context()
        let ada = stack.person("Ada", age: 36, in: context)
        try context.save()
        for age in 37...39 {
            ada.setValue(age, forKey: "age")
            try context.save()
        }
        let other = stack.context()
        let again = other.object(with: ada.objectID)
        again.setValue(40, forKey: "age")
        try other.save()
        let key = stack.store.referenceObject(for: ada.objectID) as! String
        #expect(stack.store.records[key]?.values["age"] as? Int == 40)
        #expect(stack.store.records[key]?.version == 1)
    }

    @Test("An NSFetchedResultsController follows another context's saves merged into its own")
    func fetchedResultsController() throws {
        let stack = try Stack()
        let writer = stack.context()
        _ = stack.person("Bea", in: writer)
        let ada = stack.person("Ada", in: writer)
        try writer.save()
        let viewer = stack.context()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: viewer, sectionNameKeyPath: nil, cacheName: nil)
        let recorder = FetchedResultsRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        #expect(Self.names(controller.fetchedObjects ?? []) == ["Ada", "Bea"])

        _ = stack.person("Abe", in: writer)
        ada.setValue("Zoe", forKey: "name")
        viewer.mergeChanges(fromContextDidSave: try stack.save(writer))
        #expect(Self.names(controller.fetchedObjects ?? []) == ["Abe", "Bea", "Zoe"])
        #expect(recorder.batches == 1)
        #expect(Set(recorder.objectChanges.map(\.type)) == [.insert, .move])
    }

    @Test("Reference objects: integers are their own keys, other values keep their identity")
    func referenceObjects() throws {
        let stack = try Stack()
        let person = try #require(stack.coordinator.managedObjectModel.entitiesByName["Person"])
        let byInt = stack.store.newObjectID(for: person, referenceObject: 42)
        #expect(byInt == stack.store.newObjectID(for: person, referenceObject: NSNumber(value: 42)))
        #expect(stack.store.referenceObject(for: byInt) as? Int == 42)
        #expect(stack.store.referenceObject(for: byInt) as? Int64 == 42)
        #expect(stack.store.referenceObject(for: byInt) is NSNumber)
        #expect(byInt.uriRepresentation().lastPathComponent == "p42")
        #expect(stack.coordinator.managedObjectID(forURIRepresentation: byInt.uriRepresentation()) == byInt)
        let byString = stack.store.newObjectID(for: person, referenceObject: "ada")
        #expect(byString == stack.store.newObjectID(for: person, referenceObject: "ada"))
        #expect(byString != stack.store.newObjectID(for: person, referenceObject: "bea"))
        #expect(stack.store.referenceObject(for: byString) as? String == "ada")
        // A string reference's URI names it, and reads back to the same ID.
        let odd = stack.store.newObjectID(for: person, referenceObject: "a/b c")
        #expect(odd.uriRepresentation().absoluteString == "x-coredata://\(stack.store.identifier!)/Person/pa%2Fb%20c")
        #expect(stack.coordinator.managedObjectID(forURIRepresentation: odd.uriRepresentation()) == odd)
        #expect(stack.coordinator.managedObjectID(forURIRepresentation: byString.uriRepresentation()) == byString)
        // A string that reads as a number, or starts with a marker, is not the number; other
        // references (a UUID, 0, a negative number) read back while the store is added.
        let uuid = UUID()
        for reference in ["42", "-7", "\"quoted", "%22", "#1", "%23", uuid] as [AnyHashable] {
            let id = stack.store.newObjectID(for: person, referenceObject: reference)
            let back = stack.coordinator.managedObjectID(forURIRepresentation: id.uriRepresentation())
            #expect(back == id, "\(reference): \(id.uriRepresentation())")
            #expect(back.map { stack.store.referenceObject(for: $0) as? AnyHashable } == reference, "\(reference)")
        }
        for reference in [0, -3] {
            let id = stack.store.newObjectID(for: person, referenceObject: reference)
            let back = stack.coordinator.managedObjectID(forURIRepresentation: id.uriRepresentation())
            #expect(back == id, "\(reference): \(id.uriRepresentation())")
            #expect(back.map { stack.store.referenceObject(for: $0) as? Int } == reference, "\(reference)")
        }
        #expect(stack.store.newObjectID(for: person, referenceObject: "42") != byInt)
        let unknown = URL(string: "x-coredata://\(stack.store.identifier!)/Person/p-999")!
        #expect(stack.coordinator.managedObjectID(forURIRepresentation: unknown) == nil, "no reference has that key")
    }

    /// The URI of an integer reference that is not its own key (0, a negative number) names the
    /// number, so it reads back to that reference in a store added later, whichever references
    /// that store met first (a key from a table of the first would name another's).
    @Test func aNegativeIntegerReferencesURIHoldsAcrossLaunches() throws {
        let first = try Stack()
        let person = try #require(first.coordinator.managedObjectModel.entitiesByName["Person"])
        let uri = first.store.newObjectID(for: person, referenceObject: NSNumber(value: -7)).uriRepresentation()
        #expect(uri.absoluteString.hasSuffix("/Person/p%23-7"))
        let later = try Stack()
        _ = later.store.newObjectID(for: person, referenceObject: -2)
        var components = try #require(URLComponents(url: uri, resolvingAgainstBaseURL: false))
        components.host = later.store.identifier
        let moved = try #require(components.url)
        let id = try #require(later.coordinator.managedObjectID(forURIRepresentation: moved))
        #expect(later.store.referenceObject(for: id) as? Int == -7)
    }
}
