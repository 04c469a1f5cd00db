import Foundation
import Testing
@testable import CoreData

/// An entity of more than 64 properties: the changes of the first 64 are tracked in the object's
/// word of bits, the others beside it (`NSManagedObject._changed`), and both are saved, rolled
/// back and cleared alike.
@Suite("Change tracking beyond 64 properties")
struct WideEntityTests {
    static func model() -> NSManagedObjectModel {
        let wide = NSEntityDescription()
        wide.name = "Wide"
        wide.properties = (0..<70).map { attribute("a\($0)", .integer64AttributeType) }
        let model = NSManagedObjectModel()
        model.entities = [wide]
        return model
    }

    @Test func changesOfHighIndexesAreSavedAndCleared() throws {
        let stack = try TestStack(model: Self.model())
        let object = stack.insert("Wide", ["a1": 1, "a69": 69])
        try stack.context.save()
        #expect(!object.hasChanges && object.changedValues().isEmpty)

        object.setValue(2, forKey: "a1")
        object.setValue(70, forKey: "a69")
        object.setValue(66, forKey: "a66")
        #expect(object.isUpdated)
        #expect(Set(object.changedValues().keys) == ["a1", "a66", "a69"])
        try stack.context.save()
        #expect(!object.hasChanges && object.changedValues().isEmpty)

        let fetched = try #require(try stack.reopen().fetch("Wide").first)
        #expect(fetched.value(forKey: "a1") as? Int == 2)
        #expect(fetched.value(forKey: "a66") as? Int == 66)
        #expect(fetched.value(forKey: "a69") as? Int == 70)
    }

    @Test func onlyAHighIndexChanged() throws {
        let stack = try TestStack(model: Self.model())
        let object = stack.insert("Wide", ["a0": 0])
        try stack.context.save()
        object.setValue(5, forKey: "a68")
        #expect(object.hasPersistentChangedValues)
        #expect(Set(object.changedValues().keys) == ["a68"])
        stack.context.rollback()
        #expect(!object.hasChanges && object.changedValues().isEmpty)
        #expect(object.value(forKey: "a68") == nil)

        object.setValue(6, forKey: "a68")
        try stack.context.save()
        let fetched = try #require(try stack.reopen().fetch("Wide").first)
        #expect(fetched.value(forKey: "a68") as? Int == 6)
    }

    /// A refresh that merges changes keeps the changes of high indexes and their values.
    @Test func refreshMergingChangesKeepsHighIndexes() throws {
        let stack = try TestStack(model: Self.model())
        let object = stack.insert("Wide", ["a1": 1, "a67": 67])
        try stack.context.save()
        object.setValue(68, forKey: "a67")
        stack.context.refresh(object, mergeChanges: true)
        #expect(object.value(forKey: "a67") as? Int == 68)
        #expect(Set(object.changedValues().keys) == ["a67"])
        try stack.context.save()
        let fetched = try #require(try stack.reopen().fetch("Wide").first)
        #expect(fetched.value(forKey: "a67") as? Int == 68)
    }
}
