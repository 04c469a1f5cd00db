import Foundation

// The PostgreSQL store's reads: fetches (rows, IDs, keys, counts), faults, rows by keys
// (batches and prefetching) and to-many relationships, each one statement on the store's
// connection. Queries are compiled in the PostgreSQL dialect; values come back as text and are
// decoded here by the SQLite store's row plans (which column holds which property).
extension PostgreSQLStore {
    /// `t0."Z_PK"`-style names of the fixed columns.
    static let pk = "\"Z_PK\"", ent = "\"Z_ENT\"", opt = "\"Z_OPT\""

    /// The SQL (with `$n` placeholders) and parameters of a plan's query, selecting `columns`.
    func query(_ plan: FetchPlan, columns: String, countOnly: Bool = false) throws -> (String, [PostgreSQLParameter]) {
        var compiler = PredicateSQLCompiler(entity: plan.entity, schema: schema, dialect: .postgreSQL, store: self)
        var conditions: [String] = []
        var bindings: [StoreValue] = []
        let entities = schema.entityCondition(of: plan.entity, includingSubentities: plan.includesSubentities)
        if !entities.coversFamily {
            let numbers = schema.numbers(of: plan.entity, includingSubentities: plan.includesSubentities)
            conditions.append("t0.\(Self.ent) IN (" + numbers.map(String.init).joined(separator: ", ") + ")")
        }
        if let predicate = plan.predicate {
            let fragment = try compiler.compile(predicate)
            conditions.append("(" + PredicateSQLCompiler.Dialect.postgreSQL.condition(fragment.sql) + ")")
            bindings.append(contentsOf: fragment.bindings)
        }
        var order: [String] = []
        if !countOnly {
            for key in plan.sortKeys {
                let fragment = try compiler.orderBy(key)
                order.append(fragment.sql)
                bindings.append(contentsOf: fragment.bindings)
            }
            order.append("t0.\(Self.pk)")
        }
        var sql = "SELECT \(columns) FROM \(schema.table(of: plan.entity)) t0"
        if !compiler.joins.isEmpty { sql += " " + compiler.joins.joined(separator: " ") }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        if !countOnly { sql += Self.limit(plan) }
        return (PredicateSQLCompiler.Dialect.numberedParameters(sql), bindings.map(parameter))
    }

    /// ` LIMIT n OFFSET m` of a plan (empty without them).
    static func limit(_ plan: FetchPlan) -> String {
        (plan.limit > 0 ? " LIMIT \(plan.limit)" : "") + (plan.offset > 0 ? " OFFSET \(plan.offset)" : "")
    }

    /// Runs a read, mapping a failure to a Core Data error (134070) with the server's cause
    /// (`canRunAgain`: ``withReader(runningAgainIf:_:)``).
    func read<T>(runningAgainIf canRunAgain: () -> Bool = { true }, _ body: (any PostgreSQLConnection) throws -> T) throws -> T {
        do {
            return try withReader(runningAgainIf: canRunAgain, body)
        } catch let error as PostgreSQLError {
            throw Self.error(error, .persistentStoreOperation, "Can't read from the PostgreSQL store at \(location)")
        }
    }

    /// A fetch's rows lent one by one to `body` (the context's hot path) as they arrive: each
    /// is decoded, and its object made, while the server sends the next ones.
    func selectRows(_ plan: FetchPlan, each body: (consuming LentRow) throws -> Void) throws {
        let decoder = decoders[plan.entity.layout.rootNumber]!
        let (sql, parameters) = try query(plan, columns: decoder.selectList)
        let plans = decoder.plans // read once, not once a row
        // Once rows were lent, a lost session can't be read again on a new one: the failure is
        // the fetch's (the lost session is still discarded, and a generation's rolled back to
        // its savepoint after a server's error, as for any read).
        var lent = false
        try read(runningAgainIf: { !lent }) { connection in
            try connection.execute(sql, parameters) { rows in
                lent = true
                try lendRows(rows, plans: plans) { _, row in try body(row) }
            }
        }
    }

    func selectRows(_ plan: FetchPlan) throws -> [FetchedRow] {
        var result: [FetchedRow] = []
        try selectRows(plan) { row in result.append(row.fetchedRow) }
        return result
    }

    func selectIDs(_ plan: FetchPlan) throws -> [NSManagedObjectID] {
        try selectKeys(plan).map { NSManagedObjectID(entity: $0.entity, store: self, primaryKey: $0.primaryKey) }
    }

    func selectKeys(_ plan: FetchPlan) throws -> [FetchedKey] {
        let (sql, parameters) = try query(plan, columns: "t0.\(Self.pk), t0.\(Self.ent)")
        return try read { connection in readKeys(try connection.execute(sql, parameters)) }
    }

