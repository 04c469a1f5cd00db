import Foundation

/// Applies an object's delete rules when its context processes pending changes: cascade deletes
/// the related objects, nullify removes the object from their inverse relationships, deny is
/// checked at save (`validateForDelete`), no action does nothing.
internal enum DeleteRules {
    static func apply(to object: NSManagedObject, in context: NSManagedObjectContext) {
        for index in object.layout.relationshipIndexes {
            let relationship = object.layout.properties[index] as! NSRelationshipDescription
            let related: [NSManagedObject]
            if relationship.isToMany {
                related = object.toManyList(at: index).objects
            } else {
                related = object.toOneObject(at: index).map { [$0] } ?? []
            }
            switch relationship.deleteRule {
            case .cascadeDeleteRule:
                for target in related where target._context === context && !target._isDeleted {
                    context.delete(target)
                }
                nullifyInverse(of: relationship, from: object, in: related, context: context)
            case .nullifyDeleteRule:
                nullifyInverse(of: relationship, from: object, in: related, context: context)
            case .denyDeleteRule, .noActionDeleteRule:
                break
            }
        }
    }

    private static func nullifyInverse(of relationship: NSRelationshipDescription, from object: NSManagedObject,
                                       in related: [NSManagedObject], context: NSManagedObjectContext) {
        guard let inverse = relationship.inverseRelationship else { return }
        for target in related where target._context === context {
            if inverse.isToMany {
                if target.toManyList(at: inverse.index).contains(object) { target.rawRemove(object, fromManyAt: inverse.index) }
            } else if target.toOneObject(at: inverse.index) === object {
                target.rawSetToOne(nil, at: inverse.index)
            }
        }
    }
}
