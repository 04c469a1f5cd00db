import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `NSManagedObjectContext.assign(_:to:)`: which of several stores holding an entity a new
/// object is saved in.
@Suite struct AssignToStoreTests {
    /// A stack with a second SQLite store, `Second.sqlite`, holding the same entities.
    private func twoStores() throws -> (TestStack, first: NSPersistentStore, second: NSPersistentStore) {
        let stack = try TestStack()
        let second = try stack.coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil,
                                                              at: stack.directory.appendingPathComponent("Second.sqlite"))
        return (stack, stack.coordinator.persistentStores[0], second)
    }

    private func names(in store: NSPersistentStore) throws -> [String] {
        try RawSQLite.query(store.url!.path, "SELECT ZNAME FROM ZCAR ORDER BY ZNAME").map { $0[0] ?? "" }
    }

    @Test func aNewObjectIsSavedInTheStoreItWasAssignedTo() throws {
        let (stack, first, second) = try twoStores()
        let a = stack.insert("Car", ["name": "a"])
        let b = stack.insert("Car", ["name": "b"])
        let c = stack.insert("Car", ["name": "c"])
        stack.context.assign(b, to: second)
        stack.context.assign(c, to: first)
        try stack.context.save()
        #expect(try names(in: first) == ["a", "c"])
        #expect(try names(in: second) == ["b"])
        #expect(a.objectID.persistentStore === first && b.objectID.persistentStore === second && c.objectID.persistentStore === first)
        // Read back from its store, by its ID.
        #expect(try stack.newContext().existingObject(with: b.objectID).value(forKey: "name") as? String == "b")
    }

    @Test func obtainPermanentIDsTakesTheIDFromTheAssignedStore() throws {
        let (stack, _, second) = try twoStores()
        let car = stack.insert("Car", ["name": "early"])
        stack.context.assign(car, to: second)
        try stack.context.obtainPermanentIDs(for: [car])
        #expect(car.objectID.persistentStore === second && !car.objectID.isTemporaryID)
        try stack.context.save()
        #expect(try names(in: second) == ["early"])
    }

    @Test func theAssignmentGoesUpWithAChildsSave() throws {
        let (stack, first, second) = try twoStores()
        let parent = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        parent.persistentStoreCoordinator = stack.coordinator
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        try child.performAndWait {
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
            car.setValue("from the child", forKey: "name")
            child.assign(car, to: second)
            try child.save()
        }
        try parent.performAndWait { try parent.save() }
        #expect(try names(in: first).isEmpty)
        #expect(try names(in: second) == ["from the child"])
    }

    @Test func anObjectThatIsNotNewOrHasItsIDStaysWhereItIs() throws {
        let (stack, first, second) = try twoStores()
        let saved = stack.insert("Car", ["name": "saved"])
        try stack.context.save()
        stack.context.assign(saved, to: second) // not new: no effect
        saved.setValue("renamed", forKey: "name")
        let early = stack.insert("Car", ["name": "early"])
        try stack.context.obtainPermanentIDs(for: [early])
        stack.context.assign(early, to: second) // its ID names its store already
        try stack.context.save()
        #expect(try names(in: first) == ["early", "renamed"])
        #expect(try names(in: second).isEmpty)
    }

    @Test func aStoreRemovedBeforeTheSaveFailsItAndNothingIsWritten() throws {
        let (stack, first, second) = try twoStores()
        stack.insert("Car", ["name": "kept back"])
        let car = stack.insert("Car", ["name": "orphan"])
        stack.context.assign(car, to: second)
        try stack.coordinator.remove(second)
        #expect { try stack.context.save() } throws: { error in
            (error as NSError).code == NSPersistentStoreOperationError && (error as NSError).localizedDescription.contains("no longer one of the coordinator's stores")
        }
        #expect(try names(in: first).isEmpty)
    }

    /// A relationship of any kind between objects of two stores is refused (133010), nothing
    /// written: a to-one to a new object and to a saved one (whose key the other store would
    /// read as one of its own), and an ordered one-to-many.
    @Test func aRelationshipAcrossStoresIsRefusedAndNothingIsWritten() throws {
        let (stack, first, second) = try twoStores()
        func expectRefused(_ comment: Comment) throws {
            #expect(throws: NSError.self, comment) { try stack.context.save() }
            do { try stack.context.save() } catch { #expect((error as NSError).code == NSManagedObjectExternalRelationshipError, comment) }
            stack.context.rollback()
        }
        let person = stack.insert("Person", ["name": "new"])
        let car = stack.insert("Car", ["name": "c"])
        stack.context.assign(car, to: second)
        car.setValue(person, forKey: "owner")
        try expectRefused("a to-one to a new object of the other store")
        #expect(try names(in: first).isEmpty && names(in: second).isEmpty)

        let alice = stack.insert("Person", ["name": "alice"])
        try stack.context.save()
        let later = stack.insert("Car", ["name": "later"])
        stack.context.assign(later, to: second)
        later.setValue(alice, forKey: "owner")
        try expectRefused("a to-one to a saved object of the other store")

        let playlist = stack.insert("Playlist", ["title": "list"])
        let song = stack.insert("Song", ["title": "song"])
        stack.context.assign(song, to: second)
        playlist.mutableOrderedSetValue(forKey: "songs").add(song)
        try expectRefused("an ordered one-to-many")
        #expect(try names(in: first).isEmpty && names(in: second).isEmpty)
        #expect(try RawSQLite.query(second.url!.path, "SELECT count(*) FROM ZSONG") == [["0"]])
    }

    /// An object rolled back keeps no assignment: inserted again, here or in a context of
    /// another coordinator, it goes to its entity's first store.
    @Test func aRolledBackObjectLeavesItsAssignmentBehind() throws {
        let (stack, first, second) = try twoStores()
        let car = stack.insert("Car", ["name": "again"])
        stack.context.assign(car, to: second)
        stack.context.rollback()
        stack.context.insert(car)
        try stack.context.save()
        #expect(try names(in: first) == ["again"] && names(in: second).isEmpty)

        let moved = stack.insert("Car", ["name": "moved"])
        stack.context.assign(moved, to: second)
        stack.context.rollback()
        let other = try TestStack(model: stack.model)
        other.context.insert(moved)
        try other.context.save()
        #expect(try other.storedCarNames() == ["moved"])
    }

    /// A store you write, assigned, makes the object's ID itself before the save (its
    /// `obtainPermanentIDs`) and receives the object; the others go to the first store.
    @Test func aStoreYouWriteReceivesTheObjectsAssignedToIt() throws {
        DictionaryStore.register()
        let (stack, first, _) = try twoStores()
        let dictionary = try #require(try stack.coordinator.addPersistentStore(ofType: DictionaryStore.storeType, configurationName: nil,
                                                                             at: URL(string: "dictionary://assign")!) as? DictionaryStore)
        let car = stack.insert("Car", ["name": "kept in a dictionary"])
        let plain = stack.insert("Car", ["name": "plain"])
        stack.context.assign(car, to: dictionary)
        try stack.context.save()
        #expect(car.objectID.persistentStore === dictionary && plain.objectID.persistentStore === first)
        #expect(dictionary.records.count == 1)
        #expect(try names(in: first) == ["plain"])
    }

    /// A fetch limited by `affectedStores` leaves out unsaved objects bound for other stores.
    @Test func aFetchOfSomeStoresLeavesOutNewObjectsBoundForOthers() throws {
        let (stack, first, second) = try twoStores()
        let car = stack.insert("Car", ["name": "bound for the second"])
        stack.context.assign(car, to: second)
        stack.insert("Car", ["name": "bound for the first"])
        func names(_ store: NSPersistentStore) throws -> [String] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            request.affectedStores = [store]
            return try stack.context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
        }
        #expect(try names(first) == ["bound for the first"])
        #expect(try names(second) == ["bound for the second"])
    }

    /// Apple raises "Can't assign an object to a store that does not contain the object's
    /// entity": a store of the coordinator whose configuration lacks it.
    @Test func aStoreThatDoesNotHoldTheEntityTraps() async throws {
        // A trap is a signal; a thrown error in the set-up would be an exit code instead.
        await #expect(processExitsWith: .signal(SIGILL)) {
            let folder = try! TemporaryFolder()
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.makeWithConfigurations())
            try! coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Music", at: folder.url.appendingPathComponent("M.sqlite"))
            let garage = try! coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Garage", at: folder.url.appendingPathComponent("G.sqlite"))
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            let song = NSEntityDescription.insertNewObject(forEntityName: "Song", into: context)
            context.assign(song, to: garage)
            exit(0) // not reached
        }
    }

    @Test("A fetch of several stores is sorted and limited as one result, whichever way it is read")
    func aFetchOfSeveralStoresIsSortedAndLimitedAsAWhole() throws {
        let (stack, _, second) = try twoStores()
        stack.insert("Car", ["name": "b"]); stack.insert("Car", ["name": "d"])
        for name in ["a", "c"] { stack.context.assign(stack.insert("Car", ["name": name]), to: second) }
        try stack.context.save()
        let context = stack.newContext()
        func request(limit: Int = 0, offset: Int = 0, batch: Int = 0) -> NSFetchRequest<NSManagedObject> {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            (request.fetchLimit, request.fetchOffset, request.fetchBatchSize) = (limit, offset, batch)
            return request
        }
        func names(_ objects: [NSManagedObject]) -> [String?] { objects.map { $0.value(forKey: "name") as? String } }
        #expect(names(try context.fetch(request())) == ["a", "b", "c", "d"])
        #expect(names(try context.fetch(request(limit: 2))) == ["a", "b"])
        #expect(names(try context.fetch(request(limit: 2, offset: 1))) == ["b", "c"])
        #expect(names(try context.fetch(request(batch: 2))) == ["a", "b", "c", "d"])
        #expect(try context.count(for: request(limit: 2)) == 2)
        #expect(try context.count(for: request(limit: 3, offset: 2)) == 2)
        let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Car")
        ids.resultType = .managedObjectIDResultType
        ids.sortDescriptors = [NSSortDescriptor(key: "name", ascending: false)]
        ids.fetchLimit = 1
        #expect(try context.fetch(ids).map { try context.existingObject(with: $0).value(forKey: "name") as? String } == ["d"])
        // With unsaved changes too.
        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("0", forKey: "name")
        #expect(names(try context.fetch(request(limit: 2, batch: 1))) == ["0", "a"])
    }
}
