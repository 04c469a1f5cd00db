import Foundation
import Testing
@testable import CoreData

/// A to-many relationship changed in a context, whose members another context changed too: the
/// merge, and a child's save into its parent, apply the changes made here to the members as
/// they now are, rather than keeping one side's whole list.
@Suite("Merging a changed to-many relationship")
struct ToManyMergeTests {
    static func names(_ set: Any?) -> [String] {
        ((set as? NSSet)?.allObjects as? [NSManagedObject] ?? []).compactMap { $0.value(forKey: "name") as? String }.sorted()
    }

    /// A confinement context on the stack's coordinator.
    static func context(on stack: TestStack) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        return context
    }

    /// A confinement context whose parent is `parent`.
    static func context(childOf parent: NSManagedObjectContext) -> NSManagedObjectContext {
        let child = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        child.parent = parent
        return child
    }

    /// Merges each save of `other` into `view` as it is posted; remove the observer it returns.
    static func merging(savesOf other: NSManagedObjectContext, into view: NSManagedObjectContext) -> any NSObjectProtocol {
        NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { note in
            view.mergeChanges(fromContextDidSave: note)
        }
    }

    /// Saves `context`, then deletes `owner` (cascading to its cars) and saves again.
    static func saveThenDelete(_ owner: NSManagedObject, in context: NSManagedObjectContext) throws {
        try context.save()
        context.delete(owner)
        try context.save()
    }

    /// The names of the cars of the person `id`, read by a new context.
    static func carNames(of id: NSManagedObjectID, in stack: TestStack) throws -> [String] {
        let fresh = stack.newContext()
        return names(try fresh.existingObject(with: id).value(forKey: "cars"))
    }

    @Test func aMergeKeepsLocalAddsAndTakesOthersChanges() throws {
        let stack = try TestStack()
        let ann = stack.insert("Person", ["name": "ann"]), bob = stack.insert("Person", ["name": "bob"])
        stack.insert("Car", ["name": "moved", "owner": ann])
        stack.insert("Car", ["name": "kept", "owner": ann])
        try stack.context.save()

        let view = stack.newContext()
        let annHere = try view.existingObject(with: ann.objectID)
        #expect(Self.names(annHere.value(forKey: "cars")) == ["kept", "moved"])
        let local = NSEntityDescription.insertNewObject(forEntityName: "Car", into: view)
        local.setValue("local", forKey: "name")
        local.setValue(annHere, forKey: "owner") // ann's cars: changed here, unsaved

        // Elsewhere: "moved" goes to bob, and a car "remote" comes to ann.
        let other = stack.newContext()
        let token = Self.merging(savesOf: other, into: view)
        defer { NotificationCenter.default.removeObserver(token) }
        let moved = try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).first { $0.value(forKey: "name") as? String == "moved" }!
        moved.setValue(try other.existingObject(with: bob.objectID), forKey: "owner")
        let remote = NSEntityDescription.insertNewObject(forEntityName: "Car", into: other)
        remote.setValue("remote", forKey: "name")
        remote.setValue(try other.existingObject(with: ann.objectID), forKey: "owner")
        try other.save()

        // The list had kept "moved" and missed "remote".
        #expect(Self.names(annHere.value(forKey: "cars")) == ["kept", "local", "remote"])
        try view.save()
        // Ann's delete cascades to her cars only: "moved" is bob's.
        view.delete(annHere)
        try view.save()
        let fresh = stack.newContext()
        #expect(try fresh.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).compactMap { $0.value(forKey: "name") as? String } == ["moved"])
    }

    @Test func siblingChildrenSavingIntoTheirParentKeepEachOthersAdds() throws {
        let stack = try TestStack()
        let ann = stack.insert("Person", ["name": "ann"])
        stack.insert("Car", ["name": "first", "owner": ann])
        try stack.context.save()

        let parent = Self.context(on: stack)
        let annInParent = try parent.existingObject(with: ann.objectID)
        #expect(Self.names(annInParent.value(forKey: "cars")) == ["first"])
        var children: [NSManagedObjectContext] = []
        for name in ["one", "two"] {
            let child = Self.context(childOf: parent)
            let annHere = try child.existingObject(with: ann.objectID)
            _ = (annHere.value(forKey: "cars") as? NSSet)?.count // read before the sibling saves
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
            car.setValue(name, forKey: "name")
            annHere.mutableSetValue(forKey: "cars").add(car)
            children.append(child)
        }
        for child in children { try child.save() }
        // The second child's whole list (first, two) replaced the parent's (first, one).
        #expect(Self.names(annInParent.value(forKey: "cars")) == ["first", "one", "two"])
        try parent.save()
        let fresh = stack.newContext()
        #expect(Self.names(try fresh.existingObject(with: ann.objectID).value(forKey: "cars")) == ["first", "one", "two"])
    }

    /// A member others added to the list, to which this context gave another owner, is not
    /// kept: the list would disagree with the member, and a cascade delete its other owner's car.
    @Test func aMemberThisContextGaveAnotherOwnerIsNotKept() throws {
        let stack = try TestStack()
        let ann = stack.insert("Person", ["name": "ann"]), carol = stack.insert("Person", ["name": "carol"])
        let y = stack.insert("Car", ["name": "y"])
        try stack.context.save()

        let view = stack.newContext()
        let annHere = try view.existingObject(with: ann.objectID)
        _ = (annHere.value(forKey: "cars") as? NSSet)?.count
        try view.existingObject(with: y.objectID).setValue(try view.existingObject(with: carol.objectID), forKey: "owner")
        let local = NSEntityDescription.insertNewObject(forEntityName: "Car", into: view)
        local.setValue("local", forKey: "name")
        local.setValue(annHere, forKey: "owner")

        let other = stack.newContext()
        let token = Self.merging(savesOf: other, into: view)
        defer { NotificationCenter.default.removeObserver(token) }
        try other.existingObject(with: y.objectID).setValue(try other.existingObject(with: ann.objectID), forKey: "owner")
        try other.save()

        #expect(Self.names(annHere.value(forKey: "cars")) == ["local"])
        try Self.saveThenDelete(annHere, in: view)
        #expect(try Self.carNames(of: carol.objectID, in: stack) == ["y"])
    }

    /// The same in a parent: a child's save that gives a member another owner takes it out of
    /// the list the parent had added it to.
    @Test func aChildGivingAMemberAnotherOwnerTakesItOutOfTheParentsList() throws {
        let stack = try TestStack()
        let ann = stack.insert("Person", ["name": "ann"]), bob = stack.insert("Person", ["name": "bob"])
        stack.insert("Car", ["name": "first", "owner": ann])
        let y = stack.insert("Car", ["name": "y"])
        try stack.context.save()

        let parent = Self.context(on: stack)
        let child = Self.context(childOf: parent)
        let annInChild = try child.existingObject(with: ann.objectID)
        _ = (annInChild.value(forKey: "cars") as? NSSet)?.count
        let annInParent = try parent.existingObject(with: ann.objectID)
        try parent.existingObject(with: y.objectID).setValue(annInParent, forKey: "owner") // unsaved in the parent
        let yInChild = try child.existingObject(with: y.objectID)
        yInChild.setValue(try child.existingObject(with: bob.objectID), forKey: "owner")
        annInChild.mutableSetValue(forKey: "cars").remove(yInChild) // (ann's list marked changed)
        try child.save()
        #expect(Self.names(annInParent.value(forKey: "cars")) == ["first"])
        try Self.saveThenDelete(annInParent, in: parent)
        #expect(try Self.carNames(of: bob.objectID, in: stack) == ["y"])
    }

    /// In a child, a member read under a temporary ID that is permanent now and then removed
    /// here stays removed after a merge (IDs compared as read came back as others').
    @Test func aRemoveOfAMemberReadUnderATemporaryIDSurvivesAMerge() throws {
        let stack = try TestStack()
        let ann = stack.insert("Person", ["name": "ann"])
        try stack.context.save()
        let parent = Self.context(on: stack)
        let child = Self.context(childOf: parent)
        let annInChild = try child.existingObject(with: ann.objectID)
        let new = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
        new.setValue("new", forKey: "name")
        new.setValue(annInChild, forKey: "owner")
        try child.save()
        try parent.save()
        #expect(!new.objectID.isTemporaryID)
        annInChild.mutableSetValue(forKey: "cars").remove(new)
        child.refresh(annInChild, mergeChanges: true)
        #expect(Self.names(annInChild.value(forKey: "cars")).isEmpty)
    }
}
