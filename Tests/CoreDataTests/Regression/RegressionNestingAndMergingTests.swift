import Foundation
import Testing
@testable import CoreData

/// Cases found by review of nested contexts, merging and merge policies.
@Suite("Review: nesting, merging, policies")
struct RegressionNestingAndMergingTests {
    private func named(_ objects: [NSManagedObject], _ name: String) -> NSManagedObject {
        objects.first { $0.value(forKey: "name") as? String == name }!
    }

    private func fetch(_ context: NSManagedObjectContext, _ entity: String) throws -> [NSManagedObject] {
        try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity))
    }

    /// A child moves a car from P to Q, then deletes P (cascade): the car must survive in the
    /// parent and the store, as it does in a single context.
    @Test func aChildsMoveThenCascadingDeleteKeepsTheMovedObject() throws {
        let stack = try TestStack()
        let p = stack.insert("Person", ["name": "P"]), q = stack.insert("Person", ["name": "Q"])
        stack.insert("Car", ["name": "car", "owner": p])
        _ = q
        try stack.context.save()
        let (parent, child) = stack.parentAndChild()
        try child.performAndWait {
            let people = try fetch(child, "Person")
            try fetch(child, "Car")[0].setValue(named(people, "Q"), forKey: "owner")
            child.delete(named(people, "P"))
            try child.save()
        }
        try parent.performAndWait {
            #expect(try fetch(parent, "Car").count == 1)
            try parent.save()
        }
        let reopened = try stack.reopen()
        let car = try #require(try reopened.fetch("Car").first)
        #expect((car.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String == "Q")
        #expect(try reopened.fetch("Person").count == 1)
    }

    /// The parent gives a child's insert a permanent ID early; the child's later edit still arrives.
    @Test func permanentIDsObtainedByTheParentForAChildsInsert() throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        let car = try child.performAndWait { () throws -> NSManagedObject in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
            car.setValue("v1", forKey: "name")
            try child.save()
            return car
        }
        try parent.performAndWait {
            try parent.obtainPermanentIDs(for: Array(parent.insertedObjects))
            try parent.save()
        }
        try child.performAndWait {
            car.setValue("v2", forKey: "name")
            try child.save()
            #expect(!car.objectID.isTemporaryID)
        }
        try parent.performAndWait {
            #expect(parent.hasChanges)
            try parent.save()
        }
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZNAME FROM ZCAR").first == ["v2"])
    }

    /// A child's fetch that excludes its own pending changes still sees what it saved into the parent.
    @Test func aChildFetchWithoutPendingChangesSeesItsParentsUnsavedState() throws {
        let stack = try TestStack()
        let (_, child) = stack.parentAndChild()
        let (count, fetched) = try child.performAndWait { () throws -> (Int, Int) in
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: child).setValue("saved up", forKey: "name")
            try child.save()
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: child).setValue("pending", forKey: "name")
            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            request.includesPendingChanges = false
            return (try child.count(for: request), try child.fetch(request).count)
        }
        #expect(count == 1)
        #expect(fetched == 1)
    }

    /// A child's edit of an object its parent deleted is an error, not a silent loss.
    @Test func aChildsEditOfAnObjectItsParentDeletedFails() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let (parent, child) = stack.parentAndChild()
        let car = try child.performAndWait { try fetch(child, "Car")[0] }
        try parent.performAndWait {
            parent.delete(try fetch(parent, "Car")[0])
            try parent.save()
        }
        let error = child.performAndWait { () -> NSError? in
            car.setValue("edited", forKey: "name")
            do { try child.save(); return nil } catch { return error as NSError }
        }
        #expect(error?.code == NSManagedObjectMergeError)
        #expect(child.performAndWait { child.hasChanges }, "the child keeps its changes")
    }

    /// Rollback resolves a conflict on an object whose to-one it changed: the inverse follows.
    @Test func rollbackKeepsInversesInStep() throws {
        let stack = try TestStack()
        let p1 = stack.insert("Person", ["name": "P1"]), p2 = stack.insert("Person", ["name": "P2"])
        let car = stack.insert("Car", ["name": "car", "owner": p1])
        try stack.context.save()
        let other = try stack.reopen()
        try other.fetch("Car")[0].setValue(1999, forKey: "year")
        try other.context.save()
        car.setValue(p2, forKey: "owner")
        stack.context.mergePolicy = NSRollbackMergePolicy
        try stack.context.save()
        #expect(car.value(forKey: "owner") as? NSManagedObject === p1)
        #expect((p1.value(forKey: "cars") as? Set<NSManagedObject>) == [car])
        #expect((p2.value(forKey: "cars") as? Set<NSManagedObject>)?.isEmpty == true)
    }

    /// Rollback discards the conflicting object's state only: a car that is not in conflict
    /// keeps its new owner (the rollback of the conflicting owner's `cars` wrote it as nil).
    @Test func rollbackLeavesANonConflictingMembersOwnerAlone() throws {
        let stack = try TestStack()
        let p1 = stack.insert("Person", ["name": "P1"]), p2 = stack.insert("Person", ["name": "P2"])
        stack.insert("Car", ["name": "c1", "owner": p1])
        let c2 = stack.insert("Car", ["name": "c2", "owner": p2])
        try stack.context.save()
        let other = try stack.reopen()
        try other.fetch("Person").first { $0.value(forKey: "name") as? String == "P1" }!.setValue(40, forKey: "age")
        try other.context.save()
        c2.setValue(p1, forKey: "owner") // p1's cars change too: p1 is in conflict, c2 is not
        stack.context.mergePolicy = NSRollbackMergePolicy
        try stack.context.save()
        #expect(try stack.rawRows("SELECT ZCAR.ZNAME, ZPERSON.ZNAME FROM ZCAR LEFT JOIN ZPERSON ON ZPERSON.Z_PK = ZCAR.ZOWNER ORDER BY 1")
                == [["c1", "P1"], ["c2", "P1"]])
        #expect(c2.value(forKey: "owner") as? NSManagedObject === p1)
        #expect((p1.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
        #expect(p1.value(forKey: "age") as? Int == 40)
    }

    /// Merging a save made through another coordinator on the same file.
    @Test func mergingIDsFromAnotherCoordinator() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let main = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        main.persistentStoreCoordinator = stack.coordinator
        let car = try main.performAndWait { try fetch(main, "Car")[0] }
        let other = try stack.reopen()
        let remote = try other.fetch("Car")[0]
        remote.setValue("a2", forKey: "name")
        try other.context.save()
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: [remote.objectID]], into: [main])
        #expect(main.performAndWait { car.value(forKey: "name") as? String } == "a2")
    }
}

/// A rename frees a unique value that an insert of the same save takes: no conflict.
@Suite("Review: constraints and renames")
struct RegressionConstraintRenameTests {
    @Test(arguments: [false, true])
    func renameAndReuseInOneSave(inMemory: Bool) throws {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        let stack = try TestStack(model: model, inMemory: inMemory)
        let red = stack.insert("Tag", ["label": "red"])
        try stack.context.save()
        red.setValue("blue", forKey: "label")
        stack.insert("Tag", ["label": "red"])
        try stack.context.save()
        let labels = try stack.reopenOrSelf(inMemory).fetch("Tag").compactMap { $0.value(forKey: "label") as? String }.sorted()
        #expect(labels == ["blue", "red"])
    }
}

extension TestStack {
    /// A reopened stack on the same file, or this one for an in-memory store.
    func reopenOrSelf(_ inMemory: Bool) throws -> TestStack { inMemory ? self : try reopen() }
}
