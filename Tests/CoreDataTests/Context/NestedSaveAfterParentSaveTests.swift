import Foundation
import Testing
@testable import CoreData

/// A child context saves again after its parent saved what the child had inserted: meanwhile the
/// child's temporary IDs became permanent in the parent (issue 21, B1).
@Suite("Nested contexts: a child's save after its parent's")
struct NestedSaveAfterParentSaveTests {
    private func storeNames(_ stack: TestStack) throws -> [String] {
        try RawSQLite.query(stack.url.path, "SELECT ZNAME FROM ZCAR ORDER BY ZNAME").map { $0[0] ?? "?" }
    }

    /// A child inserts a car and saves; the parent saves it to the store.
    private func insertedThroughTheChain(_ stack: TestStack, parent: NSManagedObjectContext,
                                         child: NSManagedObjectContext) throws -> NSManagedObject {
        let car = try child.performAndWait { () throws -> NSManagedObject in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
            car.setValue("first", forKey: "name")
            try child.save()
            return car
        }
        try parent.performAndWait { try parent.save() }
        #expect(try storeNames(stack) == ["first"])
        return car
    }

    /// Makes `change` in `child`, then saves the child and its parent.
    private func saveUpTheChain(_ child: NSManagedObjectContext, _ parent: NSManagedObjectContext, _ change: () -> Void) throws {
        try child.performAndWait {
            change()
            try child.save()
        }
        try parent.performAndWait { try parent.save() }
    }

