import Foundation

// Derived attributes after a batch request, in SQL (`BatchDerivedAttributes.swift` says which):
// one `UPDATE` per attribute sets its column, for every row of its entity, to its derivation
// compiled by the predicate compiler, which gives what a save computes in memory. Shared by the
// SQLite and PostgreSQL stores.
/// The rows of `root`'s table a batch insert wrote, as a condition on the alias given.
internal typealias WrittenRows = (root: NSEntityDescription, condition: (_ alias: String) -> SQLFragment)

extension SQLiteStore {
    /// The statements that compute `attributes` again, in `dialect`: `UPDATE <table> AS t0 SET
    /// <column> = <derivation> WHERE t0.Z_ENT IN (…) AND <column> differs`, the derivation as a
    /// subquery on the row when it follows to-one relationships. The rows of an attribute whose
    /// entity is in `rows.root`'s table are those `rows.condition` picks (a batch insert's: the
    /// condition on the table's alias it is given); the other attributes', every row.
    static func derivedAttributeStatements(_ attributes: [NSDerivedAttributeDescription], schema: SQLiteSchema,
                                           dialect: PredicateSQLCompiler.Dialect, store: NSPersistentStore,
                                           rows: WrittenRows? = nil) throws -> [SQLFragment] {
        let differs = dialect == .sqlite ? " IS NOT " : " IS DISTINCT FROM "
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
            let alias = joins.isEmpty ? "t0" : "d0"
            let computed = joins.isEmpty ? value
                : "(SELECT " + value + " FROM \(table) t0 \(joins.joined(separator: " ")) WHERE \(compiler.primaryKey(of: "t0")) = \(compiler.primaryKey(of: "d0")))"
            var statement = "UPDATE \(table) AS \(alias) SET \(column) = " + computed + " WHERE \(compiler.entityColumn(of: alias)) IN (\(numbers))"
            if let rows, entity.rootEntity === rows.root { statement = statement + " AND " + rows.condition(alias) }
            return statement + " AND \(alias).\(column)\(differs)" + computed
        }
    }

    /// Computes again, on the writer `db` inside a batch request's transaction, the derived
    /// attributes `change` on the rows of `entities` may have changed (`rows`: as
    /// ``derivedAttributeStatements(_:schema:dialect:store:rows:)`` takes them).
    func recomputeDerivedAttributes(after change: BatchChange, on entities: [NSEntityDescription], db: SQLiteConnection,
                                    rows: WrittenRows? = nil) throws {
        let attributes = BatchDerivedAttributes.recomputed(after: change, on: entities)
        guard !attributes.isEmpty else { return }
        for statement in try Self.derivedAttributeStatements(attributes, schema: schema, dialect: .sqlite, store: self, rows: rows) {
            let prepared = try db.cached(statement.sql)
            defer { prepared.reset() }
            for (offset, value) in statement.bindings.enumerated() { prepared.bind(value, at: Int32(offset + 1)) }
            while try prepared.step() {}
        }
    }
}
