import Foundation

// Batch deletes (NSBatchDeleteRequest) on PostgreSQL, in one transaction on the writer, as the
// SQLite store does them (`SQLiteStore+BatchDelete.swift`): a table that nothing refers to, and a
// request that wants no IDs, is one `DELETE … WHERE …`. Otherwise the keys are read first and,
// table by table, the delete rules applied (deny refuses, cascade deletes the related rows in
// turn), what points at the rows cleared (foreign keys nulled with `Z_OPT + 1`, join-table rows
// removed) and the rows deleted. Lists of keys are one parameter each (`= ANY(?::bigint[])`).
extension PostgreSQLStore {
    func batchDeleteInTransaction(_ delete: BatchDelete) throws -> BatchOutcome {
        let plan = delete.plan
        let table = schema.table(of: plan.entity)
        var compiler = PredicateSQLCompiler(entity: plan.entity, schema: schema, dialect: .postgreSQL)
        let (filter, bindings) = try batchFilter(plan, compiler: &compiler)
        let root = plan.entity.rootEntity
        let bySQLAlone = !delete.wantsKeys && !hasDependents(root)
        return try inBatchTransaction("batch delete") { connection in
            var recorder = try PostgreSQLBatchHistory(store: self, on: connection)
            let outcome: BatchOutcome
            if bySQLAlone {
                try recorder?.record(.delete, root: root, where: filter, bindings, on: connection)
                let sql = "DELETE FROM \(table) AS t0" + (filter.map { " WHERE \($0)" } ?? "")
                outcome = BatchOutcome(count: try connection.execute(PredicateSQLCompiler.Dialect.numberedParameters(sql), bindings).affectedRows)
            } else {
                let sql = "SELECT t0.\(Self.pk), t0.\(Self.ent) FROM \(table) t0" + (filter.map { " WHERE \($0)" } ?? "")
                let keys = readKeys(try connection.execute(PredicateSQLCompiler.Dialect.numberedParameters(sql), bindings))
                let deleted = try deleteWithRules(keys, root: root, history: &recorder, on: connection)
                outcome = BatchOutcome(count: deleted.count, keys: delete.wantsKeys ? deleted : [])
            }
            return (outcome, try recorder?.finish(delete.author, on: connection))
        }
    }

    /// Whether deleting rows of `root`'s table touches anything else: relationships of its
    /// entities, or relationships of any entity to them.
    private func hasDependents(_ root: NSEntityDescription) -> Bool {
        schema.entities.contains { entity in
            if entity.rootEntity === root && !entity.layout.relationshipIndexes.isEmpty { return true }
            return entity.ownProperties.contains { ($0 as? NSRelationshipDescription)?.destinationEntity?.rootEntity === root }
        }
    }

    /// Runs one statement written with `?` placeholders.
    private func run(_ sql: String, _ parameters: [PostgreSQLParameter], on connection: any PostgreSQLConnection) throws -> any PostgreSQLRows {
        try connection.execute(PredicateSQLCompiler.Dialect.numberedParameters(sql), parameters)
    }

