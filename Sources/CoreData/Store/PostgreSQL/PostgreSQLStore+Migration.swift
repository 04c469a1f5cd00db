import Foundation

// Lightweight migration of a PostgreSQL store: the SQLite store's in-place migration
// (`Migration/SQLiteLightweightMigration.swift`: the same plan, rows, keys and `Z_ENT` numbers)
// run as transactional DDL in the opening's transaction, under its advisory lock. A store written
// with another model is migrated when `NSMigratePersistentStoresAutomaticallyOption` and
// `NSInferMappingModelAutomaticallyOption` are set: tables kept in place change with
// `ALTER TABLE`, the others are rebuilt and their rows copied, then the indexes, `Z_PRIMARYKEY`
// and the metadata are a new store's. Anything that fails rolls all of it back; a second server
// opening the store meanwhile waits for the lock, then finds the store migrated and opens it.
// The DDL waits for the tables' locks no longer than `NSPersistentStoreTimeoutOption`
// (``PostgreSQLTimeouts``): a session reading a table (another server's pinned query generation,
// a long read) holds a lock that `ALTER TABLE` waits for, and every statement of every server on
// that table would queue behind the waiting migration. A staged migration manager
// (`NSPersistentStoreStagedMigrationManagerOptionKey`) is run by the coordinator instead, one step
// per version, each in a transaction of its own (``migrateStage(at:options:from:to:)``).

extension PostgreSQLStore {
    /// The metadata of the store in the database, read in the opening's transaction on
    /// `connection`, after migrating the store to `model` if another model wrote it and the
    /// options ask for it (134100 if they don't); 134110 if a table it changes stays locked by
    /// another session longer than `NSPersistentStoreTimeoutOption`.
    func compatibleMetadata(on connection: any PostgreSQLConnection, model: NSManagedObjectModel) throws -> [String: Any] {
        let metadata = try Self.readMetadata(connection, location: location)
        do {
            try SQLiteStore.checkCompatibility(metadata, model: model, type: NSPostgreSQLStoreType, location: location,
                                               ignoringVersions: flag(NSIgnorePersistentStoreVersioningOption))
            return metadata
        } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreIncompatibleVersionHashError {
            // A staged migration manager takes over: the coordinator runs it once this 134100 is thrown.
            guard !isReadOnly, flag(NSMigratePersistentStoresAutomaticallyOption),
                  options?[NSPersistentStoreStagedMigrationManagerOptionKey] == nil else { throw error }
            guard let source = ModelSearch.sourceModel(forStoreMetadata: metadata, destination: model) else {
                throw SQLiteLightweightMigration.missingSourceModel(location, metadata)
            }
            // A mapping model the app ships for the two versions: the coordinator runs it
            // (`PostgreSQLHeavyweightMigration.swift`) once this 134100 is thrown.
            if NSMappingModel(from: nil, forSourceModel: source, destinationModel: model) != nil { throw error }
            try Self.withLockTimeout(on: connection, options: options, location: location) {
                try migrate(on: connection, metadata: metadata, from: source, to: model)
            }
            return try Self.readMetadata(connection, location: location)
        }
    }

    /// Runs `body`, a migration in `connection`'s transaction, waiting for the tables' locks no
    /// longer than the store's timeout (`NSPersistentStoreTimeoutOption`): 134110 if one stays
    /// locked longer.
    static func withLockTimeout(on connection: any PostgreSQLConnection, options: [AnyHashable: Any]?, location: String,
                                        _ body: () throws -> Void) throws {
        let timeouts = PostgreSQLTimeouts(options: options)
        try connection.run(timeouts.lockTimeoutSetting)
        do {
            try body()
        } catch let error as PostgreSQLError where error.sqlState == PostgreSQLTimeouts.lockNotAvailable {
            throw Self.error(error, .migration, "Can't migrate the PostgreSQL store at \(location): a table it changes stayed "
                + "locked by another session (a read, a query generation or a save of another server) for longer than the "
                + "store's timeout (NSPersistentStoreTimeoutOption, \(timeouts.lockTimeout) ms); the store was left untouched")
        }
    }

