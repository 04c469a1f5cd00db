import CoreData
import Foundation
import MagicalRecord
import Testing

/// `NSManagedObject (MagicalRecord)`: entities, creating, deleting, and moving objects between
/// contexts.
@Suite struct MagicalEntityTests {
    @Test func theEntityNameIsTheClassNameWithoutItsModule() {
        #expect(Person.mr_entityName() == "Person")
        #expect(Employer.mr_entityName() == "Employer")
    }

    @Test func theEntityIsFoundByItsClassThenByName() throws {
        let stack = try MagicalTestStack()
        #expect(Person.mr_entityDescription(in: stack.context)?.name == "Person")
        // Employer's entity is Company: found by its managedObjectClassName.
        #expect(Employer.mr_entityDescription(in: stack.context)?.name == "Company")
        #expect(NSManagedObject.mr_entityDescription(in: stack.context) == nil)
    }

    @Test func propertiesNamedLeavesOutUnknownNames() throws {
        let stack = try MagicalTestStack()
        let properties = Person.mr_propertiesNamed(["name", "nope", "age"], in: stack.context)
        #expect(properties?.map(\.name) == ["name", "age"])
    }

    @Test func sortDescriptorHelpers() {
        #expect(Person.mr_ascendingSortDescriptors(["name", "age"]).map { "\($0.key!) \($0.ascending)" } == ["name true", "age true"])
        #expect(Person.mr_descendingSortDescriptors(["age"]).map { "\($0.key!) \($0.ascending)" } == ["age false"])
    }

    @Test func createEntityInsertsAnObjectOfTheClass() throws {
        let stack = try MagicalTestStack()
        let person = stack.run { Person.mr_createEntity(in: stack.context) }
        let employer = stack.run { Employer.mr_createEntity(in: stack.context) }
        #expect(person != nil)
        #expect(employer?.entity.name == "Company")
        stack.run {
            #expect(person?.isInserted == true)
            #expect(stack.context.insertedObjects.count == 2)
        }
        try stack.save()
    }

    @Test func createEntityOfAClassWithoutEntityIsNil() throws {
        let stack = try MagicalTestStack()
        stack.run { #expect(NSManagedObject.mr_createEntity(in: stack.context) == nil) }
    }

    @Test func deleteEntityInItsOwnAndInAnotherContext() throws {
        let stack = try MagicalTestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        let bob = stack.insert("Person", ["name": "Bob"])
        try stack.save()
        stack.run { #expect(ada.mr_deleteEntity(in: stack.context)) }
        // Bob, deleted in another context: that context's object for his ID is deleted.
        let other = stack.newContext()
        other.performAndWait {
            #expect(bob.mr_deleteEntity(in: other))
            #expect(other.deletedObjects.map(\.objectID) == [bob.objectID])
        }
        try other.performAndWait { try other.save() }
        try stack.save()
        #expect(Person.mr_countOfEntities(with: stack.newContext()) == 0)
    }

    @Test func deleteEntityOfAnUnsavedObjectInAnotherContextIsFalse() throws {
        let stack = try MagicalTestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        let other = stack.newContext()
        other.performAndWait { #expect(ada.mr_deleteEntity(in: other) == false) }
    }

    @Test func truncateAllAndDeleteAllMatching() throws {
        let stack = try MagicalTestStack()
        stack.insertCars()
        stack.insert("Person", ["name": "Ada"])
        try stack.save()
        #expect(Automobile.mr_deleteAll(matching: NSPredicate(format: "make == 'Saab'"), in: stack.context))
        #expect(stack.values(Automobile.mr_findAllSorted(by: "model", ascending: true, in: stack.context), "model") == ["Panda", "V70"])
        #expect(Automobile.mr_truncateAll(in: stack.context))
        #expect(Automobile.mr_countOfEntities(with: stack.context) == 0)
        #expect(Person.mr_countOfEntities(with: stack.context) == 1)
        try stack.save()
        #expect(Automobile.mr_countOfEntities(with: stack.newContext()) == 0)
    }

    @Test func inContextGivesTheSameObjectInAnotherContext() throws {
        let stack = try MagicalTestStack()
        let ada = stack.insert("Person", ["name": "Ada"]) as! Person
        try stack.save()
        let other = stack.newContext()
        let there = ada.mr_(in: other)
        #expect(there != nil)
        #expect(there !== ada)
        #expect(there?.objectID == ada.objectID)
        #expect(there?.managedObjectContext === other)
        other.performAndWait { #expect(there?.value(forKey: "name") as? String == "Ada") }
    }

    @Test func inContextGivesAnUnsavedObjectAPermanentIDForAChildContext() throws {
        let stack = try MagicalTestStack()
        let ada = stack.insert("Person", ["name": "Ada"]) as! Person
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = stack.context
        let there = ada.mr_(in: child)
        #expect(stack.run { ada.objectID.isTemporaryID } == false)
        #expect(there?.objectID == ada.objectID)
        child.performAndWait { #expect(there?.value(forKey: "name") as? String == "Ada") }
    }

    @Test func inContextOfAnObjectTheOtherContextCannotSeeIsNil() throws {
        let stack = try MagicalTestStack()
        let ada = stack.insert("Person", ["name": "Ada"]) as! Person
        // A sibling on the coordinator: the row is not saved, so it has no such object.
        #expect(ada.mr_(in: stack.newContext()) == nil)
    }
}

/// MagicalRecord 2.3's deprecated names still work (called through a protocol so that the
/// deprecation warning does not fail the zero-warning build).
@Suite struct MagicalDeprecatedEntityTests {
    @Test func createAndDeleteInContext() throws {
        let stack = try MagicalTestStack()
        let deprecated: any DeprecatedEntityCalls.Type = DeprecatedCalls.self
        let car = stack.run { deprecated.create(in: stack.context) }
        #expect(car != nil)
        let deleted = stack.run { deprecated.delete(car!, in: stack.context) }
        #expect(deleted)
        #expect(Automobile.mr_countOfEntities(with: stack.context) == 0)
    }
}

protocol DeprecatedEntityCalls {
    static func create(in context: NSManagedObjectContext) -> Automobile?
    static func delete(_ object: NSManagedObject, in context: NSManagedObjectContext) -> Bool
}

enum DeprecatedCalls: DeprecatedEntityCalls {
    @available(*, deprecated)
    static func create(in context: NSManagedObjectContext) -> Automobile? { Automobile.mr_create(in: context) }
    @available(*, deprecated)
    static func delete(_ object: NSManagedObject, in context: NSManagedObjectContext) -> Bool { object.mr_delete(in: context) }
}
