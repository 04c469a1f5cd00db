import Foundation

// Derived attributes after a batch request on the in-memory store (`BatchDerivedAttributes.swift`
// says which): each is computed again for every row of its entity, from the rows, as a save
// computes it from objects (`NSManagedObjectContext+DerivedAttributes.swift`) and as the SQL
// stores' statements do.
extension InMemoryStore {
    /// Computes again the derived attributes `change` on the rows of `entities` may have
    /// changed. Under the store's lock, after the request's own changes.
    func recomputeDerivedAttributes(after change: BatchChange, on entities: [NSEntityDescription]) throws {
        for attribute in BatchDerivedAttributes.recomputed(after: change, on: entities) {
            guard let entity = attribute.entity, let derivation = attribute.derivation else { continue }
            let root = entity.layout.rootNumber
            var computed: [(Int64, StoreValue)] = []
            for (pk, row) in rows[root] ?? [:] where row.snapshot.entity.isKindOf(entity: entity) {
                let value = try derivedValue(derivation, of: attribute, for: row, pk: pk)
                if value != row.snapshot.values[attribute.index] { computed.append((pk, value)) }
            }
            for (pk, value) in computed { rows[root]?[pk]?.snapshot.values[attribute.index] = value }
        }
    }

    /// The value `derivation` gives for the row `pk`.
    private func derivedValue(_ derivation: Derivation, of attribute: NSDerivedAttributeDescription, for row: Row, pk: Int64) throws -> StoreValue {
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
            if let owner = follow(path) { members = relatedIDs(relationship, of: id(owner.row.snapshot.entity, owner.pk)) }
            value = Derivation.aggregateValue(count: members.count, summed: summed.map { summed in
                members.map { member in member.primaryKey.flatMap { rows[member.entity.layout.rootNumber]?[$0] }?.snapshot.values[summed.index].objectValue }
            })
        }
        return try Derivation.stored(value, for: attribute, nothing: "nothing was changed")
    }
}
