import Foundation
import Testing
@testable import CoreData

@Suite("More of the object life cycle")
struct MoreLifeCycleTests {
    @Test func refreshAllObjectsTakesStoreValuesAndKeepsChanges() throws {
        let stack = try TestStack()
        let a = stack.insert("Car", ["name": "a", "year": 1950])
        let b = stack.insert("Car", ["name": "b", "year": 1960])
        try stack.context.save()
        let other = try stack.reopen()
        for car in try other.fetch("Car") { car.setValue(2000, forKey: "year") }
        try other.context.save()
        a.setValue("a2", forKey: "name")
        stack.context.refreshAllObjects()
        #expect(a.value(forKey: "name") as? String == "a2")
        #expect(a.value(forKey: "year") as? Int == 2000)
        #expect(b.value(forKey: "year") as? Int == 2000)
        try stack.context.save()
    }

    @Test func removingAStoreStopsFetchesAndSavesCleanly() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let store = try #require(stack.coordinator.persistentStores.first)
        try stack.coordinator.remove(store)
        #expect(stack.coordinator.persistentStores.isEmpty)
        #expect(throws: NSError.self) { try stack.fetch("Car") }
        car.setValue("b", forKey: "name")
        #expect(throws: NSError.self) { try stack.context.save() }
        #expect(throws: NSError.self) { try stack.coordinator.remove(store) }
        // The file is intact and opens again.
        let reopened = try stack.reopen()
        #expect(try reopened.fetch("Car").map { $0.value(forKey: "name") as? String } == ["a"])
    }

    @Test func noActionLeavesTheInverseAlone() throws {
        let model = TestModel.make()
        (model.entitiesByName["Person"]!.relationshipsByName["cars"]!).deleteRule = .noActionDeleteRule
        let stack = try TestStack(model: model)
        let ada = stack.insert("Person", ["name": "Ada"])
        let car = stack.insert("Car", ["name": "c"])
        car.setValue(ada, forKey: "owner")
        try stack.context.save()
        stack.context.delete(ada)
        stack.context.processPendingChanges()
        #expect(!car.isDeleted, "no cascade")
        #expect(car.value(forKey: "owner") as? NSManagedObject === ada, "no nullify")
    }

    @Test func relationshipCountRules() throws {
        let model = TestModel.make()
        let cars = model.entitiesByName["Person"]!.relationshipsByName["cars"]!
        cars.minCount = 2
        cars.maxCount = 3
        let stack = try TestStack(model: model)
        let ada = stack.insert("Person", ["name": "Ada"])
        stack.insert("Car", ["name": "1"]).setValue(ada, forKey: "owner")
        var error: NSError?
        do { try stack.context.save() } catch let e as NSError { error = e }
        #expect(error?.code == NSValidationRelationshipLacksMinimumCountError)
        for i in 2...4 { stack.insert("Car", ["name": "\(i)"]).setValue(ada, forKey: "owner") }
        error = nil
        do { try stack.context.save() } catch let e as NSError { error = e }
        #expect(error?.code == NSValidationRelationshipExceedsMaximumCountError)
        stack.context.delete((ada.value(forKey: "cars") as! Set<NSManagedObject>).first!)
        try stack.context.save()
    }

    @Test func validateForUpdateAndDeleteOverridesRun() throws {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.managedObjectClassName = String(reflecting: GuardedTag.self)
        let stack = try TestStack(model: model)
        let tag = stack.insert("Tag", ["label": "ok"])
        try stack.context.save()
        tag.setValue("locked", forKey: "label")
        #expect(throws: NSError.self) { try stack.context.save() }
        tag.setValue("ok", forKey: "label")
        try stack.context.save()
        (tag as! GuardedTag).undeletable = true
        stack.context.delete(tag)
        #expect(throws: NSError.self) { try stack.context.save() }
        stack.context.rollback()
        #expect(try stack.fetch("Tag").count == 1)
    }
}

