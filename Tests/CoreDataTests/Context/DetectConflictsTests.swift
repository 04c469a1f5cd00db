import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `NSManagedObjectContext.detectConflicts(for:)`: optimistic locking for an object the save
/// does not change.
@Suite struct DetectConflictsTests {
    /// A saved car "a" (year 1950) and person "Ann"; the car and the person read in `stack`'s
    /// context, and a second stack on the same store.
    private func readCarAndPerson(_ kind: TestStoreKind) throws -> (TestStack, TestStack, car: NSManagedObject, person: NSManagedObject) {
        let stack = try TestStack(kind)
        let car = stack.insert("Car", ["name": "a", "year": 1950])
        let person = stack.insert("Person", ["name": "Ann"])
        try stack.context.save()
        _ = car.value(forKey: "name")
        return (stack, try stack.reopen(), car, person)
    }

    /// The other stack changes the car's year to `year` and saves.
    private func changeCarElsewhere(_ other: TestStack, year: Int = 1960) throws {
        let mirror = try #require(try other.fetch("Car").first)
        mirror.setValue(year, forKey: "year")
        try other.context.save()
    }

    private func personName(_ stack: TestStack) throws -> String? {
        try stack.rawRows("SELECT \"ZNAME\" FROM \"ZPERSON\"").first?[0] ?? nil
    }

