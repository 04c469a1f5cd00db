import Foundation

// Derived attributes after a batch request on the in-memory store (`BatchDerivedAttributes.swift`
// says which): each is computed again for the rows of its entity (a batch insert's own rows, for
// its entity's), from the rows, as a save computes it from objects
// (`NSManagedObjectContext+DerivedAttributes.swift`) and as the SQL stores' statements do.
extension InMemoryStore {
    /// Computes again the derived attributes `change` on the rows of `entities` may have
    /// changed; for an attribute of `rows.root`'s table, only the rows whose key `rows.written`
    /// picks. Under the store's lock, after the request's own changes.
    func recomputeDerivedAttributes(after change: BatchChange, on entities: [NSEntityDescription],
                                    rows restricted: (root: NSEntityDescription, written: (Int64) -> Bool)? = nil) throws {
        for attribute in BatchDerivedAttributes.recomputed(after: change, on: entities) {
            guard let entity = attribute.entity, let derivation = attribute.derivation else { continue }
            let root = entity.layout.rootNumber
            let written = restricted.flatMap { $0.root === entity.rootEntity ? $0.written : nil }
            // The members of an aggregate's to-many, by owner, read once (not once per owner).
            let members = memberIndex(derivation)
            var computed: [(Int64, StoreValue)] = []
            for (pk, row) in rows[root] ?? [:] where row.snapshot.entity.isKindOf(entity: entity) && (written?(pk) ?? true) {
                let value = try derivedValue(derivation, of: attribute, for: row, pk: pk, members: members)
                if value != row.snapshot.values[attribute.index] { computed.append((pk, value)) }
            }
            for (pk, value) in computed { rows[root]?[pk]?.snapshot.values[attribute.index] = value }
        }
    }

    /// For an aggregate over a one-to-many relationship: its members' keys by their owner's key,
    /// from one pass over the members' table; `nil` for other derivations (members are then
    /// asked per owner).
    private func memberIndex(_ derivation: Derivation) -> [Int64: [NSManagedObjectID]]? {
        guard case .aggregate(_, let relationship, _) = derivation, let destination = relationship.destinationEntity,
              let inverse = relationship.inverseRelationship, !inverse.isToMany, relationship.joinTable == nil else { return nil }
        var index: [Int64: [NSManagedObjectID]] = [:]
        for (pk, row) in rows[destination.layout.rootNumber] ?? [:]
        where row.snapshot.entity.isKindOf(entity: destination) && NSManagedObject.has(inverse, row.snapshot.entity) {
            if case .objectID(let owner) = row.snapshot.values[inverse.index], let key = owner.primaryKey {
                index[key, default: []].append(id(row.snapshot.entity, pk))
            }
        }
        return index
    }

    /// The value `derivation` gives for the row `pk`.
    private func derivedValue(_ derivation: Derivation, of attribute: NSDerivedAttributeDescription, for row: Row, pk: Int64,
                              members index: [Int64: [NSManagedObjectID]]?) throws -> StoreValue {
        /// The row at the end of the to-one relationships `path` from this one.
        func follow(_ path: [NSRelationshipDescription]) -> (row: Row, pk: Int64)? {
            var current = (row: row, pk: pk)
            for relationship in path {
                guard case .objectID(let target) = current.row.snapshot.values[relationship.index], let key = target.primaryKey,
                      let next = rows[target.entity.layout.rootNumber]?[key] else { return nil }
                current = (next, key)
            }
            return current
        }
        let value: Any?
        switch derivation {
        case .now:
            return row.snapshot.values[attribute.index] // stamped with the request's values
        case .value(let path, let source, let function):
            guard let end = follow(path) else { return .null }
            let read = end.row.snapshot.values[source.index].objectValue
            value = function.map { PredicateFunctions.apply($0.rawValue, [PredicateValue(read)]).walkable } ?? read
        case .aggregate(let path, let relationship, let summed):
            var members: [NSManagedObjectID] = []
            if let owner = follow(path) {
                members = index.map { $0[owner.pk] ?? [] } ?? relatedIDs(relationship, of: id(owner.row.snapshot.entity, owner.pk))
            }
            value = Derivation.aggregateValue(count: members.count, summed: summed.map { summed in
                members.map { member in member.primaryKey.flatMap { rows[member.entity.layout.rootNumber]?[$0] }?.snapshot.values[summed.index].objectValue }
            })
        }
        return try Derivation.stored(value, for: attribute, nothing: "nothing was changed")
    }
}
