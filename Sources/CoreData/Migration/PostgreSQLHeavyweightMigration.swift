import Foundation

// A heavyweight migration of a PostgreSQL store at open: the mapping model the app ships is run by
// an `NSMigrationManager` into a new store in a schema of its own in the same database, whose
// tables then take the store's place in one transaction. It is the SQLite store's heavyweight
// migration (`SQLiteHeavyweightMigration.swift`) with a schema where that one has a staging file.
//
// One session of its own holds, from start to end:
// - a session-level advisory lock (`PostgreSQLStore.migrationLockKey`): one such migration of the
//   database at a time, across servers; a second server waits, then finds the store migrated;
// - a transaction that locks every `Z…` table of the store in `EXCLUSIVE` mode: other servers go on
//   reading the old contents, and their saves wait (as for the SQLite store's write lock) for the
//   migration to end, no longer than their own `NSPersistentStoreTimeoutOption`.
//
// The manager reads the store through a read-only store of the source model and writes a new
// store, of the destination model, in the schema `cd_migration_<UUID>`, through the store's URL
// with `options=-csearch_path=…` (libpq's). Then, in the locking transaction, the store's `Z…`
// tables are dropped, the new schema's moved into the store's schema (`ALTER TABLE … SET SCHEMA`:
// rows and indexes move without a copy), and the metadata written (the store's UUID and its own
// keys kept). `COMMIT` is the migration. Persistent history's `A…` tables, and `Z_PRIMARYKEY`'s
// rows for them, stay as they are. A failure, or a process killed before `COMMIT`, leaves the
// store as it was; the new schema is dropped then, or by the next heavyweight migration.

internal enum PostgreSQLHeavyweightMigration {
    /// The prefix of the schemas new stores are written in.
    static let schemaPrefix = "cd_migration_"

    /// Migrates the store at `url` from `source` to `destination` through `mapping`; see the
    /// file's comment. `options` are the store's: the new store is made with them (less the
    /// migration, history and remote-change options). Does nothing when another server migrated
    /// the store meanwhile. `progress`, when given, follows the manager's
    /// ``NSMigrationManager/migrationProgress`` (a thousand units).
    static func migrateStore(at url: URL, options: [AnyHashable: Any]?, from source: NSManagedObjectModel,
                             to destination: NSManagedObjectModel, mapping: NSMappingModel, progress: Progress?) throws {
        let location = PostgreSQLStore.location(of: url)
        let session = try PostgreSQLStore.migrationSession(url, options: options)
        defer { session.close() } // (ends the session: its advisory lock goes with it)
        let schema = schemaPrefix + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        do {
            // Another server may have migrated the store while this one waited.
            if try isMigrated(session, to: destination, location) { return }
            try dropLeftoverSchemas(on: session)
            try session.run("CREATE SCHEMA \(SQLiteSchema.quoted(schema))")
            let migrated: Bool = try session.transaction {
                var migrated = false
                try PostgreSQLStore.withLockTimeout(on: session, options: options, location: location) {
                    // The store's schema: where its tables are found, as its statements find them.
                    let target = try names(#"SELECT c.relnamespace::regnamespace::text FROM pg_class c WHERE c.oid = to_regclass('"Z_METADATA"')"#, on: session)[0]
                    let tables = try storeTables(of: source, in: target, on: session)
                    let locked = tables.map { target + "." + SQLiteSchema.quoted($0) }.joined(separator: ", ")
                    try session.run("LOCK TABLE \(locked) IN EXCLUSIVE MODE")
                    let metadata = try PostgreSQLStore.readMetadata(session, location: location)
                    if destination.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { return }
                    guard source.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) else {
                        throw SQLiteLightweightMigration.missingSourceModel(location, metadata)
                    }
                    try write(url, in: schema, options: options, from: source, to: destination, mapping: mapping, progress: progress)
                    try lockForReplacing(locked, on: session, options: options)
                    try replaceTables(tables, in: target, with: schema, on: session)
                    // The store keeps its UUID and its own metadata keys (its objects are new: new keys).
                    try PostgreSQLMigrationDatabase(connection: session).writeMetadata(metadata, of: destination)
                    try session.run("DROP SCHEMA \(SQLiteSchema.quoted(schema)) CASCADE")
                    migrated = true
                }
                return migrated
            }
            if !migrated { try session.run("DROP SCHEMA IF EXISTS \(SQLiteSchema.quoted(schema)) CASCADE") }
        } catch {
            // The migration's own error is the one to report; a schema left goes at the next migration.
            try? session.run("DROP SCHEMA IF EXISTS \(SQLiteSchema.quoted(schema)) CASCADE")
            if error is PostgreSQLError {
                throw PostgreSQLStore.error(error, .migration, "Can't migrate the PostgreSQL store at \(location) with the app's mapping model; the store was left untouched")
            }
            throw error
        }
    }

