import CSQLite
import Foundation
import Synchronization

/// The SQLite store: a file in Core Data's own layout, in WAL mode, written one transaction per save.
///
/// One writer connection does every write (saves, primary keys, metadata), one thread at a
/// time under ``writeLock``; reads (fetches, counts, faults, to-many IDs) run on a pool of
/// read-only connections (``SQLiteReaderPool``) and never wait for the writer: WAL lets them
/// read the last commit while a save is under way.
internal final class SQLiteStore: NSPersistentStore, @unchecked Sendable {
    /// Orders the writer's work: saves, key allocation, metadata, and the row-cache checks.
    let writeLock = NSLock()
    /// The writer connection, used under ``writeLock``; `nil` once the store is closed.
    var writer: SQLiteConnection?
    /// Each entity's INSERTs (their SQL and slots), by entity number (under ``writeLock``).
    var insertStatements: [Int: InsertStatements] = [:]
    /// Set (under ``writeLock``) once an insert without `Z_PK` got another key than the one
    /// handed out (something else writes the table: a trigger): saves then bind every key.
    var implicitKeysRefused = false
    /// The external data files of the save under way (under ``writeLock``; `SQLiteExternalData.swift`).
    var externalFiles: ExternalDataFiles?
    /// This process's pinned query generations on the store, and the external data files whose
    /// removal waits for them (`SQLiteStore+QueryGenerations.swift`).
    var pinnedExternalData: PinnedExternalData { PinnedExternalData.forFile(url?.path) }
    /// See ``beforeCommit`` (under ``writeLock``).
    var beforeCommitHook: (@Sendable () -> Void)?
    /// Called by a history fetch between reading the transactions and reading their changes,
    /// for tests (set before the store is used).
    var historyFetchBetweenReadsHook: (() -> Void)?
    /// The writer's `PRAGMA data_version` when the row cache was last known to match the file
    /// (under ``writeLock``); `nil` when unknown. See ``cachedRow(for:in:)``.
    var cacheDataVersion: Int64?
    /// The file's remote change channel, shared by the file's stores in this process (each
    /// commit is noted there); set by ``open(model:)`` and, under ``writeLock``, by
    /// ``relocate(to:whileLocked:)``; `nil` for an in-memory database.
    var changeChannel: SQLiteChangeChannel?
    /// The store's registration for remote change notifications
    /// (``NSPersistentStoreRemoteChangeNotificationPostOptionKey``), under ``writeLock``.
    var remoteChangeSubscription: RemoteChangeSubscription?
    /// Persistent history (``NSPersistentHistoryTrackingKey``), when the store records it; set
    /// once by ``open(model:)`` (`SQLiteStore+History.swift`).
    private(set) var history: SQLiteHistory?
    /// The reader connections; set once by ``open(model:)``.
    private(set) var readers: SQLiteReaderPool?
    /// Whether the file is in WAL mode (a ``NSSQLitePragmasOption`` may have chosen another
    /// journal); set once by ``open(model:)``. Query generations need it.
    private(set) var usesWAL = false
    /// Where the model's entities and properties live in this file; set once by ``open(model:)``.
    private(set) var schema: SQLiteSchema!
    /// Entities by their `Z_ENT` in the file (``SQLiteSchema/entitiesByNumber``): an array read
    /// once per fetched row.
    private var entitiesByNumber: [NSEntityDescription?] = []
    /// Row decoders by the root entity's model entity number; built when the store opens, then shared
    /// by every reader (read-only from then on, so without exclusivity checks).
    @exclusivity(unchecked) private var decoders: [SQLiteRowDecoder?] = []

    /// How many read statements (fetches, counts, faults, batches, prefetches) the store has
    /// run: tests count queries with it.
    let readStatementCount = Atomic<Int>(0)

    /// A read statement of `db` for `sql`, counted in ``readStatementCount``.
    func readStatement(_ db: SQLiteConnection, _ sql: String) throws -> SQLiteStatement {
        readStatementCount.add(1, ordering: .relaxed)
        return try db.cached(sql)
    }

    /// The default of ``NSPersistentStoreConnectionPoolMaxSizeKey``: how many reader connections
    /// the store opens at most.
    static let defaultReaderCount = 4

    override var type: String { NSSQLiteStoreType }

    /// The error of every request once the store has been removed from its coordinator (objects
    /// and IDs may outlive their store: their faults then read as deleted, their saves fail).
    private var removedError: NSError {
        CoreDataError.make(.persistentStoreOperation, "The store at \(url?.path ?? "") has been removed from its coordinator")
    }

