import Foundation

// A save's new rows on PostgreSQL: one `INSERT` a row, in the save's order, the same statements
// as one by one, but handed to the connection together (``PostgreSQLConnection/executeAll(_:)``),
// which sends many of them in one round trip (libpq's pipeline mode). A save of 50,000 objects
// was 50,000 round trips; it is now a few dozen. Each entity's statement and columns are worked
// out once a save, not once a row.
extension PostgreSQLStore {
    /// Inserts the rows of `inserts` with keys `keys` (the same positions), in order, in the
    /// caller's transaction, then runs `after` in the same round trips (a save's notification). A
    /// failing row (a unique index's refusal, 23505) throws its error, as its own `INSERT` would
    /// have; the rows after it are not inserted.
    func insertRows(_ inserts: [SaveChanges.Insert], keys: [Int64], resolve: (NSManagedObjectID) -> NSManagedObjectID,
                    then after: [PostgreSQLStatement] = [], on connection: any PostgreSQLConnection) throws {
        guard !inserts.isEmpty || !after.isEmpty else { return }
        var plans: [ObjectIdentifier: InsertPlan] = [:]
        var statements: [PostgreSQLStatement] = []
        statements.reserveCapacity(inserts.count)
        for (insert, pk) in zip(inserts, keys) {
            let plan = plans[ObjectIdentifier(insert.entity)] ?? {
                let plan = InsertPlan(insert.entity, schema: schema)
                plans[ObjectIdentifier(insert.entity)] = plan
                return plan
            }()
            var parameters: [PostgreSQLParameter] = [.int(pk), .int(plan.number), .int(1)]
            parameters.reserveCapacity(plan.parameterCount)
            for slot in plan.slots { appendParameters(slot, insert.values, to: &parameters, resolve: resolve) }
            statements.append(PostgreSQLStatement(sql: plan.sql, parameters: parameters))
        }
        try connection.executeAll(statements + after)
    }

    /// An entity's `INSERT` and the properties it binds, in order.
    private struct InsertPlan {
        var sql: String
        var number: Int64
        var slots: [SQLiteStore.InsertSlot] = []
        var parameterCount = 3

        init(_ entity: NSEntityDescription, schema: SQLiteSchema) {
            let storage = schema.storage(of: entity)
            number = Int64(storage.number)
            var columns = [PostgreSQLStore.pk, PostgreSQLStore.ent, PostgreSQLStore.opt]
            for index in entity.layout.rowIndexes {
                guard let column = storage.columns[index] else { continue }
                let slot = SQLiteStore.InsertSlot(property: entity.layout.properties[index], storage: storage)
                if let entityColumn = slot.entityColumn { columns.append(entityColumn) }
                columns.append(column)
                slots.append(slot)
            }
            parameterCount = columns.count
            let placeholders = (1...columns.count).map { "$\($0)" }.joined(separator: ", ")
            sql = "INSERT INTO \(storage.table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))"
        }
    }
}
