import Foundation

/// The type string of the SQLite store.
public let NSSQLiteStoreType = "SQLite"
/// The type string of the in-memory store.
public let NSInMemoryStoreType = "InMemory"
/// The type string of Apple's binary store; not available on Linux (adding one throws).
public let NSBinaryStoreType = "Binary"
/// The type string of Apple's XML store (macOS only); not available on Linux (adding one throws).
///
/// ```swift
/// try coordinator.addPersistentStore(ofType: NSXMLStoreType, configurationName: nil, at: url) // throws
/// ```
public let NSXMLStoreType = "XML"

// Store metadata keys, with Apple's values.
/// The metadata key of the store's type string (``NSSQLiteStoreType``, …).
public let NSStoreTypeKey = "NSStoreType"
/// The metadata key of the store's UUID, its ``NSPersistentStore/identifier``.
public let NSStoreUUIDKey = "NSStoreUUID"
/// The metadata key of the version hashes of the model that wrote the store: entity name to hash.
public let NSStoreModelVersionHashesKey = "NSStoreModelVersionHashes"
/// The metadata key of the version identifiers of the model that wrote the store.
public let NSStoreModelVersionIdentifiersKey = "NSStoreModelVersionIdentifiers"
/// Apple's key of the earliest operating-system version a store supports (an `NSNumber` such as
/// `1040`); declared for source compatibility, unused on Linux.
public let NSPersistentStoreOSCompatibility = "NSPersistentStoreOSCompatibility"
internal let NSStoreModelVersionHashesVersionKey = "NSStoreModelVersionHashesVersion"
internal let NSStoreModelVersionHashesDigestKey = "NSStoreModelVersionHashesDigest"
/// The metadata key of the model's version checksum (``NSManagedObjectModel/versionChecksum``),
/// which a store records when it is created; its value is Apple's, `"NSStoreModelVersionChecksumKey"`.
///
/// ```swift
/// let checksum = coordinator.metadata(for: store)[NSPersistentStoreModelVersionChecksumKey] as? String
/// ```
public let NSPersistentStoreModelVersionChecksumKey = "NSStoreModelVersionChecksumKey"
internal let NSPersistenceFrameworkVersionKey = "NSPersistenceFrameworkVersion"

/// A store of rows: the SQLite file, or memory.
///
/// Stores deal in object IDs and row snapshots, never in objects, like Apple's
/// `NSIncrementalStore`. Their methods are thread-safe: the coordinator calls them from any
/// thread, without holding its own lock, and each store orders its own work (the SQLite store
/// reads on a pool of reader connections while one writer connection saves; the in-memory store
/// takes a lock).
open class NSPersistentStore: NSObject, @unchecked Sendable {
    /// The kinds of store, by the type strings Apple uses.
    public struct StoreType: RawRepresentable, Hashable, Sendable {
        /// The type string.
        public let rawValue: String
        /// The store type whose type string is `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A SQLite file in Core Data's layout.
        public static let sqlite = StoreType(rawValue: NSSQLiteStoreType)
        /// A store that lives only in memory.
        public static let inMemory = StoreType(rawValue: NSInMemoryStoreType)
        /// Apple's binary store; not available on Linux.
        public static let binary = StoreType(rawValue: NSBinaryStoreType)
        /// Apple's XML store (macOS); not available on Linux.
        public static let xml = StoreType(rawValue: NSXMLStoreType)
    }

    /// The store's file, if any. (Thread-safe: ``NSPersistentStoreCoordinator/setURL(_:for:)``
    /// may change it while requests on other threads read it.)
    open var url: URL? {
        get { urlLock.lock(); defer { urlLock.unlock() }; return _url }
        set { urlLock.lock(); defer { urlLock.unlock() }; _url = newValue }
    }
    private var _url: URL?
    private let urlLock = NSLock()
    /// The store's UUID (`NSStoreUUID` in its metadata).
    open var identifier: String!
    /// The store's configuration name (`"PF_DEFAULT_CONFIGURATION_NAME"` by default, as on Apple platforms).
    open var configurationName: String
    /// The options the store was added with.
    open private(set) var options: [AnyHashable: Any]?
    /// Whether the store refuses saves.
    open var isReadOnly: Bool
    /// The store's metadata dictionary.
    open var metadata: [String: Any]! {
        get { metadataLock.lock(); defer { metadataLock.unlock() }; return _metadata }
        set { metadataLock.lock(); defer { metadataLock.unlock() }; _metadata = newValue }
    }
    private var _metadata: [String: Any]!
    /// Guards ``metadata``: the coordinator reads it on any thread while a save may replace it.
    private let metadataLock = NSLock()
    /// The coordinator the store belongs to.
    open internal(set) weak var persistentStoreCoordinator: NSPersistentStoreCoordinator?

