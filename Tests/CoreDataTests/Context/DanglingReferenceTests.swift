import Foundation
import Testing
@testable import CoreData

/// Apple's "repairing missing delete propagation": at save, a relationship of a changed object
/// that still holds an object deleted in the context (the relationship back was lost) lets go of
/// it, as a nullify rule would have; nothing else is deleted. Before, the store kept a key of a
/// deleted row.
@Suite("Missing delete propagation repaired at save")
struct DanglingReferenceTests {
    @Test func aToOneLetsGoOfADeletedObject() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        let car = stack.insert("Car", ["name": "Model T"])
        try stack.context.save()
        car.setValue(ada, forKey: "owner")
        // Dropping Ada's unsaved side of the relationship: her cars no longer hold the car.
        stack.context.refresh(ada, mergeChanges: false)
        stack.context.delete(ada) // (her cascade over her cars misses the car)
        try stack.context.save()
        #expect(try stack.rawRows("SELECT count(*) FROM ZPERSON") == [["0"]])
        #expect(try stack.rawRows("SELECT ZNAME, ZOWNER FROM ZCAR") == [["Model T", nil]])
        #expect(car.value(forKey: "owner") == nil && !car.isDeleted)
    }

    @Test func aDeleteMergedFromElsewhereLeavesANewObjectWithoutItsOwner() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        try stack.context.save()
        let car = stack.insert("Car", ["name": "New"])
        car.setValue(ada, forKey: "owner")
        let other = stack.newContext()
        let main = stack.context
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { note in
            main.mergeChanges(fromContextDidSave: note)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        other.delete(try other.existingObject(with: ada.objectID))
        try other.save()
        try stack.context.save() // the new car is kept, without its deleted owner
        #expect(try stack.rawRows("SELECT ZNAME, ZOWNER FROM ZCAR") == [["New", nil]])
    }

    @Test func aToManyLetsGoOfADeletedObject() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "Model T"])
        let tag = stack.insert("Tag", ["label": "old"])
        try stack.context.save()
        car.mutableSetValue(forKey: "tags").add(tag)
        stack.context.refresh(tag, mergeChanges: false) // the tag's side of the relationship dropped
        stack.context.delete(tag)
        try stack.context.save()
        #expect((car.value(forKey: "tags") as? Set<NSManagedObject>)?.isEmpty == true)
        #expect(try stack.rawRows("SELECT count(*) FROM ZTAG") == [["0"]])
        #expect(try stack.storedCarNames() == ["Model T"])
    }

    @Test func aDeleteMergedFromElsewhereDoesNotStopTheNextSave() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "Model T"])
        let tag = stack.insert("Tag", ["label": "old"])
        car.mutableSetValue(forKey: "tags").add(tag)
        try stack.context.save()
        let other = stack.newContext()
        let main = stack.context
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { note in
            main.mergeChanges(fromContextDidSave: note)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        _ = (car.value(forKey: "tags") as? Set<NSManagedObject>)?.count // loaded here
        car.setValue("Renamed", forKey: "name")
        other.delete(try other.existingObject(with: tag.objectID))
        try other.save()
        try stack.context.save()
        #expect(try stack.storedCarNames() == ["Renamed"])
        let join = "Z_\(stack.model.entitiesByName["Car"]!.layout.entityNumber)TAGS"
        #expect(try stack.rawRows("SELECT count(*) FROM \(join)") == [["0"]])
    }
}
