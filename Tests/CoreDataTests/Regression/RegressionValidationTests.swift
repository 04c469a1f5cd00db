import Foundation
import Testing
@testable import CoreData

final class ReviewPickyCar: NSManagedObject {
    override func validateValue(_ value: inout Any?, forKey key: String) throws {
        try super.validateValue(&value, forKey: key)
        if key == "name", value as? String == "forbidden" {
            throw NSError(domain: NSCocoaErrorDomain, code: NSManagedObjectValidationError, userInfo: [NSValidationKeyErrorKey: key])
        }
    }
}

@Suite("Review: validation hooks")
struct ReviewValidationTests {
    /// Apple's validateForInsert/Update call validateValue(_:forKey:) for every property.
    @Test func overriddenValidateValueRunsAtSave() throws {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.managedObjectClassName = String(reflecting: ReviewPickyCar.self)
        let stack = try TestStack(model: model)
        stack.insert("Car", ["name": "forbidden"])
        #expect(throws: (any Error).self) { try stack.context.save() }
    }

    @Test func relationshipCountsAreValidatedAtSave() throws {
        let model = TestModel.make()
        (model.entitiesByName["Person"]!.propertiesByName["cars"] as! NSRelationshipDescription).maxCount = 2
        let stack = try TestStack(model: model)
        let ada = stack.insert("Person", ["name": "Ada"])
        for i in 0..<3 { stack.insert("Car", ["name": "c\(i)"]).setValue(ada, forKey: "owner") }
        do { try stack.context.save(); Issue.record("should fail") } catch let error as NSError {
            #expect(error.code == NSValidationRelationshipExceedsMaximumCountError)
        }
    }
}
