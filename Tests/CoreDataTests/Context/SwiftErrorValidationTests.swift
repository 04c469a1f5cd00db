import Foundation
import Testing
@testable import CoreData

/// An app's own error type, not an `NSError`.
struct CarRuleBroken: Error, Equatable {
    var rule: String
}

/// A car whose validation overrides throw ``CarRuleBroken`` for the names given.
final class SwiftErrorCar: NSManagedObject {
    override func validateForInsert() throws {
        try super.validateForInsert()
        if value(forKey: "name") as? String == "bad insert" { throw CarRuleBroken(rule: "insert") }
    }
    override func validateForUpdate() throws {
        try super.validateForUpdate()
        if value(forKey: "name") as? String == "bad update" { throw CarRuleBroken(rule: "update") }
    }
    override func validateValue(_ value: inout Any?, forKey key: String) throws {
        try super.validateValue(&value, forKey: key)
        if key == "name", value as? String == "bad value" { throw CarRuleBroken(rule: "value") }
    }
}

/// Validation overrides that throw a plain Swift `Error` (issue 21, B2): `save()` throws that
/// error, as Apple's does, instead of crashing in the collector of validation errors.
@Suite("Validation errors of the app's own types")
struct SwiftErrorValidationTests {
    private func stack() throws -> TestStack { try TestStack(classes: ["Car": SwiftErrorCar.self]) }

    @Test func aSwiftErrorFromValidateForInsertIsThrownAsItIs() throws {
        let stack = try stack()
        stack.insert("Car", ["name": "bad insert"])
        #expect(throws: CarRuleBroken(rule: "insert")) { try stack.context.save() }
        #expect(try stack.rows("SELECT count(*) FROM ZCAR") == [["0"]], "nothing was written")
    }

    @Test func aSwiftErrorFromValidateForUpdateIsThrownAsItIs() throws {
        let stack = try stack()
        let car = stack.insert("Car", ["name": "good"])
        try stack.context.save()
        car.setValue("bad update", forKey: "name")
        #expect(throws: CarRuleBroken(rule: "update")) { try stack.context.save() }
        #expect(try stack.rows("SELECT ZNAME FROM ZCAR") == [["good"]])
    }

    @Test func aSwiftErrorFromValidateValueIsThrownAsItIs() throws {
        let stack = try stack()
        stack.insert("Car", ["name": "bad value"])
        #expect(throws: CarRuleBroken(rule: "value")) { try stack.context.save() }
    }

    @Test func severalSwiftErrorsComeTogetherAs1560() throws {
        let stack = try stack()
        stack.insert("Car", ["name": "bad insert"])
        stack.insert("Car", ["name": "bad value"])
        stack.insert("Person") // a missing name: one of Core Data's own errors
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.domain == NSCocoaErrorDomain && error.code == NSValidationMultipleErrorsError)
        let details = try #require(error.userInfo[NSDetailedErrorsKey] as? [NSError])
        #expect(details.count == 3)
        #expect(details.contains { $0.code == NSValidationMissingMandatoryPropertyError })
    }
}
