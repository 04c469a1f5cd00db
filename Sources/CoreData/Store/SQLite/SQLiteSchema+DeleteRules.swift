import Foundation

// The delete rules of a batch delete (NSBatchDeleteRequest), shared by the SQLite and PostgreSQL
// stores: which statements run, in which order, for rows whose keys are known. Each store runs
// them on its own connection (``BatchDeleteStatements``), binding a list of keys as one value:
// a JSON array read by `json_each` in SQLite, an array in PostgreSQL.

/// How a store runs the statements of ``SQLiteSchema/deleteWithRules(_:root:using:)``: its names
/// of the fixed columns, how a list of keys is bound to one `?`, and the statements' runners.
internal struct BatchDeleteStatements {
    /// `Z_PK`, `Z_ENT` and `Z_OPT` as the store writes them (bare in SQLite, quoted in PostgreSQL).
    var pk = "Z_PK", ent = "Z_ENT", opt = "Z_OPT"
    /// A set of keys bound to one `?`, to follow `IN`: `(SELECT value FROM json_each(?))`.
    var keySet: String
    /// The value bound for a list of keys.
    var keyList: ([Int64]) -> StoreValue
    /// Runs a query selecting `Z_PK, Z_ENT` with one value bound: the rows' entities and keys.
    var readKeys: (_ sql: String, _ keys: StoreValue) throws -> [FetchedKey]
    /// Runs a statement with one value bound.
    var run: (_ sql: String, _ keys: StoreValue) throws -> Void
    /// Whether the store records persistent history (a cleared row is then read back).
    var tracksHistory = false
    /// Records the deletes of the rows of `root`'s table (aliased `t0`) that the condition selects, before they go.
    var recordDeletes: (_ root: NSEntityDescription, _ condition: String, _ keys: StoreValue) throws -> Void = { _, _, _ in }
    /// Records the updates of rows whose to-ones were cleared, with those relationships' indexes.
    var recordUpdates: (_ rows: [(key: FetchedKey, changed: [Int])]) throws -> Void = { _ in }
    /// Runs before rows are deleted (the SQLite store notes their external data files).
    var willDelete: (_ keys: [FetchedKey]) throws -> Void = { _ in }
}