    @Test(arguments: TestStoreKind.available)
    func aMarkedObjectChangedElsewhereFailsTheSave(_ kind: TestStoreKind) throws {
        let (stack, other, car, person) = try readCarAndPerson(kind)
        stack.context.detectConflicts(for: car)
        try changeCarElsewhere(other)
        person.setValue("Bea", forKey: "name")
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.domain == NSCocoaErrorDomain && error.code == NSManagedObjectMergeError)
        let conflicts = try #require(error.userInfo["conflictList"] as? [NSMergeConflict])
        #expect(conflicts.count == 1)
        #expect(conflicts.first?.sourceObject === car)
        #expect(conflicts.first?.oldVersionNumber == 1 && conflicts.first?.newVersionNumber == 2)
        #expect(conflicts.first?.persistedSnapshot?["year"] as? Int == 1960)
        #expect(try personName(stack) == "Ann", "nothing of the refused save was written")
        #expect(try stack.rawRows("SELECT \"Z_OPT\" FROM \"ZCAR\"") == [["2"]], "the car was not written")
    }

    /// A marked object a refresh turned into a fault, whose row is then deleted elsewhere: the
    /// conflict is made without firing it (firing inside the save stopped the process with
    /// `shouldDeleteInaccessibleFaults` off, or left the object marked deleted).
    @Test(arguments: TestStoreKind.available)
    func aMarkedFaultWhoseRowIsGoneFailsTheSaveWithoutFiring(_ kind: TestStoreKind) throws {
        let (stack, other, car, person) = try readCarAndPerson(kind)
        stack.context.detectConflicts(for: car)
        stack.context.refresh(car, mergeChanges: false)
        #expect(car.isFault)
        other.context.delete(try #require(try other.fetch("Car").first))
        try other.context.save()
        stack.context.shouldDeleteInaccessibleFaults = false
        person.setValue("Bea", forKey: "name")
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.code == NSManagedObjectMergeError)
        #expect(car.isFault && !car.isDeleted && !stack.context.deletedObjects.contains(car))
        #expect(try personName(stack) == "Ann")
    }

    @Test(arguments: TestStoreKind.available)
    func unmarkedTheSameSaveSucceeds(_ kind: TestStoreKind) throws {
        let (stack, other, _, person) = try readCarAndPerson(kind)
        try changeCarElsewhere(other)
        person.setValue("Bea", forKey: "name")
        try stack.context.save()
        #expect(try personName(stack) == "Bea")
    }

    @Test(arguments: TestStoreKind.available)
    func aMarkedObjectUnchangedElsewhereSavesAndTheMarkEndsWithTheSave(_ kind: TestStoreKind) throws {
        let (stack, other, car, person) = try readCarAndPerson(kind)
        stack.context.detectConflicts(for: car)
        person.setValue("Bea", forKey: "name")
        try stack.context.save()
        #expect(try stack.rawRows("SELECT \"Z_OPT\" FROM \"ZCAR\"") == [["1"]], "a marked object is checked, not written")
        // The mark is gone: the car changing elsewhere no longer fails a save.
        try changeCarElsewhere(other)
        person.setValue("Cy", forKey: "name")
        try stack.context.save()
        #expect(try personName(stack) == "Cy")
    }

    @Test(arguments: TestStoreKind.available)
    func aMarkedObjectDeletedElsewhereFailsTheSave(_ kind: TestStoreKind) throws {
        let (stack, other, car, person) = try readCarAndPerson(kind)
        stack.context.detectConflicts(for: car)
        other.context.delete(try #require(try other.fetch("Car").first))
        try other.context.save()
        person.setValue("Bea", forKey: "name")
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.code == NSManagedObjectMergeError)
        #expect((error.userInfo["conflictList"] as? [NSMergeConflict])?.first?.persistedSnapshot == nil)
        #expect(try personName(stack) == "Ann")
    }

    @Test(arguments: TestStoreKind.available)
    func aMergePolicyResolvesItAndTheSaveGoesOn(_ kind: TestStoreKind) throws {
        let (stack, other, car, person) = try readCarAndPerson(kind)
        stack.context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        stack.context.detectConflicts(for: car)
        try changeCarElsewhere(other)
        person.setValue("Bea", forKey: "name")
        try stack.context.save()
        #expect(try personName(stack) == "Bea")
        #expect(car.value(forKey: "year") as? Int == 1960, "the car took the store's values")
        #expect(try stack.rawRows("SELECT \"ZYEAR\", \"Z_OPT\" FROM \"ZCAR\"") == [["1960", "2"]])
    }

    @Test func theOverwritePolicyHasNothingOfTheMarkedObjectToWrite() throws {
        let (stack, other, car, person) = try readCarAndPerson(.sqlite)
        stack.context.mergePolicy = NSOverwriteMergePolicy
        stack.context.detectConflicts(for: car)
        try changeCarElsewhere(other)
        person.setValue("Bea", forKey: "name")
        try stack.context.save()
        // Overwrite writes the changed objects; the marked one is unchanged: the row stays, and
        // the object takes it.
        #expect(try stack.rawRows("SELECT \"ZYEAR\", \"Z_OPT\" FROM \"ZCAR\"") == [["1960", "2"]])
        #expect(car.value(forKey: "year") as? Int == 1960 && !car.hasChanges)
        #expect(try personName(stack) == "Bea")
    }

    @Test func aMarkedObjectRefreshedIntoAFaultIsCheckedAtTheVersionItHeld() throws {
        let (stack, other, car, person) = try readCarAndPerson(.sqlite)
        stack.context.detectConflicts(for: car)
        stack.context.refresh(car, mergeChanges: false) // a fault again, no version held
        try changeCarElsewhere(other)
        person.setValue("Bea", forKey: "name")
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.code == NSManagedObjectMergeError)
    }

    @Test func rollbackAndResetEndTheMark() throws {
        let (stack, other, car, person) = try readCarAndPerson(.sqlite)
        stack.context.detectConflicts(for: car)
        stack.context.rollback()
        try changeCarElsewhere(other)
        person.setValue("Bea", forKey: "name")
        try stack.context.save()

        let again = try #require(try stack.fetch("Car").first)
        stack.context.detectConflicts(for: again)
        stack.context.reset()
        #expect(stack.context.objectsDetectingConflicts.isEmpty)
        try changeCarElsewhere(other, year: 1970)
        try #require(try stack.fetch("Person").first).setValue("Cy", forKey: "name")
        try stack.context.save()
        #expect(try personName(stack) == "Cy")
    }

    @Test func aChildsMarkIsCheckedByTheParentsSave() throws {
        let (stack, other, car, _) = try readCarAndPerson(.sqlite)
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = stack.context
        let carID = car.objectID
        let personID = try #require(try stack.fetch("Person").first).objectID
        try child.performAndWait {
            child.detectConflicts(for: try child.existingObject(with: carID))
            try child.existingObject(with: personID).setValue("Bea", forKey: "name")
            try child.save() // into the parent: no store, no check
        }
        try changeCarElsewhere(other)
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.code == NSManagedObjectMergeError)
        #expect((error.userInfo["conflictList"] as? [NSMergeConflict])?.first?.sourceObject === car)
        #expect(try personName(stack) == "Ann")
    }

    @Test func aSaveWithNothingToSaveChecksNothing() throws {
        let (stack, other, car, _) = try readCarAndPerson(.sqlite)
        stack.context.detectConflicts(for: car)
        try changeCarElsewhere(other)
        try stack.context.save() // nothing changed: no write, no check
    }

    @Test func theInMemoryStoreChecksTheMark() throws {
        let stack = try TestStack(inMemory: true)
        let car = stack.insert("Car", ["name": "a"])
        let person = stack.insert("Person", ["name": "Ann"])
        try stack.context.save()
        let other = stack.newContext()
        let mirror = try other.existingObject(with: car.objectID)
        stack.context.detectConflicts(for: car)
        mirror.setValue("b", forKey: "name")
        try other.save()
        person.setValue("Bea", forKey: "name")
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.code == NSManagedObjectMergeError)
    }

    @Test func aChildsMarkHoldsTheVersionTheChildReadWhenTheParentHoldsNone() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a", "year": 1950])
        let person = stack.insert("Person", ["name": "Ann"])
        try stack.context.save()
        let (carID, personID) = (car.objectID, person.objectID)
        let other = try stack.reopen()
        let parent = try stack.reopen().context // has read nothing
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        try child.performAndWait {
            let childCar = try child.existingObject(with: carID)
            child.detectConflicts(for: childCar)
            try child.existingObject(with: personID).setValue("Bea", forKey: "name")
            try child.save()
        }
        try changeCarElsewhere(other)
        let error = try #require(throws: NSError.self) { try parent.save() }
        #expect(error.code == NSManagedObjectMergeError)
        #expect(try personName(stack) == "Ann")
    }
}
