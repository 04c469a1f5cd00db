import Foundation
import Testing
@testable import CoreData

/// Where a fetched results controller keeps objects: sorted by the values it compares even when
/// the store sorted by others (objects the context held with older values), and in place when a
/// change leaves their sort values as they were.
@Suite("NSFetchedResultsController: placement")
struct FetchedResultsPlacementTests {
    static func controller(_ context: NSManagedObjectContext, sortedBy keys: [String]) throws -> (NSFetchedResultsController<NSManagedObject>, FetchedResultsRecorder) {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.sortDescriptors = keys.map { NSSortDescriptor(key: $0, ascending: true) }
        let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
        let recorder = FetchedResultsRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        return (controller, recorder)
    }

    @Test("Objects the context holds with values older than the store's are sorted by their own values, and found again")
    func staleObjectsAreFoundAgain() throws {
        let stack = try TestStack()
        let x = stack.insert("Car", ["name": "X", "price": 1.0])
        let y = stack.insert("Car", ["name": "Y", "price": 2.0])
        try stack.context.save()
        // Another context makes X the dearest; this one does not merge.
        let other = stack.newContext()
        let otherX = try other.existingObject(with: x.objectID)
        otherX.setValue(3.0, forKey: "price")
        try other.save()
        let (controller, recorder) = try Self.controller(stack.context, sortedBy: ["price"])
        #expect(controller.fetchedObjects!.map { $0 === x } == [true, false]) // by the values it holds: X 1, Y 2
        x.setValue(5.0, forKey: "price")
        stack.context.processPendingChanges()
        #expect(controller.fetchedObjects!.count == 2)
        #expect(recorder.objectChanges.map(\.type) == [.move])
        stack.context.delete(x)
        stack.context.processPendingChanges()
        y.setValue(0.0, forKey: "price")
        stack.context.processPendingChanges()
        #expect(controller.fetchedObjects!.map { $0 === y } == [true])
    }

    @Test("A change that leaves the sort values as they were is an update in place, among equal ones too")
    func anUpdateAmongEqualsStaysInPlace() throws {
        let stack = try TestStack()
        let cars = ["A", "B", "C"].map { stack.insert("Car", ["name": $0, "year": 2000]) }
        try stack.context.save()
        let (controller, recorder) = try Self.controller(stack.context, sortedBy: ["year"])
        let before = controller.fetchedObjects!
        cars[0].setValue("x", forKey: "name")
        stack.context.processPendingChanges()
        #expect(recorder.objectChanges.map(\.type) == [.update])
        #expect(controller.fetchedObjects!.map(ObjectIdentifier.init) == before.map(ObjectIdentifier.init))
    }

    @Test("A delete rolled back before it was processed is no change of the results")
    func aRolledBackDeleteIsNoChange() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "A"])
        stack.insert("Car", ["name": "B"])
        try stack.context.save()
        let (controller, recorder) = try Self.controller(stack.context, sortedBy: ["name"])
        stack.context.delete(car)
        stack.context.rollback()
        #expect(recorder.batches == 0 || recorder.objectChanges.isEmpty)
        #expect(controller.fetchedObjects!.count == 2)
    }

    @Test("A controller whose request names affectedStores tracks only objects of those stores")
    func affectedStoresAreTracked() throws {
        let stack = try TestStack()
        let first = stack.coordinator.persistentStores[0]
        let second = try stack.coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil,
                                                              at: stack.directory.appendingPathComponent("Second.sqlite"))
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        request.affectedStores = [first]
        let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: stack.context, sectionNameKeyPath: nil, cacheName: nil)
        let recorder = FetchedResultsRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        let elsewhere = stack.insert("Car", ["name": "b"])
        stack.context.assign(elsewhere, to: second)
        let here = stack.insert("Car", ["name": "c"])
        stack.context.processPendingChanges()
        #expect(controller.fetchedObjects!.map { $0.value(forKey: "name") as? String } == ["a", "c"])
        try stack.context.save()
        #expect(controller.fetchedObjects!.count == 2 && controller.fetchedObjects!.contains { $0 === here })
        #expect(try stack.context.fetch(request).count == 2)
    }
}
