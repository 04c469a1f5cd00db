import CSQLite
import Foundation
import Synchronization

/// Connects contexts to stores: it owns the model and the stores, routes fetches and saves to
/// the right store, and keeps a cache of the rows its contexts saved.
///
/// ```swift
/// let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
/// try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil,
///                                    at: storeURL, options: nil)
/// let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
/// context.persistentStoreCoordinator = coordinator
/// ```
///
/// A coordinator is `Sendable`: contexts on any queue share it. Its lock guards only its own
/// state (the store list and the per-entity routing); requests run on the stores without it,
/// and the stores order their own work, so a fetch or a fault never waits for another
/// context's save.
open class NSPersistentStoreCoordinator: NSObject, @unchecked Sendable {
    /// The model of the coordinator's stores; frozen from now on.
    public let managedObjectModel: NSManagedObjectModel
    /// A name for debugging.
    open var name: String?
    /// Guards ``stores`` and ``_storesByEntity``; never held across a store's I/O.
    private let stateLock = NSRecursiveLock()
    private var stores: [NSPersistentStore] = [] { didSet { _storesByEntity.removeAll() } }
    private var _storesByEntity: [ObjectIdentifier: [NSPersistentStore]] = [:]
    private let queue = DispatchQueue(label: "NSPersistentStoreCoordinator")
    /// Held by a context for a whole save, conflict resolution and retries included.
    private let saveLock = NSRecursiveLock()
    /// The thread holding ``saveLock`` (its `pthread_self()` bits), or 0. Written only by that
    /// thread with the lock held; any thread may read it, and finds its own only while it holds.
    private let saveLockHolder = Atomic<UInt>(0)
    /// How many times the holder took ``saveLock`` (guarded by it).
    private var saveLockDepth = 0
    /// Serializes the blocks of ``perform(_:)`` and ``performAndWait(_:)`` with each other.
    internal let performLock = NSRecursiveLock()
    /// Whether the coordinator posts its store notifications (``postStoresDidChange(added:removed:uuidChanged:)``):
    /// off for the coordinators a migration makes for itself, which the app never sees. Set
    /// before the coordinator is used.
    internal var postsStoreNotifications = true
    /// Called by ``migratePersistentStore(_:to:options:withType:)`` once the copy is made, before
    /// the old store goes, under the save lock (tests start a concurrent save there).
    nonisolated(unsafe) internal var migrationWillSwapHook: (() -> Void)?
    /// The stores a ``remove(_:)`` is removing (guarded by ``stateLock``): a second removal throws.
    private var removing: Set<ObjectIdentifier> = []
    /// Snapshots of the rows this coordinator's saves wrote (see ``RowCache``).
    internal let rowCache = RowCache()
    /// How many of the stores are stores you write (`NSIncrementalStore`, `NSAtomicStore`), whose
    /// saves need their new objects' permanent IDs first (read without the lock by every save).
    private let incrementalStoreCount = Atomic<Int>(0)
    internal var hasIncrementalStores: Bool { incrementalStoreCount.load(ordering: .relaxed) > 0 }
    /// How many stores the coordinator has (read without the lock by every save with join rows).
    private let storeCount = Atomic<Int>(0)
    internal var hasSeveralStores: Bool { storeCount.load(ordering: .relaxed) > 1 }

    /// Creates a coordinator for `model`, which can no longer change.
    public init(managedObjectModel model: NSManagedObjectModel) {
        self.managedObjectModel = model
        super.init()
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
        model.freeze()
        LoadedModels.add(model)
        NSPersistentHistoryToken.registerArchiveNames() // so that archived tokens decode
    }

    deinit {
        // A store may outlive its coordinator (object IDs hold it): a SQLite store's connections,
        // files and remote change notifications end with the coordinator, as a removal ends
        // them. A PostgreSQL store's listener stops; its sessions end with the store (closing
        // them here, on whatever thread let the coordinator go, raced a process's exit in libpq's
        // TLS library and crashed it).
        for case let store as SQLiteStore in stores { store.close() }
        for case let store as PostgreSQLStore in stores { store.stopListening() }
    }

    /// The stores added to the coordinator.
    open var persistentStores: [NSPersistentStore] { withLock { stores } }

    /// Runs `body` holding the coordinator's lock.
    internal func withLock<T>(_ body: () throws -> T) rethrows -> T {
        stateLock.lock()
        defer { stateLock.unlock() }
        return try body()
    }

    /// Runs `body` while no other context saves through this coordinator (reads do not wait for it).
    internal func withSaveLock<T>(_ body: () throws -> T) rethrows -> T {
        takeSaveLock()
        defer { giveBackSaveLock() }
        return try body()
    }

    /// Takes the save lock (recursive), waiting for it; ``giveBackSaveLock()`` gives it back.
    internal func takeSaveLock() {
        saveLock.lock()
        noteSaveLockTaken()
    }

