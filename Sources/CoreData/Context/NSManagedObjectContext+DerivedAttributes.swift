import Foundation

// Derived attributes (`NSDerivedAttributeDescription`) are computed when a context saves to the
// store, after validation and before the rows are written: Apple's SQLite store computes them in
// the save's SQL, and reports the values back to the saving context. Computed here, on the
// objects, they reach both stores as written values, so the in-memory store and SQLite agree, and
// the saving context's objects hold them after the save.
extension NSManagedObjectContext {
    /// Computes the derived attributes `derived` (the model's, none empty) for the objects this
    /// save writes and for the objects whose derived values depend on what it writes; an object
    /// whose derived value changes joins the updated objects (without an `ObjectsDidChange`
    /// notification: the app did not change it). Derived values that depend on other derived
    /// values are computed again until none changes.
    internal func computeDerivedAttributes(_ derived: [NSDerivedAttributeDescription]) throws {
        let now = Date()
        var changed = inserted.objects + updated.objects
        // Each round: the derived values of the changed objects and of their dependents; the next
        // round looks at the objects whose derived values changed (a derivation may read another).
        var round = 0
        while !changed.isEmpty && round <= derived.count {
            round += 1
            var candidates = DerivationCandidates()
            for attribute in derived {
                guard let derivation = attribute.derivation else {
                    throw CoreDataError.make(.persistentStoreSave, attribute.derivationProblem ?? "A derived attribute cannot be computed")
                }
                if case .now = derivation { continue } // below, once the objects to write are known
                let entity = attribute.entity!
                for object in changed where !object._isDeleted && object.entity.isKindOf(entity: entity) {
                    candidates.add(object, attribute)
                }
                for (hop, relationship) in derivation.relationships.enumerated() {
                    guard let destination = relationship.destinationEntity, let property = derivation.property(after: hop) else { continue }
                    for object in changed where !object._isDeleted && object.entity.isKindOf(entity: destination)
                        && (object._isInserted || object._changed.contains(property.index)) {
                        for source in Self.sources(of: object, through: derivation.relationships[...hop]) {
                            candidates.add(source, attribute)
                        }
                    }
                }
            }
            changed = []
            for (object, attributes) in candidates.list {
                var objectChanged = false
                for attribute in attributes {
                    if setDerivedValue(try Self.derivedValue(of: attribute, for: object, now: now), of: attribute, on: object) {
                        objectChanged = true
                    }
                }
                if objectChanged { changed.append(object) }
            }
        }
        // `now()`: the time of this save, for every object it writes.
        for attribute in derived {
            guard case .now? = attribute.derivation else { continue }
            let entity = attribute.entity!
            for object in inserted.objects + updated.objects where !object._isDeleted && object.entity.isKindOf(entity: entity)
                && (object._isInserted || object._changed.contains(where: { !object.layout.properties[$0].isTransient })) {
                _ = setDerivedValue(.date(now), of: attribute, on: object)
            }
        }
    }

    /// The objects of a derived attribute's entity that reach `object` through `relationships`
    /// (followed backwards, by their inverses); none if one of them has no inverse.
    private static func sources(of object: NSManagedObject, through relationships: ArraySlice<NSRelationshipDescription>) -> [NSManagedObject] {
        var current = [object]
        for relationship in relationships.reversed() {
            guard let inverse = relationship.inverseRelationship else { return [] }
            var previous: [NSManagedObject] = []
            for object in current where !object._isDeleted && NSManagedObject.has(inverse, object) {
                if inverse.isToMany {
                    previous.append(contentsOf: object.toManyList(at: inverse.index).objects)
                } else if let owner = object.toOneObject(at: inverse.index) {
                    previous.append(owner)
                }
            }
            current = previous
        }
        return current.filter { !$0._isDeleted }
    }

    /// The value `attribute` derives for `object`.
    private static func derivedValue(of attribute: NSDerivedAttributeDescription, for object: NSManagedObject, now: Date) throws -> StoreValue {
        let value: Any?
        switch attribute.derivation! {
        case .now:
            return .date(now)
        case .value(let path, let source, let function):
            var current: NSManagedObject? = object
            for relationship in path { current = current?.toOneObject(at: relationship.index) }
            guard let current, !current._isDeleted else { return .null }
            let read = current.primitiveValue(at: source.index)
            // The functions as predicates compute them (`PredicateFunctions`).
            value = function.map { PredicateFunctions.apply($0.rawValue, [PredicateValue(read)]).walkable } ?? read
        case .aggregate(let path, let relationship, let summed):
            var owner: NSManagedObject? = object
            for step in path { owner = owner?.toOneObject(at: step.index) }
            let members = owner.map { $0._isDeleted ? [] : $0.toManyList(at: relationship.index).objects.filter { !$0._isDeleted } } ?? []
            value = Derivation.aggregateValue(count: members.count, summed: summed.map { summed in members.map { $0.primitiveValue(at: summed.index) } })
        }
        return try Derivation.stored(value, for: attribute, nothing: "nothing was saved")
    }

    /// Sets a derived value on `object` if it differs from the one it holds: marks the attribute
    /// changed, and the object updated, without an `ObjectsDidChange` notification. Whether it did.
    private func setDerivedValue(_ value: StoreValue, of attribute: NSDerivedAttributeDescription, on object: NSManagedObject) -> Bool {
        object.fireFaultIfNeeded()
        let index = attribute.index
        guard !object._isDeleted, object._values[index] != value else { return false }
        if case .int(let v) = value { object._values.setInt64(v, at: index) } else { object._values[index] = value }
        object.insertChanged(index)
        if object._extras?.observation != nil { object.observedPropertyDidChange(at: index) } // an Observable object's observers
        if !object._isInserted && !object._isUpdated {
            object._isUpdated = true
            updated.insert(object)
        }
        return true
    }
}

/// The objects whose derived attributes a round of ``NSManagedObjectContext/computeDerivedAttributes(_:)``
/// computes, each once, in the order first met, with the attributes to compute.
private struct DerivationCandidates {
    private(set) var list: [(object: NSManagedObject, attributes: [NSDerivedAttributeDescription])] = []
    private var positions: [ObjectIdentifier: Int] = [:]

    mutating func add(_ object: NSManagedObject, _ attribute: NSDerivedAttributeDescription) {
        if let position = positions[ObjectIdentifier(object)] {
            if !list[position].attributes.contains(where: { $0 === attribute }) { list[position].attributes.append(attribute) }
        } else {
            positions[ObjectIdentifier(object)] = list.count
            list.append((object, [attribute]))
        }
    }
}
