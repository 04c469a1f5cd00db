import Foundation
import Testing
@testable import CoreData

/// An attribute of type object ID round-trips through the SQLite store as the ID's URI.
@Suite("Object-ID attributes")
struct ObjectIDAttributeTests {
    @Test func anObjectIDAttributeIsStoredAndReadBack() throws {
        let model = TestModel.make()
        let attribute = NSAttributeDescription()
        attribute.name = "target"
        attribute.attributeType = .objectIDAttributeType
        attribute.isOptional = true
        let tag = model.entitiesByName["Tag"]!
        tag.properties = tag.properties + [attribute]
        let stack = try TestStack(model: model)
        let saved = stack.insert("Car", ["name": "saved"])
        try stack.context.save()
        let fresh = stack.insert("Car", ["name": "inserted with the tag"])
        stack.insert("Tag", ["label": "to saved", "target": saved.objectID])
        stack.insert("Tag", ["label": "to new", "target": fresh.objectID]) // temporary now, permanent once saved
        try stack.context.save()

        let reopened = try stack.reopen()
        func storedTarget(of label: String) throws -> NSManagedObjectID? {
            try reopened.fetch("Tag") { $0.predicate = NSPredicate(format: "label == %@", label) }.first?.value(forKey: "target") as? NSManagedObjectID
        }
        #expect(try storedTarget(of: "to saved")?.uriRepresentation() == saved.objectID.uriRepresentation())
        #expect(try storedTarget(of: "to new")?.uriRepresentation() == fresh.objectID.uriRepresentation())
        #expect(try reopened.context.existingObject(with: try #require(try storedTarget(of: "to new"))).value(forKey: "name") as? String == "inserted with the tag")
    }
}
