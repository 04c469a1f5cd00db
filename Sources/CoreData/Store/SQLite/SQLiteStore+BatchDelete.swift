import Foundation

// Batch deletes (NSBatchDeleteRequest) in SQL, on the writer, in one transaction. A table that
// nothing refers to, without external data, and a request that wants no IDs, is one
// `DELETE … WHERE …`. Otherwise the keys are read first and, table by table, the delete rules
// applied (deny refuses, cascade deletes the related rows in turn), what points at the rows
// cleared (foreign keys nulled, join-table rows removed), their external data files noted, and
// the rows deleted.
extension SQLiteStore {
    /// ``batchDelete(_:rowCache:)``; the store's rows are then dropped from `rowCache`.
    func batchDeleteOnWriter(_ delete: BatchDelete, rowCache: StoreRowCache?) throws -> BatchOutcome {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store at \(url?.path ?? "") is read-only; nothing was deleted") }
        let plan = delete.plan
        let table = schema.table(of: plan.entity)
        var compiler = PredicateSQLCompiler(entity: plan.entity, schema: schema)
        let (condition, bindings) = try self.condition(plan, compiler: &compiler)
        let joins = compiler.joins
        let root = plan.entity.rootEntity
        let bySQLAlone = !delete.wantsKeys && !hasDependents(root)
        return try withWriter { db in
            let files = schema.hasExternalData ? url.flatMap(Self.externalDataFolder(forStoreAt:)).map(ExternalDataFiles.init) : nil
            externalFiles = files
            defer { externalFiles = nil }
            let outcome: BatchOutcome
            do {
                outcome = try db.transaction { () throws -> BatchOutcome in
                    var recorder = try SQLiteBatchHistory(store: self, on: db)
                    if bySQLAlone {
                        let filter = condition.map { joins.isEmpty ? $0 : "t0.Z_PK IN (SELECT t0.Z_PK FROM \(table) t0 \(joins.joined(separator: " ")) WHERE \($0))" }
                        var sql = "DELETE FROM \(table) AS t0"
                        if let filter { sql += " WHERE \(filter)" }
                        try recorder?.record(.delete, root: root, where: filter, bindings, on: db)
                        try run(sql, bindings, on: db)
                        let count = db.changes
                        try recorder?.finish(delete.author, on: db)
                        return BatchOutcome(count: count)
                    }
                    var sql = "SELECT t0.Z_PK, t0.Z_ENT FROM \(table) t0 \(joins.joined(separator: " "))"
                    if let condition { sql += " WHERE \(condition)" }
                    let keys = try readKeys(db, sql: sql, bindings: bindings)
                    let deleted = try deleteWithRules(keys, root: root, history: &recorder, on: db)
                    try recorder?.finish(delete.author, on: db)
                    return BatchOutcome(count: deleted.count, keys: delete.wantsKeys ? deleted : [])
                }
                files?.removeReplaced()
            } catch {
                files?.discardCreated()
                throw Self.saveError(error)
            }
            if outcome.count > 0 { rowCache?.forgetRows(ofStore: tag) }
            return outcome
        }
    }

    /// Whether deleting rows of `root`'s table touches anything else: relationships of its
    /// entities, relationships of any entity to them, external data files.
    private func hasDependents(_ root: NSEntityDescription) -> Bool {
        schema.entities.contains { entity in
            if entity.rootEntity === root && (!entity.layout.relationshipIndexes.isEmpty || !schema.storage(of: entity).externalIndexes.isEmpty) { return true }
            return entity.ownProperties.contains { ($0 as? NSRelationshipDescription)?.destinationEntity?.rootEntity === root }
        }
    }

    /// Runs one statement with `bindings`.
    private func run(_ sql: String, _ bindings: [StoreValue], on db: SQLiteConnection) throws {
        let statement = try db.cached(sql)
        defer { statement.reset() }
        for (offset, value) in bindings.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
        while try statement.step() {}
    }

