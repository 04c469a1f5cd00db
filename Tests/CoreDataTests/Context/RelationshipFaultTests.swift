import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `hasFault(forRelationshipNamed:)` and `objectIDs(forRelationshipNamed:)`: a relationship asked
/// about without its objects being made or fired.
@Suite struct RelationshipFaultTests {
    /// A saved person with two cars, read back in a fresh context.
    private func savedOwner() throws -> (TestStack, NSManagedObjectContext, [NSManagedObjectID]) {
        let stack = try TestStack()
        let person = stack.insert("Person", ["name": "Ada"])
        let cars = [stack.insert("Car", ["name": "a", "owner": person]), stack.insert("Car", ["name": "b", "owner": person])]
        try stack.context.save()
        return (stack, stack.newContext(), cars.map(\.objectID))
    }

    @Test func aToManyIsAFaultUntilReadAndItsIDsComeWithoutItsObjects() throws {
        let (stack, context, carIDs) = try savedOwner()
        defer { withExtendedLifetime(stack) {} }
        try context.performAndWait {
            let person = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))[0]
            #expect(person.hasFault(forRelationshipNamed: "cars"))
            #expect(Set(person.objectIDs(forRelationshipNamed: "cars")) == Set(carIDs))
            // The IDs were read, not the objects: none of the cars is registered.
            #expect(carIDs.allSatisfy { context.registeredObject(for: $0) == nil })
            #expect(person.hasFault(forRelationshipNamed: "cars"))
            _ = person.mutableSetValue(forKey: "cars").count
            #expect(!person.hasFault(forRelationshipNamed: "cars"))
            // Unsaved changes count: a car removed here is not among the IDs.
            let first = context.object(with: carIDs[0])
            person.mutableSetValue(forKey: "cars").remove(first)
            #expect(person.objectIDs(forRelationshipNamed: "cars") == [carIDs[1]])
        }
    }

    @Test func aToOneIsAFaultWhileItsObjectIs() throws {
        let (stack, context, carIDs) = try savedOwner()
        try context.performAndWait {
            let car = try context.existingObject(with: carIDs[0])
            let ownerID = try #require(car.objectIDs(forRelationshipNamed: "owner").first)
            #expect(context.registeredObject(for: ownerID) == nil)
            #expect(car.hasFault(forRelationshipNamed: "owner"))
            let owner = try #require(car.value(forKey: "owner") as? NSManagedObject)
            #expect(owner.isFault && car.hasFault(forRelationshipNamed: "owner"))
            _ = owner.value(forKey: "name")
            #expect(!car.hasFault(forRelationshipNamed: "owner"))
            car.setValue(nil, forKey: "owner")
            #expect(car.objectIDs(forRelationshipNamed: "owner").isEmpty && !car.hasFault(forRelationshipNamed: "owner"))
        }
        // An object that is itself a fault: all its relationships are faults.
        let other = stack.newContext()
        other.performAndWait {
            let fault = other.object(with: carIDs[1])
            #expect(fault.isFault && fault.hasFault(forRelationshipNamed: "owner"))
        }
        // A new object's to-many has nothing to read.
        let person = stack.insert("Person", ["name": "new"])
        #expect(!person.hasFault(forRelationshipNamed: "cars") && person.objectIDs(forRelationshipNamed: "cars").isEmpty)
    }

    /// The IDs are those of the relationship's current value, loaded or not: a destination
    /// deleted but not yet processed is still there, as in `value(forKey:)`.
    @Test func theIDsAreThoseOfTheCurrentValueLoadedOrNot() throws {
        let (stack, context, carIDs) = try savedOwner()
        defer { withExtendedLifetime(stack) {} }
        try context.performAndWait {
            let person = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))[0]
            context.delete(context.object(with: carIDs[0]))
            let unloaded = Set(person.objectIDs(forRelationshipNamed: "cars"))
            let value = try #require(person.value(forKey: "cars") as? Set<NSManagedObject>)
            #expect(unloaded == Set(value.map(\.objectID)))
            #expect(Set(person.objectIDs(forRelationshipNamed: "cars")) == unloaded)
        }
    }

    /// In a child context, a to-one read while its destination was new in the parent gives the
    /// destination's permanent ID once the parent saved, as `value(forKey:)` does.
    @Test func aToOneReadBeforeTheParentSavedGivesThePermanentID() throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        var carID: NSManagedObjectID?
        try parent.performAndWait {
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: parent)
            person.setValue("Ada", forKey: "name")
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: parent)
            car.setValue(person, forKey: "owner")
            try parent.obtainPermanentIDs(for: [car])
            carID = car.objectID
        }
        let car = try child.performAndWait { () throws -> NSManagedObject in
            let car = child.object(with: carID!)
            _ = car.value(forKey: "name") // read while its owner is new in the parent
            return car
        }
        try parent.performAndWait { try parent.save() }
        child.performAndWait {
            let ids = car.objectIDs(forRelationshipNamed: "owner")
            #expect(ids.count == 1 && ids.first?.isTemporaryID == false)
            #expect(ids.first == (car.value(forKey: "owner") as? NSManagedObject)?.objectID)
        }
    }

    /// A store that fails to read the IDs: empty, and the next save throws; read again once
    /// the store is back, and the save has nothing against it.
    @Test func aStoreErrorIsThrownByTheNextSaveUntilARereadSucceeds() throws {
        let stack = try TestStack()
        let ann = stack.insert("Person", ["name": "Ann"])
        for name in ["a", "b"] { stack.insert("Car", ["name": name, "owner": ann]) }
        try stack.context.save()
        let reader = try stack.reopen()
        let person = try #require(try reader.fetch("Person").first)
        try RawSQLite.execute(stack.url.path, "ALTER TABLE ZCAR RENAME TO ZCAR_HIDDEN")
        #expect(person.objectIDs(forRelationshipNamed: "cars").isEmpty)
        #expect(throws: NSError.self) { try reader.context.save() }
        try RawSQLite.execute(stack.url.path, "ALTER TABLE ZCAR_HIDDEN RENAME TO ZCAR")
        #expect(person.objectIDs(forRelationshipNamed: "cars").count == 2)
        person.setValue(41, forKey: "age")
        try reader.context.save()
        #expect(try stack.rows("SELECT ZAGE FROM ZPERSON") == [["41"]])
    }

    @Test func aKeyThatIsNotARelationshipTraps() async {
        await #expect(processExitsWith: .signal(SIGILL)) {
            let stack = try! TestStack()
            let car = stack.insert("Car", ["name": "x"])
            _ = car.hasFault(forRelationshipNamed: "name")
        }
    }
}
