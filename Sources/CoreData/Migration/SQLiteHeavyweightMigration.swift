import CSQLite
import Foundation

// A heavyweight migration of a SQLite store at open: the mapping model the app ships is run by an
// `NSMigrationManager` into a new file, whose contents then take the store's place all at once.
//
// The store's write lock is held from start to end (`BEGIN IMMEDIATE` on a connection of its
// own), so no other connection, of this process or another, writes to it meanwhile; readers go on
// reading the old contents. The new store is written in a staging folder beside the store,
// `.<file>.migrationdestination/`, under the store's own file name, so its external data lands in
// the staging folder's `.<Name>_SUPPORT/`. Then, still in the same transaction, the new file is
// attached, every table of the store is dropped, the new file's tables, indexes and triggers are
// made in their place and filled from it, and its external data files (each named by a UUID) are
// moved into the store's folder. `COMMIT` is the moment the store is migrated: SQLite's own
// journal makes it atomic, the `-wal` and `-shm` files included, and every other connection sees
// the new contents as it would any commit.
//
// A process killed before `COMMIT` leaves the original store, plus files no row names: external
// data files moved in (removed by the next read-write open of the store, as after a killed save)
// and the staging folder (removed by the next migration, or by that open). The staging folder goes
// just before `COMMIT`; one killed after it leaves the migrated store and the old external data
// files, which that open removes too.

internal enum SQLiteHeavyweightMigration {
    /// One heavyweight migration at a time in this process: a second one waits here for as long
    /// as the first takes, rather than for the write lock's busy timeout.
    private static let lock = NSLock()

    #if DEBUG
    /// For the kill tests: called with the name of each step as it is reached (`written`, `moved`,
    /// `committed`), in the child process a test kills there.
    nonisolated(unsafe) static var stepHook: ((String) -> Void)?
    #endif

    private static func reached(_ step: String) {
        #if DEBUG
        stepHook?(step)
        #endif
    }

