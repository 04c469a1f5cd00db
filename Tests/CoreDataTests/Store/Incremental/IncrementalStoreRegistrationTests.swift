import Foundation
import Testing
@testable import CoreData

/// `managedObjectContextDidRegisterObjects(with:)` and `…DidUnregisterObjects(with:)`: a count of
/// interest per object ID, which every context that holds an object of the store adds one to
/// and takes back when it lets the object go (Apple's "akin to reference counting").
@Suite("NSIncrementalStore: which objects contexts register and unregister")
struct IncrementalStoreRegistrationTests {
    typealias Stack = IncrementalStoreTests.Stack

    /// The references of the objects, as the store knows them.
    private static func references(_ objects: [NSManagedObject], in store: DictionaryStore) -> Set<String> {
        Set(objects.map { store.referenceObject(for: $0.objectID) as! String })
    }

    @Test("A fetch registers each object once per context; objects that go, a reset and a context that goes unregister them")
    func countsBalance() throws {
        let stack = try Stack()
        let writer = stack.context()
        let people = ["Ada", "Bea", "Cleo"].map { stack.person($0, in: writer) }
        try writer.save()
        let keys = Self.references(people, in: stack.store)
        #expect(stack.store.interest == Dictionary(uniqueKeysWithValues: keys.map { ($0, 1) }), "the saving context holds its objects")

        let reader = stack.context()
        do {
            let fetched = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(fetched.count == 3)
            #expect(stack.store.interest == Dictionary(uniqueKeysWithValues: keys.map { ($0, 2) }), "one more each, at the end of the fetch")
            _ = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(stack.store.interest.values.allSatisfy { $0 == 2 }, "a fetch of objects already registered adds nothing")
        }
        // The reader's objects went (their deinit): the store hears of it at the reader's next operation.
        reader.performAndWait {}
        #expect(stack.store.interest == Dictionary(uniqueKeysWithValues: keys.map { ($0, 1) }))

        writer.reset()
        #expect(stack.store.interest.isEmpty, "a reset lets go of every object")

        do {
            let other = stack.context()
            let fetched = try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(stack.store.interest.count == 3)
            withExtendedLifetime(fetched) {}
        }
        #expect(stack.store.interest.isEmpty, "a context that goes lets go of its objects")
        #expect(stack.store.registrationMistakes.isEmpty)
    }

    @Test("Temporary IDs are never passed: a new object is registered under its permanent ID, from obtainPermanentIDs or its save")
    func temporaryThenPermanent() throws {
        let stack = try Stack()
        let context = stack.context()
        let ada = stack.person("Ada", in: context)
        #expect(ada.objectID.isTemporaryID)
        context.performAndWait {}
        #expect(stack.store.interest.isEmpty, "a temporary ID belongs to no store")

        try context.obtainPermanentIDs(for: [ada])
        #expect(stack.store.interest == [stack.store.referenceObject(for: ada.objectID) as! String: 1])

        let bea = stack.person("Bea", in: context)
        try context.save()
        #expect(stack.store.interest.count == 2)
        #expect(stack.store.interest[stack.store.referenceObject(for: bea.objectID) as! String] == 1)
        #expect(stack.store.interest.values.allSatisfy { $0 == 1 }, "Ada's ID did not change at the save: not registered again")

        // A new object rolled back never had a permanent ID: nothing to tell.
        _ = stack.person("Cleo", in: context).objectID
        context.rollback()
        context.reset()
        #expect(stack.store.interest.isEmpty)
        #expect(stack.store.registrationMistakes.isEmpty)
    }

    @Test("Faults count: object(with:), a to-one's destination, the members of a to-many")
    func faults() throws {
        let stack = try Stack()
        let writer = stack.context()
        let ada = stack.person("Ada", in: writer)
        let cars = ["Beetle", "Mini"].map { stack.car($0, owner: ada, in: writer) }
        try writer.save()
        let adaID = ada.objectID, carID = cars[0].objectID
        writer.reset()
        #expect(stack.store.interest.isEmpty)

        let reader = stack.context()
        let car = reader.object(with: carID)
        #expect(stack.store.interest == [stack.store.referenceObject(for: carID) as! String: 1])
        let owner = try #require(car.value(forKey: "owner") as? NSManagedObject)
        #expect(owner.objectID == adaID)
        let owned = try #require(owner.value(forKey: "cars") as? Set<NSManagedObject>)
        #expect(owned.count == 2)
        reader.performAndWait {}
        #expect(stack.store.interest.count == 3)
        #expect(stack.store.interest.values.allSatisfy { $0 == 1 }, "the car reached again through the to-many is the one registered")
        reader.reset()
        #expect(stack.store.interest.isEmpty)
        #expect(stack.store.registrationMistakes.isEmpty)
    }