    @Test func aChildsDeleteAfterTheParentSavedItsInsertReachesTheStore() throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        let car = try insertedThroughTheChain(stack, parent: parent, child: child)
        try saveUpTheChain(child, parent) { child.delete(car) }
        #expect(try storeNames(stack) == [], "the delete reached the store")
    }

    /// The parent saved, and its own object for the row has gone meanwhile (nothing held it):
    /// the child's change and then its delete still find the row.
    @Test func aChildsChangeThenDeleteAfterTheParentLetGoOfItsObject() throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        let car = try insertedThroughTheChain(stack, parent: parent, child: child)
        parent.performAndWait { #expect(parent.registeredObjects.isEmpty) }
        try saveUpTheChain(child, parent) { car.setValue("second", forKey: "name") }
        #expect(try storeNames(stack) == ["second"])
        try saveUpTheChain(child, parent) { child.delete(car) }
        #expect(try storeNames(stack) == [])
    }

    /// The child kept only the ID of what it inserted (temporary when read), and finds the object
    /// again by it after the parent saved: the object is the row the parent wrote.
    @Test(arguments: [false, true])
    func aChildFindsByItsTemporaryIDWhatTheParentSavedSince(deletes: Bool) throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        let id = try child.performAndWait { () throws -> NSManagedObjectID in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
            car.setValue("first", forKey: "name")
            let id = car.objectID
            try child.save()
            return id
        }
        #expect(id.isTemporaryID)
        try parent.performAndWait { try parent.save() }
        child.performAndWait { #expect(child.registeredObjects.isEmpty) }
        try saveUpTheChain(child, parent) {
            let car = child.object(with: id)
            #expect(!car.objectID.isTemporaryID)
            #expect(car.value(forKey: "name") as? String == "first")
            if deletes { child.delete(car) } else { car.setValue("second", forKey: "name") }
        }
        #expect(try storeNames(stack) == (deletes ? [] : ["second"]))
    }

    /// A child read an object its parent had inserted (under its temporary ID); the parent
    /// saved it since. The child's change, then its delete, reach the row.
    @Test func aChildsObjectReadWhileItsParentsInsertWasNewFollowsItsPermanentID() throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        parent.performAndWait {
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: parent).setValue("parent's", forKey: "name")
        }
        let car = try child.performAndWait { try child.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).first! }
        child.performAndWait { #expect(car.objectID.isTemporaryID) }
        try parent.performAndWait { try parent.save() }
        try saveUpTheChain(child, parent) {
            #expect(!car.objectID.isTemporaryID, "the child's object takes the row's permanent ID")
            car.setValue("changed", forKey: "name")
        }
        #expect(try storeNames(stack) == ["changed"])
        try saveUpTheChain(child, parent) { child.delete(car) }
        #expect(try storeNames(stack) == [])
    }

    /// Three levels: a background child of the main context reads what a sibling inserted
    /// (saved into the main context, not yet to the store); the chain then saves it. The
    /// reader's later delete reaches the store.
    @Test func aSiblingsInsertReadBeforeTheChainSavedItIsDeletedLater() throws {
        let stack = try TestStack()
        let (root, main) = stack.parentAndChild()
        func background() -> NSManagedObjectContext {
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.parent = main
            return context
        }
        let writer = background(), reader = background()
        try writer.performAndWait {
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: writer)
            person.setValue("Ada", forKey: "name")
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: writer)
            car.setValue("sibling's", forKey: "name")
            car.setValue(person, forKey: "owner")
            try writer.save()
        }
        let car = try reader.performAndWait { try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).first! }
        try main.performAndWait { try main.save() }
        try root.performAndWait { try root.save() }
        try reader.performAndWait {
            reader.delete(car)
            try reader.save()
        }
        try main.performAndWait { try main.save() }
        try root.performAndWait { try root.save() }
        #expect(try storeNames(stack) == [])
        #expect(try stack.rows("SELECT count(*) FROM ZPERSON") == [["1"]])
    }

    /// Two children of one parent: one gives an owner to a car the other inserted; then the
    /// inserting child, which never saw the owner, deletes the car. The parent drops the car
    /// from the owner's cars (it saved with a relationship to an object gone from it: 133010).
    @Test(arguments: [false, true])
    func aChildDeletesWhatASiblingRelatedMeanwhile(parentSavedTheCar: Bool) throws {
        let stack = try TestStack()
        let (parent, first) = stack.parentAndChild()
        let second = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        second.parent = parent
        let car = try first.performAndWait { () throws -> NSManagedObject in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: first)
            car.setValue("shared", forKey: "name")
            try first.save()
            return car
        }
        if parentSavedTheCar { try parent.performAndWait { try parent.save() } }
        try second.performAndWait {
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: second)
            person.setValue("Ada", forKey: "name")
            let car = try second.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).first!
            car.setValue(person, forKey: "owner")
            try second.save()
        }
        try saveUpTheChain(first, parent) {
            #expect(car.value(forKey: "owner") == nil, "the first child never saw the owner")
            first.delete(car)
        }
        #expect(try storeNames(stack) == [])
        #expect(try stack.rows("SELECT ZNAME FROM ZPERSON") == [["Ada"]])
        try parent.performAndWait {
            let person = try parent.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).first!
            #expect((person.value(forKey: "cars") as? Set<NSManagedObject>)?.isEmpty == true)
            person.setValue("Ada L.", forKey: "name")
            try parent.save() // the person holds no object gone from the context
        }
    }

    /// A main-queue child of a private parent inserts; the parent saves; later the object is
    /// found through a batched fetch and deleted.
    @Test(.timeLimit(.minutes(1)))
    @MainActor
    func aMainQueueChildDeletesThroughABatchedFetchWhatItInsertedBeforeTheParentSaved() async throws {
        let stack = try TestStack()
        let parent = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        parent.persistentStoreCoordinator = stack.coordinator
        let main = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        main.parent = parent
        try main.performAndWait {
            for index in 0..<30 {
                NSEntityDescription.insertNewObject(forEntityName: "Car", into: main).setValue(String(format: "car %02d", index), forKey: "name")
            }
            try main.save()
        }
        try await parent.perform { try parent.save() }
        try main.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            request.fetchBatchSize = 20
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let cars = try main.fetch(request)
            #expect(cars.count == 30)
            for car in cars where (car.value(forKey: "name") as? String ?? "") >= "car 25" { main.delete(car) }
            cars[3].setValue("car 03b", forKey: "name")
            try main.save()
        }
        try await parent.perform { try parent.save() }
        let names = try storeNames(stack)
        #expect(names.count == 25)
        #expect(names.contains("car 03b") && !names.contains("car 03") && !names.contains("car 27"))
    }

    /// A private parent on the store, a main-queue child of it and several background children
    /// of that, inserting, changing, relating and deleting objects and saving up the chain at
    /// once. Each worker deletes and renames only cars it inserted, and gives its person cars
    /// other workers inserted (which their workers may have saved up the chain since, and never
    /// delete). Every save succeeds, and the store ends up with exactly the cars the workers kept.
    @Test(.timeLimit(.minutes(1)))
    func nestedLoadLosesNothing() async throws {
        let stack = try TestStack()
        let root = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        root.persistentStoreCoordinator = stack.coordinator
        let main = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        main.parent = root
        let workers = 4, rounds = 12
        let failures = CoreData.Locked<[String]>([])
        let expected = CoreData.Locked<Set<String>>([])
        /// Saves the main context, then the root: the save chain of a typical app.
        @Sendable func saveUpTheChain() {
            do {
                try main.performAndWait { if main.hasChanges { try main.save() } }
                try root.performAndWait { if root.hasChanges { try root.save() } }
            } catch {
                failures.withLock { $0.append("chain: \(error)") }
            }
        }
        @Sendable func work(_ worker: Int) {
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.parent = main
            let names: [String] = context.performAndWait {
                var kept: [NSManagedObject] = []
                let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                person.setValue("w\(worker)", forKey: "name")
                for round in 0..<rounds {
                    do {
                        var new: [NSManagedObject] = []
                        for index in 0..<3 {
                            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
                            car.setValue("w\(worker) r\(round) \(index)", forKey: "name")
                            new.append(car)
                        }
                        // Its car 0 of the last round (saved up the chain since): deleted; its
                        // car 1 of the round before: renamed.
                        if round >= 1, let index = kept.firstIndex(where: { $0.value(forKey: "name") as? String == "w\(worker) r\(round - 1) 0" }) {
                            context.delete(kept.remove(at: index))
                        }
                        if round >= 2, let car = kept.first(where: { $0.value(forKey: "name") as? String == "w\(worker) r\(round - 2) 1" }) {
                            car.setValue("w\(worker) r\(round - 2) 1 changed", forKey: "name")
                        }
                        // A car 2 of another worker, read through the chain: given to this worker's person.
                        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
                        request.predicate = NSPredicate(format: "name ENDSWITH ' 2' AND NOT name BEGINSWITH %@", "w\(worker) ")
                        if let other = try context.fetch(request).randomElement() { other.setValue(person, forKey: "owner") }
                        kept += new
                        try context.save()
                    } catch {
                        failures.withLock { $0.append("worker \(worker) round \(round): \(error)") }
                    }
                    saveUpTheChain()
                }
                return kept.map { $0.value(forKey: "name") as? String ?? "?" }
            }
            expected.withLock { $0.formUnion(names) }
        }
        // Off the test's task: the main queue must stay free for the main context.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: workers) { work($0) }
                saveUpTheChain()
                done.resume()
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(Set(try storeNames(stack)) == expected.withLock { $0 })
    }
}
