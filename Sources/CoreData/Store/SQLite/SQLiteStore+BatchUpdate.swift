import Foundation

// Batch updates (NSBatchUpdateRequest) in SQL: one `UPDATE … SET Z_OPT = Z_OPT + 1, … WHERE …`,
// its values and condition compiled by the predicate layer's compiler, on the writer.
extension SQLiteStore {
    /// ``batchUpdate(_:rowCache:)``: one `UPDATE` in one transaction (`RETURNING` the keys when
    /// asked for IDs); the store's rows are then dropped from `rowCache`, which may hold the
    /// updated rows as they were.
    func batchUpdateOnWriter(_ update: BatchUpdate, rowCache: StoreRowCache?, beforeCommitting: (() throws -> Void)? = nil) throws -> BatchOutcome {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store at \(url?.path ?? "") is read-only; nothing was updated") }
        let plan = update.plan
        let entity = plan.entity
        let storage = schema.storage(of: entity)
        var compiler = PredicateSQLCompiler(entity: entity, schema: schema, store: self)
        var (assignments, bindings) = try Self.batchAssignments(update, storage: storage, compiler: &compiler)
        assignments.insert("Z_OPT = ifnull(Z_OPT, 0) + 1", at: 0)
        let (condition, conditionBindings) = try self.condition(plan, compiler: &compiler)
        let joins = compiler.joins
        let filter = condition.map { joins.isEmpty ? $0 : "t0.Z_PK IN (SELECT t0.Z_PK FROM \(storage.table) t0 \(joins.joined(separator: " ")) WHERE \($0))" }
        var sql = "UPDATE \(storage.table) AS t0 SET \(assignments.joined(separator: ", "))"
        if let filter { sql += " WHERE \(filter)" }
        if update.wantsKeys { sql += " RETURNING Z_PK, Z_ENT" }
        bindings += conditionBindings
        return try withWriter { db in
            let outcome = try Self.mappingSaveError { try db.transaction { () throws -> BatchOutcome in
                // Persistent history: the rows the UPDATE is about to change.
                var recorder = try SQLiteBatchHistory(store: self, on: db)
                try recorder?.record(.update, root: entity, where: filter, conditionBindings, changed: update.assignments.map(\.index), on: db)
                let statement = try db.cached(sql)
                defer { statement.reset() }
                for (offset, value) in bindings.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
                var outcome = BatchOutcome()
                while try statement.step() {
                    guard let rowEntity = self.entity(numbered: statement.int64(1)) else { continue }
                    outcome.keys.append(FetchedKey(entity: rowEntity, primaryKey: statement.int64(0)))
                }
                outcome.count = update.wantsKeys ? outcome.keys.count : db.changes
                if outcome.count > 0 { try self.recomputeDerivedAttributes(after: update.change, on: [entity], db: db) }
                try recorder?.finish(update.author, on: db)
                try beforeCommitting?()
                return outcome
            } }
            if outcome.count > 0 { rowCache?.forgetRows(ofStore: tag) }
            return outcome
        }
    }

    /// The `SET` list of a batch update (without its `Z_OPT` bump), with `?` placeholders, and
    /// the values bound to them: constants bound (a transformable one as its data), expressions
    /// compiled by `compiler` (in the store's dialect). Shared by the SQLite and PostgreSQL stores.
    static func batchAssignments(_ update: BatchUpdate, storage: SQLiteSchema.EntityStorage,
                                 compiler: inout PredicateSQLCompiler) throws -> (assignments: [String], bindings: [StoreValue]) {
        let entity = update.plan.entity
        var assignments: [String] = []
        var bindings: [StoreValue] = []
        // `now()` derived attributes: the request's time, on the rows of their entities.
        let stamped = BatchDerivedAttributes.stamped(on: entity)
        for attribute in stamped {
            // (The owner's storage: a sub-entity's own attribute is past the parent's properties.)
            guard let owner = attribute.entity, let column = compiler.schema.storage(of: owner).columns[attribute.index] else { continue }
            if entity.isKindOf(entity: owner) {
                assignments.append("\(column) = ?")
            } else {
                let numbers = compiler.schema.numbers(of: owner, includingSubentities: true).map(String.init).joined(separator: ", ")
                assignments.append("\(column) = CASE WHEN \(compiler.entityColumn(of: "t0")) IN (\(numbers)) THEN ? ELSE \(column) END")
            }
            bindings.append(.date(update.date))
        }
        for (index, value) in update.assignments where !stamped.contains(where: { $0.index == index }) {
            let attribute = entity.layout.properties[index] as! NSAttributeDescription // checked by BatchUpdate
            guard let column = storage.columns[index] else { throw SQLiteSchema.unmapped(attribute) }
            switch value {
            case .constant(let constant):
                assignments.append("\(column) = ?")
                bindings.append(try Self.bindable(constant, for: attribute))
            case .expression(let node):
                let operand: PredicateSQLCompiler.Operand
                do {
                    operand = try compiler.operand(node)
                } catch {
                    throw BatchErrors.invalid("NSBatchUpdateRequest: the value of '\(attribute.name)' can't be computed in SQL: \(error.reason)", key: attribute.name)
                }
                switch operand {
                case .value(let fragment, let kind):
                    assignments.append("\(column) = \(Self.stored(fragment.sql, of: kind, as: attribute.attributeType, dialect: compiler.dialect))")
                    bindings += fragment.bindings
                case .constant(let constant):
                    assignments.append("\(column) = ?")
                    bindings.append(try Self.bindable(try BatchErrors.storeValue(constant.walkable, for: attribute, row: nil), for: attribute))
                case .toMany:
                    throw BatchErrors.invalid("NSBatchUpdateRequest: the value of '\(attribute.name)' is a to-many key path", key: attribute.name)
                }
            }
        }
        guard compiler.joins.isEmpty else {
            throw BatchErrors.invalid("NSBatchUpdateRequest: new values may read the row's own attributes only, not key paths through relationships", key: nil)
        }
        return (assignments, bindings)
    }

    /// A computed value as a column of `type` keeps it, alike in both dialects: SQLite keeps a
    /// real in an integer column and reads it truncated toward zero, so PostgreSQL truncates it
    /// (its assignment would round 7.5 to 8); PostgreSQL makes a double a decimal through its
    /// shortest exact text, as SQLite reads one (a direct cast keeps 15 digits).
    static func stored(_ sql: String, of kind: PredicateSQLCompiler.ValueKind, as type: NSAttributeType,
                       dialect: PredicateSQLCompiler.Dialect) -> String {
        guard dialect == .postgreSQL, case .real = kind else { return sql }
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType: return "trunc(\(sql))"
        case .decimalAttributeType: return "CAST(CAST(\(sql) AS text) AS numeric)"
        default: return sql
        }
    }

    /// `body`'s result, its error as a save's (a uniqueness violation as 133021).
    private static func mappingSaveError<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw saveError(error) }
    }

    /// A constant as the store binds it: a transformable value as its data.
    private static func bindable(_ value: StoreValue, for attribute: NSAttributeDescription) throws -> StoreValue {
        if case .object(let box) = value { return .data(try TransformableCoding.encode(box.value, for: attribute)) }
        return value
    }
}
