import Foundation

/// Reads key paths the way predicates see objects: `NSManagedObject` through `value(forKey:)`,
/// dictionaries by key, Foundation's values by the keys key-value coding gives them on Apple
/// platforms (``PredicateValueKeys``: `length`, `timeIntervalSinceReferenceDate`, …), other values
/// through `Mirror` (Linux has no key-value coding).
///
/// Through a to-many value the rest of the path is read from every element and the results are
/// flattened into one array, `nil` elements kept as `NSNull` (as `NSArray`'s key-value coding
/// does). A `nil` to-one on the way to a to-many relationship gives an empty collection (and
/// `@count` 0), as a SQL subquery over no rows does.
internal enum PredicateKeyValue {
    static func value(of object: Any?, keyPath: [String]) -> Any? {
        walk(object, keyPath[...])
    }

    private static func walk(_ current: Any?, _ path: ArraySlice<String>) -> Any? {
        guard let key = path.first else { return current }
        guard let current, !(current is NSNull) else { return nil }
        if key.hasPrefix("@") { return collectionOperator(key, current, path.dropFirst()) }
        if let items = elements(of: current) {
            var result: [Any] = []
            for item in items {
                let value = walk(item, path)
                if let value, !(value is NSNull), let nested = elements(of: value), crossesToMany(path, from: item) {
                    result.append(contentsOf: nested)
                } else {
                    result.append(value ?? NSNull())
                }
            }
            return result
        }
        let rest = path.dropFirst()
        guard let next = value(of: current, forKey: key) else {
            // A nil to-one on the way to a to-many: the to-many is empty, and what follows it
            // (`@count`, a key) is read from no elements, as a SQL subquery over no rows.
            if !rest.isEmpty, let entity = entity(of: current),
               let relationship = entity.propertiesByName[key] as? NSRelationshipDescription,
               let destination = relationship.destinationEntity, let afterToMany = toManyEnd(rest, entity: destination) {
                return walk([Any](), rest[afterToMany...])
            }
            return nil
        }
        return walk(next, rest)
    }

    /// The entity of a managed object or of a store record (its ID's).
    private static func entity(of object: Any) -> NSEntityDescription? {
        if let managed = object as? NSManagedObject { return managed.entity }
        return (object as? PredicateKeyValueCoding)?.predicateObjectID?.entity
    }

    /// The index in `path` just after its first to-many relationship, followed from `entity`
    /// through to-one relationships; `nil` if the path reaches none.
    private static func toManyEnd(_ path: ArraySlice<String>, entity: NSEntityDescription) -> Int? {
        var entity = entity
        for index in path.indices {
            guard let relationship = entity.propertiesByName[path[index]] as? NSRelationshipDescription else { return nil }
            if relationship.isToMany { return index + 1 }
            guard let destination = relationship.destinationEntity else { return nil }
            entity = destination
        }
        return nil
    }

    /// The value of one key of one (non-collection) object.
    static func value(of object: Any, forKey key: String) -> Any? {
        switch object {
        // Model objects first: the protocol check costs a conformance lookup (no model object
        // conforms to PredicateKeyValueCoding).
        case let managed as NSManagedObject:
            if managed.entity.propertiesByName[key] != nil { return managed.value(forKey: key) }
            return mirrorValue(of: managed, forKey: key)
        case let coding as PredicateKeyValueCoding: return coding.predicateValue(forKey: key)
        case let dictionary as [String: Any]: return dictionary[key]
        case let dictionary as [AnyHashable: Any]: return dictionary[key]
        case let dictionary as NSDictionary: return dictionary.object(forKey: key)
        default: return PredicateValueKeys.value(of: object, forKey: key) ?? mirrorValue(of: object, forKey: key)
        }
    }

    private static func mirrorValue(of object: Any, forKey key: String) -> Any? {
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children where child.label == key || child.label == "_" + key {
                return unwrapOptional(child.value)
            }
            mirror = current.superclassMirror
        }
        return nil
    }

    private static func unwrapOptional(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first.map { unwrapOptional($0.value) } ?? nil
    }

    /// The elements of a to-many value (arrays, sets, ordered sets), or `nil` for a single value.
    static func elements(of value: Any) -> [Any]? {
        // A model object first (the usual start of a key path): the casts below would each fail
        // at the cost of a conformance lookup or a bridging attempt.
        if type(of: value) is NSManagedObject.Type { return nil }
        switch value {
        case is String, is NSString, is Data, is NSData, is [String: Any], is NSDictionary: return nil
        case let set as NSOrderedSet: return set.array
        case let array as NSArray: return array.map { $0 }
        case let set as NSSet: return set.allObjects
        case let array as [Any]: return array
        case let set as Set<AnyHashable>: return set.map(\.base)
        default:
            if let sequence = value as? any Sequence, !(value is any StringProtocol), Mirror(reflecting: value).displayStyle != .dictionary {
                return sequence.map { $0 as Any }
            }
            return nil
        }
    }

    /// Whether reading `path` from `object` goes through a to-many relationship (model objects),
    /// or gave a collection for another reason (dictionaries and plain values: assumed so).
    private static func crossesToMany(_ path: ArraySlice<String>, from object: Any) -> Bool {
        guard let entity = entity(of: object) else { return true }
        return toManyEnd(path, entity: entity) != nil
    }

    /// `@count`, `@sum.x`, `@avg.x`, `@min.x`, `@max.x` on a collection.
    private static func collectionOperator(_ key: String, _ current: Any, _ rest: ArraySlice<String>) -> Any? {
        let items = elements(of: current) ?? [current]
        switch key.lowercased() {
        case "@count": return NSNumber(value: items.count)
        case "@sum", "@avg", "@min", "@max":
            // The statistics functions skip nil elements, as key-value coding does.
            let values = items.map { PredicateValue(walk($0, rest)) }
            let function = ["@sum": "sum:", "@avg": "average:", "@min": "min:", "@max": "max:"][key.lowercased()]!
            return PredicateFunctions.statistic(function, .collection(values)).walkable
        default: return nil
        }
    }
}
