import Foundation

/// The PostgreSQL store: Core Data's layout in a PostgreSQL database (`PostgreSQLLayout.swift`),
/// so that coordinators on several machines share one store.
///
/// It speaks to the server through a ``PostgreSQLConnection`` made by the connector that
/// `CoreDataPostgreSQL` registers (``PostgreSQLStoreRegistry``): `CoreData` links no client.
/// Its connections are a pool (``PostgreSQLConnectionPool``): a writer for saves, and readers,
/// so that reads never wait for a save; lost sessions are replaced. Saves are one
/// transaction each (`PostgreSQLStore+Save.swift`), with optimistic locking through `Z_OPT`
/// and keys from `Z_PRIMARYKEY` under its row locks; fetches and faults are in
/// `PostgreSQLStore+Fetch.swift`, predicates compiled in the PostgreSQL dialect
/// (`Predicate/PredicateSQLDialect.swift`).
internal final class PostgreSQLStore: NSPersistentStore, @unchecked Sendable {
    /// The store's connections; set once by ``open(model:)``.
    private(set) var pool: PostgreSQLConnectionPool?
    /// Where the model's entities and properties live: the names the SQLite store gives a new
    /// file (`SQLiteSchema.swift`), which the layout quotes and types for PostgreSQL; set once
    /// by ``open(model:)``.
    private(set) var schema: SQLiteSchema!
    /// Row decoders by the root entity's model entity number: which column holds which property
    /// (the SQLite store's, `SQLiteRowDecoder.swift`; values are read here).
    private(set) var decoders: [SQLiteRowDecoder?] = []
    /// Persistent history (``NSPersistentHistoryTrackingKey``), when the store records it; set
    /// once by ``open(model:)`` (`PostgreSQLStore+History.swift`).
    private(set) var history: SQLiteHistory?
    /// The session that `LISTEN`s for other coordinators' commits, when the store was added with
    /// ``NSPersistentStoreRemoteChangeNotificationPostOptionKey`` (`PostgreSQLRemoteChanges.swift`); under ``listenerLock``.
    var listener: PostgreSQLChangeListener?
    /// Guards ``listener``.
    let listenerLock = NSLock()
    /// The most rows a batch insert sends in one statement, and the most an upsert's lock step
    /// matches or locks in one (`PostgreSQLStore+UpsertLocks.swift`); tests make it small, before
    /// the store is used, to split a batch.
    var batchRowsPerStatement = 4096
    /// Keys taken from `Z_PRIMARYKEY` and not yet given to a row (``NSPostgreSQLKeyBlockSizeOption``);
    /// set once by ``open(model:)``.
    private(set) var keyBlocks: PostgreSQLKeyBlocks!
    /// The store's generation when it opened (``PostgreSQLStoreGeneration``); set once by ``open(model:)``.
    private(set) var generation = ""

    override var type: String { NSPostgreSQLStoreType }

    /// The store's URL without its password, for messages.
    var location: String { url.map(Self.location(of:)) ?? "" }

    /// `url` without its password, for messages.
    static func location(of url: URL) -> String { PostgreSQLURL.masked(url) }

    /// Runs `body` in one transaction on the writer (``PostgreSQLConnectionPool/inTransaction(_:)``).
    func inTransaction<T>(_ body: (any PostgreSQLConnection) throws -> T) throws -> T {
        guard let pool else { throw removedError }
        return try pool.inTransaction(body)
    }

    /// ``inTransaction(_:)`` with a prelude (``PostgreSQLConnectionPool/inTransaction(prelude:_:)``).
    func inTransaction<T>(prelude: [PostgreSQLStatement], _ body: (any PostgreSQLConnection, [any PostgreSQLRows]) throws -> T) throws -> T {
        guard let pool else { throw removedError }
        return try pool.inTransaction(prelude: prelude, body)
    }

    /// Runs `body` with a reader (``PostgreSQLConnectionPool/withReader(runningAgainIf:_:)``); a
    /// request of a context pinned to a query generation on the generation's session instead
    /// (`PostgreSQLStore+QueryGenerations.swift`), where a statement that fails leaves the session
    /// usable (``PostgreSQLConnectionPool/withPinnedReader(_:_:)``) and nothing runs again.
    func withReader<T>(runningAgainIf canRunAgain: () -> Bool = { true }, _ body: (any PostgreSQLConnection) throws -> T) throws -> T {
        if let generation = QueryGeneration.current,
           let result = try generation.withConnection(to: self, { (session: any PostgreSQLConnection) in
               try readPinned(session, body)
           }) {
            return result
        }
        guard let pool else { throw removedError }
        return try pool.withReader(runningAgainIf: canRunAgain, body)
    }

