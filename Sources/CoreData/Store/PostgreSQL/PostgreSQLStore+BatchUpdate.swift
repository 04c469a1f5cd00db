import Foundation

// Batch updates (NSBatchUpdateRequest) on PostgreSQL: one `UPDATE … SET "Z_OPT" = "Z_OPT" + 1, …
// WHERE …` in one transaction on the writer, its new values (`SQLiteStore.batchAssignments`, shared)
// and its condition compiled by the predicate compiler in the PostgreSQL dialect.
extension PostgreSQLStore {
    func batchUpdateInTransaction(_ update: BatchUpdate, beforeCommitting: (() throws -> Void)? = nil) throws -> BatchOutcome {
        let plan = update.plan
        let entity = plan.entity
        let storage = schema.storage(of: entity)
        var compiler = PredicateSQLCompiler(entity: entity, schema: schema, dialect: .postgreSQL, store: self)
        let (set, values) = try SQLiteStore.batchAssignments(update, storage: storage, compiler: &compiler)
        let assignments = ["\(Self.opt) = t0.\(Self.opt) + 1"] + set
        var bindings = values.map(parameter)
        let (filter, filterBindings) = try batchFilter(plan, compiler: &compiler)
        var sql = "UPDATE \(storage.table) AS t0 SET \(assignments.joined(separator: ", "))"
        if let filter { sql += " WHERE \(filter)" }
        if update.wantsKeys { sql += " RETURNING t0.\(Self.pk), t0.\(Self.ent)" }
        sql = PredicateSQLCompiler.Dialect.numberedParameters(sql)
        bindings += filterBindings
        return try inBatchTransaction("batch update", beforeCommitting: beforeCommitting) { connection in
            // The rows first, in the global order, then history's keys, as a save takes them.
            try lockRows(of: storage.table, where: filter, filterBindings, on: connection)
            // Persistent history: the rows the UPDATE is about to change.
            var recorder = try PostgreSQLBatchHistory(store: self, on: connection)
            try recorder?.record(.update, root: entity, where: filter, filterBindings, changed: update.assignments.map(\.index), on: connection)
            let rows = try connection.execute(sql, bindings)
            var outcome = BatchOutcome(count: update.wantsKeys ? rows.count : rows.affectedRows)
            if update.wantsKeys { outcome.keys = readKeys(rows) }
            if outcome.count > 0 { try recomputeDerivedAttributes(after: update.change, on: [entity], on: connection) }
            return (outcome, try recorder?.finish(update.author, on: connection))
        }
    }
}
