import Foundation
@testable import CoreData

// The two descriptions a model built in code is mostly made of, as the tests' models build
// them (files with builders of other shapes declare their own, which shadow these).

/// An optional attribute.
func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
    let a = NSAttributeDescription()
    a.name = name
    a.attributeType = type
    return a
}

/// A to-one (`maxCount` 1) or to-many (`maxCount` 0) relationship.
func relationship(_ name: String, _ destination: NSEntityDescription, toMany: Bool) -> NSRelationshipDescription {
    let r = NSRelationshipDescription()
    r.name = name
    r.destinationEntity = destination
    r.maxCount = toMany ? 0 : 1
    return r
}

/// A model of one entity, `Item`, whose objects hold only plain values and have no rules to
/// check: optional `number` (Integer 64), `title` (String), `stamp` (Date) and `blob` (Binary).
func valuesOnlyItemModel() -> NSManagedObjectModel {
    let item = NSEntityDescription()
    item.name = "Item"
    item.properties = [attribute("number", .integer64AttributeType), attribute("title", .stringAttributeType),
                       attribute("stamp", .dateAttributeType), attribute("blob", .binaryDataAttributeType)]
    let model = NSManagedObjectModel()
    model.entities = [item]
    return model
}