    /// Whether the store already has `destination`'s version hashes (read outside a transaction).
    private static func isMigrated(_ session: any PostgreSQLConnection, to destination: NSManagedObjectModel, _ location: String) throws -> Bool {
        destination.isConfiguration(withName: nil, compatibleWithStoreMetadata: try PostgreSQLStore.readMetadata(session, location: location))
    }

    /// Runs the manager: the store at `url` read through a read-only store of `source`, a new store
    /// of `destination` written in `schema`.
    private static func write(_ url: URL, in schema: String, options: [AnyHashable: Any]?, from source: NSManagedObjectModel,
                              to destination: NSManagedObjectModel, mapping: NSMappingModel, progress: Progress?) throws {
        let manager = NSMigrationManager(sourceModel: source, destinationModel: destination)
        manager.progress = progress
        let migrationKeys: Set<AnyHashable> = [NSMigratePersistentStoresAutomaticallyOption, NSInferMappingModelAutomaticallyOption,
                                               NSPersistentStoreStagedMigrationManagerOptionKey, NSReadOnlyPersistentStoreOption]
        let storeOptions = (options ?? [:]).filter { !migrationKeys.contains($0.key) }
        // The new store records no history of its own (the store's history tables stay) and posts nothing.
        let newStoreOptions = storeOptions.filter {
            $0.key != AnyHashable(NSPersistentHistoryTrackingKey) && $0.key != AnyHashable(NSPersistentStoreRemoteChangeNotificationPostOptionKey)
        }
        try manager.migrateStore(from: url, sourceType: NSPostgreSQLStoreType, options: storeOptions, with: mapping,
                                 toDestinationURL: try schemaURL(url, schema), destinationType: NSPostgreSQLStoreType,
                                 destinationOptions: newStoreOptions)
    }

