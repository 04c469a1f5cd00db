import Foundation

/// The database an in-place lightweight migration (``SQLiteLightweightMigration``) rewrites, and
/// what differs between its SQL dialects: a SQLite file (``SQLiteMigrationDatabase``) or a
/// PostgreSQL database (`PostgreSQLMigrationDatabase`). The migration's own statements use `?`
/// placeholders and quoted names, which both read alike; everything else (the catalog, column
/// types, DDL, indexes, metadata) is asked of the database. All of it runs inside the caller's
/// transaction.
internal protocol LightweightMigrationDatabase {
    /// Runs one statement, `bindings` bound to its `?` placeholders in order.
    func execute(_ sql: String, _ bindings: [StoreValue]) throws
    /// The first column of the first row of a query, or `nil` (no row, or `NULL`).
    func scalarInt(_ sql: String, _ bindings: [StoreValue]) throws -> Int64?
    /// The names of the database's tables.
    func tableNames() throws -> [String]
    /// The column names of `table` (unquoted), in order.
    func columns(of table: String) throws -> [String]
    /// The type an added column of `table` gets (`ALTER TABLE … ADD COLUMN`).
    func columnType(_ column: SQLiteSchema.Column, of table: SQLiteSchema.Table, in schema: SQLiteSchema) -> String
    /// The DDL that makes `table` as a new store of `schema`'s model has it.
    func createStatement(_ table: SQLiteSchema.Table, in schema: SQLiteSchema) -> String
    /// The DDL that makes the join table `join` as a new store has it.
    func createStatement(_ join: SQLiteSchema.JoinTableSpec) -> String
    /// The SQL converting the source row's (`s`) `column` of an attribute of type `from` into
    /// the storage of type `to`, or `nil` when the two are stored alike.
    func conversion(_ column: String, from: NSAttributeType, to: NSAttributeType) -> String?
    /// The SQL rewriting the source row's `column` of an attribute whose external storage was
    /// turned off (`wasExternal`) or on, or `nil` when the database keeps both alike.
    func externalStorageConversion(_ column: String, wasExternal: Bool) -> String?
    /// Drops the indexes of the model's old tables (`managed`, upper-cased names) that the new
    /// layout `destination` lacks, or whose tables are about to be replaced (not in `kept`).
    func dropIndexes(ofTables managed: Set<String>, kept: Set<String>, destination: SQLiteSchema) throws
    /// Renames the old table `name` to `aside`, where the copies read it before it is dropped.
    func setAside(_ name: String, as aside: String) throws
    /// Makes the indexes of a new store of `destination` that are missing.
    func createIndexes(of destination: SQLiteSchema) throws
    /// Writes the migrated store's metadata: the store's own keys and UUID from `metadata`, the
    /// model keys of `destination`.
    func writeMetadata(_ metadata: [String: Any], of destination: NSManagedObjectModel) throws
}

/// A SQLite file under lightweight migration.
internal struct SQLiteMigrationDatabase: LightweightMigrationDatabase {
    let db: SQLiteConnection

    /// A `DROP COLUMN` that SQLite refuses because a trigger names the column (Apple's derived
    /// attributes are triggers, `Z_DA_…`, in stores its framework wrote) drops that trigger, as
    /// rebuilding the table would, and runs again: only the triggers SQLite names go.
    func execute(_ sql: String, _ bindings: [StoreValue]) throws {
        var dropped: Set<String> = []
        while true {
            do {
                let statement = try db.prepare(sql)
                defer { statement.finalize() }
                for (offset, value) in bindings.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
                _ = try statement.step()
                return
            } catch let error as NSError {
                guard sql.hasPrefix("ALTER TABLE "), sql.contains(" DROP COLUMN "),
                      let trigger = Self.blockingTrigger(error.localizedDescription), dropped.insert(trigger).inserted else { throw error }
                CoreDataLog.warning("Lightweight migration drops the trigger \(trigger): it names a column the new model no longer has (\(sql))")
                try db.execute("DROP TRIGGER \(SQLiteSchema.quoted(trigger))")
            }
        }
    }

    /// The trigger SQLite's message names when a trigger blocks `DROP COLUMN`: "error in trigger
    /// <name> after drop column: no such column: …".
    static func blockingTrigger(_ message: String) -> String? {
        guard let start = message.range(of: "error in trigger "),
              let end = message.range(of: " after drop column", range: start.upperBound..<message.endIndex) else { return nil }
        return String(message[start.upperBound..<end.lowerBound])
    }