    var removedError: NSError {
        CoreDataError.make(.persistentStoreOperation, "The PostgreSQL store at \(location) has been removed from its coordinator")
    }

    // MARK: Opening

    override func open(model: NSManagedObjectModel) throws {
        guard let url else { throw CoreDataError.make(.persistentStoreOpen, "A PostgreSQL store needs a postgres:// URL") }
        guard let connector = PostgreSQLStoreRegistry.connector else { throw Self.notRegisteredError }
        let maximumReaders = try SQLiteStore.readerCount(options)
        let keyBlocks = try PostgreSQLKeyBlocks(options: options)
        let connection = try Self.connect(connector, url, options: options)
        let schema = SQLiteSchema(model: model)
        do {
            try connection.transaction {
                // One opening at a time per database: two coordinators making the same new store
                // would otherwise both create it.
                try Self.takeOpeningLock(on: connection, options: options)
                if try Self.holdsStore(connection) {
                    // Migrated first if another model wrote it and the options ask for it (+Migration.swift).
                    let metadata = try compatibleMetadata(on: connection, model: model)
                    try openReadOnlyIfHistoryWouldBeLost(connection)
                    self.metadata = metadata
                    identifier = metadata[NSStoreUUIDKey] as? String ?? UUID().uuidString
                } else {
                    guard !isReadOnly else {
                        throw CoreDataError.make(.persistentStoreOpen, "Can't create a read-only store: the database at \(location) has no Core Data store")
                    }
                    let uuid = UUID().uuidString
                    let metadata = Self.makeMetadata(model: model, uuid: uuid)
                    try PostgreSQLLayout(schema: schema).create(on: connection)
                    try Self.writeMetadata(metadata, uuid: uuid, on: connection)
                    self.metadata = metadata
                    identifier = uuid
                }
                if SQLiteHistory.isRequested(by: options) {
                    let history = try SQLiteHistory(model: model, schema: schema, options: options)
                    if !isReadOnly { try createHistoryTables(history, on: connection) }
                    self.history = history
                }
                if !isReadOnly {
                    try PostgreSQLFoldFunction.install(on: connection)   // [c]/[d]
                    try PostgreSQLCollations.install(on: connection)     // localized sorts
                }
                generation = try connection.execute(PostgreSQLStoreGeneration.query, []).text(0, 0)
            }
        } catch let error as PostgreSQLError {
            connection.close()
            let waited = error.sqlState == PostgreSQLTimeouts.lockNotAvailable
                ? ": a table it needed stayed locked by another session (another server's migration, or a change of the database) for "
                    + "longer than the store's timeout (NSPersistentStoreTimeoutOption)" : ""
            throw Self.error(error, .persistentStoreOpen, "Can't open the PostgreSQL store at \(location)\(waited)")
        } catch {
            connection.close()
            throw error
        }
        self.schema = schema
        self.keyBlocks = keyBlocks
        decoders = Array(repeating: nil, count: (schema.entities.map(\.layout.entityNumber).max() ?? 0) + 1)
        for root in schema.entities where root.superentity == nil {
            decoders[root.layout.entityNumber] = SQLiteRowDecoder(root: root, schema: schema)
        }
        pool = makePool(writer: connection, maximumReaders: maximumReaders, connector: connector, url: url,
                        commitCheck: PostgreSQLStoreGeneration.commitCheck(generation))
        if flag(NSPersistentStoreRemoteChangeNotificationPostOptionKey) {
            do { try startListening(connector) } catch { close(); throw error }
        }
    }

    /// The store's pool, whose new connections go to `url` as the first one did; a connection that
    /// fails throws the client's ``PostgreSQLError``, which the request that needed it reports as
    /// its own failure (a save's 134030, a read's), not as opening's 134080. (A function of
    /// its own: Swift 6.3.1's region analysis crashes on this closure inside ``open(model:)``.)
    private func makePool(writer: any PostgreSQLConnection, maximumReaders: Int, connector: @escaping PostgreSQLConnector,
                          url: URL, commitCheck: PostgreSQLStatement) -> PostgreSQLConnectionPool {
        let removedMessage = removedError.localizedDescription
        let password = options?[NSPostgreSQLPasswordOption] as? String
        return PostgreSQLConnectionPool(writer: writer, maximumReaders: maximumReaders, timeouts: PostgreSQLTimeouts(options: options),
                                        commitCheck: commitCheck,
                                        connect: { try connector(url, password) },
                                        closedError: { CoreDataError.make(.persistentStoreOperation, removedMessage) })
    }

