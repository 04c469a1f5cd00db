import Foundation
import Testing
@testable import CoreData

/// A relationship that still holds an object deleted in the same context, because the
/// relationship back was lost, is Apple's "Dangling reference to an invalid object": the save
/// throws 1550 naming it, and writes nothing (before, the row kept a key of a deleted row).
@Suite("Dangling references at save")
struct DanglingReferenceTests {
    @Test func aToOneOnADeletedObjectIsAValidationError() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        let car = stack.insert("Car", ["name": "Model T"])
        try stack.context.save()
        car.setValue(ada, forKey: "owner")
        // Dropping Ada's unsaved side of the relationship: her cars no longer hold the car.
        stack.context.refresh(ada, mergeChanges: false)
        stack.context.delete(ada) // (the cascade over her cars misses the car)
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.code == NSManagedObjectValidationError)
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "owner")
        #expect(error.localizedDescription.contains("Dangling reference to an invalid object"))
        #expect(try stack.rawRows("SELECT ZOWNER FROM ZCAR") == [[nil]])
        #expect(try stack.rawRows("SELECT count(*) FROM ZPERSON") == [["1"]])
        // Taking the car out of the relationship lets the save through.
        car.setValue(nil, forKey: "owner")
        try stack.context.save()
        #expect(try stack.rawRows("SELECT count(*) FROM ZPERSON") == [["0"]])
    }

    @Test func aToManyHoldingADeletedObjectIsAValidationError() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "Model T"])
        let tag = stack.insert("Tag", ["label": "old"])
        try stack.context.save()
        car.mutableSetValue(forKey: "tags").add(tag)
        stack.context.refresh(tag, mergeChanges: false) // the tag's side of the relationship dropped
        stack.context.delete(tag)
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.code == NSManagedObjectValidationError)
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "tags")
    }
}
