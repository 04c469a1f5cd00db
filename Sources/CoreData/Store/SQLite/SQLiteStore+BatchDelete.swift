import Foundation

// Batch deletes (NSBatchDeleteRequest) in SQL, on the writer, in one transaction. A table that
// nothing refers to, without external data, and a request that wants no IDs, is one
// `DELETE … WHERE …`. Otherwise the keys are read first and, table by table, the delete rules
// applied (deny refuses, cascade deletes the related rows in turn), what points at the rows
// cleared (foreign keys nulled, join-table rows removed), their external data files noted, and
// the rows deleted.
extension SQLiteStore {
    /// ``batchDelete(_:rowCache:)``; the store's rows are then dropped from `rowCache`.
    func batchDeleteOnWriter(_ delete: BatchDelete, rowCache: StoreRowCache?, beforeCommitting: (() throws -> Void)? = nil) throws -> BatchOutcome {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store at \(url?.path ?? "") is read-only; nothing was deleted") }
        let plan = delete.plan
        let table = schema.table(of: plan.entity)
        var compiler = PredicateSQLCompiler(entity: plan.entity, schema: schema, store: self)
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
                        try beforeCommitting?()
                        return BatchOutcome(count: count)
                    }
                    var sql = "SELECT t0.Z_PK, t0.Z_ENT FROM \(table) t0 \(joins.joined(separator: " "))"
                    if let condition { sql += " WHERE \(condition)" }
                    let keys = try readKeys(db, sql: sql, bindings: bindings)
                    let deleted = try deleteWithRules(keys, root: root, history: &recorder, on: db)
                    if BatchDerivedAttributes.exist(for: root) {
                        try recomputeDerivedAttributes(after: .delete, on: BatchDerivedAttributes.families(of: deleted), db: db)
                    }
                    try recorder?.finish(delete.author, on: db)
                    try beforeCommitting?()
                    return BatchOutcome(count: deleted.count, keys: delete.wantsKeys ? deleted : [])
                }
                files?.removeReplaced(pinnedExternalData)
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

    /// Deletes the rows `keys` (of `root`'s table) and their related rows by the delete rules
    /// (``SQLiteSchema/deleteWithRules(_:root:using:)``), with persistent history if `history`
    /// is given, noting the rows' external data files; every row deleted, in order.
    private func deleteWithRules(_ keys: [FetchedKey], root: NSEntityDescription, history: inout SQLiteBatchHistory?,
                                 on db: SQLiteConnection) throws -> [FetchedKey] {
        var recorder = history
        defer { history = recorder }
        var statements = BatchDeleteStatements(keySet: "(SELECT value FROM json_each(?))", keyList: { .string(Self.jsonArray($0)) },
                                               readKeys: { sql, keys in try self.readKeys(db, sql: sql, bindings: [keys]) },
                                               run: { sql, keys in try self.run(sql, [keys], on: db) })
        statements.tracksHistory = history != nil
        statements.recordDeletes = { root, condition, keys in try recorder?.record(.delete, root: root, where: condition, [keys], on: db) }
        statements.recordUpdates = { rows in try recorder?.recordUpdates(rows, on: db) }
        statements.willDelete = { keys in
            for key in keys {
                let storage = self.schema.storage(of: key.entity)
                guard !storage.externalIndexes.isEmpty else { continue }
                try self.noteReplacedExternalFiles(of: key.entity, primaryKey: key.primaryKey,
                                                   columns: storage.externalIndexes.compactMap { storage.columns[$0] }, on: db)
            }
        }
        return try schema.deleteWithRules(keys, root: root, using: statements)
    }

    /// The keys as a JSON array, bound as one parameter and read with `json_each`.
    static func jsonArray(_ keys: [Int64]) -> String {
        "[" + keys.map(String.init).joined(separator: ",") + "]"
    }
}
