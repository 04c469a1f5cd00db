import Foundation

// What the PostgreSQL store's batch requests share (`PostgreSQLStore+BatchInsert.swift`,
// `+BatchUpdate.swift`, `+BatchDelete.swift`): one transaction on the writer, its failures as a
// save's (a unique index's refusal 133021, else 134030), persistent history written in it
// (`PostgreSQLBatchHistory.swift`) and, when rows changed, the store's `NOTIFY` sent in it
// (delivered at the commit: other coordinators post `.NSPersistentStoreRemoteChange`).
extension PostgreSQLStore {
    /// Runs a batch request's `body` in one transaction on the writer; `body` returns what it did
    /// and the number of the history transaction it wrote, if any. `what` names the request in
    /// messages ("batch update"). A deadlock's victim is run again only if `isRerunnable`: an update
    /// or a delete is its statements again, but a batch insert has read its rows (a handler is not
    /// called twice for the same rows), so its deadlock is thrown (134030) and nothing inserted.
    func inBatchTransaction(_ what: String, isRerunnable: Bool = true, beforeCommitting: (() throws -> Void)? = nil,
                            _ body: (any PostgreSQLConnection) throws -> (BatchOutcome, Int64?)) throws -> BatchOutcome {
        guard !isReadOnly else {
            throw CoreDataError.make(.persistentStoreSave, "The PostgreSQL store at \(location) is read-only; the \(what) changed nothing")
        }
        return try write("run a \(what) on", retryingDeadlocks: isRerunnable) { connection, mark in
            let (outcome, transaction) = try body(connection)
            if outcome.count > 0 { try notifyCommit(transaction: transaction, on: connection) }
            if let beforeCommitting {
                mark.isCommitting = true // (the other stores' writes are never run again)
                try beforeCommitting()
            }
            return outcome
        }
    }

    /// The condition of a batch request's plan, with `?` placeholders: its entities and its
    /// predicate (compiled by `compiler`, in the PostgreSQL dialect), as a subquery on the keys
    /// when the predicate joins other tables; `nil` for every row of the table.
    func batchFilter(_ plan: FetchPlan, compiler: inout PredicateSQLCompiler) throws -> (sql: String?, bindings: [PostgreSQLParameter]) {
        var conditions: [String] = []
        var bindings: [PostgreSQLParameter] = []
        if !schema.entityCondition(of: plan.entity, includingSubentities: plan.includesSubentities).coversFamily {
            let numbers = schema.numbers(of: plan.entity, includingSubentities: plan.includesSubentities)
            conditions.append("t0.\(Self.ent) IN (" + numbers.map(String.init).joined(separator: ", ") + ")")
        }
        if let predicate = plan.predicate {
            let fragment = try compiler.compile(predicate)
            conditions.append("(" + PredicateSQLCompiler.Dialect.postgreSQL.condition(fragment.sql) + ")")
            bindings += fragment.bindings.map(parameter)
        }
        guard !conditions.isEmpty else { return (nil, []) }
        let condition = conditions.joined(separator: " AND ")
        guard !compiler.joins.isEmpty else { return (condition, bindings) }
        let table = schema.table(of: plan.entity)
        return ("t0.\(Self.pk) IN (SELECT t0.\(Self.pk) FROM \(table) t0 \(compiler.joins.joined(separator: " ")) WHERE \(condition))", bindings)
    }
}