    /// Deletes the rows `keys` (of `root`'s table) and, by the cascade rule, their related rows,
    /// applying the delete rules; every row deleted, in order. With persistent history, each
    /// deleted row is recorded as a delete, and each row that survives with a to-one cleared
    /// (the nullify rule) as an update of that relationship.
    private func deleteWithRules(_ keys: [FetchedKey], root: NSEntityDescription, history: inout PostgreSQLBatchHistory?,
                                 on connection: any PostgreSQLConnection) throws -> [FetchedKey] {
        var pending: [(root: NSEntityDescription, keys: [FetchedKey])] = [(root, keys)]
        var seen: [ObjectIdentifier: Set<Int64>] = [:]
        var deleted: [FetchedKey] = []
        // For history: the rows whose to-ones were cleared, by root and key, with those relationships.
        var cleared: [ObjectIdentifier: [Int64: (key: FetchedKey, changed: [Int])]] = [:]
        while !pending.isEmpty {
            let (root, batch) = pending.removeFirst()
            let fresh = batch.filter { seen[ObjectIdentifier(root), default: []].insert($0.primaryKey).inserted }
            guard !fresh.isEmpty else { continue }
            deleted += fresh
            let all = PostgreSQLParameter.text(BatchArrays.keyList(fresh.map(\.primaryKey)))
            // The deleted rows' own rules, entity by entity.
            var entities: [NSEntityDescription] = []
            for key in fresh where !entities.contains(where: { $0 === key.entity }) { entities.append(key.entity) }
            for entity in entities {
                let own = PostgreSQLParameter.text(BatchArrays.keyList(fresh.filter { $0.entity === entity }.map(\.primaryKey)))
                for index in entity.layout.relationshipIndexes {
                    guard let relationship = entity.layout.properties[index] as? NSRelationshipDescription,
                          relationship.deleteRule == .cascadeDeleteRule || relationship.deleteRule == .denyDeleteRule,
                          let destination = relationship.destinationEntity, let sql = relatedKeysSQL(relationship) else { continue }
                    let related = readKeys(try run(sql, [own], on: connection))
                    if relationship.deleteRule == .denyDeleteRule, !related.isEmpty {
                        throw CoreDataError.make(.relationshipDeniedDelete,
                            "An object of \(entity.name ?? "") can't be deleted: its relationship '\(relationship.name)' has the deny rule and still has objects; nothing was deleted",
                            extra: [NSValidationKeyErrorKey: relationship.name])
                    }
                    if relationship.deleteRule == .cascadeDeleteRule { pending.append((destination.rootEntity, related)) }
                }
            }
            // Nothing left pointing at the rows.
            for entity in schema.entities {
                for case let relationship as NSRelationshipDescription in entity.ownProperties {
                    guard let destination = relationship.destinationEntity else { continue }
                    if !relationship.isToMany, destination.rootEntity === root, let column = schema.storage(of: entity).columns[relationship.index] {
                        var clearedColumns = schema.storage(of: entity).entityColumns[relationship.index].map { ", \($0) = NULL" } ?? ""
                        // The row's position in its owner's ordered to-many goes with the owner.
                        if let inverse = relationship.inverseRelationship, case let .foreignKey(_, order?, _)? = schema.toManyStorage(of: inverse) {
                            clearedColumns += ", \(order) = NULL"
                        }
                        let sql = "UPDATE \(schema.table(of: entity)) SET \(column) = NULL\(clearedColumns), \(Self.opt) = \(Self.opt) + 1 WHERE \(column) = ANY(?::bigint[])"
                        guard history != nil else { _ = try run(sql, [all], on: connection); continue }
                        for key in readKeys(try run(sql + " RETURNING \(Self.pk), \(Self.ent)", [all], on: connection)) {
                            cleared[ObjectIdentifier(entity.rootEntity), default: [:]][key.primaryKey, default: (key, [])].changed.append(relationship.index)
                        }
                    } else if relationship.isToMany, entity.rootEntity === root,
                              case let .foreignKey(column, order, true)? = schema.toManyStorage(of: relationship) {
                        let clearOrder = order.map { ", \($0) = NULL" } ?? ""
                        _ = try run("UPDATE \(schema.table(of: destination)) SET \(column) = NULL\(clearOrder), \(Self.opt) = \(Self.opt) + 1 WHERE \(column) = ANY(?::bigint[])",
                                    [all], on: connection)
                    }
                }
            }
            for join in schema.joinTables {
                for (column, side) in [(join.first, join.firstRoot), (join.second, join.secondRoot)] where side == ObjectIdentifier(root) {
                    _ = try run("DELETE FROM \(SQLiteSchema.quoted(join.name)) WHERE \(SQLiteSchema.quoted(column)) = ANY(?::bigint[])", [all], on: connection)
                }
            }
            try history?.record(.delete, root: root, where: "t0.\(Self.pk) = ANY(?::bigint[])", [all], on: connection)
            _ = try run("DELETE FROM \(schema.table(of: root)) WHERE \(Self.pk) = ANY(?::bigint[])", [all], on: connection)
        }
        // A row cleared and then deleted (by a cascade) is recorded as deleted only.
        let updated = cleared.flatMap { root, rows in rows.values.filter { seen[root]?.contains($0.key.primaryKey) != true } }
        try history?.recordUpdates(updated.sorted { ($0.key.entity.layout.entityNumber, $0.key.primaryKey) < ($1.key.entity.layout.entityNumber, $1.key.primaryKey) },
                                   on: connection)
        return deleted
    }

    /// A query for the `Z_PK, Z_ENT` of the rows `relationship` leads to from the rows whose
    /// keys are bound, as an array, to its one parameter; `nil` for a transient one.
    private func relatedKeysSQL(_ relationship: NSRelationshipDescription) -> String? {
        guard let destination = relationship.destinationEntity else { return nil }
        let target = schema.table(of: destination)
        let owners = "ANY(?::bigint[])"
        if !relationship.isToMany {
            guard let column = schema.storage(of: relationship.entity).columns[relationship.index] else { return nil }
            return "SELECT \(Self.pk), \(Self.ent) FROM \(target) WHERE \(Self.pk) IN (SELECT \(column) FROM \(schema.table(of: relationship.entity)) WHERE \(Self.pk) = \(owners))"
        }
        switch schema.toManyStorage(of: relationship) {
        case let .join(table, source, member, _)?:
            return "SELECT \(Self.pk), \(Self.ent) FROM \(target) WHERE \(Self.pk) IN (SELECT \(member) FROM \(table) WHERE \(source) = \(owners))"
        case let .foreignKey(column, _, _)?:
            return "SELECT \(Self.pk), \(Self.ent) FROM \(target) WHERE \(column) = \(owners)"
        case nil:
            return nil
        }
    }
}
