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
    /// The names of the triggers that name one of `columns` of `table`, which an in-place
    /// migration drops: SQLite refuses `DROP COLUMN` while a trigger names the column (Apple's
    /// derived attributes are triggers, `Z_DA_…`, in stores Apple's framework wrote).
    func triggers(naming columns: [String], of table: String) throws -> [String]
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

    func execute(_ sql: String, _ bindings: [StoreValue]) throws {
        let statement = try db.prepare(sql)
        defer { statement.finalize() }
        for (offset, value) in bindings.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
        _ = try statement.step()
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

    /// Those on `table`, and those elsewhere whose SQL names the table, whose SQL names a column
    /// as a whole word (in any case, quoted or not).
    func triggers(naming columns: [String], of table: String) throws -> [String] {
        let wanted = Set(columns.map { $0.uppercased() })
        let tableName = table.uppercased()
        return try strings("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' AND sql IS NOT NULL", width: 3)
            .filter { trigger in
                let words = Self.words(trigger[2])
                return (trigger[1].uppercased() == tableName || words.contains(tableName)) && !words.isDisjoint(with: wanted)
            }
            .map { $0[0] }
    }

    /// The identifiers and keywords of `sql`, upper-cased.
    private static func words(_ sql: String) -> Set<String> {
        Set(sql.uppercased().split { !($0.isLetter || $0.isNumber || $0 == "_" || $0 == "$") }.map(String.init))
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
