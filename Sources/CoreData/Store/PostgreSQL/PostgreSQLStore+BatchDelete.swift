import Foundation

// Batch deletes (NSBatchDeleteRequest) on PostgreSQL, in one transaction on the writer, as the
// SQLite store does them (`SQLiteStore+BatchDelete.swift`): a table that nothing refers to, and a
// request that wants no IDs, is one `DELETE … WHERE …`. Otherwise the keys are read first and,
// table by table, the delete rules applied (deny refuses, cascade deletes the related rows in
// turn), what points at the rows cleared (foreign keys nulled with `Z_OPT + 1`, join-table rows
// removed) and the rows deleted (`SQLiteSchema+DeleteRules.swift`, shared with the SQLite store).
// Lists of keys are one parameter each (`IN (SELECT unnest(?::bigint[]))`).
extension PostgreSQLStore {
    func batchDeleteInTransaction(_ delete: BatchDelete, beforeCommitting: (() throws -> Void)? = nil) throws -> BatchOutcome {
        let plan = delete.plan
        let table = schema.table(of: plan.entity)
        var compiler = PredicateSQLCompiler(entity: plan.entity, schema: schema, dialect: .postgreSQL, store: self)
        let (filter, bindings) = try batchFilter(plan, compiler: &compiler)
        let root = plan.entity.rootEntity
        let bySQLAlone = !delete.wantsKeys && !hasDependents(root)
        return try inBatchTransaction("batch delete", beforeCommitting: beforeCommitting) { connection in
            // The rows first, in the global order (`Z_PK`), then history's keys, as a save takes them.
            if bySQLAlone {
                try lockRows(of: table, where: filter, bindings, on: connection)
                var recorder = try PostgreSQLBatchHistory(store: self, on: connection)
                try recorder?.record(.delete, root: root, where: filter, bindings, on: connection)
                let sql = "DELETE FROM \(table) AS t0" + (filter.map { " WHERE \($0)" } ?? "")
                let outcome = BatchOutcome(count: try connection.execute(PredicateSQLCompiler.Dialect.numberedParameters(sql), bindings).affectedRows)
                return (outcome, try recorder?.finish(delete.author, on: connection))
            } else {
                let sql = "SELECT t0.\(Self.pk), t0.\(Self.ent) FROM \(table) t0" + (filter.map { " WHERE \($0)" } ?? "")
                    + " ORDER BY t0.\(Self.pk)"
                // Every row the rules will write, in the global order, before writing any
                // (`PostgreSQLStore+BatchDeleteLocks.swift`); then the rows as they are now locked.
                try lockRowsTheRulesReach(readKeys(try run(sql, bindings, on: connection)), root: root, on: connection)
                let keys = readKeys(try run(sql + " FOR UPDATE OF t0", bindings, on: connection))
                var recorder = try PostgreSQLBatchHistory(store: self, on: connection)
                let deleted = try deleteWithRules(keys, root: root, history: &recorder, on: connection)
                if BatchDerivedAttributes.exist(for: root) {
                    try recomputeDerivedAttributes(after: .delete, on: BatchDerivedAttributes.families(of: deleted), on: connection)
                }
                let outcome = BatchOutcome(count: deleted.count, keys: delete.wantsKeys ? deleted : [])
                return (outcome, try recorder?.finish(delete.author, on: connection))
            }
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

    /// Computes again, inside a batch request's transaction, the derived attributes `change` on
    /// the rows of `entities` may have changed (`SQLiteStore+DerivedAttributes.swift`).
    func recomputeDerivedAttributes(after change: BatchChange, on entities: [NSEntityDescription],
                                    on connection: any PostgreSQLConnection,
                                    rows: WrittenRows? = nil) throws {
        let attributes = BatchDerivedAttributes.recomputed(after: change, on: entities)
        guard !attributes.isEmpty else { return }
        for statement in try SQLiteStore.derivedAttributeStatements(attributes, schema: schema, dialect: .postgreSQL, store: self, rows: rows) {
            _ = try run(statement.sql, statement.bindings.map(parameter), on: connection)
        }
    }

    /// Runs one statement written with `?` placeholders.
    func run(_ sql: String, _ parameters: [PostgreSQLParameter], on connection: any PostgreSQLConnection) throws -> any PostgreSQLRows {
        try connection.execute(PredicateSQLCompiler.Dialect.numberedParameters(sql), parameters)
    }

    /// Deletes the rows `keys` (of `root`'s table) and their related rows by the delete rules
    /// (``SQLiteSchema/deleteWithRules(_:root:using:)``, shared with the SQLite store), with
    /// persistent history if `history` is given; every row deleted, in order.
    private func deleteWithRules(_ keys: [FetchedKey], root: NSEntityDescription, history: inout PostgreSQLBatchHistory?,
                                 on connection: any PostgreSQLConnection) throws -> [FetchedKey] {
        var recorder = history
        defer { history = recorder }
        var statements = deleteStatements(on: connection)
        statements.tracksHistory = history != nil
        statements.recordDeletes = { root, condition, keys in
            try recorder?.record(.delete, root: root, where: condition, [self.parameter(keys)], on: connection)
        }
        statements.recordUpdates = { rows in try recorder?.recordUpdates(rows, on: connection) }
        return try schema.deleteWithRules(keys, root: root, using: statements)
    }

    /// The statements of the delete rules (``SQLiteSchema/deleteWithRules(_:root:using:)``) on `connection`.
    func deleteStatements(on connection: any PostgreSQLConnection) -> BatchDeleteStatements {
        BatchDeleteStatements(pk: Self.pk, ent: Self.ent, opt: Self.opt, keySet: "(SELECT unnest(?::bigint[]))",
                              keyList: { .string(BatchArrays.keyList($0)) },
                              readKeys: { sql, keys in self.readKeys(try self.run(sql, [self.parameter(keys)], on: connection)) },
                              run: { sql, keys in _ = try self.run(sql, [self.parameter(keys)], on: connection) })
    }
}
