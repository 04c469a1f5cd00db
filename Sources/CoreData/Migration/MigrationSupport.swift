import Foundation

/// Something a mapping's `FUNCTION(receiver, "selector:", arguments…)` can call: the migration
/// manager and entity migration policies, in place of Objective-C's message sending.
internal protocol ExpressionMethodReceiver: AnyObject {
    /// The method's result, or `nil` for a selector the receiver does not answer.
    func invokeExpressionMethod(_ selector: String, arguments: [Any?]) -> Any?
}

/// The errors of ``NSMigrationManager`` and ``NSEntityMigrationPolicy``, in `NSCocoaErrorDomain`.
internal enum MigrationErrors {
    /// `NSMigrationError` (134110) with Apple's `reason`.
    static func migration(_ reason: String, _ extra: [String: Any] = [:], underlying: Error? = nil) -> NSError {
        make(NSMigrationError, reason, extra, underlying)
    }

    /// `NSEntityMigrationPolicyError` (134170).
    static func policy(_ reason: String) -> NSError {
        make(NSEntityMigrationPolicyError, reason, [:], nil)
    }

    private static func make(_ code: Int, _ reason: String, _ extra: [String: Any], _ underlying: Error?) -> NSError {
        var info = extra
        info[NSLocalizedDescriptionKey] = reason
        info["reason"] = reason
        if let underlying { info[NSUnderlyingErrorKey] = underlying as NSError }
        return NSError(domain: NSCocoaErrorDomain, code: code, userInfo: info)
    }
}

/// Setting a migrated relationship from an expression's value, as Apple's default policy does.
internal enum MigrationRelationships {
    /// Sets `relationship` of `destination` to `value` (an object, an array, a set or `nil`):
    /// a to-many relationship gets the objects added, a to-one one the single object.
    static func set(_ value: Any?, of relationship: NSRelationshipDescription, on destination: NSManagedObject,
                    mapping: NSEntityMapping, property: NSPropertyMapping) throws {
        let objects = managedObjects(in: value)
        let name = relationship.name
        guard relationship.isToMany || objects.count <= 1 else {
            throw MigrationErrors.migration("More than one relationship destination for a toOne relationship",
                                            ["entityMapping": mapping, "propertyMapping": property,
                                             "relationshipDestinations": objects, "destination": destination])
        }
        if let target = relationship.destinationEntity, let wrong = objects.first(where: { !$0.entity.isKindOf(entity: target) }) {
            throw MigrationErrors.migration("Unknown/unsupported type for relationship destination: \(wrong.entity.name ?? "nil") for \(destination.entity.name ?? "nil").\(name) (a relationship to \(target.name ?? "nil"))",
                                            ["entityMapping": mapping, "propertyMapping": property, "destination": destination])
        }
        if !relationship.isToMany {
            destination.setValue(objects.first, forKey: name)
        } else if relationship.isOrdered {
            // The value's order, also for members the inverse already put in (in the order
            // their own mapping ran); members it does not name stay after them.
            let current = destination.mutableOrderedSetValue(forKey: name)
            let ordered = NSMutableOrderedSet(array: objects)
            ordered.union(current)
            destination.setValue(ordered.copy() as! NSOrderedSet, forKey: name)
        } else {
            destination.mutableSetValue(forKey: name).addObjects(from: objects)
        }
    }

    /// The managed objects of a value: itself, or the elements of a collection, without repeats.
    static func managedObjects(in value: Any?) -> [NSManagedObject] {
        let items: [Any]
        switch value {
        case let object as NSManagedObject: items = [object]
        case let set as NSOrderedSet: items = set.array
        case let set as NSSet: items = set.allObjects
        case let array as [Any]: items = array
        case let set as Set<NSManagedObject>: items = Array(set)
        default: items = []
        }
        var seen = Set<ObjectIdentifier>()
        return items.compactMap { $0 as? NSManagedObject }.filter { seen.insert(ObjectIdentifier($0)).inserted }
    }
}
