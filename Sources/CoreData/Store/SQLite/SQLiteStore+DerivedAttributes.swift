import Foundation

// Derived attributes after a batch request, in SQL (`BatchDerivedAttributes.swift` says which):
// one `UPDATE` per attribute sets its column, for every row of its entity, to its derivation
// compiled by the predicate compiler, which gives what a save computes in memory. Shared by the
// SQLite and PostgreSQL stores.
extension SQLiteStore {
    /// The statements that compute `attributes` again for every row of their entities, in
    /// `dialect`: `UPDATE <table> AS t0 SET <column> = <derivation> WHERE t0.Z_ENT IN (…)`, the
    /// derivation as a subquery on the row when it follows to-one relationships.
    static func derivedAttributeStatements(_ attributes: [NSDerivedAttributeDescription], schema: SQLiteSchema,
                                           dialect: PredicateSQLCompiler.Dialect, store: NSPersistentStore) throws -> [SQLFragment] {
        let ent = dialect == .sqlite ? "Z_ENT" : "\"Z_ENT\""
        return try attributes.compactMap { attribute -> SQLFragment? in
            guard let entity = attribute.entity, let expression = attribute.derivation?.expression,
                  let column = schema.storage(of: entity).columns[attribute.index] else { return nil } // a file without the column
            var compiler = PredicateSQLCompiler(entity: entity, schema: schema, dialect: dialect, store: store)
            let operand: PredicateSQLCompiler.Operand
            do throws(PredicateSQLCompiler.CompileError) {
                operand = try compiler.operand(expression)
            } catch {
                throw CoreDataError.make(.persistentStoreSave,
                    "The derived attribute '\(entity.name ?? "").\(attribute.name)' can't be computed in SQL after a batch request: \(error.reason); nothing was changed")
            }
            guard case .value(let value, _) = operand else {
                throw CoreDataError.make(.persistentStoreSave,
                    "The derived attribute '\(entity.name ?? "").\(attribute.name)' can't be computed in SQL after a batch request; nothing was changed")
            }
            let table = schema.table(of: entity)
            let numbers = schema.numbers(of: entity, includingSubentities: true).map(String.init).joined(separator: ", ")
            let joins = compiler.joins
            if joins.isEmpty {
                return "UPDATE \(table) AS t0 SET \(column) = " + value + " WHERE t0.\(ent) IN (\(numbers))"
            }
            return "UPDATE \(table) AS d0 SET \(column) = (SELECT " + value
                + " FROM \(table) t0 \(joins.joined(separator: " ")) WHERE \(compiler.primaryKey(of: "t0")) = \(compiler.primaryKey(of: "d0")))"
                + " WHERE d0.\(ent) IN (\(numbers))"
        }
    }

    /// Computes again, on the writer `db` inside a batch request's transaction, the derived
    /// attributes `change` on the rows of `entities` may have changed.
    func recomputeDerivedAttributes(after change: BatchChange, on entities: [NSEntityDescription], db: SQLiteConnection) throws {
        let attributes = BatchDerivedAttributes.recomputed(after: change, on: entities)
        guard !attributes.isEmpty else { return }
        for statement in try Self.derivedAttributeStatements(attributes, schema: schema, dialect: .sqlite, store: self) {
            let prepared = try db.cached(statement.sql)
            defer { prepared.reset() }
            for (offset, value) in statement.bindings.enumerated() { prepared.bind(value, at: Int32(offset + 1)) }
            while try prepared.step() {}
        }
    }
}