    /// Deletes the rows `keys` (of `root`'s table) and, by the cascade rule, their related rows,
    /// applying the delete rules; every row deleted, in order. With persistent history, each
    /// deleted row is recorded as a delete, and each row that survives with a to-one cleared
    /// (the nullify rule) as an update of that relationship.
    private func deleteWithRules(_ keys: [FetchedKey], root: NSEntityDescription, history: inout SQLiteBatchHistory?,
                                 on db: SQLiteConnection) throws -> [FetchedKey] {
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
            let all = StoreValue.string(Self.jsonArray(fresh))
            // The deleted rows' own rules, entity by entity.
            var entities: [NSEntityDescription] = []
            for key in fresh where !entities.contains(where: { $0 === key.entity }) { entities.append(key.entity) }
            for entity in entities {
                let own = StoreValue.string(Self.jsonArray(fresh.filter { $0.entity === entity }))
                for index in entity.layout.relationshipIndexes {
                    guard let relationship = entity.layout.properties[index] as? NSRelationshipDescription,
                          relationship.deleteRule == .cascadeDeleteRule || relationship.deleteRule == .denyDeleteRule,
                          let destination = relationship.destinationEntity, let sql = relatedKeysSQL(relationship) else { continue }
                    let related = try readKeys(db, sql: sql, bindings: [own])
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
                        let sql = "UPDATE \(schema.table(of: entity)) SET \(column) = NULL\(clearedColumns), Z_OPT = Z_OPT + 1 WHERE \(column) IN (SELECT value FROM json_each(?))"
                        guard history != nil else { try run(sql, [all], on: db); continue }
                        for key in try readKeys(db, sql: sql + " RETURNING Z_PK, Z_ENT", bindings: [all]) {
                            cleared[ObjectIdentifier(entity.rootEntity), default: [:]][key.primaryKey, default: (key, [])].changed.append(relationship.index)
                        }
                    } else if relationship.isToMany, entity.rootEntity === root,
                              case let .foreignKey(column, order, true)? = schema.toManyStorage(of: relationship) {
                        let clearOrder = order.map { ", \($0) = NULL" } ?? ""
                        try run("UPDATE \(schema.table(of: destination)) SET \(column) = NULL\(clearOrder), Z_OPT = Z_OPT + 1 WHERE \(column) IN (SELECT value FROM json_each(?))", [all], on: db)
                    }
                }
            }
            for join in schema.joinTables {
                for (column, side) in [(join.first, join.firstRoot), (join.second, join.secondRoot)] where side == ObjectIdentifier(root) {
                    try run("DELETE FROM \(SQLiteSchema.quoted(join.name)) WHERE \(SQLiteSchema.quoted(column)) IN (SELECT value FROM json_each(?))", [all], on: db)
                }
            }
            for key in fresh {
                let storage = schema.storage(of: key.entity)
                guard !storage.externalIndexes.isEmpty else { continue }
                try noteReplacedExternalFiles(of: key.entity, primaryKey: key.primaryKey, columns: storage.externalIndexes.compactMap { storage.columns[$0] }, on: db)
            }
            try history?.record(.delete, root: root, where: "t0.Z_PK IN (SELECT value FROM json_each(?))", [all], on: db)
            try run("DELETE FROM \(schema.table(of: root)) WHERE Z_PK IN (SELECT value FROM json_each(?))", [all], on: db)
        }
        // A row cleared and then deleted (by a cascade) is recorded as deleted only.
        let updated = cleared.flatMap { root, rows in rows.values.filter { seen[root]?.contains($0.key.primaryKey) != true } }
        try history?.recordUpdates(updated.sorted { ($0.key.entity.layout.entityNumber, $0.key.primaryKey) < ($1.key.entity.layout.entityNumber, $1.key.primaryKey) }, on: db)
        return deleted
    }

    /// A query for the `Z_PK, Z_ENT` of the rows `relationship` leads to from the rows whose
    /// keys are bound, as a JSON array, to its one parameter; `nil` for a transient one.
    private func relatedKeysSQL(_ relationship: NSRelationshipDescription) -> String? {
        guard let destination = relationship.destinationEntity else { return nil }
        let target = schema.table(of: destination)
        let owners = "(SELECT value FROM json_each(?))"
        if !relationship.isToMany {
            guard let column = schema.storage(of: relationship.entity).columns[relationship.index] else { return nil }
            return "SELECT Z_PK, Z_ENT FROM \(target) WHERE Z_PK IN (SELECT \(column) FROM \(schema.table(of: relationship.entity)) WHERE Z_PK IN \(owners))"
        }
        switch schema.toManyStorage(of: relationship) {
        case let .join(table, source, member, _)?:
            return "SELECT Z_PK, Z_ENT FROM \(target) WHERE Z_PK IN (SELECT \(member) FROM \(table) WHERE \(source) IN \(owners))"
        case let .foreignKey(column, _, _)?:
            return "SELECT Z_PK, Z_ENT FROM \(target) WHERE \(column) IN \(owners)"
        case nil:
            return nil
        }
    }

    /// The keys as a JSON array, bound as one parameter and read with `json_each`.
    private static func jsonArray(_ keys: [FetchedKey]) -> String {
        "[" + keys.map { String($0.primaryKey) }.joined(separator: ",") + "]"
    }
}