extension SQLiteSchema {
    /// Deletes the rows `keys` (of `root`'s table) and, by the cascade rule, their related rows,
    /// applying the delete rules; every row deleted, in order. With persistent history, each
    /// deleted row is recorded as a delete, and each row that survives with a to-one cleared
    /// (the nullify rule) as an update of that relationship.
    func deleteWithRules(_ keys: [FetchedKey], root: NSEntityDescription, using sql: BatchDeleteStatements) throws -> [FetchedKey] {
        var pending: [(root: NSEntityDescription, keys: [FetchedKey])] = [(root, keys)]
        var seen: [ObjectIdentifier: Set<Int64>] = [:]
        var deleted: [FetchedKey] = []
        // For history: the rows whose to-ones were cleared, by root and key, with those relationships.
        var cleared: [ObjectIdentifier: [Int64: (key: FetchedKey, changed: [Int])]] = [:]
        // The rows a deny rule finds: refused at the end unless the request deletes them too (a
        // cascade of a later pass may), as a context's save ignores deleted destinations.
        var denied: [(relationship: NSRelationshipDescription, related: [FetchedKey])] = []
        while !pending.isEmpty {
            let (root, batch) = pending.removeFirst()
            let fresh = batch.filter { seen[ObjectIdentifier(root), default: []].insert($0.primaryKey).inserted }
            guard !fresh.isEmpty else { continue }
            deleted += fresh
            let all = sql.keyList(fresh.map(\.primaryKey))
            // The deleted rows' own rules, entity by entity.
            var entities: [NSEntityDescription] = []
            for key in fresh where !entities.contains(where: { $0 === key.entity }) { entities.append(key.entity) }
            for entity in entities {
                let own = sql.keyList(fresh.filter { $0.entity === entity }.map(\.primaryKey))
                for index in entity.layout.relationshipIndexes {
                    guard let relationship = entity.layout.properties[index] as? NSRelationshipDescription,
                          relationship.deleteRule == .cascadeDeleteRule || relationship.deleteRule == .denyDeleteRule,
                          let destination = relationship.destinationEntity, let query = relatedKeysSQL(relationship, sql) else { continue }
                    let related = try sql.readKeys(query, own)
                    if relationship.deleteRule == .denyDeleteRule, !related.isEmpty { denied.append((relationship, related)) }
                    if relationship.deleteRule == .cascadeDeleteRule { pending.append((destination.rootEntity, related)) }
                }
            }
            // Nothing left pointing at the rows.
            for entity in self.entities {
                for case let relationship as NSRelationshipDescription in entity.ownProperties {
                    guard let destination = relationship.destinationEntity else { continue }
                    if !relationship.isToMany, destination.rootEntity === root, let column = storage(of: entity).columns[relationship.index] {
                        var clearedColumns = storage(of: entity).entityColumns[relationship.index].map { ", \($0) = NULL" } ?? ""
                        // The row's position in its owner's ordered to-many goes with the owner.
                        if let inverse = relationship.inverseRelationship, case let .foreignKey(_, order?, _)? = toManyStorage(of: inverse) {
                            clearedColumns += ", \(order) = NULL"
                        }
                        let update = "UPDATE \(table(of: entity)) SET \(column) = NULL\(clearedColumns), \(sql.opt) = coalesce(\(sql.opt), 0) + 1 WHERE \(column) IN \(sql.keySet)"
                        guard sql.tracksHistory else { try sql.run(update, all); continue }
                        for key in try sql.readKeys(update + " RETURNING \(sql.pk), \(sql.ent)", all) {
                            cleared[ObjectIdentifier(entity.rootEntity), default: [:]][key.primaryKey, default: (key, [])].changed.append(relationship.index)
                        }
                    } else if relationship.isToMany, entity.rootEntity === root,
                              case let .foreignKey(column, order, true)? = toManyStorage(of: relationship) {
                        let clearOrder = order.map { ", \($0) = NULL" } ?? ""
                        try sql.run("UPDATE \(table(of: destination)) SET \(column) = NULL\(clearOrder), \(sql.opt) = coalesce(\(sql.opt), 0) + 1 WHERE \(column) IN \(sql.keySet)", all)
                    }
                }
            }
            for join in joinTables {
                for (column, side) in [(join.first, join.firstRoot), (join.second, join.secondRoot)] where side == ObjectIdentifier(root) {
                    try sql.run("DELETE FROM \(SQLiteSchema.quoted(join.name)) WHERE \(SQLiteSchema.quoted(column)) IN \(sql.keySet)", all)
                }
            }
            try sql.willDelete(fresh)
            if sql.tracksHistory { try sql.recordDeletes(root, "t0.\(sql.pk) IN \(sql.keySet)", all) }
            try sql.run("DELETE FROM \(table(of: root)) WHERE \(sql.pk) IN \(sql.keySet)", all)
        }
        for (relationship, related) in denied
        where related.contains(where: { seen[ObjectIdentifier($0.entity.rootEntity)]?.contains($0.primaryKey) != true }) {
            throw CoreDataError.make(.relationshipDeniedDelete,
                "An object of \(relationship.entity.name ?? "") can't be deleted: its relationship '\(relationship.name)' has the deny rule and still has objects; nothing was deleted",
                extra: [NSValidationKeyErrorKey: relationship.name])
        }
        // A row cleared and then deleted (by a cascade) is recorded as deleted only.
        let updated = cleared.flatMap { root, rows in rows.values.filter { seen[root]?.contains($0.key.primaryKey) != true } }
        if sql.tracksHistory {
            try sql.recordUpdates(updated.sorted { ($0.key.entity.layout.entityNumber, $0.key.primaryKey) < ($1.key.entity.layout.entityNumber, $1.key.primaryKey) })
        }
        return deleted
    }

    /// A query for the `Z_PK, Z_ENT` of the rows `relationship` leads to from the rows whose
    /// keys are bound to its one parameter; `nil` for a transient one.
    func relatedKeysSQL(_ relationship: NSRelationshipDescription, _ sql: BatchDeleteStatements) -> String? {
        guard let destination = relationship.destinationEntity else { return nil }
        let target = table(of: destination)
        let (pk, ent, owners) = (sql.pk, sql.ent, sql.keySet)
        if !relationship.isToMany {
            guard let column = storage(of: relationship.entity).columns[relationship.index] else { return nil }
            return "SELECT \(pk), \(ent) FROM \(target) WHERE \(pk) IN (SELECT \(column) FROM \(table(of: relationship.entity)) WHERE \(pk) IN \(owners))"
        }
        switch toManyStorage(of: relationship) {
        case let .join(table, source, member, _)?:
            return "SELECT \(pk), \(ent) FROM \(target) WHERE \(pk) IN (SELECT \(member) FROM \(table) WHERE \(source) IN \(owners))"
        case let .foreignKey(column, _, _)?:
            return "SELECT \(pk), \(ent) FROM \(target) WHERE \(column) IN \(owners)"
        case nil:
            return nil
        }
    }
}