    /// A small number that distinguishes this store's object IDs from other stores'.
    internal let tag: Int
    private static let tags = AtomicCounter()
    /// Whether contexts tell the store which of its objects they register and let go of
    /// (`NSIncrementalStore`'s `managedObjectContextDidRegisterObjects(with:)`): marked in its
    /// ``tag`` (`IDKey.reportedStoreFlag`), so the built-in stores' objects cost no lookup.
    internal class var reportsRegistrations: Bool { false }

    /// The store's type string.
    open var type: String { NSSQLiteStoreType }

    /// Creates a store for `root`, with configuration `name` (`nil`: the default) and the file at
    /// `url`. The coordinator calls it when a store is added, and subclasses from their own
    /// initializer; apps add stores with
    /// ``NSPersistentStoreCoordinator/addPersistentStore(ofType:configurationName:at:options:)``.
    public init(persistentStoreCoordinator root: NSPersistentStoreCoordinator?, configurationName name: String?, at url: URL, options: [AnyHashable: Any]? = nil) {
        self.persistentStoreCoordinator = root
        self.configurationName = name ?? "PF_DEFAULT_CONFIGURATION_NAME"
        self._url = url
        self.options = options
        self.isReadOnly = (options?[NSReadOnlyPersistentStoreOption] as? Bool) ?? false
        self.tag = Int(Self.tags.next()) | (Self.reportsRegistrations ? IDKey.reportedStoreFlag : 0)
        super.init()
    }

