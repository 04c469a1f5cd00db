import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `NSManagedObjectContext.propagatesDeletesAtEndOfEvent`: delete rules at each
/// `processPendingChanges()` (the default), or only at save.
@Suite struct PropagatesDeletesAtEndOfEventTests {
    /// A saved person (cars: cascade) with two cars (owner: nullify), read into a new context.
    private func ownerWithCars() throws -> (TestStack, NSManagedObjectContext, person: NSManagedObject, cars: [NSManagedObject]) {
        let stack = try TestStack()
        let person = stack.insert("Person", ["name": "Ada"])
        for name in ["a", "b"] { stack.insert("Car", ["name": name, "owner": person]) }
        try stack.context.save()
        let context = stack.newContext()
        let readPerson = try context.existingObject(with: person.objectID)
        let cars = (readPerson.value(forKey: "cars") as! Set<NSManagedObject>).sorted { ($0.value(forKey: "name") as! String) < ($1.value(forKey: "name") as! String) }
        return (stack, context, readPerson, cars)
    }

    @Test func byDefaultRulesRunAtTheEndOfTheEvent() throws {
        let (_, context, person, cars) = try ownerWithCars()
        #expect(context.propagatesDeletesAtEndOfEvent)
        context.delete(person)
        context.processPendingChanges()
        #expect(cars.allSatisfy { $0.isDeleted })
        #expect(context.deletedObjects.count == 3)
    }

    @Test func turnedOffRulesWaitForTheSave() throws {
        let (stack, context, person, cars) = try ownerWithCars()
        context.propagatesDeletesAtEndOfEvent = false
        context.delete(person)
        context.processPendingChanges()
        // Only the person is deleted; its cars are untouched and still lead to it.
        #expect(person.isDeleted)
        #expect(!cars.contains { $0.isDeleted })
        #expect(cars.allSatisfy { $0.value(forKey: "owner") as? NSManagedObject === person })
        #expect(context.deletedObjects == [person])
        // A fetch (which processes pending changes) does not run them either.
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        #expect(try context.fetch(request).count == 2)
        #expect(!cars.contains { $0.isDeleted })

        try context.save()
        #expect(try RawSQLite.query(stack.url.path, "SELECT COUNT(*) FROM ZPERSON")[0][0] == "0")
        #expect(try RawSQLite.query(stack.url.path, "SELECT COUNT(*) FROM ZCAR")[0][0] == "0")
        #expect(!context.hasChanges)
    }

    @Test func aNewObjectDeletedStaysUntilTheSaveAndIsNotWritten() throws {
        let stack = try TestStack()
        let context = stack.context
        context.propagatesDeletesAtEndOfEvent = false
        let person = stack.insert("Person", ["name": "temporary"])
        let car = stack.insert("Car", ["name": "kept", "owner": person])
        context.processPendingChanges()
        context.delete(person)
        context.processPendingChanges()
        #expect(person.managedObjectContext === context)
        #expect(!context.insertedObjects.contains(person))
        #expect(context.insertedObjects.contains(car)) // the cascade has not run
        try context.save()
        // Both went at the save: the cascade ran there, and neither row was written.
        #expect(person.managedObjectContext == nil && car.managedObjectContext == nil)
        #expect(try RawSQLite.query(stack.url.path, "SELECT COUNT(*) FROM ZPERSON")[0][0] == "0")
        #expect(try RawSQLite.query(stack.url.path, "SELECT COUNT(*) FROM ZCAR")[0][0] == "0")
    }

    @Test func aDenyRuleIsStillCheckedAtTheSave() throws {
        let stack = try TestStack()
        let garage = stack.insert("Garage", ["city": "g"])
        stack.insert("Truck", ["load": 1.0, "garage": garage])
        try stack.context.save()
        stack.context.propagatesDeletesAtEndOfEvent = false
        stack.context.delete(garage)
        stack.context.processPendingChanges()
        #expect(throws: NSError.self) { try stack.context.save() }
        #expect(try RawSQLite.query(stack.url.path, "SELECT COUNT(*) FROM ZGARAGE")[0][0] == "1")
    }

    @Test func rollbackBringsBackADeleteNotYetPropagated() throws {
        let (_, context, person, cars) = try ownerWithCars()
        context.propagatesDeletesAtEndOfEvent = false
        context.delete(person)
        context.processPendingChanges()
        context.rollback()
        #expect(!person.isDeleted && !context.hasChanges)
        #expect((person.value(forKey: "cars") as! Set<NSManagedObject>).count == 2)
        try context.save() // nothing pending: the cascade does not run now
        #expect(!cars.contains { $0.isDeleted })
    }

    @Test func aDeferredDeleteMergedFromElsewhereRunsItsRulesOnTheObjectsHere() throws {
        let stack = try TestStack()
        let ann = stack.insert("Person", ["name": "Ann"])
        try stack.context.save()
        let context = stack.newContext()
        context.propagatesDeletesAtEndOfEvent = false
        let person = try context.existingObject(with: ann.objectID)
        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
        car.setValue("new", forKey: "name")
        car.setValue(person, forKey: "owner")
        context.processPendingChanges()
        context.delete(person)
        context.processPendingChanges() // its cascade rule has not run: the car still has it
        let keptCar = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
        keptCar.setValue("kept", forKey: "name")

        // Another context deletes the person and saves; this one merges that.
        let other = stack.newContext()
        other.delete(try other.existingObject(with: ann.objectID))
        nonisolated(unsafe) var saved: Notification?
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { saved = $0 }
        try other.save()
        NotificationCenter.default.removeObserver(observer)
        nonisolated(unsafe) var reported: Set<NSManagedObject> = []
        let changes = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) {
            reported.formUnion($0.userInfo?[NSDeletedObjectsKey] as? Set<NSManagedObject> ?? [])
        }
        context.mergeChanges(fromContextDidSave: try #require(saved))
        NotificationCenter.default.removeObserver(changes)
        #expect(reported.contains(car), "the merge's ObjectsDidChange reports the object its cascade deleted")

        // The person's cascade ran at the merge: its new car is deleted with it (not saved as an
        // orphan); the unrelated car stays.
        #expect(car.isDeleted)
        try context.save()
        #expect(try stack.rows("SELECT ZNAME, ZOWNER FROM ZCAR") == [["kept", "NULL"]])
    }
}
