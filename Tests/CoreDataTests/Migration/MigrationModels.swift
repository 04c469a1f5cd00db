import Foundation
@testable import CoreData

/// Models built in code for migration tests: one entity description per call, so that each
/// version of a model is made of fresh descriptions, as two `.xcdatamodel` files are.
enum MigrationModels {
    static func entity(_ name: String, _ properties: [NSPropertyDescription], renamedFrom: String? = nil) -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity.name = name
        entity.renamingIdentifier = renamedFrom
        entity.properties = properties
        return entity
    }

    static func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true, defaultValue: Any? = nil,
                          renamedFrom: String? = nil) -> NSAttributeDescription {
        let a = NSAttributeDescription()
        a.name = name
        a.attributeType = type
        a.isOptional = optional
        a.defaultValue = defaultValue
        a.renamingIdentifier = renamedFrom
        return a
    }

    static func model(_ entities: [NSEntityDescription]) -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        model.entities = entities
        return model
    }

    /// Version 1: `Person` (name, age; cars), `Car` (model, year; owner), `Note` (text).
    static func v1(personName: NSAttributeDescription? = nil) -> NSManagedObjectModel {
        let person = entity("Person", [personName ?? attribute("name", .stringAttributeType), attribute("age", .integer16AttributeType)])
        let car = entity("Car", [attribute("model", .stringAttributeType), attribute("year", .integer32AttributeType)])
        let note = entity("Note", [attribute("text", .stringAttributeType)])
        link(person, car)
        return model([car, note, person])
    }

    /// Two relationships, each the other's inverse: `name` from `a` to `b`, `inverseName` back.
    static func relate(_ a: NSEntityDescription, _ name: String, toMany: Bool, _ b: NSEntityDescription, _ inverseName: String,
                       inverseToMany: Bool, rule: NSDeleteRule = .nullifyDeleteRule) {
        let forward = NSRelationshipDescription(), back = NSRelationshipDescription()
        (forward.name, forward.destinationEntity, forward.maxCount, forward.deleteRule) = (name, b, toMany ? 0 : 1, rule)
        (back.name, back.destinationEntity, back.maxCount) = (inverseName, a, inverseToMany ? 0 : 1)
        forward.inverseRelationship = back
        back.inverseRelationship = forward
        a.properties += [forward]
        b.properties += [back]
    }

    /// `Person.cars` (to-many, cascade) and `Car.owner` (to-one), each the other's inverse.
    static func link(_ person: NSEntityDescription, _ car: NSEntityDescription) {
        relate(person, "cars", toMany: true, car, "owner", inverseToMany: false, rule: .cascadeDeleteRule)
    }

    /// Version 1 with `Tag` (label) and a many-to-many `Person.tags` ↔ `Tag.people` (a join table).
    static func v1WithTags() -> NSManagedObjectModel {
        let model = v1()
        let person = model.entitiesByName["Person"]!
        let tag = entity("Tag", [attribute("label", .stringAttributeType)])
        relate(person, "tags", toMany: true, tag, "people", inverseToMany: true)
        model.entities = model.entities + [tag]
        return model
    }
}
