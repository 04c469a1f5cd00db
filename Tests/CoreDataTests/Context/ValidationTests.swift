import Foundation
import Testing
@testable import CoreData

@Suite("Validation at save")
struct ValidationTests {
    private func saveError(_ stack: TestStack) -> NSError? {
        do { try stack.context.save(); return nil } catch { return error as NSError }
    }

    @Test func missingRequiredValue() throws {
        let stack = try TestStack()
        let person = stack.insert("Person")
        let error = try #require(saveError(stack))
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == NSValidationMissingMandatoryPropertyError)
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "name")
        #expect(error.userInfo[NSValidationObjectErrorKey] as? NSManagedObject === person)
        #expect(stack.context.hasChanges, "the context keeps its changes")
        person.setValue("Ada", forKey: "name")
        try stack.context.save()
    }

    @Test func wrongTypeIsAnErrorNotACrash() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        car.setValue("not a number", forKey: "year")
        let error = try #require(saveError(stack))
        #expect(error.code == NSManagedObjectValidationError)
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "year")
        #expect(error.localizedDescription.contains("wrong type"))
        #expect(try stack.reopen().fetch("Car").isEmpty)
    }

    /// A number too large for its integer attribute says so (not "wrong type: NSNumber where the
    /// model says NSNumber").
    @Test func aNumberThatDoesNotFitItsIntegerTypeSaysSo() throws {
        let stack = try TestStack()
        let person = stack.insert("Person", ["name": "Ada"])
        person.setValue(NSNumber(value: 70_000), forKey: "age")
        let error = try #require(saveError(stack))
        #expect(error.code == NSManagedObjectValidationError)
        #expect(error.localizedDescription == "Person.age got 70000, which does not fit an Integer 16 attribute")
    }

    /// An optional attribute without rules is type-checked only for objects that took a mistyped
    /// value (the fast path skips it otherwise): an insert and an update must both still fail.
    @Test func wrongTypeForAnOptionalAttributeWithoutRules() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        car.setValue("cheap", forKey: "price")
        var error = try #require(saveError(stack))
        #expect(error.code == NSManagedObjectValidationError)
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "price")
        car.setValue(12.5, forKey: "price")
        try stack.context.save()

        car.setValue(Date(), forKey: "price")
        error = try #require(saveError(stack))
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "price")
        car.setValue(7, forKey: "price") // an integer converts to a Double attribute
        try stack.context.save()
        #expect(try stack.reopen().fetch("Car").first?.value(forKey: "price") as? Double == 7)
    }

    @Test func outOfBounds() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a", "year": 1700])
        #expect(saveError(stack)?.code == NSValidationNumberTooSmallError)
        car.setValue(2500, forKey: "year")
        #expect(saveError(stack)?.code == NSValidationNumberTooLargeError)
        car.setValue(2000, forKey: "year")
        let person = stack.insert("Person", ["name": String(repeating: "x", count: 41)])
        #expect(saveError(stack)?.code == NSValidationStringTooLongError)
        person.setValue("ok", forKey: "name")
        car.setValue(Int(Int32.max) + 1, forKey: "year")
        #expect(saveError(stack)?.code == NSManagedObjectValidationError, "out of Integer 32's range")
        car.setValue(1999, forKey: "year")
        try stack.context.save()
    }

    @Test func severalErrorsComeTogether() throws {
        let stack = try TestStack()
        stack.insert("Person")
        stack.insert("Car", ["year": 1])
        let error = try #require(saveError(stack))
        #expect(error.code == NSValidationMultipleErrorsError)
        let details = try #require(error.userInfo[NSDetailedErrorsKey] as? [NSError])
        #expect(Set(details.map(\.code)) == [NSValidationMissingMandatoryPropertyError, NSValidationNumberTooSmallError])
    }

    @Test func patternAndValidationPredicates() throws {
        let model = TestModel.make()
        let label = model.entitiesByName["Tag"]!.attributesByName["label"]!
        label.regularExpression = "[a-z]+"
        let stack = try TestStack(model: model)
        let tag = stack.insert("Tag", ["label": "Not Lowercase"])
        #expect(saveError(stack)?.code == NSValidationStringPatternMatchingError)
        tag.setValue("lower", forKey: "label")
        try stack.context.save()
        var value: Any? = "UPPER"
        #expect(throws: NSError.self) { try tag.validateValue(&value, forKey: "label") }
        // The whole string must match, as MATCHES says: not a line of it.
        for text in ["abc\n", "abc\nxyz"] {
            var candidate: Any? = text
            #expect(throws: NSError.self, "\(text.debugDescription)") { try tag.validateValue(&candidate, forKey: "label") }
        }
    }

    /// `validateValue(_:forKey:)` of a relationship checks the value given, the candidate, not
    /// the one the object holds (it passed a nil for a required to-one that was set, and failed
    /// a valid one while the relationship was still empty).
    @Test func validateValueChecksTheGivenRelationshipValue() throws {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.relationshipsByName["owner"]!.isOptional = false
        let cars = model.entitiesByName["Person"]!.relationshipsByName["cars"]!
        cars.maxCount = 2
        let stack = try TestStack(model: model)
        let ada = stack.insert("Person", ["name": "Ada"])
        let car = stack.insert("Car", ["name": "T"])
        var owner: Any? = ada
        try car.validateValue(&owner, forKey: "owner")
        car.setValue(ada, forKey: "owner")
        var none: Any? = nil
        #expect(throws: NSError.self) { try car.validateValue(&none, forKey: "owner") }
        do { try car.validateValue(&none, forKey: "owner") } catch let error as NSError {
            #expect(error.code == NSValidationMissingMandatoryPropertyError)
        }
        var three: Any? = Set([car, stack.insert("Car", ["name": "U", "owner": ada]), stack.insert("Car", ["name": "V", "owner": ada])])
        do { try ada.validateValue(&three, forKey: "cars"); Issue.record("three cars pass a maximum of two") } catch let error as NSError {
            #expect(error.code == NSValidationRelationshipExceedsMaximumCountError)
        }
        var one: Any? = Set([car])
        try ada.validateValue(&one, forKey: "cars")
    }

    @Test func subclassValidationRuns() throws {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.managedObjectClassName = String(reflecting: PickyTag.self)
        let stack = try TestStack(model: model)
        stack.insert("Tag", ["label": "forbidden"])
        let error = try #require(saveError(stack))
        #expect(error.localizedDescription == "forbidden label")
    }
}

final class PickyTag: NSManagedObject {
    override func validateForInsert() throws {
        try super.validateForInsert()
        if value(forKey: "label") as? String == "forbidden" {
            throw NSError(domain: NSCocoaErrorDomain, code: NSManagedObjectValidationError,
                          userInfo: [NSLocalizedDescriptionKey: "forbidden label"])
        }
    }
}