    /// One step of a staged migration (``NSStagedMigrationManager``): in one transaction, under
    /// the lock that orders the openings of stores in the database, the store at `url` becomes a
    /// store of `destination`, from `source`. Nothing changes when another server already took
    /// the step; 134110 when the store is of neither version (another server migrated it
    /// elsewhere meanwhile). A failure leaves the store as it was.
    static func migrateStage(at url: URL, options: [AnyHashable: Any]?, from source: NSManagedObjectModel,
                             to destination: NSManagedObjectModel) throws {
        let location = location(of: url)
        let connection = try connect(url, options: options)
        defer { connection.close() }
        do {
            try connection.transaction {
                try takeOpeningLock(on: connection, options: options)
                let metadata = try readMetadata(connection, location: location)
                if destination.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { return }
                guard source.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) else {
                    throw CoreDataError.make(.migration,
                        "Can't run a stage of the staged migration of the PostgreSQL store at \(location): another server changed the store's model version while it ran; the store was left as that server left it")
                }
                try withLockTimeout(on: connection, options: options, location: location) {
                    try migrate(on: connection, from: source, to: destination, metadata: metadata)
                }
            }
        } catch let error as PostgreSQLError {
            throw Self.error(error, .migration, "Can't migrate the PostgreSQL store at \(location); the store was left untouched")
        }
    }

    /// Migrates the store from `source` through the inferred mapping if the options allow it
    /// (134140 if they don't, or if none can be inferred).
    private func migrate(on connection: any PostgreSQLConnection, metadata: [String: Any], from source: NSManagedObjectModel,
                         to destination: NSManagedObjectModel) throws {
        let location = location
        guard flag(NSInferMappingModelAutomaticallyOption) else {
            throw SQLiteLightweightMigration.missingMappingModel(location, source: source, destination: destination, inference: nil)
        }
        // A child of the caller's current `Progress`, as the SQLite store's migration reports.
        let progress = Progress(totalUnitCount: 1)
        progress.isCancellable = false
        do {
            try Self.migrate(on: connection, from: source, to: destination, metadata: metadata, progress: progress)
        } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code == NSInferredMappingModelError {
            throw SQLiteLightweightMigration.missingMappingModel(location, source: source, destination: destination, inference: error)
        }
    }

    /// Migrates the store in `connection`'s transaction from `source` (the model that wrote it)
    /// to `destination` through the inferred mapping (134190 if there is none), `metadata` the
    /// store's; rows that break a uniqueness constraint of `destination` are 134111. `progress`
    /// gets one unit per step (``SQLiteLightweightMigration/run(metadata:progress:)``).
    static func migrate(on connection: any PostgreSQLConnection, from source: NSManagedObjectModel, to destination: NSManagedObjectModel,
                        metadata: [String: Any], progress: Progress? = nil) throws {
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
        let database = PostgreSQLMigrationDatabase(connection: connection)
        do {
            try SQLiteLightweightMigration(database: database, layout: SQLiteSchema(model: source), source: source,
                                           destination: destination, mapping: mapping).run(metadata: metadata, progress: progress)
        } catch let error as PostgreSQLError where error.sqlState == "23505" {
            throw CoreDataError.make(.migrationConstraintViolation,
                "Can't migrate the store: its rows break a uniqueness constraint of the destination model (\(error.message)); the store was left untouched",
                extra: [NSPostgreSQLMessageErrorKey: error.message, NSPostgreSQLStateErrorKey: "23505"])
        }
    }
}

/// A PostgreSQL store's database under lightweight migration: the catalog from `pg_catalog`, the
/// DDL and indexes of ``PostgreSQLLayout``, `?` placeholders numbered `$1…$n`.
internal struct PostgreSQLMigrationDatabase: LightweightMigrationDatabase {
    let connection: any PostgreSQLConnection

    /// Binary data is kept in the row, external storage or not: nothing to rewrite.
    func externalStorageConversion(_ column: String, wasExternal: Bool) -> String? { nil }

    func execute(_ sql: String, _ bindings: [StoreValue]) throws {
        _ = try connection.execute(Self.numbered(sql), bindings.map(PostgreSQLStore.parameter))
    }

    func scalarInt(_ sql: String, _ bindings: [StoreValue]) throws -> Int64? {
        let rows = try connection.execute(Self.numbered(sql), bindings.map(PostgreSQLStore.parameter))
        return rows.count > 0 && !rows.isNull(0, 0) ? rows.int64(0, 0) : nil
    }

    func tableNames() throws -> [String] {
        try texts("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()", [])
    }

