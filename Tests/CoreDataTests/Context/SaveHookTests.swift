import Foundation
import Testing
@testable import CoreData

/// `willSave` and `didSave` at a save. A save whose changed objects are all plain
/// `NSManagedObject`s (whose hooks are empty) skips the two passes that call them; these tests
/// check that every object of a subclass still gets both calls, however it came to be saved.
@Suite("Save hooks")
struct SaveHookTests {
    /// A stack whose `Car` objects are `HookedCar`s; `Person` stays a plain `NSManagedObject`.
    private func stackWithHookedCars() throws -> TestStack { try TestStack(classes: ["Car": HookedCar.self]) }

    private func hookCount(_ car: HookedCar) -> (willSave: Int, didSave: Int) {
        (car.events.filter { $0 == "willSave" }.count, car.events.filter { $0 == "didSave" }.count)
    }

    @Test func onlyAnObjectOfASubclassMarksTheChangeSets() throws {
        let stack = try stackWithHookedCars()
        stack.insert("Person", ["name": "plain"])
        #expect(!stack.context.inserted.mayHoldSubclassObjects)
        _ = stack.insert("Car") as! HookedCar
        #expect(stack.context.inserted.mayHoldSubclassObjects)
        try stack.context.save()
        #expect(!stack.context.inserted.mayHoldSubclassObjects, "cleared once its objects are saved")
    }

    @Test func aSubclassObjectAmongPlainOnesGetsBothHooks() throws {
        let stack = try stackWithHookedCars()
        for index in 0..<20 { stack.insert("Person", ["name": "person \(index)"]) }
        let car = stack.insert("Car", ["name": "hooked"]) as! HookedCar
        for index in 20..<40 { stack.insert("Person", ["name": "person \(index)"]) }
        try stack.context.save()
        #expect(car.events == ["awakeFromInsert", "willSave", "didSave"])
    }

    @Test func anUpdatedOrDeletedSubclassObjectGetsBothHooks() throws {
        let stack = try stackWithHookedCars()
        let car = stack.insert("Car", ["name": "hooked"]) as! HookedCar
        try stack.context.save()
        #expect(hookCount(car) == (1, 1))

        // A later save of plain new objects and the updated car.
        stack.insert("Person", ["name": "plain"])
        car.setValue("renamed", forKey: "name")
        try stack.context.save()
        #expect(hookCount(car) == (2, 2), "updated")

        stack.insert("Person", ["name": "another"])
        stack.context.delete(car)
        try stack.context.save()
        #expect(hookCount(car) == (3, 3), "deleted")
    }

    @Test func aSubclassObjectAWillSaveObserverInsertsGetsBothHooks() throws {
        let stack = try stackWithHookedCars()
        stack.insert("Person", ["name": "plain"])
        let context = stack.context
        nonisolated(unsafe) var added: HookedCar?
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextWillSave, object: context, queue: nil) { _ in
            guard added == nil else { return }
            added = (NSEntityDescription.insertNewObject(forEntityName: "Car", into: context) as! HookedCar)
            added!.setValue("late", forKey: "name")
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.save()
        let car = try #require(added)
        #expect(car.events == ["awakeFromInsert", "willSave", "didSave"])
        #expect(try stack.reopen().fetch("Car").count == 1, "saved with the rest")
    }

    @Test func aFailedSaveKeepsTheMarkForTheNextAttempt() throws {
        let stack = try stackWithHookedCars()
        let car = stack.insert("Car", ["name": "hooked"]) as! HookedCar
        let person = stack.insert("Person") // `name` is required: the save fails
        #expect(throws: NSError.self) { try stack.context.save() }
        #expect(stack.context.inserted.mayHoldSubclassObjects)
        person.setValue("named", forKey: "name")
        try stack.context.save()
        #expect(hookCount(car).didSave == 1)
        #expect(hookCount(car).willSave == 2, "once per attempt, as the failed one called it too")
    }

    @Test func aSubclassObjectADidSaveHookInsertsGetsItsHooksAtTheNextSave() throws {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.managedObjectClassName = String(reflecting: SpawningCar.self)
        let stack = try TestStack(model: model)
        let first = stack.insert("Car", ["name": "first"]) as! SpawningCar
        first.spawnsOnDidSave = true
        try stack.context.save()
        let spawned = try #require(stack.context.insertedObjects.first as? SpawningCar, "inserted by didSave")
        try stack.context.save()
        #expect(spawned.events == ["willSave", "didSave"])
    }

    @Test func aChildContextsSaveAndItsParentsCallTheHooks() throws {
        let stack = try stackWithHookedCars()
        let (parent, child) = stack.parentAndChild()
        try child.performAndWait {
            NSEntityDescription.insertNewObject(forEntityName: "Person", into: child).setValue("plain", forKey: "name")
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child) as! HookedCar
            try child.save()
            #expect(car.events == ["awakeFromInsert", "willSave", "didSave"])
        }
        try parent.performAndWait {
            let car = try #require(parent.insertedObjects.compactMap { $0 as? HookedCar }.first)
            try parent.save()
            #expect(hookCount(car) == (1, 1))
        }
    }
}

/// A car whose `didSave` may insert another car into its context (once).
final class SpawningCar: NSManagedObject {
    var events: [String] = []
    var spawnsOnDidSave = false
    override func willSave() { events.append("willSave") }
    override func didSave() {
        events.append("didSave")
        guard spawnsOnDidSave, let context = managedObjectContext else { return }
        spawnsOnDidSave = false
        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("spawned", forKey: "name")
    }
}