    /// Reads a store file's metadata without adding the store.
    open class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        try SQLiteStore.readMetadata(at: url)
    }

    /// Replaces the metadata of the store file at `url` (a SQLite store) without adding it, as
    /// ``NSPersistentStoreCoordinator/setMetadata(_:forPersistentStoreOfType:at:options:)`` does.
    ///
    /// ```swift
    /// try NSPersistentStore.setMetadata(["imported": true], forPersistentStoreAt: url)
    /// ```
    open class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreAt url: URL) throws {
        try SQLiteStore.replaceMetadata(metadata, at: url)
    }

    /// The class of the migration manager that migrates stores of this type: ``NSMigrationManager``.
    ///
    /// ```swift
    /// let managerClass = type(of: store).migrationManagerClass() as? NSMigrationManager.Type
    /// ```
    open class func migrationManagerClass() -> AnyClass {
        NSMigrationManager.self
    }

    /// Loads the store's metadata (and creates the store if it does not exist).
    open func loadMetadata() throws {}

    /// Called once the store is added to `coordinator` (by `addPersistentStore` or a
    /// migration); the base does nothing. Override it to start work that needs the coordinator.
    ///
    /// ```swift
    /// override func didAdd(to coordinator: NSPersistentStoreCoordinator) { startListening() }
    /// ```
    open func didAdd(to coordinator: NSPersistentStoreCoordinator) {}

    /// Called before the store is removed from `coordinator` (`remove(_:)`, a destroy, a
    /// migration that replaces it); the base does nothing. Override it to clean up.
    ///
    /// ```swift
    /// override func willRemove(from coordinator: NSPersistentStoreCoordinator?) { stopListening() }
    /// ```
    open func willRemove(from coordinator: NSPersistentStoreCoordinator?) {}

    // MARK: The store API the coordinator uses (internal; shaped like NSIncrementalStore)

    /// The model the store serves.
    internal var model: NSManagedObjectModel { persistentStoreCoordinator!.managedObjectModel }

    /// Opens (creating if needed) and checks the store against `model`.
    internal func open(model: NSManagedObjectModel) throws {}
    /// Closes the store's files.
    internal func close() {}
    /// Rows matching a plan, in order.
    internal func fetchRows(_ plan: FetchPlan) throws -> [FetchedRow] { [] }
    /// Rows matching a plan, in order, lent to `body` one at a time as they are read (see
    /// ``LentRow``): a fetch makes its objects without holding an array of rows (the SQLite
    /// store decodes each row into `body`).
    internal func fetchRows(_ plan: FetchPlan, each body: (consuming LentRow) throws -> Void) throws {
        // Each row is held by the array while it is lent.
        for row in try fetchRows(plan) { try body(LentRow(lending: row)) }
    }
    /// The rows of a dictionary fetch: one value per column of the plan, in column order.
    internal func fetchDictionaryRows(_ plan: DictionaryPlan) throws -> [ContiguousArray<StoreValue>] {
        throw CoreDataError.make(.unsupportedRequestType, "The \(type) store does not answer dictionary fetches")
    }
    /// The IDs of rows matching a plan, in order.
    internal func fetchIDs(_ plan: FetchPlan) throws -> [NSManagedObjectID] { try fetchRows(plan).map(\.id) }
    /// The entities and primary keys of the rows matching a plan, in order, without their
    /// values (a batched fetch, `includesPropertyValues` false).
    internal func fetchKeys(_ plan: FetchPlan) throws -> [FetchedKey] {
        try fetchIDs(plan).map { FetchedKey(entity: $0.entity, primaryKey: $0.key.value) }
    }
    /// The rows of `root`'s table whose primary keys are `primaryKeys`, in any order; keys of
    /// rows that no longer exist are left out (a batch of a batched fetch, prefetched to-ones).
    internal func rows(primaryKeys: [Int64], root: NSEntityDescription) throws -> [FetchedRow] {
        try primaryKeys.compactMap { pk in
            try row(for: NSManagedObjectID(entity: root, store: self, primaryKey: pk)).map { FetchedRow(store: self, primaryKey: pk, snapshot: $0) }
        }
    }
    /// The destination rows of the to-many `relationship` of every owner in `owners` (primary
    /// keys of `ownerEntity`'s table), each with its owner, each owner's rows in the
    /// relationship's order (prefetching).
    internal func relatedRows(for relationship: NSRelationshipDescription, owners: [Int64], ownerEntity: NSEntityDescription) throws -> [RelatedRow] {
        var result: [RelatedRow] = []
        for owner in owners {
            for id in try relatedIDs(for: relationship, of: NSManagedObjectID(entity: ownerEntity, store: self, primaryKey: owner)) {
                if let snapshot = try row(for: id) { result.append(RelatedRow(owner: owner, row: FetchedRow(id: id, snapshot: snapshot))) }
            }
        }
        return result
    }
    /// Whether a context's fetch of objects from this store returns faults, whose rows are
    /// read when they fire (``fetchKeys(_:)`` then ``row(for:)``), never batched: an
    /// `NSIncrementalStore`, whose `newValuesForObject(with:with:)` Apple calls only when a
    /// fault fires. The built-in stores read the rows with the fetch.
    internal var fetchesFaults: Bool { false }
    /// The number of rows matching a plan.
    internal func count(_ plan: FetchPlan) throws -> Int { try fetchRows(plan).count }
    /// One row, or `nil` if it does not exist (firing a fault).
    internal func row(for id: NSManagedObjectID) throws -> RowSnapshot? { nil }
    /// The row for `key` from `cache` if the store can vouch that it is still what the store
    /// holds, without waiting for a save; `nil` sends the caller to ``row(for:)``. Stores that
    /// do not use a row cache return `nil`.
    internal func cachedRow(for key: IDKey, in cache: StoreRowCache) -> RowSnapshot? { nil }
    /// The destination IDs of a to-many relationship of the object `id`, in order.
    internal func relatedIDs(for relationship: NSRelationshipDescription, of id: NSManagedObjectID) throws -> [NSManagedObjectID] { [] }
    /// Hands out `count` primary keys for `entity`, consecutive and in order.
    internal func allocatePrimaryKeys(for entity: NSEntityDescription, count: Int) throws -> [Int64] { [] }
    /// Whether the store makes its new objects' IDs of the objects themselves (the stores you
    /// write: `NSIncrementalStore`, `NSAtomicStore`), through ``permanentIDs(for:)``, before a
    /// save builds its changes; the built-in stores allocate keys in their save.
    internal var makesIDsOfObjects: Bool { false }

    /// Whether `other` is this store opened a second time: the same location (a file through
    /// any path to it), or the same UUID (two copies of one file, whose object IDs would be
    /// one another's). An in-memory store is only ever itself.
    internal func isSameStore(as other: NSPersistentStore) -> Bool {
        guard self !== other, !(self is InMemoryStore), !(other is InMemoryStore) else { return self === other }
        if let mine = identifier, !mine.isEmpty, mine == other.identifier { return true }
        return other.url.map(isAt) ?? false
    }

    /// Whether this store is at `url` (``isSameLocation(_:_:)``); an in-memory store never is.
    internal func isAt(_ url: URL) -> Bool {
        !(self is InMemoryStore) && (self.url.map { Self.isSameLocation($0, url) } ?? false)
    }

    /// Whether two store URLs name one place: one file through any path to it (a SQLite
    /// `/dev/null` store is in memory, never the same), or the same URL.
    internal static func isSameLocation(_ url: URL, _ otherURL: URL) -> Bool {
        if url.isFileURL != otherURL.isFileURL { return false }
        if url.isFileURL {
            if SQLiteStore.isInMemory(url) || SQLiteStore.isInMemory(otherURL) { return false }
            // (A file not written yet: its folder resolved, then its name.)
            func resolved(_ url: URL) -> URL {
                let standard = url.standardizedFileURL
                if FileManager.default.fileExists(atPath: standard.path) { return standard.resolvingSymlinksInPath() }
                return standard.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(standard.lastPathComponent)
            }
            return resolved(url) == resolved(otherURL)
        }
        return url.absoluteString == otherURL.absoluteString
    }
    /// The reference objects behind the IDs of a store you write (`NSIncrementalStore`,
    /// `NSAtomicStore`); `nil` for the built-in stores, whose IDs are primary keys
    /// (`Store/Incremental/ReferenceObjectIDs.swift`).
    internal var references: IncrementalStoreReferences? { nil }
    /// Permanent IDs for new objects of this store, one per object, in order (stores whose
    /// ``makesIDsOfObjects`` is true).
    internal func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID] {
        throw CoreDataError.make(.unsupportedRequestType, "The \(type) store allocates its keys when it saves")
    }
    /// Writes one save: all or nothing. Throws ``StoreConflictError`` on optimistic-locking conflicts.
    /// A store that uses `rowCache` records the rows it wrote there, in commit order.
    ///
    /// `beforeCommitting` runs once the changes are written and checked, before they are committed:
    /// if it throws, nothing is committed and the error goes on to the caller. (The coordinator
    /// writes a save to several stores by nesting each store's save in the previous one's
    /// `beforeCommitting`, so that a store that fails leaves the others as they were.)
    internal func save(_ changes: SaveChanges, rowCache: StoreRowCache?, beforeCommitting: () throws -> Void) throws -> SaveResult {
        try beforeCommitting()
        return SaveResult()
    }
    /// Runs a batch insert in one transaction (`Batch/`); a store that uses `rowCache` drops
    /// the rows it changed from it.
    internal func batchInsert(_ insert: BatchInsert, rowCache: StoreRowCache?) throws -> BatchOutcome {
        throw CoreDataError.make(.unsupportedRequestType, "The \(type) store does not run batch inserts")
    }
    /// Runs a batch update in one transaction; `beforeCommitting`, when given, runs once the rows
    /// are written, before the commit, as a save's does (the coordinator nests the stores of one
    /// request so that a store that fails leaves the others as they were).
    internal func batchUpdate(_ update: BatchUpdate, rowCache: StoreRowCache?, beforeCommitting: (() throws -> Void)? = nil) throws -> BatchOutcome {
        throw CoreDataError.make(.unsupportedRequestType, "The \(type) store does not run batch updates")
    }
    /// Runs a batch delete in one transaction, delete rules included; `beforeCommitting` as a
    /// batch update's.
    internal func batchDelete(_ delete: BatchDelete, rowCache: StoreRowCache?, beforeCommitting: (() throws -> Void)? = nil) throws -> BatchOutcome {
        throw CoreDataError.make(.unsupportedRequestType, "The \(type) store does not run batch deletes")
    }
    /// Writes the metadata dictionary.
    internal func writeMetadata(_ metadata: [String: Any]) throws {}
}