    func selectCount(_ plan: FetchPlan) throws -> Int {
        var inner = plan
        inner.sortKeys = []
        let (sql, parameters) = try query(inner, columns: "t0.\(Self.pk)", countOnly: true)
        return try read { connection in
            Int(try connection.execute("SELECT count(*) FROM (\(sql)\(Self.limit(plan))) counted", parameters).int64(0, 0))
        }
    }

    func selectRow(for id: NSManagedObjectID) throws -> RowSnapshot? {
        guard let pk = id.primaryKey else { return nil }
        return try read { connection in try readRow(id.entity, pk, on: connection) }
    }

    /// The row of `entity`'s table with key `pk`, on `connection` (inside a save, too).
    func readRow(_ entity: NSEntityDescription, _ pk: Int64, on connection: any PostgreSQLConnection) throws -> RowSnapshot? {
        let decoder = decoders[entity.layout.rootNumber]!
        let rows = try connection.execute("SELECT \(decoder.selectList) FROM \(schema.table(of: entity)) t0 WHERE t0.\(Self.pk) = $1", [.int(pk)])
        return try decodeRows(rows, decoder: decoder).first?.snapshot
    }

    func selectRows(primaryKeys: [Int64], root: NSEntityDescription) throws -> [FetchedRow] {
        let decoder = decoders[root.layout.rootNumber]!
        return try read { connection in
            var result: [FetchedRow] = []
            try Self.forEachChunk(of: primaryKeys) { list, parameters in
                let sql = "SELECT \(decoder.selectList) FROM \(schema.table(of: root)) t0 WHERE t0.\(Self.pk) IN (\(list))"
                result += try decodeRows(try connection.execute(sql, parameters), decoder: decoder)
            }
            return result
        }
    }

    func selectRelatedIDs(for relationship: NSRelationshipDescription, of id: NSManagedObjectID) throws -> [NSManagedObjectID] {
        guard let pk = id.primaryKey, let query = schema.relatedIDsQuery(relationship, key: Self.pk, entity: Self.ent) else { return [] }
        let sql = PredicateSQLCompiler.Dialect.numberedParameters(query)
        return try read { connection in
            readKeys(try connection.execute(sql, [.int(pk)])).map { NSManagedObjectID(entity: $0.entity, store: self, primaryKey: $0.primaryKey) }
        }
    }

    func selectRelatedRows(for relationship: NSRelationshipDescription, owners: [Int64]) throws -> [RelatedRow] {
        guard let destination = relationship.destinationEntity else { return [] }
        let decoder = decoders[destination.layout.rootNumber]!
        guard let (from, ownerColumn, order) = schema.relatedRowsSource(relationship, key: Self.pk) else { return [] }
        return try read { connection in
            var result: [RelatedRow] = []
            try Self.forEachChunk(of: owners) { list, parameters in
                let sql = "SELECT \(decoder.selectList), \(ownerColumn) FROM \(from) WHERE \(ownerColumn) IN (\(list)) ORDER BY \(ownerColumn), \(order)t0.\(Self.pk)"
                let rows = try connection.execute(sql, parameters)
                lendRows(rows, plans: decoder.plans) { index, row in
                    result.append(RelatedRow(owner: rows.int64(index, decoder.columnCount), row: row.fetchedRow))
                }
            }
            return result
        }
    }

    /// The most keys bound to one statement (PostgreSQL allows 65,535 parameters).
    static let maximumKeysPerStatement = 8192

    /// Calls `body` with `$1, $2, …` and the keys for each chunk of `keys`, padded to a power of
    /// two (the last key repeated) so that the connection prepares a few statements, not one
    /// per list length.
    static func forEachChunk(of keys: [Int64], _ body: (String, [PostgreSQLParameter]) throws -> Void) throws {
        var start = 0
        while start < keys.count {
            let end = min(start + maximumKeysPerStatement, keys.count)
            var size = 8
            while size < end - start { size *= 2 }
            var parameters = keys[start..<end].map(PostgreSQLParameter.int)
            parameters += repeatElement(.int(keys[end - 1]), count: size - parameters.count)
            try body((1...size).map { "$\($0)" }.joined(separator: ", "), parameters)
            start = end
        }
    }

    // MARK: Decoding

    /// The entities and keys of rows selecting `Z_PK, Z_ENT` (rows of entities the model lacks are skipped).
    func readKeys(_ rows: any PostgreSQLRows) -> [FetchedKey] {
        (0..<rows.count).compactMap { row in
            schema.entity(numbered: rows.int64(row, 1)).map { FetchedKey(entity: $0, primaryKey: rows.int64(row, 0)) }
        }
    }

    /// The rows of a query selecting `decoder.selectList` first.
    func decodeRows(_ rows: any PostgreSQLRows, decoder: SQLiteRowDecoder) throws -> [FetchedRow] {
        var result: [FetchedRow] = []
        result.reserveCapacity(rows.count)
        lendRows(rows, plans: decoder.plans) { _, row in result.append(row.fetchedRow) }
        return result
    }