    func scalarInt(_ sql: String, _ bindings: [StoreValue]) throws -> Int64? {
        let statement = try db.prepare(sql)
        defer { statement.finalize() }
        for (offset, value) in bindings.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
        return try statement.step() && !statement.isNull(0) ? statement.int64(0) : nil
    }

    func tableNames() throws -> [String] {
        try strings("SELECT name FROM sqlite_master WHERE type = 'table'").map { $0[0] }
    }

    func columns(of table: String) throws -> [String] {
        try strings("PRAGMA table_info(\(SQLiteSchema.quoted(table)))", width: 2).map { $0[1] }
    }

    func columnType(_ column: SQLiteSchema.Column, of table: SQLiteSchema.Table, in schema: SQLiteSchema) -> String { column.type }

    func createStatement(_ table: SQLiteSchema.Table, in schema: SQLiteSchema) -> String { SQLiteSchema.createStatement(table) }

    func createStatement(_ join: SQLiteSchema.JoinTableSpec) -> String { SQLiteSchema.createStatement(join) }

    /// A number made a Boolean is `value != 0`; a Double, Float or Decimal made an integer is
    /// truncated toward zero (as `NSNumber.int64Value` does); a `DECIMAL` column (numeric
    /// affinity) keeps integers and reals as they are, and the store reads both back as decimals.
    func conversion(_ column: String, from: NSAttributeType, to: NSAttributeType) -> String? {
        let value = "s." + SQLiteSchema.quoted(column)
        if to == .booleanAttributeType && from != .booleanAttributeType { return "(CAST(\(value) AS REAL) <> 0)" }
        let type = SQLiteSchema.sqlType(to)
        guard type != SQLiteSchema.sqlType(from) else { return nil }
        switch type {
        case "INTEGER": return "CAST(\(value) AS INTEGER)"
        case "FLOAT": return "CAST(\(value) AS REAL)"
        default: return value
        }
    }

    /// Apple's marker before the bytes, or the bytes alone (`ExternalDataMigration.swift`).
    func externalStorageConversion(_ column: String, wasExternal: Bool) -> String? {
        ExternalDataMigration.conversion(column, wasExternal: wasExternal, storePath: db.path)
    }

    /// Compares the indexes' SQL (SQLite keeps it as written) with the new layout's.
    func dropIndexes(ofTables managed: Set<String>, kept: Set<String>, destination: SQLiteSchema) throws {
        let wanted = Set(Self.indexes(of: destination).map(Self.normalized))
        for index in try strings("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL", width: 3)
        where managed.contains(index[1].uppercased()) && (!kept.contains(index[1].uppercased()) || !wanted.contains(Self.normalized(index[2]))) {
            try db.execute("DROP INDEX \(SQLiteSchema.quoted(index[0]))")
        }
    }

    func setAside(_ name: String, as aside: String) throws {
        try db.execute("ALTER TABLE \(SQLiteSchema.quoted(name)) RENAME TO \(SQLiteSchema.quoted(aside))")
    }

    func createIndexes(of destination: SQLiteSchema) throws {
        for sql in Self.indexes(of: destination) { try db.execute(sql) }
    }

    func writeMetadata(_ metadata: [String: Any], of destination: NSManagedObjectModel) throws {
        try SQLiteLightweightMigration.writeMetadata(metadata, of: destination, to: db)
    }

    private static func indexes(of schema: SQLiteSchema) -> [String] {
        schema.joinTables.map(SQLiteSchema.indexStatement) + schema.indexes
    }

    /// An index's SQL without `IF NOT EXISTS` and with single spaces, for comparing.
    private static func normalized(_ sql: String) -> String {
        sql.replacingOccurrences(of: "IF NOT EXISTS ", with: "").split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The first `width` columns of each row of `sql`, as text.
    private func strings(_ sql: String, width: Int = 1) throws -> [[String]] {
        let statement = try db.prepare(sql)
        defer { statement.finalize() }
        var rows: [[String]] = []
        while try statement.step() { rows.append((0..<width).map { statement.string(Int32($0)) }) }
        return rows
    }
}