final class GuardedTag: NSManagedObject {
    var undeletable = false
    override func validateForUpdate() throws {
        try super.validateForUpdate()
        if value(forKey: "label") as? String == "locked" {
            throw NSError(domain: NSCocoaErrorDomain, code: NSManagedObjectValidationError, userInfo: [NSLocalizedDescriptionKey: "locked"])
        }
    }
    override func validateForDelete() throws {
        try super.validateForDelete()
        if undeletable { throw NSError(domain: NSCocoaErrorDomain, code: NSManagedObjectValidationError, userInfo: [NSLocalizedDescriptionKey: "undeletable"]) }
    }
}

/// A subclass that overrides the initializer the framework creates objects through, as
/// Apple-platform code overrides `init(entity:insertInto:)` (here `required`, see docs/PORTING.md).
final class InitializerCountingCar: NSManagedObject {
    nonisolated(unsafe) static var initializations = 0
    let insertedAtInit: Bool

    required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        insertedAtInit = context != nil
        super.init(entity: entity, insertInto: context)
        Self.initializations += 1
    }
}

@Suite("A subclass overriding init(entity:insertInto:)", .serialized) // one counter for both tests
struct OverriddenInitializerTests {
    @Test func theOverrideRunsForNewAndFetchedObjects() throws {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.managedObjectClassName = String(reflecting: InitializerCountingCar.self)
        let stack = try TestStack(model: model)
        InitializerCountingCar.initializations = 0

        let inserted = try #require(NSEntityDescription.insertNewObject(forEntityName: "Car", into: stack.context) as? InitializerCountingCar)
        #expect(inserted.insertedAtInit && inserted.isInserted && inserted.managedObjectContext === stack.context)
        inserted.setValue("a", forKey: "name")
        let byContext = InitializerCountingCar(context: stack.context)
        #expect(byContext.insertedAtInit && byContext.isInserted)
        byContext.setValue("b", forKey: "name")
        let detached = InitializerCountingCar(entity: model.entitiesByName["Car"]!, insertInto: nil)
        #expect(!detached.insertedAtInit && detached.managedObjectContext == nil)
        #expect(InitializerCountingCar.initializations == 3)
        try stack.context.save()

        // Fetched objects are made through it too, without a context to insert into.
        let reopened = try stack.reopen()
        let fetched = try reopened.fetch("Car").compactMap { $0 as? InitializerCountingCar }
        #expect(fetched.count == 2)
        #expect(fetched.allSatisfy { !$0.insertedAtInit && !$0.isInserted })
        #expect(Set(fetched.compactMap { $0.value(forKey: "name") as? String }) == ["a", "b"])
        #expect(InitializerCountingCar.initializations == 5)
    }

    /// The context passed through the override keeps its references: objects made through it
    /// in numbers leave the context alive and usable (an initializer that released the context
    /// once too often per call, as a mismatched parameter convention would, frees it here).
    @Test func theContextOutlivesManyObjectsMadeThroughTheOverride() throws {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.managedObjectClassName = String(reflecting: InitializerCountingCar.self)
        let stack = try TestStack(model: model)
        weak var weakContext: NSManagedObjectContext?
        do {
            let context = stack.newContext()
            weakContext = context
            for i in 0..<100 {
                let car: NSManagedObject = i.isMultiple(of: 2)
                    ? NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
                    : InitializerCountingCar(context: context)
                car.setValue("car \(i)", forKey: "name")
            }
            try context.save()
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == 100)
        }
        #expect(weakContext == nil, "the context goes once its last reference does")
    }

    /// A saved object changed, deleted and inserted again is updated again: the save writes its change.
    @Test func anUndeletedChangedObjectIsSavedWithItsChange() throws {
        let stack = try TestStack()
        let person = stack.insert("Person", ["name": "Ada", "age": 30])
        try stack.context.save()
        person.setValue(31, forKey: "age")
        stack.context.delete(person)
        #expect(stack.context.deletedObjects.contains(person))
        stack.context.insert(person)
        #expect(!person.isDeleted)
        #expect(person.isUpdated)
        #expect(stack.context.updatedObjects.contains(person))
        try stack.context.save()
        let saved = try stack.reopen().fetch("Person")
        #expect(saved.map { $0.value(forKey: "age") as? Int16 } == [31])
    }
}
