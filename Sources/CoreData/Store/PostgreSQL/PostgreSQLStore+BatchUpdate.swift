import Foundation

// Batch updates (NSBatchUpdateRequest) on PostgreSQL: one `UPDATE … SET "Z_OPT" = "Z_OPT" + 1, …
// WHERE …` in one transaction on the writer, its new values and its condition compiled by the
// predicate compiler in the PostgreSQL dialect, as the SQLite store's (`SQLiteStore+BatchUpdate.swift`).
extension PostgreSQLStore {
    func batchUpdateInTransaction(_ update: BatchUpdate) throws -> BatchOutcome {
        let plan = update.plan
        let entity = plan.entity
        let storage = schema.storage(of: entity)
        var compiler = PredicateSQLCompiler(entity: entity, schema: schema, dialect: .postgreSQL)
        var assignments = ["\(Self.opt) = t0.\(Self.opt) + 1"]
        var bindings: [PostgreSQLParameter] = []
        for (index, value) in update.assignments {
            let attribute = entity.layout.properties[index] as! NSAttributeDescription // checked by BatchUpdate
            guard let column = storage.columns[index] else { throw SQLiteSchema.unmapped(attribute) }
            switch value {
            case .constant(let constant):
                assignments.append("\(column) = ?")
                bindings.append(try batchParameter(constant, for: attribute))
            case .expression(let node):
                let operand: PredicateSQLCompiler.Operand
                do {
                    operand = try compiler.operand(node)
                } catch {
                    throw BatchErrors.invalid("NSBatchUpdateRequest: the value of '\(attribute.name)' can't be computed in SQL: \(error.reason)", key: attribute.name)
                }
                switch operand {
                case .value(let fragment, _):
                    assignments.append("\(column) = \(fragment.sql)")
                    bindings += fragment.bindings.map(parameter)
                case .constant(let constant):
                    assignments.append("\(column) = ?")
                    bindings.append(try batchParameter(try BatchErrors.storeValue(constant.walkable, for: attribute, row: nil), for: attribute))
                case .toMany:
                    throw BatchErrors.invalid("NSBatchUpdateRequest: the value of '\(attribute.name)' is a to-many key path", key: attribute.name)
                }
            }
        }
        guard compiler.joins.isEmpty else {
            throw BatchErrors.invalid("NSBatchUpdateRequest: new values may read the row's own attributes only, not key paths through relationships", key: nil)
        }
        let (filter, filterBindings) = try batchFilter(plan, compiler: &compiler)
        var sql = "UPDATE \(storage.table) AS t0 SET \(assignments.joined(separator: ", "))"
        if let filter { sql += " WHERE \(filter)" }
        if update.wantsKeys { sql += " RETURNING t0.\(Self.pk), t0.\(Self.ent)" }
        sql = PredicateSQLCompiler.Dialect.numberedParameters(sql)
        bindings += filterBindings
        return try inBatchTransaction("batch update") { connection in
            // Persistent history: the rows the UPDATE is about to change.
            var recorder = try PostgreSQLBatchHistory(store: self, on: connection)
            try recorder?.record(.update, root: entity, where: filter, filterBindings, changed: update.assignments.map(\.index), on: connection)
            let rows = try connection.execute(sql, bindings)
            var outcome = BatchOutcome(count: update.wantsKeys ? rows.count : rows.affectedRows)
            if update.wantsKeys { outcome.keys = readKeys(rows) }
            return (outcome, try recorder?.finish(update.author, on: connection))
        }
    }

    /// A constant as a parameter: a transformable value as its data.
    func batchParameter(_ value: StoreValue, for attribute: NSAttributeDescription) throws -> PostgreSQLParameter {
        if case .object(let box) = value { return .bytes(try TransformableCoding.encode(box.value, for: attribute)) }
        return parameter(value)
    }
}