    func columns(of table: String) throws -> [String] {
        try texts("SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                  [.text(SQLiteSchema.quoted(table))])
    }

    func columnType(_ column: SQLiteSchema.Column, of table: SQLiteSchema.Table, in schema: SQLiteSchema) -> String {
        PostgreSQLLayout(schema: schema).columnType(column, of: table)
    }

    func createStatement(_ table: SQLiteSchema.Table, in schema: SQLiteSchema) -> String {
        PostgreSQLLayout(schema: schema).createStatement(table)
    }

    func createStatement(_ join: SQLiteSchema.JoinTableSpec) -> String { PostgreSQLLayout.createStatement(join) }

    /// A number made a Boolean is 0 or 1 (`value <> 0`); a Double, Float or Decimal made an
    /// integer is truncated toward zero, as the SQLite store's migration does; a Double made a
    /// Decimal keeps its shortest exact decimal digits; otherwise a cast
    /// to the new column type (every integer type is `bigint`'s range or less, so a value out
    /// of the new type's range fails the migration, which leaves the store as it was).
    func conversion(_ column: String, from: NSAttributeType, to: NSAttributeType) -> String? {
        let value = "s." + SQLiteSchema.quoted(column)
        if to == .booleanAttributeType && from != .booleanAttributeType {
            return "CAST(CAST(\(value) AS double precision) <> 0 AS integer)"
        }
        let (old, new) = (PostgreSQLLayout.type(of: from), PostgreSQLLayout.type(of: to))
        guard old != new else { return nil }
        let truncated = ["double precision", "numeric"].contains(old) && ["smallint", "integer", "bigint"].contains(new)
        // A double made a decimal through its shortest exact text (PostgreSQL's output since
        // version 12), as the SQLite store reads a double as a decimal: a direct cast keeps 15
        // digits (1234567.8901234567 became 1234567.89012346).
        if old == "double precision" && new == "numeric" { return "CAST(CAST(\(value) AS text) AS numeric)" }
        return "CAST(\(truncated ? "trunc(\(value))" : value) AS \(new))"
    }

    /// Drops every index of the old tables but their primary keys (PostgreSQL names indexes per
    /// schema, and the rebuilt tables take the old names); ``createIndexes(of:)`` makes them all anew.
    func dropIndexes(ofTables managed: Set<String>, kept: Set<String>, destination: SQLiteSchema) throws {
        for table in try tableNames() where managed.contains(table.uppercased()) {
            for index in try texts("""
                SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
                WHERE x.indrelid = to_regclass($1) AND NOT x.indisprimary ORDER BY i.relname
                """, [.text(SQLiteSchema.quoted(table))]) {
                try connection.run("DROP INDEX \(SQLiteSchema.quoted(index))")
            }
        }
    }

    /// Renames the table and its primary key's index, whose name the new table takes.
    func setAside(_ name: String, as aside: String) throws {
        try connection.run("ALTER TABLE \(SQLiteSchema.quoted(name)) RENAME TO \(SQLiteSchema.quoted(aside))")
        for key in try texts("SELECT conname FROM pg_constraint WHERE conrelid = to_regclass($1) AND contype = 'p'", [.text(SQLiteSchema.quoted(aside))]) {
            try connection.run("ALTER TABLE \(SQLiteSchema.quoted(aside)) RENAME CONSTRAINT \(SQLiteSchema.quoted(key)) TO \(SQLiteSchema.quoted(aside + "_pkey"))")
        }
    }

    func createIndexes(of destination: SQLiteSchema) throws {
        for sql in PostgreSQLLayout(schema: destination).indexStatements { try connection.run(sql) }
    }

    /// Writes the migrated store's metadata, and its new generation: coordinators that opened it
    /// before write nothing more (``PostgreSQLStoreGeneration``).
    func writeMetadata(_ metadata: [String: Any], of destination: NSManagedObjectModel) throws {
        let uuid = metadata[NSStoreUUIDKey] as? String ?? UUID().uuidString
        var updated = metadata
        for (key, value) in PostgreSQLStore.makeMetadata(model: destination, uuid: uuid) { updated[key] = value }
        try PostgreSQLStore.writeMetadata(updated, uuid: uuid, on: connection)
        try PostgreSQLStoreGeneration.renew(on: connection)
    }

    /// The first column of each row of `sql`, as text.
    private func texts(_ sql: String, _ parameters: [PostgreSQLParameter]) throws -> [String] {
        let rows = try connection.execute(sql, parameters)
        return (0..<rows.count).map { rows.text($0, 0) }
    }

    /// `sql` with its `?` placeholders numbered `$1…$n` (none is inside a quoted name or literal).
    static func numbered(_ sql: String) -> String {
        var result = "", count = 0, quote: Character?
        for character in sql {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "?" {
                count += 1
                result += "$\(count)"
                continue
            }
            result.append(character)
        }
        return result
    }
}
