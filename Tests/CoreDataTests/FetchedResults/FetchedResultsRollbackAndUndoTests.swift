import Foundation
import Testing
@testable import CoreData
import TestSupport

/// A fetched results controller follows what `rollback()`, undo and a child context's save
/// change, as it follows edits (found by a fuzz of the controller against fresh fetches, session 30).
@Suite("NSFetchedResultsController after rollback, undo and a child's save")
struct FetchedResultsRollbackAndUndoTests {
    /// Three cars of years 2001–2003 saved, and a controller of cars by year.
    static func setUp(_ stack: TestStack) throws -> (NSFetchedResultsController<NSManagedObject>, FetchedResultsRecorder, NSFetchRequest<NSManagedObject>) {
        for (index, year) in [2001, 2002, 2003].enumerated() { stack.insert("Car", ["name": "car\(index)", "year": year]) }
        try stack.context.save()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.predicate = NSPredicate(format: "year < 2050")
        request.sortDescriptors = [NSSortDescriptor(key: "year", ascending: true)]
        let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: stack.context, sectionNameKeyPath: nil, cacheName: nil)
        let recorder = FetchedResultsRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        return (controller, recorder, request)
    }

    /// Makes `change` in `other` and saves it, `context` merging the save.
    static func save(_ other: NSManagedObjectContext, mergingInto context: NSManagedObjectContext, _ change: () throws -> Void) throws {
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { note in
            context.mergeChanges(fromContextDidSave: note)
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try change()
        try other.save()
    }

    /// A car "far" of 2070 (outside the controller's request), saved by a new context of
    /// `stack`, which is returned with it.
    static func savedCarOutsideTheRequest(in stack: TestStack) throws -> (NSManagedObjectContext, NSManagedObject) {
        let other = stack.newContext()
        let far = NSEntityDescription.insertNewObject(forEntityName: "Car", into: other)
        far.setValue("far", forKey: "name")
        far.setValue(2070, forKey: "year")
        try other.save()
        return (other, far)
    }

    static func names(_ objects: [NSManagedObject]?) -> [String] { (objects ?? []).map { $0.value(forKey: "name") as? String ?? "?" } }

    @Test func rollbackReportsWhatItPutsBack() throws {
        let stack = try TestStack()
        let context = stack.context
        let (controller, recorder, request) = try Self.setUp(stack)
        let cars = controller.fetchedObjects!
        cars[0].setValue(2010, forKey: "year")            // moves to the end
        context.delete(cars[1])                            // leaves
        let new = stack.insert("Car", ["name": "new", "year": 2000])
        context.processPendingChanges()
        #expect(Self.names(controller.fetchedObjects) == ["new", "car2", "car0"])

        let reported = Locked<[String: Set<String>]>([:])
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) { note in
            for key in [NSInsertedObjectsKey, NSUpdatedObjectsKey, NSDeletedObjectsKey] {
                reported.value[key] = Set(((note.userInfo?[key] as? Set<NSManagedObject>) ?? []).map { $0.value(forKey: "name") as? String ?? "?" })
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let batches = recorder.batches
        context.rollback()
        // As undoing every change: the new car deleted, the deleted one inserted, the changed one updated.
        #expect(reported.value[NSDeletedObjectsKey] == ["new"] && reported.value[NSInsertedObjectsKey] == ["car1"]
                && reported.value[NSUpdatedObjectsKey] == ["car0"])
        #expect(recorder.batches == batches + 1)
        #expect(Self.names(controller.fetchedObjects) == Self.names(try context.fetch(request)))
        #expect(Self.names(controller.fetchedObjects) == ["car0", "car1", "car2"])
        #expect(new.managedObjectContext == nil)
    }

    /// Undo of a change to a new object, whose insertion an earlier `ObjectsDidChange` reported:
    /// reported updated, so the controller places it again.
    @Test func undoOfAChangeToANewObjectIsReported() throws {
        let stack = try TestStack()
        let context = stack.context
        context.undoManager = UndoManager()
        let (controller, recorder, request) = try Self.setUp(stack)
        defer { withExtendedLifetime(recorder) {} } // (the controller's delegate: it tracks changes only with one)
        let new = stack.insert("Car", ["name": "new", "year": 2000])
        context.processPendingChanges()
        new.setValue(2060, forKey: "year")                 // out of the predicate: leaves the results
        context.processPendingChanges()
        #expect(Self.names(controller.fetchedObjects) == ["car0", "car1", "car2"])
        context.undoManager!.undo()                        // 2000 again: back in the results
        context.processPendingChanges()
        #expect(Self.names(controller.fetchedObjects) == Self.names(try context.fetch(request)))
        #expect(Self.names(controller.fetchedObjects) == ["new", "car0", "car1", "car2"])
    }

    /// An object whose row another context deleted (a merged delete) stays deleted when an undo
    /// step changed it earlier: undo does not bring back a row it did not delete.
    @Test func undoLeavesAnObjectDeletedElsewhereDeleted() throws {
        let stack = try TestStack()
        let context = stack.context
        context.undoManager = UndoManager()
        let (controller, recorder, request) = try Self.setUp(stack)
        defer { withExtendedLifetime(recorder) {} } // (the controller's delegate: it tracks changes only with one)
        let car = controller.fetchedObjects![1]
        car.setValue("renamed", forKey: "name")
        try context.save()
        // Another context deletes it; the deletion is merged.
        let other = stack.newContext()
        try Self.save(other, mergingInto: context) { try other.delete(other.existingObject(with: car.objectID)) }
        #expect(car.isDeleted && !context.hasChanges)

        context.undoManager!.undo()                        // the rename of a car that is gone
        context.processPendingChanges()
        #expect(car.isDeleted && !context.hasChanges)
        #expect(Self.names(controller.fetchedObjects) == Self.names(try context.fetch(request)))
        try context.save()
    }

    /// A child deletes a new object that an earlier save of the child brought up (unsaved here):
    /// the parent's `ObjectsDidChange` reports it deleted, and the controller lets it go.
    @Test func aChildsDeleteOfANewObjectOfTheParentIsReported() throws {
        let stack = try TestStack()
        let context = stack.context
        let (controller, recorder, request) = try Self.setUp(stack)
        defer { withExtendedLifetime(recorder) {} }
        func child() -> NSManagedObjectContext {
            let child = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            child.parent = context
            return child
        }
        let first = child()
        let new = NSEntityDescription.insertNewObject(forEntityName: "Car", into: first)
        new.setValue("new", forKey: "name")
        new.setValue(2000, forKey: "year")
        try first.save()
        #expect(Self.names(controller.fetchedObjects) == ["new", "car0", "car1", "car2"])
        let second = child()
        let request2 = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request2.predicate = NSPredicate(format: "name == 'new'")
        try second.delete(#require(try second.fetch(request2).first))
        try second.save()
        #expect(Self.names(controller.fetchedObjects) == Self.names(try context.fetch(request)))
        #expect(Self.names(controller.fetchedObjects) == ["car0", "car1", "car2"])
    }

    /// A new object the controller shows, deleted and then rolled back: it is reported deleted
    /// (it leaves the context) and the controller lets it go.
    @Test func rollbackOfANewObjectDeletedSinceItWasReported() throws {
        let stack = try TestStack()
        let context = stack.context
        let (controller, recorder, request) = try Self.setUp(stack)
        defer { withExtendedLifetime(recorder) {} }
        let new = stack.insert("Car", ["name": "new", "year": 2000])
        context.processPendingChanges()
        #expect(Self.names(controller.fetchedObjects) == ["new", "car0", "car1", "car2"])
        context.delete(new)
        context.rollback()
        #expect(Self.names(controller.fetchedObjects) == Self.names(try context.fetch(request)))
        #expect(Self.names(controller.fetchedObjects) == ["car0", "car1", "car2"])
    }

    /// Undo does not put an object whose row another context deleted back into a relationship:
    /// the save that follows writes no key of a missing row.
    @Test func undoPutsNoObjectDeletedElsewhereBackInARelationship() throws {
        let stack = try TestStack()
        let context = stack.context
        context.undoManager = UndoManager()
        let person = stack.insert("Person", ["name": "Ann"])
        let car = stack.insert("Car", ["name": "car", "owner": person])
        try context.save()
        context.undoManager!.removeAllActions()
        car.setValue(nil, forKey: "owner")
        context.processPendingChanges()
        try context.save()
        let other = stack.newContext()
        try Self.save(other, mergingInto: context) { try other.delete(other.existingObject(with: person.objectID)) }
        #expect(person.isDeleted)

        context.undoManager!.undo()                        // car.owner = Ann, whose row is gone
        #expect(car.value(forKey: "owner") == nil)
        try context.save()
        #expect(try stack.rawRows("SELECT ZOWNER FROM ZCAR") == [[nil]])
    }

    /// A merged update of an object this context holds only as a data-less fault: reported
    /// refreshed, so a controller whose request the new row matches now takes it in.
    @Test func aMergedUpdateOfAFaultTheControllerDoesNotHoldIsReported() throws {
        let stack = try TestStack()
        let context = stack.context
        let (controller, recorder, request) = try Self.setUp(stack)
        defer { withExtendedLifetime(recorder) {} }
        let (other, far) = try Self.savedCarOutsideTheRequest(in: stack)
        let fault = context.object(with: far.objectID)     // registered here, never fired
        #expect(fault.isFault)
        try Self.save(other, mergingInto: context) { far.setValue(2000, forKey: "year") } // inside it now
        #expect(Self.names(controller.fetchedObjects) == Self.names(try context.fetch(request)))
        #expect(Self.names(controller.fetchedObjects) == ["far", "car0", "car1", "car2"])
    }

    /// A merged update of a row this context holds no object for: a controller whose request the
    /// row now matches takes it in (its rows fetched in one request per entity).
    @Test func aMergedUpdateOfARowTheContextNeverSawIsReported() throws {
        let stack = try TestStack()
        let context = stack.context
        let (controller, recorder, request) = try Self.setUp(stack)
        defer { withExtendedLifetime(recorder) {} }
        let (other, far) = try Self.savedCarOutsideTheRequest(in: stack)
        #expect(context.registeredObject(for: far.objectID) == nil)
        try Self.save(other, mergingInto: context) { far.setValue(2000, forKey: "year") }
        #expect(Self.names(controller.fetchedObjects) == Self.names(try context.fetch(request)))
        #expect(Self.names(controller.fetchedObjects) == ["far", "car0", "car1", "car2"])
    }

    /// A row deleted behind the context's back (a batch delete not merged): the object a refresh
    /// turned into a fault becomes deleted when the controller reads it, and is reported as
    /// deleted, not left in the results as a blank row sorted where nil sorts.
    @Test(arguments: [true, false])
    func anObjectWhoseRowIsGoneLeavesTheResults(_ withPredicate: Bool) throws {
        let stack = try TestStack()
        let (controller, recorder, request) = try Self.setUp(stack)
        if !withPredicate {
            request.predicate = nil
            try controller.performFetch()
        }
        let delete = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Car"))
        delete.fetchRequest.predicate = NSPredicate(format: "name == 'car1'")
        try stack.newContext().execute(delete)
        stack.context.refreshAllObjects()
        #expect(Self.names(controller.fetchedObjects) == ["car0", "car2"])
        let changes = recorder.objectChanges.filter { $0.type != .update } // (the others were refreshed)
        #expect(changes.map(\.type) == [.delete] && changes.first?.old == IndexPath(row: 1, section: 0), "\(recorder.objectChanges.map(\.type))")
    }

    /// The controller a typed controller's delegate is handed answers the typed controller's
    /// request as it is now: Apple's way to change the results (change the request, fetch again)
    /// left it showing the request of the controller's making.
    @Test func theDelegatesControllerShowsTheRequestAsItIsNow() throws {
        let stack = try TestStack()
        let (controller, recorder, request) = try Self.setUp(stack)
        defer { withExtendedLifetime(recorder) {} }
        let twin = try #require(controller.core.erased)
        request.predicate = NSPredicate(format: "year < 2003")
        try controller.performFetch()
        #expect(Self.names(controller.fetchedObjects) == ["car0", "car1"])
        #expect(twin.fetchRequest.predicate == NSPredicate(format: "year < 2003"))
        #expect(twin.fetchRequest.entityName == "Car" && twin.fetchRequest.sortDescriptors == request.sortDescriptors)
    }
}