    /// 134000: `CoreDataPostgreSQL` has not registered the store's client.
    static var notRegisteredError: NSError {
        CoreDataError.make(.persistentStoreInvalidType,
            "The PostgreSQL store is not registered: import CoreDataPostgreSQL and call NSPersistentStoreCoordinator.registerPostgreSQLStore() first")
    }

    /// A new session on the database `url` names, outside any store; 134000 when the store type
    /// is not registered.
    static func connect(_ url: URL, options: [AnyHashable: Any]?) throws -> any PostgreSQLConnection {
        guard let connector = PostgreSQLStoreRegistry.connector else { throw notRegisteredError }
        return try connect(connector, url, options: options)
    }

    /// A connection to the database `url` names, with the password of ``NSPostgreSQLPasswordOption``
    /// if `options` give one; 134080 naming the cause if it fails.
    private static func connect(_ connector: PostgreSQLConnector, _ url: URL, options: [AnyHashable: Any]?) throws -> any PostgreSQLConnection {
        do {
            return try connector(url, options?[NSPostgreSQLPasswordOption] as? String)
        } catch {
            throw Self.error(error, .persistentStoreOpen, "Can't connect to the PostgreSQL store at \(location(of: url))")
        }
    }

    /// The metadata of the store in the database `url` names, read without adding the store
    /// (``NSPersistentStoreCoordinator/metadataForPersistentStore(ofType:at:options:)``); 260
    /// when the database holds no store, 134000 when the store type is not registered.
    static func readMetadata(at url: URL, options: [AnyHashable: Any]?) throws -> [String: Any] {
        let connection = try connect(url, options: options)
        defer { connection.close() }
        do {
            guard try holdsStore(connection) else { throw noStoreError(url) }
            return try readMetadata(connection, location: location(of: url))
        } catch let error as PostgreSQLError {
            throw Self.error(error, .persistentStoreOpen, "Can't read the metadata of the PostgreSQL store at \(location(of: url))")
        }
    }

    /// The advisory lock that orders the opening of stores in one database (any fixed number;
    /// this one spells "CoreData" in ASCII).
    static let layoutLockKey: Int64 = 0x436F_7265_4461_7461

    /// The session-level advisory lock a migration that spans transactions holds from start to end
    /// (a heavyweight one, or a staged one's steps and handlers): one at a time per database, the
    /// next one waiting, then finding the store migrated. Any fixed number but ``layoutLockKey``,
    /// which the stores' openings take meanwhile ("CoreMigr" in ASCII).
    static let migrationLockKey: Int64 = 0x436F_7265_4D69_6772

    /// A new session on the database `url` names holding ``migrationLockKey`` (waiting for it as
    /// long as another migration takes), with no statement or idle timeout: closing it lets the
    /// lock go.
    static func migrationSession(_ url: URL, options: [AnyHashable: Any]?) throws -> any PostgreSQLConnection {
        let session = try connect(url, options: options)
        do {
            // The wait for the lock and the idle time between steps must not end it (a role's or
            // server's timeouts; `idle_session_timeout` exists from PostgreSQL 14 on).
            try session.run("SET idle_in_transaction_session_timeout = 0; SET statement_timeout = 0")
            _ = try session.execute("""
                SELECT set_config('idle_session_timeout', '0', false) WHERE current_setting('server_version_num')::int >= 140000
                """, [])
            _ = try session.execute("SELECT pg_advisory_lock($1)", [.int(migrationLockKey)])
        } catch {
            session.close()
            throw Self.error(error, .migration, "Can't take the migration lock of the PostgreSQL store at \(location(of: url))")
        }
        return session
    }

    /// Closes the connections: the writer once a save under way has finished, idle readers at
    /// once, lent readers when their reads end. Requests then throw.
    override func close() {
        pool?.close()
        stopListening()
    }

    deinit { listener?.stop() }

    // MARK: The store API (PostgreSQLStore+Fetch.swift, +Save.swift, +Batch*.swift)