    /// `.<file>.migrationdestination/` beside the store at `url`: where the new store is written.
    static func stagingFolder(forStoreAt url: URL) -> URL {
        url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).migrationdestination", isDirectory: true)
    }

    /// Migrates the store at `url` from `source` to `destination` through `mapping` with an
    /// ``NSMigrationManager``, and puts the new store's contents in its place in one transaction.
    /// `options` are the store's: the new store is made with them (less the migration options).
    /// Does nothing when the store turns out to be of `destination` already (another coordinator
    /// or process migrated it meanwhile). A failure throws the manager's error (or the SQLite
    /// error that stopped the transaction) and leaves the store as it was. `progress`, when
    /// given, follows the manager's ``NSMigrationManager/migrationProgress`` (a thousand units).
    static func migrateStore(at url: URL, options: [AnyHashable: Any]?, from source: NSManagedObjectModel,
                             to destination: NSManagedObjectModel, mapping: NSMappingModel, progress: Progress?) throws {
        lock.lock()
        defer { lock.unlock() }
        let fileManager = FileManager.default
        let staging = stagingFolder(forStoreAt: url)
        let original = try SQLiteConnection(path: SQLiteStore.databaseName(for: url), readOnly: false, create: false)
        try original.execute("PRAGMA foreign_keys = OFF")
        let migrated: Bool = try original.transaction {
            let metadata = try SQLiteStore.readMetadata(original)
            if destination.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { return false }
            // What a killed migration left (no migration runs without this lock).
            if fileManager.fileExists(atPath: staging.path) { try fileManager.removeItem(at: staging) }
            try fileManager.createDirectory(at: staging, withIntermediateDirectories: true)
            let newStore = staging.appendingPathComponent(url.lastPathComponent)
            let manager = NSMigrationManager(sourceModel: source, destinationModel: destination)
            manager.progress = progress
            let migrationKeys: Set<AnyHashable> = [NSMigratePersistentStoresAutomaticallyOption, NSInferMappingModelAutomaticallyOption,
                                                   NSPersistentStoreStagedMigrationManagerOptionKey, NSReadOnlyPersistentStoreOption]
            let storeOptions = (options ?? [:]).filter { !migrationKeys.contains($0.key) }
            // The new file records no history of its own: the store's history tables stay as they are.
            let newStoreOptions = storeOptions.filter { $0.key != AnyHashable(NSPersistentHistoryTrackingKey) }
            do {
                try manager.migrateStore(from: url, sourceType: NSSQLiteStoreType, options: storeOptions, with: mapping,
                                         toDestinationURL: newStore, destinationType: NSSQLiteStoreType, destinationOptions: newStoreOptions)
                reached("written")
                guard FileManager.default.fileExists(atPath: newStore.path) else {
                    throw MigrationErrors.migration("The migration manager wrote no store at \(newStore.path)", [NSFilePathErrorKey: newStore.path])
                }
                try replaceContents(of: original, with: newStore, source: source)
                // The store keeps its UUID and its own metadata keys (its objects are new: new keys).
                try SQLiteLightweightMigration.writeMetadata(metadata, of: destination, to: original)
                try moveExternalData(of: newStore, toStoreAt: url)
                // Still under the lock: after the COMMIT another migration may use the folder.
                try fileManager.removeItem(at: staging)
                reached("moved")
            } catch {
                removeQuietly(staging) // the migration's own error is the one to report
                throw error
            }
            return true
        }
        guard migrated else { return }
        reached("committed")
        try? original.execute("DETACH DATABASE migrated") // SQLite refuses it inside the transaction; the file is gone already
    }

    /// Replaces Core Data's tables of the database `db` is in a transaction on (the `source`
    /// model's entity and join tables, `Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`) with those of
    /// the store file at `newStore`, rows, indexes and triggers included. Other tables (persistent
    /// history's `A…`, an app's own, `ZIPCODES` too) stay, and so do the `Z_PRIMARYKEY` rows of
    /// history's entities (16001 and up), whose keys go on from where they were.
    private static func replaceContents(of db: SQLiteConnection, with newStore: URL, source: NSManagedObjectModel) throws {
        let sourceSchema = try SQLiteSchema(model: source, reading: db, lenient: true)
        func bare(_ name: String) -> String { name.replacingOccurrences(of: "\"", with: "").uppercased() }
        var coreDataTables: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]
        for storage in sourceSchema.storage.compactMap({ $0 }) { coreDataTables.insert(bare(storage.table)) }
        for case .join(let join, _, _, _) in sourceSchema.toMany.values { coreDataTables.insert(bare(join)) }
        let attach = try db.prepare("ATTACH DATABASE ? AS migrated")
        defer { attach.finalize() }
        attach.bind(newStore.path, at: 1)
        _ = try attach.step()
        func names(_ sql: String) throws -> [[String]] {
            let statement = try db.prepare(sql)
            defer { statement.finalize() }
            var rows: [[String]] = []
            while try statement.step() { rows.append((0..<sqlite3_column_count(statement.stmt)).map { statement.string($0) }) }
            return rows
        }
        func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        let ancillaryKeys = try names("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM main.Z_PRIMARYKEY WHERE Z_ENT >= \(SQLiteHistory.entityOffset)")
        let replaced = Set(try names("SELECT name FROM migrated.sqlite_master WHERE type = 'table'").map { bare($0[0]) })
        for row in try names("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name LIKE 'Z%'")
        where coreDataTables.contains(bare(row[0])) || replaced.contains(bare(row[0])) {
            try db.execute("DROP TABLE main.\(quoted(row[0]))")
        }
        // Tables first (in the order the new file made them), then their indexes and triggers.
        let objects = try names("""
            SELECT type, name, sql FROM migrated.sqlite_master WHERE sql IS NOT NULL AND tbl_name LIKE 'Z%'
            ORDER BY type <> 'table', rowid
            """)
        for object in objects {
            try db.execute(object[2])
            if object[0] == "table" {
                try db.execute("INSERT INTO main.\(quoted(object[1])) SELECT * FROM migrated.\(quoted(object[1]))")
            }
        }
        for row in ancillaryKeys {
            try db.execute("INSERT OR REPLACE INTO main.Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (\(row[0]), '\(row[1])', \(row[2]), \(row[3]))")
        }
        if try db.scalarInt("SELECT count(*) FROM migrated.sqlite_master WHERE name = 'sqlite_sequence'") == 1 {
            try db.execute("DELETE FROM main.sqlite_sequence")
            try db.execute("INSERT INTO main.sqlite_sequence SELECT * FROM migrated.sqlite_sequence")
        }
    }

    /// Moves the external data files of the new store into the store's own folder (new names: the
    /// store's rows don't name them until the transaction commits).
    private static func moveExternalData(of newStore: URL, toStoreAt url: URL) throws {
        guard let from = SQLiteStore.externalDataFolder(forStoreAt: newStore), let to = SQLiteStore.externalDataFolder(forStoreAt: url),
              FileManager.default.fileExists(atPath: from.path) else { return }
        let names = try FileManager.default.contentsOfDirectory(atPath: from.path)
        guard !names.isEmpty else { return }
        try FileManager.default.createDirectory(at: to, withIntermediateDirectories: true)
        for name in names {
            try FileManager.default.moveItem(at: from.appendingPathComponent(name), to: to.appendingPathComponent(name))
        }
    }

    /// Removes a staging folder whose contents no store needs; one that can't be removed is left
    /// for the next migration or open, with a warning.
    private static func removeQuietly(_ staging: URL) {
        guard FileManager.default.fileExists(atPath: staging.path) else { return }
        do {
            try FileManager.default.removeItem(at: staging)
        } catch {
            CoreDataLog.warning("The staging folder of a migration, \(staging.path), was left: \(error)")
        }
    }
}

extension NSPersistentStoreCoordinator {
    /// For `coredata migrate --mapping`: migrates the SQLite or PostgreSQL store at `url` from
    /// `sourceModel` to `destinationModel` through `mapping` as a store open does with a mapping
    /// model the app ships, reporting to the current `Progress` when there is one.
    package static func migrateStore(at url: URL, ofType type: String = NSSQLiteStoreType, from sourceModel: NSManagedObjectModel,
                                     to destinationModel: NSManagedObjectModel, mapping: NSMappingModel) throws {
        if type == NSPostgreSQLStoreType {
            try PostgreSQLHeavyweightMigration.migrateStore(at: url, options: nil, from: sourceModel, to: destinationModel, mapping: mapping,
                                                            progress: Progress(totalUnitCount: 1000))
        } else {
            try SQLiteHeavyweightMigration.migrateStore(at: url, options: nil, from: sourceModel, to: destinationModel, mapping: mapping,
                                                        progress: Progress(totalUnitCount: 1000))
        }
    }
}
