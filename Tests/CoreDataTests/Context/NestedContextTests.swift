import Foundation
import Testing
@testable import CoreData

/// Contexts whose parent store is another context: reads walk up the chain, saves go one level up.
@Suite("Nested contexts")
struct NestedContextTests {
    private func names(_ context: NSManagedObjectContext, _ entity: String = "Car") throws -> [String] {
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity)
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            return try context.fetch(request).map { $0.value(forKey: "name") as? String ?? "?" }
        }
    }

    private func storeNames(_ stack: TestStack) throws -> [String] { try stack.storedCarNames() }

    @Test func childReadsSeeTheParentsUnsavedChanges() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        stack.insert("Car", ["name": "b"])
        try stack.context.save()
        let (parent, child) = stack.parentAndChild()
        try parent.performAndWait {
            let cars = try parent.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
            cars.first { $0.value(forKey: "name") as? String == "a" }?.setValue("a2", forKey: "name")
            parent.delete(cars.first { $0.value(forKey: "name") as? String == "b" }!)
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: parent).setValue("c", forKey: "name")
        }
        #expect(try names(child) == ["a2", "c"])
        let count = try child.performAndWait { try child.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) }
        #expect(count == 2)
        // A child's fault takes the parent's current values.
        let carID = try parent.performAndWait {
            try parent.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).first { $0.value(forKey: "name") as? String == "a2" }!.objectID
        }
        let name = child.performAndWait { child.object(with: carID).value(forKey: "name") as? String }
        #expect(name == "a2")
        #expect(try storeNames(stack) == ["a", "b"], "nothing reached the store")
    }

    @Test func childSaveGoesOneLevelUpOnly() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let (parent, child) = stack.parentAndChild()
        let insertedID = try child.performAndWait { () throws -> NSManagedObjectID in
            let cars = try child.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
            cars[0].setValue("a2", forKey: "name")
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
            car.setValue("new", forKey: "name")
            try child.save()
            #expect(!child.hasChanges)
            #expect(!car.isInserted)
            return car.objectID
        }
        #expect(insertedID.isTemporaryID)
        parent.performAndWait {
            #expect(parent.hasChanges)
            #expect(parent.insertedObjects.map(\.objectID) == [insertedID], "the parent holds the child's insert under the same ID")
            #expect(parent.updatedObjects.count == 1)
        }
        #expect(try names(parent) == ["a2", "new"])
        #expect(try storeNames(stack) == ["a"], "a child's save does not write the store")
        try parent.performAndWait { try parent.save() }
        #expect(try storeNames(stack) == ["a2", "new"])
    }

    @Test func deletesGoUpTheChain() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        stack.insert("Car", ["name": "b"])
        try stack.context.save()
        let (parent, child) = stack.parentAndChild()
        try child.performAndWait {
            let cars = try child.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
            child.delete(cars.first { $0.value(forKey: "name") as? String == "b" }!)
            try child.save()
        }
        #expect(try names(parent) == ["a"])
        #expect(try storeNames(stack) == ["a", "b"])
        try parent.performAndWait { try parent.save() }
        #expect(try storeNames(stack) == ["a"])
    }

    @Test func anObjectInsertedInAChildKeepsOneIdentityThroughTwoSaves() throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        let car = try child.performAndWait { () throws -> NSManagedObject in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
            car.setValue("kept", forKey: "name")
            try child.save()
            return car
        }
        try parent.performAndWait { try parent.save() }
        let permanent = try parent.performAndWait {
            try parent.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).first!.objectID
        }
        #expect(!permanent.isTemporaryID)
        try child.performAndWait {
            #expect(child.object(with: permanent) === car, "the permanent ID finds the child's object")
            #expect(car.objectID == permanent, "and the object takes the permanent ID")
            #expect(try child.existingObject(with: permanent) === car)
            // A later change in the child reaches the same row.
            car.setValue("changed", forKey: "name")
            try child.save()
        }
        try parent.performAndWait { try parent.save() }
        #expect(try storeNames(stack) == ["changed"])
    }

    @Test func permanentIDsObtainedEarlyInAChildAreTheStoresKeys() throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        let id = try child.performAndWait { () throws -> NSManagedObjectID in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
            car.setValue("early", forKey: "name")
            try child.obtainPermanentIDs(for: [car])
            #expect(!car.objectID.isTemporaryID)
            try child.save()
            return car.objectID
        }
        try parent.performAndWait {
            #expect(parent.insertedObjects.first?.objectID == id)
            try parent.save()
            #expect(try parent.existingObject(with: id).value(forKey: "name") as? String == "early")
        }
        let pk = try RawSQLite.query(stack.url.path, "SELECT Z_PK FROM ZCAR")
        #expect(pk.first?.first.flatMap { $0.flatMap(Int64.init) } == id.key.value)
    }

    @Test func relationshipsCrossTheChain() throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        try child.performAndWait {
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: child)
            person.setValue("Ada", forKey: "name")
            for name in ["x", "y"] {
                let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
                car.setValue(name, forKey: "name")
                car.setValue(person, forKey: "owner")
            }
            try child.save()
        }
        try parent.performAndWait {
            let person = try parent.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).first!
            #expect((person.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
            try parent.save()
        }
        // A second child edits the relationship of objects it reads through the parent.
        let second = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        second.parent = parent
        try second.performAndWait {
            let person = try second.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).first!
            let cars = person.mutableSetValue(forKey: "cars")
            #expect(cars.count == 2)
            let x = try second.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).first { $0.value(forKey: "name") as? String == "x" }!
            cars.remove(x)
            try second.save()
        }
        try parent.performAndWait { try parent.save() }
        let reopened = try stack.reopen()
        let person = try reopened.fetch("Person").first!
        #expect((person.value(forKey: "cars") as? Set<NSManagedObject>)?.compactMap { $0.value(forKey: "name") as? String } == ["y"])
        let x = try reopened.fetch("Car") { $0.predicate = NSPredicate(format: "name == %@", "x") }.first!
        #expect(x.value(forKey: "owner") == nil)
    }

    @Test func aChildsFetchLimitCountsItsOwnAndItsParentsChanges() throws {
        let stack = try TestStack()
        for name in ["b", "d"] { stack.insert("Car", ["name": name]) }
        try stack.context.save()
        let (parent, child) = stack.parentAndChild()
        parent.performAndWait { NSEntityDescription.insertNewObject(forEntityName: "Car", into: parent).setValue("c", forKey: "name") }
        let firstTwo = try child.performAndWait { () throws -> [String] in
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: child).setValue("a", forKey: "name")
            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            request.fetchLimit = 2
            return try child.fetch(request).map { $0.value(forKey: "name") as! String }
        }
        #expect(firstTwo == ["a", "b"])
    }

    /// Seed 001: a private "daddy" context on the coordinator, a main-queue default context as
    /// its child, and private background-task contexts under that; the save chain with and
    /// without waiting. On each store kind (``TestStoreKind``).
    @Test(.timeLimit(.minutes(1)), arguments: TestStoreKind.available)
    func seed001ThreeLevels(_ kind: TestStoreKind) async throws {
        let stack = try TestStack(kind)
        // The stack is set up on a background queue (a migration may take 30 s): the model, the
        // coordinator and its store, while the caller goes on.
        let (storeURL, storeType, model) = (stack.url, stack.storeType, stack.model)
        let coordinator: NSPersistentStoreCoordinator = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                let psc = NSPersistentStoreCoordinator(managedObjectModel: model)
                continuation.resume(with: Result { try psc.addPersistentStore(ofType: storeType, configurationName: nil, at: storeURL, options: nil); return psc })
            }
        }
        let daddy = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        daddy.persistentStoreCoordinator = coordinator
        let main = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        main.parent = daddy
        func backgroundTaskContext() -> NSManagedObjectContext {
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.parent = main
            return context
        }
        func saveDefaultContext(wait: Bool) async throws {
            if main.hasChanges { try main.performAndWait { try main.save() } }
            if wait {
                try daddy.performAndWait { try daddy.save() }
            } else {
                try await daddy.perform { try daddy.save() }
            }
        }
        let task = backgroundTaskContext()
        try task.performAndWait {
            for index in 0..<10 { NSEntityDescription.insertNewObject(forEntityName: "Car", into: task).setValue("car \(index)", forKey: "name") }
            try task.save()
        }
        try await saveDefaultContext(wait: true)
        func seedStoreCount() throws -> Int { try stack.storedCarNames().count }
        #expect(try seedStoreCount() == 10)

        let second = backgroundTaskContext()
        try second.performAndWait {
            let cars = try second.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
            #expect(cars.count == 10)
            for car in cars.prefix(3) { second.delete(car) }
            try second.save()
        }
        try await saveDefaultContext(wait: false)
        #expect(try seedStoreCount() == 7)
        #expect(try names(main).count == 7)
    }

    /// Many children of one parent saving at the same time (a known crash in other stacks).
    @Test(.timeLimit(.minutes(1)))
    func manyChildrenSaveIntoOneParentAtOnce() throws {
        let stack = try TestStack()
        let parent = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        parent.persistentStoreCoordinator = stack.coordinator
        let children = 8, each = 50
        DispatchQueue.concurrentPerform(iterations: children) { worker in
            let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            child.parent = parent
            child.performAndWait {
                for index in 0..<each {
                    NSEntityDescription.insertNewObject(forEntityName: "Car", into: child).setValue("w\(worker)-\(index)", forKey: "name")
                }
                try! child.save()
            }
        }
        parent.performAndWait { #expect(parent.insertedObjects.count == children * each) }
        try parent.performAndWait { try parent.save() }
        #expect(try storeNames(stack).count == children * each)
    }

    /// Seed 002: the nested stack — a private persisting context on the coordinator, the main
    /// context its child; the main context saves and the persisting context saves asynchronously.
    /// A child of the main context fetches from the main thread. On each store kind.
    @Test(.timeLimit(.minutes(1)), arguments: TestStoreKind.available)
    @MainActor
    func seed002NestedStackAndChildOfMainFetch(_ kind: TestStoreKind) async throws {
        let stack = try TestStack(kind)
        let persisting = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        persisting.persistentStoreCoordinator = stack.coordinator
        let main = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        main.parent = persisting
        main.performAndWait {
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: main).setValue("from main", forKey: "name")
        }
        func save() async throws {
            guard main.hasChanges || persisting.hasChanges else { return }
            try main.performAndWait { try main.save() }
            try await persisting.perform { try persisting.save() }
        }
        try await save()
        #expect(try storeNames(stack) == ["from main"])

        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = main
        let fetched = try child.performAndWait {
            try child.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).map { $0.value(forKey: "name") as? String }
        }
        #expect(fetched == ["from main"])
    }

    @Test func aChildsNewObjectWhoseIDTheParentAlreadyHoldsAsAFaultIsSaved() throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        let id = child.performAndWait { () -> NSManagedObjectID in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
            car.setValue("new", forKey: "name")
            return car.objectID
        }
        // The parent is handed the temporary ID before the child saves (a UI, a queue).
        let fault = parent.performAndWait { parent.object(with: id) }
        try child.performAndWait { try child.save() }
        try parent.performAndWait {
            #expect(parent.insertedObjects.contains(fault))
            #expect(fault.value(forKey: "name") as? String == "new")
            #expect(!fault.isDeleted)
            try parent.save()
        }
        #expect(try storeNames(stack) == ["new"])
    }

    @Test func obtainingPermanentIDsLeavesObjectsThisContextDidNotInsert() throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        let id = parent.performAndWait { () -> NSManagedObjectID in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: parent)
            car.setValue("parent's", forKey: "name")
            return car.objectID
        }
        try child.performAndWait {
            let seen = child.object(with: id)
            let own = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
            own.setValue("child's", forKey: "name")
            try child.obtainPermanentIDs(for: [seen, own])
            #expect(seen.objectID.isTemporaryID, "the parent's insert keeps the ID its parent knows")
            #expect(!own.objectID.isTemporaryID)
            try child.save()
        }
        try parent.performAndWait { try parent.save() }
        #expect(try storeNames(stack) == ["child's", "parent's"])
        // The child's view of the parent's object still reads it.
        let name = child.performAndWait { child.object(with: id).value(forKey: "name") as? String }
        #expect(name == "parent's")
        // Another context's object is left alone.
        let other = stack.newContext()
        let foreign = NSEntityDescription.insertNewObject(forEntityName: "Car", into: other)
        try stack.context.obtainPermanentIDs(for: [foreign])
        #expect(foreign.objectID.isTemporaryID)
    }
}
