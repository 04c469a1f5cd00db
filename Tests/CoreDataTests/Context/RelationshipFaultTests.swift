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
        let fault = stack.newContext().object(with: carIDs[1])
        #expect(fault.isFault && fault.hasFault(forRelationshipNamed: "owner"))
        // A new object's to-many has nothing to read.
        let person = stack.insert("Person", ["name": "new"])
        #expect(!person.hasFault(forRelationshipNamed: "cars") && person.objectIDs(forRelationshipNamed: "cars").isEmpty)
    }

    @Test func aKeyThatIsNotARelationshipTraps() async {
        await #expect(processExitsWith: .signal(SIGILL)) {
            let stack = try! TestStack()
            let car = stack.insert("Car", ["name": "x"])
            _ = car.hasFault(forRelationshipNamed: "name")
        }
    }
}
