import Foundation

/// Applies an object's delete rules when its context processes pending changes: cascade deletes
/// the related objects, nullify removes the object from their inverse relationships, deny is
/// checked at save (`validateForDelete`), no action does nothing.
internal enum DeleteRules {
    static func apply(to object: NSManagedObject, in context: NSManagedObjectContext) {
        for index in object.layout.relationshipIndexes {
            let relationship = object.layout.properties[index] as! NSRelationshipDescription
            let related = relatedObjects(of: object, at: index, relationship)
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

    /// Takes a deleted object out of the inverse relationships of the objects related to it in
    /// `context`, without cascading: for a delete a child context made, whose rules ran
    /// against what the child saw (a sibling may have related the object since).
    static func detach(_ object: NSManagedObject, in context: NSManagedObjectContext) {
        for index in object.layout.relationshipIndexes {
            let relationship = object.layout.properties[index] as! NSRelationshipDescription
            nullifyInverse(of: relationship, from: object, in: relatedObjects(of: object, at: index, relationship), context: context)
        }
    }

    private static func relatedObjects(of object: NSManagedObject, at index: Int, _ relationship: NSRelationshipDescription) -> [NSManagedObject] {
        if relationship.isToMany { return object.toManyList(at: index).objects }
        return object.toOneObject(at: index).map { [$0] } ?? []
    }

    private static func nullifyInverse(of relationship: NSRelationshipDescription, from object: NSManagedObject,
                                       in related: [NSManagedObject], context: NSManagedObjectContext) {
        guard let inverse = relationship.inverseRelationship else { return }
        for target in related where target._context === context && NSManagedObject.has(inverse, target) {
            if inverse.isToMany {
                if target.toManyList(at: inverse.index).contains(object) { target.rawRemove(object, fromManyAt: inverse.index) }
            } else if target.toOneObject(at: inverse.index) === object {
                target.rawSetToOne(nil, at: inverse.index)
            }
        }
    }

    /// Apple's "repairing missing delete propagation" at save: a loaded relationship of a changed
    /// object that still holds an object deleted in the same context (the relationship back was
    /// lost, as `refresh(_:mergeChanges: false)` of an object with unsaved changes loses it, or a
    /// delete was merged from elsewhere) lets go of it, as a nullify rule would have, and the
    /// repair is logged. Nothing else is deleted: Apple's documentation does not say its repair
    /// cascades, and an object the app never deleted is not deleted here. An object whose row is
    /// gone (``NSManagedObject/_isInaccessible``) is not let go (its key stays), nor is an object
    /// of another context (validation reports it). Returns whether it let go of any.
    static func repairMissingPropagation(of object: NSManagedObject) -> Bool {
        var repaired = false
        for index in object.layout.relationshipIndexes {
            guard let relation = object._relations[index] else { continue } // (never loaded: nothing to repair)
            let gone: [NSManagedObject]
            switch relation {
            case .toOne(let target): gone = target.map { [$0] }?.filter { isDeleted($0, in: object) } ?? []
            case .toMany(let list): gone = list.objects.filter { isDeleted($0, in: object) }
            }
            guard !gone.isEmpty else { continue }
            let relationship = object.layout.properties[index] as! NSRelationshipDescription
            for target in gone {
                CoreDataLog.warning("repairing missing delete propagation for \(relationship.isToMany ? "to-many" : "to-one") relationship \(relationship.name) on object \(object.objectID.uriRepresentation().absoluteString) with deleted \(target.objectID.uriRepresentation().absoluteString)")
                if relationship.isToMany { object.rawRemove(target, fromManyAt: index) } else { object.rawSetToOne(nil, at: index) }
            }
            repaired = true
        }
        return repaired
    }

    private static func isDeleted(_ target: NSManagedObject, in object: NSManagedObject) -> Bool {
        target._context === object._context && target._isDeleted && !target._isInaccessible
    }
}