    /// Runs `body` with the writer connection, holding ``writeLock``; then, if it wrote,
    /// tells the file's stores that observe remote changes (`SQLiteRemoteChanges.swift`).
    func withWriter<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let result: T
        let channel: SQLiteChangeChannel?
        do {
            writeLock.lock()
            defer { writeLock.unlock() }
            guard let writer else { throw removedError }
            result = try body(writer)
            channel = changeChannel // (moved by `relocate(to:whileLocked:)`, under the lock)
        }
        channel?.noteCommit()
        return result
    }

    /// Runs `body` with a reader connection of the pool, which no other thread uses meanwhile.
    /// A request of a context pinned to a query generation runs on the generation's connection
    /// instead (`SQLiteStore+QueryGenerations.swift`).
    func withReader<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        if let generation = QueryGeneration.current, let result = try generation.withConnection(to: self, body) { return result }
        guard let readers else { throw removedError }
        return try readers.withReader(body)
    }

    /// The reader pool's counters, for tests: connections open now, and the most ever open at once.
    var readerCounts: (open: Int, peak: Int, maximum: Int) {
        (readers?.openConnections ?? 0, readers?.peakOpenConnections ?? 0, readers?.maximum ?? 0)
    }

    // MARK: Opening

    override func open(model: NSManagedObjectModel) throws {
        guard let url else { throw CoreDataError.make(.persistentStoreOpen, "A SQLite store needs a file URL") }
        let readerCount = try Self.readerCount(options)
        let inMemory = Self.isInMemory(url)
        let path = Self.databaseName(for: url)
        var fileExists = false
        if !inMemory {
            try Self.checkFile(at: url)
            fileExists = FileManager.default.fileExists(atPath: path)
            if !fileExists && isReadOnly {
                // Nothing to read, and nothing may be made (not even its folder).
                throw CoreDataError.make(.fileReadNoSuchFile, "There is no store at \(url.path) to open read-only",
                                         extra: [NSFilePathErrorKey: url.path])
            }
            if !fileExists {
                // (A folder that can't be made shows as SQLite's error opening the file.)
                let folder = url.deletingLastPathComponent()
                try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
        }
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, readOnly: isReadOnly && fileExists, create: !isReadOnly)
        } catch let error as NSError {
            throw Self.openError(error, url: url)
        }
        do {
            // Nothing is written to a file until it is known to be a store of this model, or
            // empty: a refused file stays byte for byte as it was (no WAL switch, no pragma).
            try applyConnectionSettings(connection)
            // One read transaction, so that the checks see one state of the file even while
            // another connection is making the store.
            let isStore = try connection.transaction(immediate: false) {
                if try Self.tableExists("Z_METADATA", in: connection) {
                    try adoptStore(on: connection, model: model)
                    try openReadOnlyIfHistoryWouldBeLost(connection)
                    return true
                }
                let tableCount = try connection.scalarInt("SELECT count(*) FROM sqlite_master WHERE type = 'table'") ?? 0
                guard tableCount == 0 else {
                    throw CoreDataError.make(.incompatibleSchema,
                        "The SQLite file at \(url.path) is not a Core Data store (it has tables but no Z_METADATA); it was left untouched",
                        extra: [NSFilePathErrorKey: url.path])
                }
                return false
            }
            if isStore {
                try applyPragmas(connection)
                try recordCurrentVersionHashes(on: connection, model: model)
            } else {
                guard !isReadOnly else {
                    throw CoreDataError.make(.persistentStoreOpen, "Can't create a read-only store at \(url.path)")
                }
                try createStore(on: connection, model: model)
            }
            entitiesByNumber = schema.entitiesByNumber
            otherEntitiesMayBeStored = try Self.declaresOtherEntities(connection, known: entitiesByNumber)
            if SQLiteHistory.isRequested(by: options) {
                let history = try SQLiteHistory(model: model, schema: schema, options: options)
                if !isReadOnly { try history.createMissingTables(on: connection) }
                self.history = history
            }
            if !isReadOnly { try runMaintenanceOptions(connection) }
        } catch let error as NSError {
            throw Self.openError(error, url: url)
        }
        if !isReadOnly {
            removeUnreferencedExternalFiles(on: connection, model: model)
            removeAbandonedMigration(on: connection)
        }
        decoders = Array(repeating: nil, count: (schema.entities.map(\.layout.entityNumber).max() ?? 0) + 1)
        for root in schema.entities where root.superentity == nil {
            decoders[root.layout.entityNumber] = SQLiteRowDecoder(root: root, schema: schema)
        }
        let removedMessage = removedError.localizedDescription
        readers = SQLiteReaderPool(maximum: readerCount, connect: readerConnector(path: path),
                                   closedError: { CoreDataError.make(.persistentStoreOperation, removedMessage) })
        usesWAL = try Self.isInWALMode(connection)
        cacheDataVersion = try? connection.dataVersion()
        if !inMemory {
            let channel = SQLiteChangeChannel.forFile(atPath: path)
            changeChannel = channel
            if postsRemoteChanges { remoteChangeSubscription = channel.subscribe(self) }
        }
        writer = connection
    }

    /// What makes the store's reader connections to the database at `path`.
    func readerConnector(path: String) -> () throws -> SQLiteConnection {
        let readerPragmas = userPragmas
        let readerTimeout = busyTimeout
        return {
            let reader = try SQLiteConnection(path: path, readOnly: true, create: false)
            if let timeout = readerTimeout { sqlite3_busy_timeout(reader.handle, timeout) }
            // The writer has applied them; one that writes (user_version, …) fails on a reader
            // and is skipped there, one that changes reading (case_sensitive_like, …) applies.
            for pragma in readerPragmas { try? reader.execute(pragma) }
            return reader
        }
    }

    /// `ANALYZE` (``NSSQLiteAnalyzeOption``) and `VACUUM` (``NSSQLiteManualVacuumOption``), as
    /// Apple's store runs them when it is added; outside a transaction, which `VACUUM` refuses.
    private func runMaintenanceOptions(_ connection: SQLiteConnection) throws {
        if flag(NSSQLiteManualVacuumOption) { try connection.execute("VACUUM") }
        if flag(NSSQLiteAnalyzeOption) { try connection.execute("ANALYZE") }
    }

    /// The reader pool's size: ``NSPersistentStoreConnectionPoolMaxSizeKey`` (a positive
    /// integer), or ``defaultReaderCount``.
    static func readerCount(_ options: [AnyHashable: Any]?) throws -> Int {
        guard let value = options?[NSPersistentStoreConnectionPoolMaxSizeKey] else { return defaultReaderCount }
        guard let count = integerOptionValue(value), count > 0 else {
            throw CoreDataError.make(.persistentStoreOpen,
                "\(NSPersistentStoreConnectionPoolMaxSizeKey) must be a positive integer (the most reader connections), not '\(value)'")
        }
        return count
    }

    /// Closes the connections: the writer once a save under way has finished, idle readers at
    /// once, lent readers when their reads end. Requests then throw.
    override func close() {
        writeLock.lock()
        insertStatements.removeAll()
        writer = nil
        writeLock.unlock()
        stopPostingRemoteChanges()
        readers?.close()
    }

    /// Ends the store's remote change notifications: its registration goes (off the write
    /// lock), and with the file's last one the watch.
    func stopPostingRemoteChanges() {
        let subscription = writeLock.withLock {
            defer { remoteChangeSubscription = nil }
            return remoteChangeSubscription
        }
        withExtendedLifetime(subscription) {}
    }

    /// The connection's own settings, which write nothing to the file.
    func applyConnectionSettings(_ connection: SQLiteConnection) throws {
        try connection.execute("PRAGMA synchronous = NORMAL")
        try connection.execute("PRAGMA foreign_keys = OFF")
        try connection.execute("PRAGMA recursive_triggers = ON")
        if let timeout = busyTimeout { sqlite3_busy_timeout(connection.handle, timeout) }
    }

    /// WAL and the ``NSSQLitePragmasOption`` pragmas, which may write to the file: applied once
    /// the file is known to be a store of the model, or a new one.
    /// On a read-only store a `journal_mode` is left out (logged): changing it writes to the
    /// file, which a read-only connection cannot (a WAL file opened with Apple's recipe for a
    /// bundled store, `journal_mode` `DELETE`, would not open at all).
    func applyPragmas(_ connection: SQLiteConnection) throws {
        if !isReadOnly { try switchToWAL(connection) }
        for (name, value) in userPragmaSettings {
            if isReadOnly && name.lowercased() == "journal_mode" {
                CoreDataLog.warning("The read-only store at \(url?.path ?? "") keeps its journal mode: NSSQLitePragmasOption's journal_mode \(value) was not applied")
                continue
            }
            try connection.execute("PRAGMA \(name) = \(value)")
        }
    }

    /// `PRAGMA journal_mode = WAL`, tried again for as long as a lock waits (``busyTimeout``,
    /// 5 s by default) while another connection holds the file: the switch needs the file to
    /// itself, and SQLite reports that it is busy without waiting (two coordinators or
    /// processes opening the same new store at once).
    private func switchToWAL(_ connection: SQLiteConnection) throws {
        let deadline = Date().addingTimeInterval(Double(busyTimeout ?? 5_000) / 1000)
        while true {
            do {
                try connection.execute("PRAGMA journal_mode = WAL")
                return
            } catch let error as NSError {
                let code = (error.userInfo[NSSQLiteErrorDomain] as? Int ?? 0) & 0xff
                guard code == Int(SQLITE_BUSY), Date() < deadline else { throw error }
                Thread.sleep(forTimeInterval: 0.002)
            }
        }
    }

    /// Takes the metadata of the existing store `connection` opened, once it is known to be
    /// compatible with `model` (reads only).
    private func adoptStore(on connection: SQLiteConnection, model: NSManagedObjectModel) throws {
        let metadata = try Self.readMetadata(connection)
        try checkCompatibility(metadata, model: model)
        // The file's own tables and columns are the truth.
        schema = try SQLiteSchema(model: model, reading: connection, lenient: flag(NSIgnorePersistentStoreVersioningOption),
                                  configuration: configurationName)
        self.metadata = metadata
        self.identifier = metadata[NSStoreUUIDKey] as? String ?? UUID().uuidString
    }

    /// Records `model`'s version hashes in the metadata of the store just adopted when they
    /// differ from those it holds, which are then the hashes this package gave composite and
    /// derived attributes before it hashed them as Apple does (``VersionHash/matches(_:_:)``):
    /// Apple's framework opens the file afterwards.
    private func recordCurrentVersionHashes(on connection: SQLiteConnection, model: NSManagedObjectModel) throws {
        // Only when every entity of the model is in the metadata with its hash or its earlier
        // one, and nothing else is (a store opened with a configuration is compared on some of
        // them only: others may be of another model).
        guard var metadata = self.metadata, !isReadOnly, !flag(NSIgnorePersistentStoreVersioningOption),
              model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata),
              let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any],
              model.entityVersionHashesByName.contains(where: { stored[$0.key] as? Data != $0.value }) else { return }
        for (key, value) in Self.makeMetadata(model: model, uuid: identifier)
        where [NSStoreModelVersionHashesKey, NSStoreModelVersionHashesDigestKey, NSPersistentStoreModelVersionChecksumKey].contains(key) {
            metadata[key] = value
        }
        try connection.transaction { try Self.writeMetadata(metadata, uuid: identifier, to: connection) }
        self.metadata = metadata
    }

    /// Makes a new store in the empty database `connection` opened, unless another connection
    /// (another coordinator, another process) made one meanwhile: `Z_METADATA` is looked for
    /// again inside the write transaction, which waits for the other's, and a store found there
    /// is adopted instead.
    private func createStore(on connection: SQLiteConnection, model: NSManagedObjectModel) throws {
        if try (connection.scalarInt("SELECT count(*) FROM sqlite_master") ?? 0) == 0 {
            // Apple's page size and incremental auto-vacuum, or the app's (`NSSQLitePragmasOption`),
            // set before anything is written: the switch to WAL fixes them.
            let asked = userPragmaSettings.reduce(into: [String: String]()) { $0[$1.name.lowercased()] = $1.value }
            try connection.execute("PRAGMA page_size = \(asked["page_size"] ?? "4096")")
            try connection.execute("PRAGMA auto_vacuum = \(asked["auto_vacuum"] ?? "2")")
        }
        try applyPragmas(connection)
        try connection.transaction {
            if try Self.tableExists("Z_METADATA", in: connection) {
                try adoptStore(on: connection, model: model)
                return
            }
            let uuid = UUID().uuidString
            let metadata = Self.makeMetadata(model: model, uuid: uuid)
            schema = SQLiteSchema(model: model)
            for statement in schema.createStatements { try connection.execute(statement) }
            let insert = try connection.cached("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)")
            for entity in schema.entities {
                insert.reset()
                insert.bind(Int64(schema.number(of: entity)), at: 1)
                insert.bind(entity.name ?? "", at: 2)
                insert.bind(Int64(entity.superentity.map { schema.number(of: $0) } ?? 0), at: 3)
                try insert.step()
            }
            try Self.writeMetadata(metadata, uuid: uuid, to: connection)
            self.metadata = metadata
            self.identifier = uuid
        }
    }

    /// ``NSPersistentStoreTimeoutOption`` (seconds) in milliseconds: how long a connection waits
    /// for a lock; `nil` for the connections' default (5 s).
    private var busyTimeout: Int32? {
        guard let seconds = (options?[NSPersistentStoreTimeoutOption] as? NSNumber)?.doubleValue, seconds.isFinite, seconds >= 0 else {
            return nil
        }
        return Int32(min(seconds, 2_000_000) * 1000)
    }

    /// The statements of the ``NSSQLitePragmasOption`` option (names and values of letters,
    /// digits, `_` and `-` only; others are skipped).
    private var userPragmas: [String] { userPragmaSettings.map { "PRAGMA \($0.name) = \($0.value)" } }

    /// The `NSSQLitePragmasOption` pragmas, by name, as text (those safe to put in a statement).
    private var userPragmaSettings: [(name: String, value: String)] {
        guard let pragmas = options?[NSSQLitePragmasOption] as? [String: Any] else { return [] }
        return pragmas.sorted(by: { $0.key < $1.key }).compactMap { name, value in
            guard name.allSatisfy({ $0.isLetter || $0 == "_" }) else { return nil }
            let text = "\(value)"
            guard text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else { return nil }
            return (name, text)
        }
    }

    /// Maps SQLite's "not a database" and "corrupt" failures to Core Data's file errors.
    static func openError(_ error: NSError, url: URL) -> NSError {
        guard error.domain == NSCocoaErrorDomain, error.code == NSSQLiteError,
              let sqliteCode = error.userInfo[NSSQLiteErrorDomain] as? Int else { return error }
        let primary = sqliteCode & 0xff
        if primary == Int(SQLITE_CORRUPT) || primary == Int(SQLITE_NOTADB) {
            return NSError(domain: NSCocoaErrorDomain, code: 259, userInfo: [
                NSLocalizedDescriptionKey: "The store at \(url.path) is damaged (truncated or corrupted) and can't be opened; it was left untouched. SQLite said: \(error.localizedDescription)",
                NSFilePathErrorKey: url.path, NSSQLiteErrorDomain: sqliteCode, NSUnderlyingErrorKey: error,
            ])
        }
        return error
    }

    static func tableExists(_ name: String, in connection: SQLiteConnection) throws -> Bool {
        let statement = try connection.cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        defer { statement.reset() }
        statement.bind(name, at: 1)
        return try statement.step()
    }

    // MARK: Metadata

    static func makeMetadata(model: NSManagedObjectModel, uuid: String) -> [String: Any] {
        var identifiers = model.versionIdentifiers.compactMap { $0 as? String }.sorted()
        if identifiers.isEmpty { identifiers = [""] }
        return [
            NSStoreUUIDKey: uuid,
            NSStoreTypeKey: NSSQLiteStoreType,
            NSStoreModelVersionHashesKey: model.entityVersionHashesByName,
            NSStoreModelVersionHashesVersionKey: 3,
            NSStoreModelVersionIdentifiersKey: identifiers,
            NSStoreModelVersionHashesDigestKey: VersionHash.hashesDigest(model),
            NSPersistentStoreModelVersionChecksumKey: model.versionChecksum,
            NSPersistenceFrameworkVersionKey: persistenceFrameworkVersion,
            "_NSAutoVacuumLevel": "2",
        ]
    }

    static func readMetadata(_ connection: SQLiteConnection) throws -> [String: Any] {
        let statement = try connection.cached("SELECT Z_UUID, Z_PLIST FROM Z_METADATA WHERE Z_VERSION = 1")
        defer { statement.reset() }
        guard try statement.step() else { return [:] }
        return try metadata(plist: statement.isNull(1) ? nil : statement.data(1), uuid: statement.isNull(0) ? nil : statement.string(0),
                            type: NSSQLiteStoreType, location: connection.path)
    }

    /// The metadata dictionary of a store's `Z_METADATA` row: its `Z_PLIST` and `Z_UUID`, of a
    /// store of `type` at `location` (for the error when the plist is not a dictionary).
    static func metadata(plist data: Data?, uuid: String?, type: String, location: String) throws -> [String: Any] {
        var metadata: [String: Any] = [:]
        if let data {
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil)
            if let plist = plist as? [String: Any] {
                metadata = plist
            } else if let plist = plist as? [AnyHashable: Any] {
                for (key, value) in plist { if let key = key as? String { metadata[key] = value } }
            } else {
                // Without its metadata the store's model can't be told: refused, not taken as empty.
                throw CoreDataError.make(.fileReadCorruptFile,
                    "The store's metadata (Z_METADATA.Z_PLIST) is not a property list dictionary, so the store can't be opened; it was left untouched",
                    extra: [NSFilePathErrorKey: location])
            }
        }
        if metadata[NSStoreUUIDKey] == nil, let uuid { metadata[NSStoreUUIDKey] = uuid }
        if metadata[NSStoreTypeKey] == nil { metadata[NSStoreTypeKey] = type }
        return metadata
    }

    static func writeMetadata(_ metadata: [String: Any], uuid: String, to connection: SQLiteConnection) throws {
        // Apple keeps the UUID in Z_UUID only; the metadata API adds it back when reading.
        try writeMetadata(plist: try plistData(metadata), uuid: uuid, to: connection)
    }

    /// Writes metadata serialized by ``plistData(_:)``.
    static func writeMetadata(plist data: Data, uuid: String, to connection: SQLiteConnection) throws {
        let statement = try connection.cached("INSERT OR REPLACE INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)")
        defer { statement.reset() }
        statement.bind(uuid, at: 1)
        statement.bind(data, at: 2)
        try statement.step()
    }

    /// Reads a store file's metadata without opening it as a store.
    static func readMetadata(at url: URL) throws -> [String: Any] {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw NSError(domain: NSCocoaErrorDomain, code: 260, userInfo: [
                NSLocalizedDescriptionKey: "There is no store at \(url.path)", NSFilePathErrorKey: url.path])
        }
        try checkFile(at: url)
        do {
            // Read-write when the file may be written (nothing is): a read-only connection to a
            // WAL-mode file leaves `-wal` and `-shm` files behind, as it can't remove them.
            let readOnly = !FileManager.default.isWritableFile(atPath: url.path)
            let connection = try SQLiteConnection(path: url.path, readOnly: readOnly, create: false)
            guard try tableExists("Z_METADATA", in: connection) else {
                throw CoreDataError.make(.incompatibleSchema, "The SQLite file at \(url.path) is not a Core Data store (no Z_METADATA table)")
            }
            return try readMetadata(connection)
        } catch let error as NSError {
            throw openError(error, url: url)
        }
    }

    override func writeMetadata(_ metadata: [String: Any]) throws {
        try withWriter { db in
            try db.transaction { try Self.writeMetadata(metadata, uuid: identifier, to: db) }
            self.metadata = metadata
        }
    }

    /// Throws `NSPersistentStoreIncompatibleVersionHashError` (134100) naming the entities whose
    /// hashes differ between the store and the model.
    func checkCompatibility(_ metadata: [String: Any], model: NSManagedObjectModel) throws {
        try Self.checkCompatibility(metadata, model: model, type: NSSQLiteStoreType, location: url?.path ?? "",
                                    ignoringVersions: flag(NSIgnorePersistentStoreVersioningOption), configuration: configurationName)
    }

    /// ``checkCompatibility(_:model:)`` for a store of `type` at `location` (a path, or the
    /// PostgreSQL store's database): 134010 when the metadata names another type, 134100 when
    /// the version hashes differ (unless `ignoringVersions`). A store of a named `configuration`
    /// is compared on the hierarchies of that configuration's entities only (the entities whose
    /// tables it holds).
    static func checkCompatibility(_ metadata: [String: Any], model: NSManagedObjectModel, type expectedType: String,
                                   location: String, ignoringVersions: Bool, configuration: String? = nil) throws {
        if let type = metadata[NSStoreTypeKey] as? String, type != expectedType {
            throw CoreDataError.make(.persistentStoreTypeMismatch, "The store at \(location) has type \(type), not \(expectedType)")
        }
        if ignoringVersions { return }
        let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]
        let current = model.entityVersionHashesByName
        var names = Set(stored.keys).union(current.keys)
        if !NSManagedObjectModel.namesAllEntities(configuration), model.entities(forConfigurationName: configuration) != nil {
            // The hierarchies of the configuration's entities, which share their tables: the
            // entities the file must hold (`SQLiteSchema.entitiesOutside`).
            let outside = SQLiteSchema.entitiesOutside(configuration, of: model)
            names = Set(model.entities.filter { !outside.contains(ObjectIdentifier($0)) }.compactMap(\.name))
        }
        var differences: [String] = []
        for name in names.sorted() {
            let storedHash = stored[name] as? Data
            let currentHash = current[name]
            switch (storedHash, currentHash) {
            case (nil, _?): differences.append("\(name) (not in the store)")
            case (_?, nil): differences.append("\(name) (not in the model)")
            case let (a?, b?) where a != b && !VersionHash.matches(a, model.entitiesByName[name]!):
                differences.append("\(name) (changed)")
            default: break
            }
        }
        guard differences.isEmpty else {
            throw CoreDataError.make(.incompatibleVersionHash,
                "The model used to open the store is incompatible with the one used to create the store at \(location); entities that differ: \(differences.joined(separator: ", ")). The store was left untouched.",
                extra: ["metadata": metadata, "reason": "The model used to open the store is incompatible with the one used to create the store",
                        "NSAffectedEntitiesKey": differences, NSFilePathErrorKey: location])
        }
    }

    // MARK: Reading

    /// Whether the file's `Z_PRIMARYKEY` names entities the model does not have: another
    /// version of the model wrote the file, and rows of those entities may sit in the model's
    /// tables, where no object can be made of them. Queries then select the model's entities by
    /// `Z_ENT` (``entityCondition(_:)``), so that a count agrees with a fetch. Set when the
    /// store opens.
    private var otherEntitiesMayBeStored = false

    /// Whether `Z_PRIMARYKEY` lists an entity number that `known` (entities by number) lacks.
    private static func declaresOtherEntities(_ connection: SQLiteConnection, known: [NSEntityDescription?]) throws -> Bool {
        guard try tableExists("Z_PRIMARYKEY", in: connection) else { return false }
        // Apple's ancillary entities (persistent history's, 16001…) have tables of their own.
        let statement = try connection.cached("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_ENT < \(SQLiteHistory.entityOffset)")
        defer { statement.reset() }
        while try statement.step() {
            let number = statement.int64(0)
            if number < 0 || number >= known.count || known[Int(number)] == nil { return true }
        }
        return false
    }

    /// The entity whose `Z_ENT` is `number`, if the model has one.
    func entity(numbered number: Int64) -> NSEntityDescription? {
        number >= 0 && number < entitiesByNumber.count ? entitiesByNumber[Int(number)] : nil
    }

    /// The decoder of the rows of `entity`'s table.
    func decoder(for entity: NSEntityDescription) -> SQLiteRowDecoder {
        decoders[entity.layout.rootNumber]!
    }

    /// `t0.Z_ENT IN (…)` when the plan's rows are not the whole table, or when the table may
    /// hold rows of entities the model does not have (``otherEntitiesMayBeStored``): a fetch
    /// skips such rows as it reads them, and the condition leaves them out of counts, of limits
    /// and offsets, and of dictionary results too. `nil` otherwise: a fetch of a whole table
    /// reads it without a condition, and a count of one is SQLite's own.
    func entityCondition(_ plan: FetchPlan) -> String? {
        let condition = schema.entityCondition(of: plan.entity, includingSubentities: plan.includesSubentities)
        return condition.coversFamily && !otherEntitiesMayBeStored ? nil : condition.sql
    }

    /// The `WHERE` condition of a plan on `t0` (its entities and predicate), `nil` for every
    /// row of the table, with its bindings; `compiler` keeps the joins it needs.
    func condition(_ plan: FetchPlan, compiler: inout PredicateSQLCompiler) throws -> (sql: String?, bindings: [StoreValue]) {
        var conditions: [String] = []
        var bindings: [StoreValue] = []
        if let condition = entityCondition(plan) { conditions.append(condition) }
        if let predicate = plan.predicate {
            let fragment = try compiler.compile(predicate)
            conditions.append("(" + fragment.sql + ")")
            bindings.append(contentsOf: fragment.bindings)
        }
        return (conditions.isEmpty ? nil : conditions.joined(separator: " AND "), bindings)
    }

    /// The SQL and bindings of a plan's query, selecting `columns`.
    private func query(_ plan: FetchPlan, columns: String, countOnly: Bool = false) throws -> (String, [StoreValue]) {
        var compiler = PredicateSQLCompiler(entity: plan.entity, schema: schema, store: self)
        let (condition, conditionBindings) = try self.condition(plan, compiler: &compiler)
        var bindings = conditionBindings
        var order: [String] = []
        if !countOnly {
            for key in plan.sortKeys {
                let fragment = try compiler.orderBy(key)
                order.append(fragment.sql)
                bindings.append(contentsOf: fragment.bindings)
            }
            order.append("t0.Z_PK")
        }
        var sql = "SELECT \(columns) FROM \(schema.table(of: plan.entity)) t0"
        if !compiler.joins.isEmpty { sql += " " + compiler.joins.joined(separator: " ") }
        if let condition { sql += " WHERE " + condition }
        if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        if !countOnly, let limits = Self.limits(plan.limit, plan.offset) {
            sql += limits.sql
            bindings += limits.bindings
        }
        return (sql, bindings)
    }

    /// `LIMIT ? OFFSET ?` with its values bound, for a limit or an offset: the text of a query
    /// is the same for every page, so the connections' statement caches do not gain one per page.
    static func limits(_ limit: Int, _ offset: Int) -> SQLFragment? {
        guard limit > 0 || offset > 0 else { return nil }
        return SQLFragment(" LIMIT ? OFFSET ?", [.int(Int64(limit > 0 ? limit : -1)), .int(Int64(max(offset, 0)))])
    }

    override func fetchRows(_ plan: FetchPlan) throws -> [FetchedRow] {
        var rows: [FetchedRow] = []
        try fetchRows(plan) { rows.append($0.fetchedRow) }
        return rows
    }

    override func fetchRows(_ plan: FetchPlan, each body: (consuming LentRow) throws -> Void) throws {
        let decoder = self.decoder(for: plan.entity)
        let plans = decoder.plans // held for the fetch: each row's plan and entity are lent
        let (sql, bindings) = try query(plan, columns: decoder.selectList)
        try withReader { db in
            let statement = try readStatement(db, sql)
            defer { statement.reset() }
            for (offset, value) in bindings.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
            while try statement.step() {
                try lendRow(statement, plans: plans, to: body)
            }
        }
    }

    override func fetchDictionaryRows(_ plan: DictionaryPlan) throws -> [ContiguousArray<StoreValue>] {
        try readDictionaryRows(plan)
    }

    override func fetchIDs(_ plan: FetchPlan) throws -> [NSManagedObjectID] {
        let (sql, bindings) = try query(plan, columns: "t0.Z_PK, t0.Z_ENT")
        return try withReader { db in try readIDs(db, sql: sql, bindings: bindings) }
    }

    override func fetchKeys(_ plan: FetchPlan) throws -> [FetchedKey] {
        let (sql, bindings) = try query(plan, columns: "t0.Z_PK, t0.Z_ENT")
        return try withReader { db in try readKeys(db, sql: sql, bindings: bindings) }
    }

    /// The object IDs of a query selecting `Z_PK, Z_ENT`.
    private func readIDs(_ db: SQLiteConnection, sql: String, bindings: [StoreValue]) throws -> [NSManagedObjectID] {
        try readKeys(db, sql: sql, bindings: bindings).map { NSManagedObjectID(entity: $0.entity, store: self, primaryKey: $0.primaryKey) }
    }

    /// The entities and primary keys of a query selecting `Z_PK, Z_ENT`.
    func readKeys(_ db: SQLiteConnection, sql: String, bindings: [StoreValue]) throws -> [FetchedKey] {
        let statement = try readStatement(db, sql)
        defer { statement.reset() }
        for (offset, value) in bindings.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
        var keys: [FetchedKey] = []
        while try statement.step() {
            guard let entity = self.entity(numbered: statement.int64(1)) else { continue }
            keys.append(FetchedKey(entity: entity, primaryKey: statement.int64(0)))
        }
        return keys
    }

    override func rows(primaryKeys: [Int64], root: NSEntityDescription) throws -> [FetchedRow] {
        try withReader { db in try readRows(primaryKeys: primaryKeys, root: root, on: db) }
    }

    override func relatedRows(for relationship: NSRelationshipDescription, owners: [Int64], ownerEntity: NSEntityDescription) throws -> [RelatedRow] {
        try withReader { db in try readRelatedRows(for: relationship, owners: owners, on: db) }
    }

    override func count(_ plan: FetchPlan) throws -> Int {
        var inner = plan
        inner.sortKeys = []
        var (sql, bindings) = try query(inner, columns: "t0.Z_PK", countOnly: true)
        var wrapped = "SELECT count(*) FROM (\(sql)"
        if let limits = Self.limits(plan.limit, plan.offset) {
            wrapped += limits.sql
            bindings += limits.bindings
        }
        wrapped += ")"
        return try withReader { db in
            let statement = try readStatement(db, wrapped)
            defer { statement.reset() }
            for (offset, value) in bindings.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
            guard try statement.step() else { return 0 }
            return Int(statement.int64(0))
        }
    }

    override func row(for id: NSManagedObjectID) throws -> RowSnapshot? {
        try withReader { db in try readRow(id, on: db) }
    }

    /// The row `id` names as `db` sees it (a reader, or the writer inside a save).
    func readRow(_ id: NSManagedObjectID, on db: SQLiteConnection) throws -> RowSnapshot? {
        guard let pk = id.primaryKey else { return nil }
        let decoder = self.decoder(for: id.entity)
        let statement = try readStatement(db, decoder.rowByKeySQL)
        defer { statement.reset() }
        statement.bind(pk, at: 1)
        guard try statement.step(), let row = try decodeRow(statement, decoder: decoder) else { return nil }
        return row.snapshot
    }

    // MARK: Writing (SQLiteStore+Save.swift)

    override func allocatePrimaryKeys(for entity: NSEntityDescription, count: Int) throws -> [Int64] {
        try allocateKeys(for: entity, count: count)
    }

    override func save(_ changes: SaveChanges, rowCache: StoreRowCache?, beforeCommitting: () throws -> Void) throws -> SaveResult {
        try saveOnWriter(changes, rowCache: rowCache, beforeCommitting: beforeCommitting)
    }

    // MARK: Batch requests (SQLiteStore+Batch*.swift)

    override func batchInsert(_ insert: BatchInsert, rowCache: StoreRowCache?) throws -> BatchOutcome {
        try batchInsertOnWriter(insert, rowCache: rowCache)
    }

    override func batchUpdate(_ update: BatchUpdate, rowCache: StoreRowCache?, beforeCommitting: (() throws -> Void)?) throws -> BatchOutcome {
        try batchUpdateOnWriter(update, rowCache: rowCache, beforeCommitting: beforeCommitting)
    }

    override func batchDelete(_ delete: BatchDelete, rowCache: StoreRowCache?, beforeCommitting: (() throws -> Void)?) throws -> BatchOutcome {
        try batchDeleteOnWriter(delete, rowCache: rowCache, beforeCommitting: beforeCommitting)
    }

    // MARK: The row cache

    /// A row of the coordinator's cache, served only if the file has not changed since the
    /// cache was last known to match it, and never waiting for a save.
    ///
    /// Every row in the cache was recorded by this store's saves, under ``writeLock``, right
    /// after their commit. Another connection's commit (another coordinator, another process)
    /// may have changed those rows: the writer's `PRAGMA data_version` changes exactly when
    /// another connection commits, so when it differs from ``cacheDataVersion`` the store's
    /// rows are dropped from the cache. The check and the lookup run under ``writeLock``, taken
    /// only if free: while a save runs, the caller reads the row from disk instead.
    override func cachedRow(for key: IDKey, in cache: StoreRowCache) -> RowSnapshot? {
        guard writeLock.try() else { return nil }
        defer { writeLock.unlock() }
        guard let writer else { return nil }
        let version = try? writer.dataVersion()
        guard let version, version == cacheDataVersion else {
            cache.forgetRows(ofStore: tag)
            cacheDataVersion = version
            return nil
        }
        return cache.row(for: key)
    }

    override func relatedIDs(for relationship: NSRelationshipDescription, of id: NSManagedObjectID) throws -> [NSManagedObjectID] {
        guard let pk = id.primaryKey, relationship.destinationEntity != nil else { return [] }
        guard let sql = schema.relatedIDsQuery(relationship) else {
            if relationship.isTransient { return [] }
            throw SQLiteSchema.unmapped(relationship)
        }
        return try withReader { db in try readIDs(db, sql: sql, bindings: [.int(pk)]) }
    }

}