    /// Lends each row of a query selecting a decoder's `selectList` first to `body`, with its
    /// index in `rows`, decoded by the decoder's `plans` (see ``LentRow``: valid while the
    /// decoder is); rows of entities outside the family are skipped. The one decoding path of
    /// every read.
    @inline(__always)
    func lendRows(_ rows: any PostgreSQLRows, plans: [SQLiteRowDecoder.Plan?], to body: (Int, consuming LentRow) throws -> Void) rethrows {
        try plans.withUnsafeBufferPointer { buffer in
            // Each plan read without a retain and release (as the SQLite store's `lendRow`):
            // `Plan?` and `Unmanaged<Plan>?` have the same layout (a pointer, 0 for nil).
            try buffer.withMemoryRebound(to: Unmanaged<SQLiteRowDecoder.Plan>?.self) { plans in
                for row in 0..<rows.count {
                    let number = Int(rows.int64(row, 1))
                    guard number >= 0, number < plans.count else { continue }
                    try plans[number]?._withUnsafeGuaranteedRef { plan in
                        try body(row, LentRow(store: self, entity: plan.entity, primaryKey: rows.int64(row, 0),
                                              values: decodeValues(rows, row, plan), version: rows.int64(row, 2)))
                    }
                }
            }
        }
    }

    /// The values of `row` by property index, as `plan` decodes them; written in place over
    /// the `.null`s a new buffer starts with (as the SQLite store's `decodeValues`).
    @inline(__always)
    func decodeValues(_ rows: any PostgreSQLRows, _ row: Int, _ plan: SQLiteRowDecoder.Plan) -> PropertyValues {
        if plan.slots.isEmpty { return PropertyValues(nullsOf: plan.shape) }
        let storage = plan.shape.newNulls()
        let writer = PropertyValues.Initializer(storage)
        for slot in plan.slots {
            let column = Int(slot.column)
            if case .int = slot.kind {
                // One call per integer column: NULL reads as 0, so only then is it checked.
                let value = rows.int64(row, column)
                if value != 0 || !rows.isNull(row, column) { writer.initializeInt64(value, at: slot.index) }
                continue
            }
            if rows.isNull(row, column) { continue }
            writer.initialize(value(slot, rows, row), at: slot.index)
        }
        return PropertyValues(consume storage)
    }

    /// The value of a non-NULL column in its property's storage form (`.null` if unreadable).
    func value(_ slot: SQLiteRowDecoder.Slot, _ rows: any PostgreSQLRows, _ row: Int) -> StoreValue {
        let column = Int(slot.column)
        switch slot.kind {
        case .int: return .int(rows.int64(row, column))
        case .bool: return .bool(rows.int64(row, column) != 0)
        case .double: return .double(rows.double(row, column))
        case .decimal: return Decimal(storedText: rows.text(row, column)).map(StoreValue.decimal) ?? .null
        case .string: return .string(rows.text(row, column))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: rows.double(row, column)))
        case .data, .externalData: return .data(rows.bytes(row, column))
        case .uuid: return UUID(storedBytes: rows.bytes(row, column)).map(StoreValue.uuid) ?? .null
        case .url: return URL(string: rows.text(row, column)).map(StoreValue.url) ?? .null
        case .objectIDAttribute:
            guard let url = URL(string: rows.text(row, column)), let id = persistentStoreCoordinator?.managedObjectID(forURIRepresentation: url) else { return .null }
            return .objectID(id)
        case .toOne(let destination):
            var target = destination
            let entityColumn = Int(slot.entityColumn)
            if entityColumn >= 0, !rows.isNull(row, entityColumn), let exact = schema.entity(numbered: rows.int64(row, entityColumn)) {
                target = exact
            }
            return .objectID(NSManagedObjectID(entity: target, store: self, primaryKey: rows.int64(row, column)))
        }
    }

    /// A value as a statement parameter: Booleans as 0/1, dates as seconds since 2001-01-01,
    /// UUIDs as their 16 bytes, URLs as text, decimals as `numeric`, to-ones as their key.
    func parameter(_ value: StoreValue) -> PostgreSQLParameter { Self.parameter(value) }

    /// A value as a statement parameter (see the instance method).
    static func parameter(_ value: StoreValue) -> PostgreSQLParameter {
        switch value {
        case .null, .object: return .null // an object is transformed before it is saved
        case .int(let v): return .int(v)
        case .bool(let v): return .int(v ? 1 : 0)
        case .double(let v): return .double(v)
        case .string(let v): return .text(v)
        case .date(let v): return .double(v.timeIntervalSinceReferenceDate)
        case .data(let v): return .bytes(v)
        case .uuid(let v): return .bytes(withUnsafeBytes(of: v.uuid) { Data($0) })
        case .url(let v): return .text(v.absoluteString)
        case .decimal(let v): return .numeric(v.isNaN ? "NaN" : v.description)
        case .objectID(let id): return id.primaryKey.map(PostgreSQLParameter.int) ?? .null
        }
    }
}
