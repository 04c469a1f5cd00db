import Foundation
import Testing
@testable import CoreData

/// One-to-one, a self-referential cascade tree, and to-many relationships without inverse.
enum ReviewModel {
    static func attribute(_ name: String, _ type: NSAttributeType = .stringAttributeType) -> NSAttributeDescription {
        let a = NSAttributeDescription(); a.name = name; a.attributeType = type; a.isOptional = true; return a
    }
    static func relationship(_ name: String, to: NSEntityDescription, toMany: Bool, rule: NSDeleteRule = .nullifyDeleteRule,
                             ordered: Bool = false) -> NSRelationshipDescription {
        let r = NSRelationshipDescription()
        r.name = name; r.destinationEntity = to; r.maxCount = toMany ? 0 : 1; r.deleteRule = rule; r.isOrdered = ordered; r.isOptional = true
        return r
    }
    static func make() -> NSManagedObjectModel {
        let husband = NSEntityDescription(); husband.name = "Husband"
        let wife = NSEntityDescription(); wife.name = "Wife"
        let node = NSEntityDescription(); node.name = "Node"
        let owner = NSEntityDescription(); owner.name = "Owner"
        let pet = NSEntityDescription(); pet.name = "Pet"
        let w = relationship("wife", to: wife, toMany: false)
        let h = relationship("husband", to: husband, toMany: false)
        w.inverseRelationship = h; h.inverseRelationship = w
        husband.properties = [attribute("name"), w]
        wife.properties = [attribute("name"), h]
        let children = relationship("children", to: node, toMany: true, rule: .cascadeDeleteRule)
        let parent = relationship("parent", to: node, toMany: false)
        children.inverseRelationship = parent; parent.inverseRelationship = children
        node.properties = [attribute("name"), children, parent]
        owner.properties = [attribute("name"), relationship("pets", to: pet, toMany: true),
                            relationship("line", to: pet, toMany: true, ordered: true)]
        pet.properties = [attribute("name")]
        let model = NSManagedObjectModel()
        model.entities = [husband, wife, node, owner, pet]
        return model
    }
}

extension NSManagedObject {
    func rv(_ key: String) -> Any? { value(forKey: key) }
    var rvName: String? { value(forKey: entity.propertiesByName["name"] != nil ? "name" : "title") as? String }
    func rvSet(_ key: String) -> Set<NSManagedObject> { value(forKey: key) as? Set<NSManagedObject> ?? [] }
    func rvOrdered(_ key: String) -> [NSManagedObject] { (value(forKey: key) as? NSOrderedSet)?.array as? [NSManagedObject] ?? [] }
}