    @Test("The store is called outside the context's locks: a callback that uses the context does not deadlock")
    func callbacksMayUseTheContext() throws {
        let stack = try Stack()
        let writer = stack.context()
        for name in ["Ada", "Bea"] { _ = stack.person(name, in: writer) }
        try writer.save()
        writer.reset() // (the writer holds nothing, whenever it goes)

        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        nonisolated(unsafe) var seen: [Int] = []
        stack.store.onRegistration = {
            // The registry's lock and the store's own request lock: a deadlock if either were held elsewhere.
            seen.append(context.registeredObjects.count)
            seen.append((try? context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person"))) ?? -1)
        }
        context.performAndWait {
            _ = try? context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        }
        // Registered at the end of the fetch (its 2 objects alive), unregistered at the end of the
        // block (they went with it). (The objects the store's `execute` made and let go before the
        // fetch made its own count too: one delivery then registers an ID twice and unregisters it
        // once, and the callback runs once for each.)
        #expect(seen.count >= 4)
        #expect(seen.first == 2, "the first call is the fetch's registration, its objects registered")
        #expect(seen.dropLast().last == 0, "the last call is the unregistration, the objects gone")
        #expect(stride(from: 1, to: seen.count, by: 2).allSatisfy { seen[$0] == 2 }, "the context answers from the callback")
        context.performAndWait { context.reset() }
        stack.store.onRegistration = nil
        #expect(stack.store.interest.isEmpty)
        #expect(stack.store.registrationMistakes.isEmpty)
    }

    @Test("Objects that go on another thread are unregistered at the context's next operation")
    func objectsGoingOnAnotherThread() throws {
        let stack = try Stack()
        let writer = stack.context()
        _ = stack.person("Ada", in: writer)
        try writer.save()
        writer.reset()

        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        nonisolated(unsafe) var held: [NSManagedObject]? = try context.performAndWait {
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        }
        #expect(held?.count == 1)
        #expect(stack.store.interest.values.sorted() == [1])
        let gone = DispatchSemaphore(value: 0)
        Thread.detachNewThread { held = nil; gone.signal() }
        gone.wait()
        #expect(stack.store.interest.values.sorted() == [1], "not called from the deinit")
        context.performAndWait {}
        #expect(stack.store.interest.isEmpty)
        #expect(stack.store.registrationMistakes.isEmpty)
    }

    @Test("A context that goes inside another context's store request: its objects are unregistered when that request's operation ends")
    func contextGoingInsideAStoreRequest() throws {
        let stack = try Stack()
        let writer = stack.context()
        for name in ["Ada", "Bea"] { _ = stack.person(name, in: writer) }
        try writer.save()
        writer.reset()

        nonisolated(unsafe) var going: NSManagedObjectContext? = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        going!.persistentStoreCoordinator = stack.coordinator
        nonisolated(unsafe) var held: [NSManagedObject]? = try going!.performAndWait {
            try going!.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        }
        #expect(stack.store.interest.values.sorted() == [1, 1])
        // The last references to the context and its objects go inside the other context's fetch,
        // on its thread: the context's deinit can't call the store there.
        stack.store.onExecute = { held = nil; going = nil }
        let other = stack.context()
        let fetched = try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        stack.store.onExecute = nil
        #expect(going == nil && held == nil)
        // The IDs handed on wait in a list of the process's: a context of a test running at the
        // same time may take them first, and deliver them a moment later.
        let deadline = Date().addingTimeInterval(10)
        func interest() -> [Int] {
            stack.store.requestLock.lock()
            defer { stack.store.requestLock.unlock() }
            return stack.store.interest.values.sorted()
        }
        while interest() != [1, 1] && Date() < deadline { usleep(1000) }
        #expect(interest() == [1, 1], "the other context's objects only")
        withExtendedLifetime(fetched) {}
        other.reset()
        #expect(stack.store.interest.isEmpty, "the counts balance")
        #expect(stack.store.registrationMistakes.isEmpty)
    }

    @Test("A context on the built-in stores notes nothing: their IDs are told apart by their tag's bits")
    func builtInStoresNoteNothing() throws {
        let stack = try TestStack()
        let context = stack.context
        for index in 0..<3 { _ = stack.insert("Person", ["name": "P\(index)", "age": index]) }
        try context.save()
        context.reset()
        let fetched = try stack.fetch("Person")
        #expect(fetched.count == 3)
        let store = try #require(stack.coordinator.persistentStores.first)
        #expect(!IDKey.isReported(owner: fetched[0].objectID.key.packedOwner))
        #expect(store.tag & IDKey.reportedStoreFlag == 0)
        #expect(!context.hasNotedStoreRegistrations)

        let incremental = try Stack()
        #expect(incremental.store.tag & IDKey.reportedStoreFlag != 0)
        let other = incremental.context()
        _ = incremental.person("Ada", in: other)
        try other.save()
        #expect(other.hasNotedStoreRegistrations)
    }
}
