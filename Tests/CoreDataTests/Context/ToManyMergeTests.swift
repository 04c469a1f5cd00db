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
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { note in
            view.mergeChanges(fromContextDidSave: note)
        }
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

        let parent = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        parent.persistentStoreCoordinator = stack.coordinator
        let annInParent = try parent.existingObject(with: ann.objectID)
        #expect(Self.names(annInParent.value(forKey: "cars")) == ["first"])
        var children: [NSManagedObjectContext] = []
        for name in ["one", "two"] {
            let child = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            child.parent = parent
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
}