    override func fetchRows(_ plan: FetchPlan) throws -> [FetchedRow] { try selectRows(plan) }
    override func fetchRows(_ plan: FetchPlan, each body: (consuming LentRow) throws -> Void) throws { try selectRows(plan, each: body) }
    override func fetchIDs(_ plan: FetchPlan) throws -> [NSManagedObjectID] { try selectIDs(plan) }
    override func fetchKeys(_ plan: FetchPlan) throws -> [FetchedKey] { try selectKeys(plan) }
    override func count(_ plan: FetchPlan) throws -> Int { try selectCount(plan) }
    override func fetchDictionaryRows(_ plan: DictionaryPlan) throws -> [ContiguousArray<StoreValue>] { try selectDictionaryRows(plan) }
    override func row(for id: NSManagedObjectID) throws -> RowSnapshot? { try selectRow(for: id) }
    override func rows(primaryKeys: [Int64], root: NSEntityDescription) throws -> [FetchedRow] {
        try selectRows(primaryKeys: primaryKeys, root: root)
    }
    override func relatedIDs(for relationship: NSRelationshipDescription, of id: NSManagedObjectID) throws -> [NSManagedObjectID] {
        try selectRelatedIDs(for: relationship, of: id)
    }
    override func relatedRows(for relationship: NSRelationshipDescription, owners: [Int64], ownerEntity: NSEntityDescription) throws -> [RelatedRow] {
        try selectRelatedRows(for: relationship, owners: owners)
    }
    override func allocatePrimaryKeys(for entity: NSEntityDescription, count: Int) throws -> [Int64] {
        try allocateKeys(for: entity, count: count)
    }
    /// Without a row cache: another server may change any row, so only the database can vouch for one.
    override func save(_ changes: SaveChanges, rowCache: StoreRowCache?, beforeCommitting: () throws -> Void) throws -> SaveResult {
        try saveInTransaction(changes, beforeCommitting: beforeCommitting)
    }
    // Batch requests (PostgreSQLStore+Batch*.swift); no row cache to drop rows from.
    override func batchInsert(_ insert: BatchInsert, rowCache: StoreRowCache?) throws -> BatchOutcome { try batchInsertInTransaction(insert) }
    override func batchUpdate(_ update: BatchUpdate, rowCache: StoreRowCache?, beforeCommitting: (() throws -> Void)?) throws -> BatchOutcome {
        try batchUpdateInTransaction(update, beforeCommitting: beforeCommitting)
    }
    override func batchDelete(_ delete: BatchDelete, rowCache: StoreRowCache?, beforeCommitting: (() throws -> Void)?) throws -> BatchOutcome {
        try batchDeleteInTransaction(delete, beforeCommitting: beforeCommitting)
    }

    // MARK: Metadata

    /// The metadata of a new store of `model` (the SQLite store's keys but its file's own).
    static func makeMetadata(model: NSManagedObjectModel, uuid: String) -> [String: Any] {
        var metadata = SQLiteStore.makeMetadata(model: model, uuid: uuid)
        metadata[NSStoreTypeKey] = NSPostgreSQLStoreType
        metadata["_NSAutoVacuumLevel"] = nil
        return metadata
    }

    /// Whether the database `connection` is on holds a store (its `"Z_METADATA"`).
    static func holdsStore(_ connection: any PostgreSQLConnection) throws(PostgreSQLError) -> Bool {
        try connection.execute("SELECT to_regclass($1) IS NOT NULL", [.text("\"Z_METADATA\"")]).text(0, 0) == "t"
    }

    /// 260: the database `url` names holds no store.
    static func noStoreError(_ url: URL) -> NSError {
        CoreDataError.make(.fileReadNoSuchFile, "There is no Core Data store in the database at \(location(of: url))")
    }