    /// Takes the save lock if no other thread holds it; whether it did.
    internal func tryTakeSaveLock() -> Bool {
        guard saveLock.try() else { return false }
        noteSaveLockTaken()
        return true
    }

    private func noteSaveLockTaken() {
        saveLockDepth += 1
        if saveLockDepth == 1 { saveLockHolder.store(CurrentThread.bits, ordering: .relaxed) }
    }

    /// Gives back the save lock once.
    internal func giveBackSaveLock() {
        saveLockDepth -= 1
        if saveLockDepth == 0 { saveLockHolder.store(0, ordering: .relaxed) }
        saveLock.unlock()
    }

    /// Marks the coordinator's queue, so that a block on it (or in its `sync`) is recognized.
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    /// Whether a block given now must run at once on the calling thread rather than wait for the
    /// queue: the caller is a block of this coordinator already, or holds its save lock (code a
    /// context's save runs, such as a merge policy), which the blocks on the queue wait for.
    private var runsBlocksInline: Bool {
        DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self)
            || saveLockHolder.load(ordering: .relaxed) == CurrentThread.bits
    }

    /// Runs `block` asynchronously on the coordinator's queue, after the blocks given before.
    open func perform(_ block: @escaping @Sendable () -> Void) {
        queue.async { self.serialized(block) }
    }

    /// Runs `block` on the coordinator's queue and waits for it: after the blocks given before
    /// with ``perform(_:)``, and alone among the coordinator's blocks and its contexts' saves
    /// (not their fetches, which do not wait for it). Called from a block of the coordinator, or
    /// from code a save runs, it runs at once.
    open func performAndWait(_ block: () -> Void) {
        performAndWait(returning: block)
    }

    /// Runs `block` as the `Void` `performAndWait(_:)` does, and returns its value or throws its error.
    ///
    /// ```swift
    /// let names = coordinator.performAndWait { coordinator.persistentStores.map(\.type) }
    /// ```
    open func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        try performAndWait(returning: block)
    }

    private func performAndWait<T>(returning block: () throws -> T) rethrows -> T {
        if runsBlocksInline { return try serialized(block) }
        return try queue.sync { try serialized(block) }
    }

    /// Runs `body` alone among the coordinator's blocks and its contexts' saves.
    private func serialized<T>(_ body: () throws -> T) rethrows -> T {
        // The save lock first, in the order a context's save takes it: a block that saves a
        // context cannot deadlock with a save resolving its conflicts.
        try withSaveLock {
            performLock.lock()
            defer { performLock.unlock() }
            return try body()
        }
    }

    /// Runs `block` on the coordinator's queue, after the blocks given before, and returns its
    /// value or throws its error. As Apple's (and the context's), the value need not be `Sendable`.
    ///
    /// ```swift
    /// let stores = await coordinator.perform { coordinator.persistentStores.count }
    /// ```
    @preconcurrency
    open func perform<T>(_ block: @escaping @Sendable () throws -> T) async rethrows -> T {
        let work = UncheckedSendable(block)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<UncheckedSendable<Result<T, any Error>>, Never>) in
            queue.async { continuation.resume(returning: UncheckedSendable(Result { try self.serialized(work.value) })) }
        }
        return try rethrowing(outcome.value, as: block)
    }

    // MARK: Adding and removing stores

    /// Adds a store of type `storeType`: `NSSQLiteStoreType`, `NSInMemoryStoreType`,
    /// ``NSPostgreSQLStoreType`` once `CoreDataPostgreSQL` registered it, or a type
    /// registered with ``registerStoreClass(_:forStoreType:)``, whose class (an
    /// ``NSIncrementalStore``) is made with `init(persistentStoreCoordinator:configurationName:at:options:)`
    /// and then loads its metadata (``NSIncrementalStore/loadMetadata()``). Any other type throws 134000.
    ///
    /// Throws, leaving any existing file untouched, when the file is not a SQLite database, is
    /// damaged, or was written with a different model (`NSPersistentStoreIncompatibleVersionHashError`).
    /// With `NSMigratePersistentStoresAutomaticallyOption` and `NSInferMappingModelAutomaticallyOption`
    /// a SQLite store written with another version of the model is migrated in place first.
    /// Posts `NSPersistentStoreCoordinatorStoresDidChange` with the store once it is added.
    @discardableResult
    open func addPersistentStore(ofType storeType: String, configurationName configuration: String?, at storeURL: URL?,
                                 options: [AnyHashable: Any]? = nil) throws -> NSPersistentStore {
        let store = try addStore(ofType: storeType, configurationName: configuration, at: storeURL, options: options)
        postStoresDidChange(added: [store])
        return store
    }

    /// ``addPersistentStore(ofType:configurationName:at:options:)`` without its notification.
    /// `replacing`: a store the new one takes the place of (a migration's copy, which keeps its
    /// UUID), not refused as the same store.
    internal func addStore(ofType storeType: String, configurationName configuration: String?, at storeURL: URL?,
                           options: [AnyHashable: Any]?, replacing: NSPersistentStore? = nil) throws -> NSPersistentStore {
        try managedObjectModel.validateForUse()
        if let configuration, configuration != "Default", managedObjectModel.entities(forConfigurationName: configuration) == nil {
            throw CoreDataError.make(.persistentStoreOpen, "The model has no configuration named '\(configuration)'")
        }
        let store: NSPersistentStore
        switch storeType {
        case NSSQLiteStoreType:
            guard let storeURL, storeURL.isFileURL else {
                throw CoreDataError.make(.persistentStoreOpen, "A SQLite store needs a file URL")
            }
            store = SQLiteStore(persistentStoreCoordinator: self, configurationName: configuration, at: storeURL, options: options)
        case NSInMemoryStoreType:
            store = InMemoryStore(persistentStoreCoordinator: self, configurationName: configuration,
                                  at: storeURL ?? URL(string: "memory://\(UUID().uuidString)")!, options: options)
        case NSPostgreSQLStoreType where PostgreSQLStoreRegistry.connector != nil:
            // `import CoreDataPostgreSQL` and `registerPostgreSQLStore()` (Store/PostgreSQL/).
            guard let storeURL else { throw CoreDataError.make(.persistentStoreOpen, "A PostgreSQL store needs a postgres:// URL") }
            store = PostgreSQLStore(persistentStoreCoordinator: self, configurationName: configuration, at: storeURL, options: options)
        default:
            store = try makeRegisteredStore(ofType: storeType, configurationName: configuration, at: storeURL, options: options)
        }
        // A store already added is refused before this one opens (an open may migrate the file):
        // the same location, or for a SQLite file, the same store UUID (a copy). (Metadata that
        // can't be read here is the open's to report.)
        // (`/dev/null` is an in-memory store of its own each time: SQLiteStore+Location.swift.)
        if !(store is InMemoryStore), let storeURL = store.url,
           let existing = withLock({ stores.first { $0 !== replacing && $0.isAt(storeURL) } }) {
            throw alreadyAdded(store.url ?? url(for: existing), existing)
        }
        if store is SQLiteStore, let storeURL = store.url, !SQLiteStore.isInMemory(storeURL), withLock({ !stores.isEmpty }),
           FileManager.default.fileExists(atPath: storeURL.path),
           let uuid = (try? SQLiteStore.readMetadata(at: storeURL))?[NSStoreUUIDKey] as? String,
           let existing = withLock({ stores.first { $0 !== replacing && $0.identifier == uuid } }) {
            throw alreadyAdded(storeURL, existing)
        }
        // Opened without the lock (it reads and may create the file); added under it, unless
        // another thread added the same file meanwhile.
        try openMigratingIfAsked(store)
        let existing: NSPersistentStore? = withLock {
            if let existing = stores.first(where: { $0 !== replacing && $0.isSameStore(as: store) }) { return existing }
            stores.append(store)
            storeCount.add(1, ordering: .relaxed)
            if store.makesIDsOfObjects { incrementalStoreCount.add(1, ordering: .relaxed) }
            return nil
        }
        if let existing {
            store.close()
            throw alreadyAdded(store.url ?? url(for: existing), existing)
        }
        store.didAdd(to: self)
        return store
    }

    /// 134081, as Apple's "Can't add the same store twice": a second store on one file would
    /// read every row twice, and its save would write over the first's.
    private func alreadyAdded(_ url: URL, _ existing: NSPersistentStore) -> NSError {
        CoreDataError.make(.persistentStoreAlreadyAdded,
                           "Can't add the same store twice: the store at \(url.isFileURL ? url.path : PostgreSQLURL.masked(url)) (UUID \(existing.identifier ?? "?")) is already added to this coordinator",
                           extra: [NSAffectedStoresErrorKey: [existing]])
    }

    /// Adds a store of `type`; the newer spelling of ``addPersistentStore(ofType:configurationName:at:options:)``.
    @discardableResult
    open func addPersistentStore(type: NSPersistentStore.StoreType, configuration: String? = nil, at storeURL: URL,
                                 options: [AnyHashable: Any]? = nil) throws -> NSPersistentStore {
        try addPersistentStore(ofType: type.rawValue, configurationName: configuration, at: storeURL, options: options)
    }

    /// Removes a store from the coordinator, closing its file (after a save under way on it
    /// has finished; requests that arrive later throw). Posts `NSPersistentStoreCoordinatorWillRemoveStore`
    /// (its object the coordinator) before, and `NSPersistentStoreCoordinatorStoresDidChange` after.
    open func remove(_ store: NSPersistentStore) throws {
        try removeStore(store, posting: true)
    }

    /// ``remove(_:)``, posting its notifications if `posting`.
    internal func removeStore(_ store: NSPersistentStore, posting: Bool) throws {
        // Claimed first: a second removal of the same store, meanwhile, throws and posts nothing.
        try withLock {
            guard stores.contains(where: { $0 === store }), removing.insert(ObjectIdentifier(store)).inserted else {
                throw CoreDataError.make(.persistentStoreOperation, "The store is not part of this coordinator")
            }
        }
        defer { withLock { _ = removing.remove(ObjectIdentifier(store)) } }
        if posting { postWillRemoveStore() }
        store.willRemove(from: self)
        try withLock {
            guard let index = stores.firstIndex(where: { $0 === store }) else {
                throw CoreDataError.make(.persistentStoreOperation, "The store is not part of this coordinator")
            }
            stores.remove(at: index)
            storeCount.subtract(1, ordering: .relaxed)
            if store.makesIDsOfObjects { incrementalStoreCount.subtract(1, ordering: .relaxed) }
        }
        store.close()
        rowCache.forgetRows(ofStore: store.tag)
        if posting { postStoresDidChange(removed: [store]) }
    }

    /// The store at `url`, if it has been added.
    open func persistentStore(for url: URL) -> NSPersistentStore? {
        withLock { stores.first { $0.url?.standardizedFileURL == url.standardizedFileURL } }
    }

    /// The location of `store`: its file, or the `memory://` URL of an in-memory store added
    /// without one.
    ///
    /// ```swift
    /// let file = coordinator.url(for: coordinator.persistentStores[0])
    /// ```
    open func url(for store: NSPersistentStore) -> URL {
        store.url ?? URL(fileURLWithPath: "/dev/null")
    }

    // MARK: Metadata

    /// A store's metadata.
    open func metadata(for store: NSPersistentStore) -> [String: Any] {
        store.metadata ?? [:]
    }

    /// Replaces a store's metadata (written with the next save; here at once).
    ///
    /// ```swift
    /// var metadata = coordinator.metadata(for: store)
    /// metadata["lastImport"] = Date()
    /// coordinator.setMetadata(metadata, for: store)
    /// ```
    ///
    /// Traps when the store is read-only (``NSPersistentStore/isReadOnly``), as Apple's raises
    /// `NSInvalidArgumentException`: a programmer error, which this method cannot throw. That
    /// includes a SQLite store opened without ``NSPersistentHistoryTrackingKey`` whose persistent
    /// history has rows, which opens read-only; check `isReadOnly` first.
    ///
    /// The keys the store keeps for its model (`NSStoreModelVersionHashesKey`, the version
    /// identifiers, the checksum and the framework version) stay as they are when `metadata`
    /// lacks them, as the store's next save writes them on Apple platforms: a dictionary of the
    /// app's keys alone (`["lastImport": Date()]`) would otherwise leave a store that no model
    /// opens again. A write that fails is logged (this method cannot throw).
    open func setMetadata(_ metadata: [String: Any]?, for store: NSPersistentStore) {
        precondition(!store.isReadOnly, "setMetadata(_:for:): the store at \(store.url?.path ?? "") is read-only; its metadata can't be changed")
        var merged = metadata ?? [:]
        for key in Self.modelMetadataKeys where merged[key] == nil { merged[key] = store.metadata?[key] }
        merged[NSStoreUUIDKey] = store.identifier
        merged[NSStoreTypeKey] = store.type
        do {
            try store.writeMetadata(merged)
        } catch {
            CoreDataLog.warning("setMetadata(_:for:): the metadata of the store at \(store.url?.path ?? "") was not written: \(error.localizedDescription)")
        }
    }

    /// The metadata keys a store keeps for the model that wrote it.
    private static let modelMetadataKeys = [NSStoreModelVersionHashesKey, NSStoreModelVersionHashesVersionKey, NSStoreModelVersionIdentifiersKey,
                                            NSStoreModelVersionHashesDigestKey, NSPersistentStoreModelVersionChecksumKey, NSPersistenceFrameworkVersionKey]

    /// Reads the metadata of the store at `url` without adding it: a SQLite file's; for
    /// ``NSPostgreSQLStoreType``, of the store in the database the `postgres://` URL names
    /// (the password from the URL or ``NSPostgreSQLPasswordOption`` in `options`); or what the
    /// class registered for `storeType` answers (its `metadataForPersistentStore(with:)`).
    /// Throws 134000 for another type.
    open class func metadataForPersistentStore(ofType storeType: String, at url: URL, options: [AnyHashable: Any]? = nil) throws -> [String: Any] {
        if storeType == NSSQLiteStoreType { return try SQLiteStore.readMetadata(at: url) }
        if storeType == NSPostgreSQLStoreType { return try PostgreSQLStore.readMetadata(at: url, options: options) }
        if let storeClass = registeredStoreClass(forType: storeType) { return try storeClass.metadataForPersistentStore(with: url) }
        throw CoreDataError.make(.persistentStoreInvalidType,
            "Only SQLite, PostgreSQL and registered store types have metadata without a coordinator (asked for '\(storeType)')")
    }

    /// Reads the metadata of the store file at `url` without adding it.
    open class func metadataForPersistentStore(type: NSPersistentStore.StoreType, at url: URL, options: [AnyHashable: Any]? = nil) throws -> [String: Any] {
        try metadataForPersistentStore(ofType: type.rawValue, at: url, options: options)
    }

    // MARK: Destroying and replacing stores

    /// Deletes the store file at `url` and its `-wal` and `-shm` files, removing the store first if it was added.
    /// Something at `url` that is not a file (a directory, a FIFO) is refused with an error and
    /// left as it is; a damaged file is deleted (destroy and load again is how an app recovers). For `/dev/null` (an in-memory store) only the store is removed. For a registered store
    /// type (``registerStoreClass(_:forStoreType:)``) the store is removed if it was added and
    /// the file or folder at a file URL is deleted; a store at another URL is only removed. An
    /// in-memory store is removed. A PostgreSQL store's tables are dropped (an app's other tables
    /// stay). Another type is refused with 134000.
    open func destroyPersistentStore(at url: URL, ofType storeType: String, options: [AnyHashable: Any]? = nil) throws {
        switch storeType {
        case NSSQLiteStoreType:
            break
        case NSInMemoryStoreType:
            if let store = persistentStore(for: url) { try remove(store) }
            return
        case NSPostgreSQLStoreType:
            if let store = persistentStore(for: url) { try remove(store) }
            try PostgreSQLStore.destroy(at: url, options: options)
            return
        default:
            guard Self.registeredStoreClass(forType: storeType) != nil else {
                throw CoreDataError.make(.persistentStoreInvalidType, "Can't destroy a store of the unknown type '\(storeType)'")
            }
            if let store = persistentStore(for: url) { try remove(store) }
            if url.isFileURL, FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
            return
        }
        if !SQLiteStore.isInMemory(url) { try SQLiteStore.checkRegularFile(at: url) } // (an app's folder given for its store's URL)
        if let store = persistentStore(for: url) { try remove(store) }
        guard !SQLiteStore.isInMemory(url) else { return }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let path = url.path + suffix
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        }
        // External binary data lives beside the file (`.<StoreName>_SUPPORT`).
        // So does the staging folder of a heavyweight migration that did not end.
        for folder in [SQLiteStore.supportFolder(forStoreAt: url), SQLiteHeavyweightMigration.stagingFolder(forStoreAt: url)]
        where FileManager.default.fileExists(atPath: folder.path) {
            try FileManager.default.removeItem(at: folder)
        }
    }

    /// Deletes the store file at `url`; the newer spelling.
    open func destroyPersistentStore(at url: URL, type: NSPersistentStore.StoreType, options: [AnyHashable: Any]? = nil) throws {
        try destroyPersistentStore(at: url, ofType: type.rawValue, options: options)
    }

    /// Replaces the store at `destinationURL` with a copy of the store at `sourceURL`, using
    /// SQLite's backup API (safe with WAL files), and its external binary data folder with a
    /// copy of the source's. A store of a registered type (``registerStoreClass(_:forStoreType:)``)
    /// is a file (or folder) copied whole; one that is not at a file URL cannot be replaced (134000).
    open func replacePersistentStore(at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil,
                                     withPersistentStoreFrom sourceURL: URL, sourceOptions: [AnyHashable: Any]? = nil,
                                     ofType storeType: String) throws {
        if storeType != NSSQLiteStoreType, Self.registeredStoreClass(forType: storeType) != nil {
            try replaceRegisteredStoreFile(at: destinationURL, with: sourceURL, ofType: storeType)
            return
        }
        guard storeType == NSSQLiteStoreType else {
            throw CoreDataError.make(.persistentStoreInvalidType, "Only SQLite stores and registered store types can be replaced")
        }
        guard !SQLiteStore.isInMemory(destinationURL) else {
            throw CoreDataError.make(.persistentStoreOperation, "/dev/null names an in-memory store: it has no file to replace")
        }
        _ = try SQLiteStore.readMetadata(at: sourceURL)
        let source = try SQLiteConnection(path: sourceURL.path, readOnly: true, create: false)
        try FileManager.default.createDirectory(at: destinationURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        // The source's external data is copied first, beside the destination's, and takes its
        // place only once the rows that name its files are copied.
        let fileManager = FileManager.default
        let (from, to) = (SQLiteStore.supportFolder(forStoreAt: sourceURL), SQLiteStore.supportFolder(forStoreAt: destinationURL))
        let incoming = to.deletingLastPathComponent().appendingPathComponent(to.lastPathComponent + "-" + UUID().uuidString)
        if fileManager.fileExists(atPath: from.path) { try fileManager.copyItem(at: from, to: incoming) }
        defer { if fileManager.fileExists(atPath: incoming.path) { try? fileManager.removeItem(at: incoming) } }
        let destination = try SQLiteConnection(path: destinationURL.path)
        guard let backup = sqlite3_backup_init(destination.handle, "main", source.handle, "main") else {
            throw destination.lastError(sqlite3_errcode(destination.handle), "Can't copy the store")
        }
        let rc = sqlite3_backup_step(backup, -1)
        sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE else { throw destination.lastError(rc, "Can't copy the store") }
        if fileManager.fileExists(atPath: to.path) { try fileManager.removeItem(at: to) }
        if fileManager.fileExists(atPath: incoming.path) { try fileManager.moveItem(at: incoming, to: to) }
    }

    /// Replaces the store at `destinationURL` with a copy of `sourceURL`'s; the newer spelling.
    open func replacePersistentStore(at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil,
                                     withPersistentStoreFrom sourceURL: URL, sourceOptions: [AnyHashable: Any]? = nil,
                                     type: NSPersistentStore.StoreType) throws {
        try replacePersistentStore(at: destinationURL, destinationOptions: destinationOptions, withPersistentStoreFrom: sourceURL,
                                   sourceOptions: sourceOptions, ofType: type.rawValue)
    }

    // MARK: Object IDs

    /// The object ID that a URI's string names (`uriRepresentation().absoluteString`, as an
    /// app keeps it), or `nil`; Apple's iOS 18 spelling.
    ///
    /// ```swift
    /// let id = coordinator.managedObjectID(for: UserDefaults.standard.string(forKey: "lastNote")!)
    /// ```
    open func managedObjectID(for string: String) -> NSManagedObjectID? {
        URL(string: string).flatMap(managedObjectID(forURIRepresentation:))
    }

    /// The object ID that a URI from ``NSManagedObjectID/uriRepresentation()`` names, or `nil`.
    open func managedObjectID(forURIRepresentation url: URL) -> NSManagedObjectID? {
        guard url.scheme == "x-coredata", let host = url.host else { return nil }
        let parts = (URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path).split(separator: "/")
        guard parts.count == 2, parts[1].first == "p", let entity = managedObjectModel.entitiesByName[String(parts[0])] else { return nil }
        let decodedHost = host.removingPercentEncoding ?? host // (an identifier that is not a host name: NSManagedObjectID.uriHost(_:))
        guard let store = withLock({ stores.first {
            $0.identifier?.caseInsensitiveCompare(host) == .orderedSame || $0.identifier?.caseInsensitiveCompare(decodedHost) == .orderedSame
        } }) else { return nil }
        var text = String(parts[1].dropFirst())
        if let pk = Int64(text) {
            if pk > 0 { return NSManagedObjectID(entity: entity, store: store, primaryKey: pk) }
            // Another reference object of a store you write (a UUID, 0, a negative number): its
            // key, valid while the store is added.
            let root = entity.layout.rootNumber
            guard pk < 0, store.references?.reference(for: pk, root: root) != nil else { return nil }
            return NSManagedObjectID(entity: entity, store: store, key: IDKey(store: store.tag, root: root, value: pk))
        }
        // An integer reference object that is not its own key (0, a negative one).
        if text.hasPrefix(IncrementalStoreReferences.integerMarker) {
            guard let value = Int64(text.dropFirst(IncrementalStoreReferences.integerMarker.count)) else { return nil }
            return store.objectID(forURIReference: value, entity: entity)
        }
        // A string reference object of a store you write, as `uriRepresentation()` wrote it.
        if text.hasPrefix(IncrementalStoreReferences.stringMarker) { text.removeFirst(IncrementalStoreReferences.stringMarker.count) }
        guard let reference = text.removingPercentEncoding, !reference.isEmpty else { return nil }
        return store.objectID(forURIReference: reference, entity: entity)
    }

    // MARK: Routing (internal)

    /// The stores that hold `entity`'s objects (cached per entity until the stores change).
    internal func stores(for entity: NSEntityDescription) -> [NSPersistentStore] {
        withLock {
            if let cached = _storesByEntity[ObjectIdentifier(entity)] { return cached }
            let result = stores.filter { store in
                guard let entities = managedObjectModel.entities(forConfigurationName: store.configurationName) else { return true }
                return entities.contains { $0 === entity || entity.isKindOf(entity: $0) }
            }
            _storesByEntity[ObjectIdentifier(entity)] = result
            return result
        }
    }


    /// The stores that hold `entity`'s objects, of `affectedStores` if given (a request's).
    internal func stores(for entity: NSEntityDescription, among affectedStores: [NSPersistentStore]?) -> [NSPersistentStore] {
        let holding = stores(for: entity)
        guard let affectedStores else { return holding }
        return holding.filter { store in affectedStores.contains { $0 === store } }
    }

    /// The store a new object of `entity` goes to: the first that holds the entity.
    internal func store(forNew entity: NSEntityDescription) throws -> NSPersistentStore {
        guard let store = stores(for: entity).first else {
            throw CoreDataError.make(.persistentStoreSave,
                "No persistent store holds the entity '\(entity.name ?? "")'; add a store before saving")
        }
        return store
    }

    /// The stores for a fetch: those holding its entity (of its `affectedStores`, if given);
    /// throws when there are none (no store added, all removed, or none of those asked for).
    private func fetchTargets(_ plan: FetchPlan) throws -> [NSPersistentStore] {
        let targets = stores(for: plan.entity, among: plan.affectedStores)
        guard !targets.isEmpty else {
            let asked = plan.affectedStores == nil ? "" : " among the request's affectedStores"
            throw CoreDataError.make(.persistentStoreOperation, "No persistent store\(asked) holds the entity '\(plan.entity.name ?? "")': add a store before fetching")
        }
        return targets
    }

    // The requests below take the lock only to find their stores; the stores do the I/O.

    /// Dictionary-fetch rows, store by store (each store groups and aggregates its own rows).
    internal func fetchDictionaryRows(_ plan: DictionaryPlan) throws -> [ContiguousArray<StoreValue>] {
        try fetchTargets(plan.fetch).flatMap { try $0.fetchDictionaryRows(plan) }
    }

    /// The rows of every store holding the entity, store by store, lent one at a time.
    internal func fetchRows(_ plan: FetchPlan, each body: (consuming LentRow) throws -> Void) throws {
        for target in try fetchTargets(plan) { try target.fetchRows(plan, each: body) }
    }

    internal func fetchIDs(_ plan: FetchPlan) throws -> [NSManagedObjectID] {
        try fetchTargets(plan).flatMap { try $0.fetchIDs(plan) }
    }

    /// Whether a fetch of `entity`'s objects returns faults (a store holding it says so:
    /// ``NSPersistentStore/fetchesFaults``); one atomic load without a store you write.
    internal func fetchesFaults(of entity: NSEntityDescription) -> Bool {
        hasIncrementalStores && stores(for: entity).contains { $0.fetchesFaults }
    }

    /// The entities and primary keys of the matching rows, store by store.
    internal func fetchKeys(_ plan: FetchPlan) throws -> [(store: NSPersistentStore, keys: [FetchedKey])] {
        try fetchTargets(plan).map { ($0, try $0.fetchKeys(plan)) }
    }

    /// The rows of `root`'s family in `store` with the given primary keys (a fetch batch, prefetched to-ones).
    internal func rows(primaryKeys: [Int64], root: NSEntityDescription, in store: NSPersistentStore) throws -> [FetchedRow] {
        try own(store).rows(primaryKeys: primaryKeys, root: root)
    }

    /// The destination rows of a to-many relationship of many owners in `store` (prefetching).
    internal func relatedRows(for relationship: NSRelationshipDescription, owners: [Int64], ownerEntity: NSEntityDescription,
                              in store: NSPersistentStore) throws -> [RelatedRow] {
        try own(store).relatedRows(for: relationship, owners: owners, ownerEntity: ownerEntity)
    }

    /// `store`, if this coordinator still has it.
    private func own(_ store: NSPersistentStore) throws -> NSPersistentStore {
        guard withLock({ stores.contains { $0 === store } }) else {
            throw CoreDataError.make(.persistentStoreOperation, "The store at \(store.url?.path ?? "") is not one of this coordinator's stores (it was removed)")
        }
        return store
    }

    internal func count(_ plan: FetchPlan) throws -> Int {
        let targets = try fetchTargets(plan)
        guard targets.count > 1, plan.limit > 0 || plan.offset > 0 else { return try targets.reduce(0) { $0 + (try $1.count(plan)) } }
        // The limit and offset apply to the stores' rows together, not to each store's.
        var whole = plan
        (whole.limit, whole.offset) = (0, 0)
        let total = max(try targets.reduce(0) { $0 + (try $1.count(whole)) } - plan.offset, 0)
        return plan.limit > 0 ? min(total, plan.limit) : total
    }

    /// Whether a fetch of `entity` reads more than one store, so that the stores' results are
    /// sorted and limited together (by the context), not each on its own.
    internal func fetchSpansStores(_ entity: NSEntityDescription, among affectedStores: [NSPersistentStore]?) -> Bool {
        hasSeveralStores && stores(for: entity, among: affectedStores).count > 1
    }

    /// This coordinator's store for an ID: the ID's own store, or the one of ours that has the
    /// same store UUID (the same file opened by another coordinator). An ID of a store this
    /// coordinator does not have never reaches that store through this coordinator.
    internal func ownStore(of id: NSManagedObjectID) throws -> NSPersistentStore? {
        guard let store = id.persistentStore else { return nil }
        let own = withLock { stores.first { $0 === store } ?? stores.first { $0.identifier == store.identifier } }
        guard let own else {
            throw CoreDataError.make(.persistentStoreOperation,
                "The object ID \(id.uriRepresentation().absoluteString) belongs to a store this coordinator does not have (another coordinator's, or one that was removed)")
        }
        return own
    }

    /// The row for `id` (firing a fault): from the row cache (whose rows are never older than
    /// the store's: a store checks nothing else wrote the file before serving one), or from the
    /// store when `usingCache` is false or the cache has no row.
    internal func row(for id: NSManagedObjectID, usingCache: Bool = true) throws -> RowSnapshot? {
        guard let store = try ownStore(of: id) else { return nil }
        if usingCache, let pk = id.primaryKey {
            let key = IDKey(store: store.tag, root: id.entity.layout.rootNumber, value: pk)
            if rowCache.contains(key), let row = store.cachedRow(for: key, in: rowCache) { return row }
        }
        return try store.row(for: id)
    }

    internal func relatedIDs(for relationship: NSRelationshipDescription, of id: NSManagedObjectID) throws -> [NSManagedObjectID] {
        guard let store = try ownStore(of: id) else { return [] }
        return try store.relatedIDs(for: relationship, of: id)
    }

    /// `count` permanent IDs of new objects of `entity` in `store`.
    internal func permanentIDs(for entity: NSEntityDescription, count: Int, in store: NSPersistentStore) throws -> [NSManagedObjectID] {
        try store.allocatePrimaryKeys(for: entity, count: count).map {
            NSManagedObjectID(entity: entity, store: store, primaryKey: $0)
        }
    }

    /// Writes a save to its stores, all or nothing: each store's changes in one transaction,
    /// each store's transaction nested in the previous store's, committed only once every later
    /// store's has been (a store whose writes fail rolls back its own and every earlier one's).
    /// The results are in the order of `writes`; a store without changes is not written to.
    /// Each store records the rows it wrote in the row cache before the next save on it can commit.
    ///
    /// The stores are nested in the order of their files' paths or other stores' UUIDs (``saveOrderKey(of:)``; stores without a URL first,
    /// in the order the coordinator holds them), whatever order the save met them in: two
    /// coordinators on the same files, whatever order they added them in, take the files' write
    /// locks in the same order, and so never wait for each other in a circle.
    ///
    /// Across several stores, one window remains: a store whose `COMMIT` itself fails after the
    /// later stores committed theirs: the disk full or gone at that moment, or, in a rollback
    /// journal mode an app sets with `NSSQLitePragmasOption` (the store uses WAL), a `COMMIT`
    /// that finds readers still holding the file.
    internal func save(_ writes: [StoreWrite]) throws -> [SaveResult] {
        let held = withLock { stores }
        var positions: [Int] = []
        positions.reserveCapacity(writes.count)
        for write in writes {
            guard let position = held.firstIndex(where: { $0 === write.store }) else {
                throw CoreDataError.make(.persistentStoreSave,
                    "The changes belong to a store this coordinator does not have (another coordinator's, or one that was removed); nothing was saved")
            }
            positions.append(position)
        }
        let order = Self.nestingOrder(of: writes.map(\.store), positions: positions)
        var results = [SaveResult](repeating: SaveResult(), count: writes.count)
        try write(writes, in: order, from: 0, into: &results)
        return results
    }

    /// The order in which one request writes `stores`, each inside the previous one's transaction
    /// (a save; a batch update or delete): by ``saveOrderKey(of:)``, ties by `positions` (the
    /// stores' places among the coordinator's), so that two requests never take two stores'
    /// locks in opposite orders.
    static func nestingOrder(of stores: [NSPersistentStore], positions: [Int]) -> [Int] {
        guard stores.count > 1 else { return Array(stores.indices) } // one store, in almost every stack: no file paths made to order it by
        let keys = stores.indices.map { (path: saveOrderKey(of: stores[$0]), position: positions[$0]) }
        return stores.indices.sorted { keys[$0] < keys[$1] }
    }

    /// What orders a store among a save's stores: its file's path; for a store that is no file
    /// (a PostgreSQL database), its ``NSPersistentStore/identifier``, the UUID every server
    /// reads from the database (its URL is no key: two servers may spell one database
    /// differently, `localhost` or `127.0.0.1`, with a user, a port or `?sslmode=` or without, and
    /// would nest its saves in opposite orders); "" for a store without a URL.
    static func saveOrderKey(of store: NSPersistentStore) -> String {
        guard let url = store.url else { return "" }
        return url.isFileURL ? url.standardizedFileURL.path : store.identifier ?? ""
    }

    /// Writes `writes` at `order[step...]`, each store's inside the previous one's transaction.
    private func write(_ writes: [StoreWrite], in order: [Int], from step: Int, into results: inout [SaveResult]) throws {
        guard step < order.count else { return }
        let index = order[step]
        guard !writes[index].changes.isEmpty else { return try write(writes, in: order, from: step + 1, into: &results) }
        let result = try writes[index].store.save(writes[index].changes, rowCache: rowCache) {
            try write(writes, in: order, from: step + 1, into: &results)
        }
        results[index] = result
    }
}

/// One store's share of a save, as the coordinator writes it.
internal struct StoreWrite {
    var changes: SaveChanges
    let store: NSPersistentStore
}
