import Foundation
import Testing
@testable import CoreData

/// A model whose objects hold only plain values and have no rules to check: a save of its plain
/// objects skips walking the inserted and updated objects, unless one of the context's objects
/// has taken a value of the wrong type since the context last saved.
@Suite("Validation of a model without rules")
struct ValidationWithoutRulesTests {
    private func stack() throws -> TestStack { try TestStack(model: valuesOnlyItemModel()) }

    private func saveError(_ stack: TestStack) -> NSError? {
        do { try stack.context.save(); return nil } catch { return error as NSError }
    }

    @Test func theModelHasNoRules() throws {
        let stack = try stack()
        #expect(stack.model.objectsHaveNoValidationRules)
        #expect(!TestModel.make().objectsHaveNoValidationRules)
    }

    @Test func aValueOfTheWrongTypeIsStillAnError() throws {
        let stack = try stack()
        for index in 0..<20 { stack.insert("Item", ["number": index]) }
        let odd = stack.insert("Item", ["title": "odd"])
        odd.setValue("not a number", forKey: "number")
        #expect(stack.context.heldMistypedValue)
        let error = try #require(saveError(stack))
        #expect(error.code == NSManagedObjectValidationError)
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "number")
        #expect(try stack.reopen().fetch("Item").isEmpty, "nothing written")

        odd.setValue(21, forKey: "number")
        try stack.context.save()
        #expect(!stack.context.heldMistypedValue)
        #expect(try stack.reopen().fetch("Item").count == 21)

        // After a save that succeeded, a new mistyped value is caught again, in an update too.
        odd.setValue(Date(), forKey: "number")
        #expect(saveError(stack)?.userInfo[NSValidationKeyErrorKey] as? String == "number")
        odd.setValue(22, forKey: "number")
        try stack.context.save()
    }

    @Test func aValueOfTheWrongTypeTakenBeforeTheObjectHadAContextIsAnError() throws {
        let stack = try stack()
        let entity = try #require(stack.model.entitiesByName["Item"])
        let loose = NSManagedObject(entity: entity, insertInto: nil)
        loose.setValue("not a number", forKey: "number")
        stack.context.insert(loose)
        #expect(saveError(stack)?.userInfo[NSValidationKeyErrorKey] as? String == "number")
        #expect(try stack.reopen().fetch("Item").isEmpty)
    }

    @Test func validValuesSave() throws {
        let stack = try stack()
        for index in 0..<100 { stack.insert("Item", ["number": index, "title": "item \(index)"]) }
        try stack.context.save()
        let items = try stack.reopen().fetch("Item") { $0.sortDescriptors = [NSSortDescriptor(key: "number", ascending: true)] }
        #expect(items.map { $0.value(forKey: "number") as? Int64 } == (0..<100).map { Int64($0) })
    }

    /// A saved object that took a value of the wrong type, was deleted and inserted again: it is
    /// back among the updated objects, and its save reports the value.
    @Test func aMistypedValueBackFromAnUndeleteIsStillAnError() throws {
        let stack = try stack()
        let item = stack.insert("Item", ["number": 1])
        try stack.context.save()
        item.setValue("oops", forKey: "number")
        stack.context.delete(item)
        stack.insert("Item", ["number": 2])
        stack.context.insert(item) // undeleted
        #expect(stack.context.updatedObjects.contains(item))
        #expect(stack.context.heldMistypedValue)
        #expect(saveError(stack)?.userInfo[NSValidationKeyErrorKey] as? String == "number")
        item.setValue(3, forKey: "number")
        try stack.context.save()
        #expect(try stack.reopen().fetch("Item").compactMap { $0.value(forKey: "number") as? Int64 }.sorted() == [2, 3])
    }

    /// A deleted object is not type-checked, and may take a value of an app class with it: the
    /// save does not let its objects go under one hold of the registry's lock.
    @Test func aDeletedObjectWithAMistypedValueGoesWithoutTheHold() throws {
        let stack = try stack()
        let item = stack.insert("Item", ["number": 1])
        try stack.context.save()
        item.setValue(NSObject(), forKey: "number")
        stack.context.delete(item)
        let holds = stack.context.registryHolds
        try stack.context.save()
        #expect(stack.context.registryHolds == holds)
        #expect(try stack.reopen().fetch("Item").isEmpty)
    }

    /// A sub-entity the model reaches only through `subentities` counts: its rules turn the
    /// shortcut off.
    @Test func aSubentityOutsideTheModelsListCounts() throws {
        let parent = NSEntityDescription()
        parent.name = "Parent"
        parent.properties = [attribute("title", .stringAttributeType)]
        let child = NSEntityDescription()
        child.name = "Child"
        let code = attribute("code", .stringAttributeType)
        code.isOptional = false
        child.properties = [code]
        parent.subentities = [child]
        let model = NSManagedObjectModel()
        model.entities = [parent]
        model.freeze()
        #expect(model.objectsHoldOnlyValues)
        #expect(!model.objectsHaveNoValidationRules)
    }
}