    /// Takes, in `connection`'s transaction, the advisory lock that orders the openings of stores
    /// in the database (``layoutLockKey``), then makes a table lock waited for under it (another
    /// server's heavyweight migration holds its tables, and waits for this lock to open its
    /// stores) wait no longer than the store's timeout.
    static func takeOpeningLock(on connection: any PostgreSQLConnection, options: [AnyHashable: Any]?) throws(PostgreSQLError) {
        _ = try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int(layoutLockKey)])
        try connection.run(PostgreSQLTimeouts(options: options).lockTimeoutSetting)
    }

    /// Whether the database `url` names holds a store (its `"Z_METADATA"`); 134080 if it can't be reached.
    static func holdsStore(at url: URL, options: [AnyHashable: Any]?) throws -> Bool {
        let connection = try connect(url, options: options)
        defer { connection.close() }
        do {
            return try holdsStore(connection)
        } catch {
            throw Self.error(error, .persistentStoreOpen, "Can't read the PostgreSQL database at \(location(of: url))")
        }
    }

    /// Replaces the metadata of the store in the database `url` names without adding the store
    /// (``NSPersistentStoreCoordinator/setMetadata(_:forPersistentStoreOfType:at:options:)``), in one
    /// transaction under the lock that orders openings: the store keeps its type and, unless
    /// `metadata` names another, its UUID. 260 when the database holds no store, 3851 for a
    /// value that is not a property-list value (nothing written).
    static func replaceMetadata(_ metadata: [String: Any]?, at url: URL, options: [AnyHashable: Any]?) throws {
        var replacement = metadata ?? [:]
        replacement[NSStoreTypeKey] = NSPostgreSQLStoreType
        _ = try SQLiteStore.plistData(replacement) // (3851 before the database is touched)
        let connection = try connect(url, options: options)
        defer { connection.close() }
        do {
            try connection.transaction {
                try takeOpeningLock(on: connection, options: options)
                guard try holdsStore(connection) else { throw noStoreError(url) }
                let current = try readMetadata(connection, location: location(of: url))
                let uuid = replacement[NSStoreUUIDKey] as? String ?? current[NSStoreUUIDKey] as? String ?? UUID().uuidString
                try writeMetadata(replacement, uuid: uuid, on: connection)
            }
        } catch let error as PostgreSQLError {
            throw Self.error(error, .persistentStoreSave, "Can't write the metadata of the PostgreSQL store at \(location(of: url))")
        }
    }

    static func readMetadata(_ connection: any PostgreSQLConnection, location: String) throws -> [String: Any] {
        let rows = try connection.execute("SELECT \"Z_UUID\", \"Z_PLIST\" FROM \"Z_METADATA\" WHERE \"Z_VERSION\" = 1", [])
        guard rows.count > 0 else { return [NSStoreTypeKey: NSPostgreSQLStoreType] }
        return try SQLiteStore.metadata(plist: rows.isNull(0, 1) ? nil : rows.bytes(0, 1), uuid: rows.isNull(0, 0) ? nil : rows.text(0, 0),
                                        type: NSPostgreSQLStoreType, location: location)
    }

    static func writeMetadata(_ metadata: [String: Any], uuid: String, on connection: any PostgreSQLConnection) throws {
        _ = try connection.execute("""
            INSERT INTO "Z_METADATA" ("Z_VERSION", "Z_UUID", "Z_PLIST") VALUES (1, $1, $2)
            ON CONFLICT ("Z_VERSION") DO UPDATE SET "Z_UUID" = EXCLUDED."Z_UUID", "Z_PLIST" = EXCLUDED."Z_PLIST"
            """, [.text(uuid), .bytes(try SQLiteStore.plistData(metadata))])
    }

    override func writeMetadata(_ metadata: [String: Any]) throws {
        do {
            try inTransaction { connection in try Self.writeMetadata(metadata, uuid: identifier, on: connection) }
        } catch let error as PostgreSQLError {
            throw Self.error(error, .persistentStoreSave, "Can't write the metadata of the PostgreSQL store at \(location)")
        } catch let error as PostgreSQLCommitOutcomeUnknown {
            throw commitOutcomeUnknownError(error)
        }
        self.metadata = metadata
    }

    // MARK: Errors

    /// A client or server failure as a Core Data error of `code`, `what` failed followed by the
    /// cause; the server's message and SQLSTATE in userInfo (``NSPostgreSQLMessageErrorKey``,
    /// ``NSPostgreSQLStateErrorKey``).
    static func error(_ error: Error, _ code: CoreDataError.Code, _ what: String) -> NSError {
        guard let failure = error as? PostgreSQLError else { return error as NSError }
        if let missing = PostgreSQLFoldFunction.missingError(failure) ?? PostgreSQLCollations.missingError(failure) { return missing }
        var info: [String: Any] = [NSPostgreSQLMessageErrorKey: failure.message]
        if let state = failure.sqlState { info[NSPostgreSQLStateErrorKey] = state }
        return CoreDataError.make(code, "\(what): \(failure.message)", extra: info)
    }
}

/// Where the PostgreSQL store finds its connections: `CoreDataPostgreSQL` registers a connector
/// (`NSPersistentStoreCoordinator.registerPostgreSQLStore()`); without one, adding a store of
/// type ``NSPostgreSQLStoreType`` throws 134000.
package enum PostgreSQLStoreRegistry {
    private static let registered = Locked<PostgreSQLConnector?>(nil)

    /// Makes `connector` open the PostgreSQL store's connections (the last one registered wins).
    package static func register(_ connector: @escaping PostgreSQLConnector) {
        registered.withLock { $0 = connector }
    }

    /// The connector registered, if any.
    package static var connector: PostgreSQLConnector? { registered.withLock { $0 } }
}