    /// `url` with libpq's `options` parameter setting the sessions' `search_path` to `schema`
    /// alone, so that a store opened there makes and reads its tables in it.
    static func schemaURL(_ url: URL, _ schema: String) throws -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw MigrationErrors.migration("The PostgreSQL store's URL can't be read as URL components")
        }
        var items = components.percentEncodedQueryItems ?? []
        let setting = "-csearch_path%3D" + schema
        if let index = items.firstIndex(where: { $0.name == "options" }) {
            items[index].value = (items[index].value.map { $0 + "%20" } ?? "") + setting
        } else {
            items.append(URLQueryItem(name: "options", value: setting))
        }
        components.percentEncodedQueryItems = items
        guard let result = components.url else { throw MigrationErrors.migration("The PostgreSQL store's URL can't take a search path") }
        return result
    }

    /// The store's tables in `schema` (a quoted name): those of `source`'s layout, its join tables,
    /// `Z_PRIMARYKEY`, `Z_METADATA` and `Z_MODELCACHE`, where they exist. An app's own tables, even
    /// named `Z…`, and persistent history's `A…` tables are not among them.
    private static func storeTables(of source: NSManagedObjectModel, in schema: String, on session: any PostgreSQLConnection) throws -> [String] {
        let layout = SQLiteSchema(model: source)
        let wanted = Set(layout.tables.map(\.name) + layout.joinTables.map(\.name) + ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"])
        let existing = try session.execute("SELECT tablename FROM pg_tables WHERE quote_ident(schemaname) = $1", [.text(schema)])
        return (0..<existing.count).map { existing.text($0, 0) }.filter(wanted.contains).sorted()
    }

    /// Takes the `ACCESS EXCLUSIVE` locks that dropping the store's tables needs (`locked`), once no
    /// other session reads them: tried without waiting (a waiting lock would queue every other
    /// server's reads behind it) every 50 ms, for as long as the store's timeout
    /// (`NSPersistentStoreTimeoutOption`); 134110 after that, the store left as it was.
    private static func lockForReplacing(_ locked: String, on session: any PostgreSQLConnection, options: [AnyHashable: Any]?) throws {
        let timeouts = PostgreSQLTimeouts(options: options)
        let deadline = ContinuousClock.now + .milliseconds(timeouts.lockTimeout)
        while try !tryToLock("LOCK TABLE \(locked) IN ACCESS EXCLUSIVE MODE NOWAIT", on: session) {
            guard ContinuousClock.now < deadline else {
                throw MigrationErrors.migration("Can't migrate the PostgreSQL store: other sessions (a read, a query generation of another "
                    + "server) went on reading its tables for longer than the store's timeout (NSPersistentStoreTimeoutOption, "
                    + "\(timeouts.lockTimeout) ms) once the new store was written; the store was left untouched")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Runs `lock`, a `LOCK TABLE … NOWAIT`, in a savepoint: `false`, and the transaction as it
    /// was, when another session holds a lock it conflicts with.
    private static func tryToLock(_ lock: String, on session: any PostgreSQLConnection) throws -> Bool {
        try session.run("SAVEPOINT cd_replacing")
        do {
            try session.run(lock)
        } catch {
            guard error.sqlState == PostgreSQLTimeouts.lockNotAvailable else { throw error }
            try session.run("ROLLBACK TO SAVEPOINT cd_replacing")
            return false
        }
        try session.run("RELEASE SAVEPOINT cd_replacing")
        return true
    }

    /// Drops the store's `tables` in `target` (a quoted schema name) and moves every `Z…` table of
    /// `schema` there in their place, indexes included; `Z_PRIMARYKEY`'s rows of persistent
    /// history's entities, whose keys go on from where they were, are kept.
    private static func replaceTables(_ tables: [String], in target: String, with schema: String, on session: any PostgreSQLConnection) throws {
        try session.run("""
            CREATE TEMPORARY TABLE cd_history_keys ON COMMIT DROP AS
            SELECT * FROM \(target)."Z_PRIMARYKEY" WHERE "Z_ENT" >= \(SQLiteHistory.entityOffset)
            """)
        for table in tables { try session.run("DROP TABLE \(target).\(SQLiteSchema.quoted(table))") }
        for table in try names("SELECT tablename FROM pg_tables WHERE schemaname = '\(schema)' AND tablename LIKE 'Z%' ORDER BY 1", on: session) {
            try session.run("ALTER TABLE \(SQLiteSchema.quoted(schema)).\(SQLiteSchema.quoted(table)) SET SCHEMA \(target)")
        }
        try session.run("""
            INSERT INTO \(target)."Z_PRIMARYKEY" SELECT * FROM cd_history_keys
            ON CONFLICT ("Z_ENT") DO UPDATE SET "Z_MAX" = EXCLUDED."Z_MAX"
            """)
    }

    /// Drops the schemas a killed migration left (no migration runs without the lock).
    private static func dropLeftoverSchemas(on session: any PostgreSQLConnection) throws {
        for schema in try names("SELECT nspname FROM pg_namespace WHERE starts_with(nspname, '\(schemaPrefix)')", on: session) {
            try session.run("DROP SCHEMA \(SQLiteSchema.quoted(schema)) CASCADE")
        }
    }

    /// The first column of each row of `sql`, as text.
    private static func names(_ sql: String, on session: any PostgreSQLConnection) throws -> [String] {
        let rows = try session.execute(sql, [])
        return (0..<rows.count).map { rows.text($0, 0) }
    }
}
