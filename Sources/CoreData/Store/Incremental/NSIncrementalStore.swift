import Foundation

/// The base of a store you write: Core Data asks it for objects' values and hands it each save,
/// through the methods below, as on Apple platforms.
///
/// ```swift
/// final class NotesStore: NSIncrementalStore {
///     override func loadMetadata() throws {
///         metadata = [NSStoreTypeKey: "NotesStore", NSStoreUUIDKey: "6A0E…"] // both required
///     }
///     override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any { … }
///     override func newValuesForObject(with objectID: NSManagedObjectID,
///                                      with context: NSManagedObjectContext) throws -> NSIncrementalStoreNode { … }
///     override func newValue(forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
///                            with context: NSManagedObjectContext?) throws -> Any { … }
///     override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] { … }
/// }
///
/// NSPersistentStoreCoordinator.registerStoreClass(NotesStore.self, forStoreType: "NotesStore")
/// try coordinator.addPersistentStore(ofType: "NotesStore", configurationName: nil, at: url)
/// ```
///
/// What the store is asked (`docs/PORTING.md` says where this differs from Apple's):
/// - ``loadMetadata()`` when the store is added; it must set ``NSPersistentStore/metadata`` with
///   `NSStoreTypeKey` and `NSStoreUUIDKey` (strings), else adding the store throws 134080.
/// - ``execute(_:with:)`` with an `NSFetchRequest<NSFetchRequestResult>` for every fetch that
///   reaches the store: it returns the matching objects (`.managedObjectResultType`: objects of
///   the context it is given, `context.object(with: newObjectID(for:referenceObject:))`) or
///   their IDs (`.managedObjectIDResultType`), filtered by the request's predicate, in the
///   order of its sort descriptors, with its offset and limit; `[count]` for
///   `.countResultType`; for `.dictionaryResultType`, one dictionary per result keyed by the
///   names of `propertiesToFetch` (grouped by `propertiesToGroupBy`, filtered by
///   `havingPredicate`). Core Data does not filter or sort them again.
///   A fetch of objects returns them as faults, unless the store filled them itself.
/// - ``newValuesForObject(with:with:)`` when an object's fault fires (and, before a save, for the
///   updated and deleted objects' versions); ``newValue(forRelationship:forObjectWith:with:)``
///   when a to-many relationship is read (or, when the fault fires, for a to-one the node left out).
/// - ``obtainPermanentIDs(for:)`` for the new objects of a save (or of the context's
///   `obtainPermanentIDs(for:)`), then ``execute(_:with:)`` with an ``NSSaveChangesRequest``,
///   after Core Data checked each updated or deleted object's version against its node's.
///
/// The context each call is handed is the one that asked: the fetching or faulting context (for
/// a child context, the root context its request reaches the coordinator through), the saving
/// context for a save; a request that comes from no context gets a private context of its own.
///
/// Core Data calls the store one request at a time (it holds a lock of the store's around each
/// call), from the queue of whichever context asks, so the store needs no locking of its own.
open class NSIncrementalStore: NSPersistentStore, @unchecked Sendable {
    /// The type the coordinator added the store as (its `type` until the metadata names one).
    internal var addedType = ""
    /// The reference objects behind the store's object IDs.
    internal let referenceTable = IncrementalStoreReferences()
    override var references: IncrementalStoreReferences? { referenceTable }
    /// Held around every call into the subclass: one request at a time, as Apple's coordinator sends them.
    internal let requestLock = NSRecursiveLock()
    /// Contexts tell the store which of its objects they use (``managedObjectContextDidRegisterObjects(with:)``).
    override class var reportsRegistrations: Bool { true }

    /// Creates the store; the coordinator calls it for a type registered with
    /// ``NSPersistentStoreCoordinator/registerStoreClass(_:forStoreType:)``, then ``loadMetadata()``.
    ///
    /// ```swift
    /// let store = NotesStore(persistentStoreCoordinator: coordinator, configurationName: nil, at: url, options: nil)
    /// ```
    public required override init(persistentStoreCoordinator root: NSPersistentStoreCoordinator?, configurationName name: String?,
                                  at url: URL, options: [AnyHashable: Any]? = nil) {
        super.init(persistentStoreCoordinator: root, configurationName: name, at: url, options: options)
    }

    /// The store's type: `NSStoreTypeKey` of its metadata.
    ///
    /// ```swift
    /// print(store.type) // "NotesStore"
    /// ```
    open override var type: String { (metadata?[NSStoreTypeKey] as? String) ?? addedType }

    /// The identifier for a new store at `storeURL`, to put under `NSStoreUUIDKey` in the
    /// metadata of a store being created: a new UUID string unless a subclass says otherwise.
    ///
    /// ```swift
    /// metadata = [NSStoreTypeKey: "NotesStore", NSStoreUUIDKey: Self.identifierForNewStore(at: url!)]
    /// ```
    open class func identifierForNewStore(at storeURL: URL) -> Any {
        UUID().uuidString
    }

    /// The metadata of the store at `url`, read without adding it; the coordinator's
    /// `metadataForPersistentStore(ofType:at:options:)` calls it for a registered type. A
    /// subclass whose store keeps its metadata overrides it; the base throws 134091.
    ///
    /// ```swift
    /// override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] { try readHeader(url) }
    /// ```
    open override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        throw notOverridden(self, "metadataForPersistentStore(with:)")
    }

    /// Replaces the metadata of the store at `url` without adding it; the coordinator's
    /// `setMetadata(_:forPersistentStoreOfType:at:options:)` calls it for a registered type. A
    /// subclass whose store keeps its metadata overrides it; the base throws 134091.
    ///
    /// ```swift
    /// override class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreAt url: URL) throws { try writeHeader(metadata, url) }
    /// ```
    open override class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreAt url: URL) throws {
        throw notOverridden(self, "setMetadata(_:forPersistentStoreAt:)")
    }

    // MARK: What a subclass overrides

    /// Answers `request`: a fetch request (see the type's discussion for what each result type
    /// returns), an ``NSSaveChangesRequest`` (write the changes, return an empty array), or a
    /// batch or history request a context executes (return its result, or the value of its
    /// result type: the object IDs, a count, `true`; throw for a request the store does not
    /// handle). The base implementation throws `NSCocoaErrorDomain` 134091.
    ///
    /// ```swift
    /// if let fetch = request as? NSFetchRequest<NSFetchRequestResult>, fetch.resultType == .managedObjectIDResultType {
    ///     return records.keys.map { newObjectID(for: fetch.entity!, referenceObject: $0) }
    /// }
    /// ```
    open func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        throw CoreDataError.make(.unsupportedRequestType, "\(Swift.type(of: self)) does not override execute(_:with:)")
    }

    /// The values and version of the object `objectID` names. A store that no longer has the
    /// object throws `NSCocoaErrorDomain` 133000 (`NSManagedObjectReferentialIntegrityError`):
    /// the object is then a deleted one, as a missing row is. Any other error is a failed load.
    ///
    /// ```swift
    /// guard let record = records[referenceObject(for: objectID) as! String] else {
    ///     throw NSError(domain: NSCocoaErrorDomain, code: NSManagedObjectReferentialIntegrityError)
    /// }
    /// return NSIncrementalStoreNode(objectID: objectID, withValues: record.values, version: record.version)
    /// ```
    open func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext) throws -> NSIncrementalStoreNode {
        throw CoreDataError.make(.unsupportedRequestType, "\(Swift.type(of: self)) does not override newValuesForObject(with:with:)")
    }

    /// The value of `relationship` for the object `objectID` names: an object ID or `NSNull`
    /// for a to-one, an array or set of object IDs for a to-many. The base implementation
    /// returns the value the object's node holds for it, and throws if it holds none.
    ///
    /// ```swift
    /// return records.filter { $0.value.ownerKey == key }.map { newObjectID(for: relationship.destinationEntity!, referenceObject: $0.key) }
    /// ```
    open func newValue(forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
                       with context: NSManagedObjectContext?) throws -> Any {
        guard let context else {
            throw CoreDataError.make(.unsupportedRequestType, "\(Swift.type(of: self)) does not override newValue(forRelationship:forObjectWith:with:)")
        }
        let node = try newValuesForObject(with: objectID, with: context)
        guard let value = node.values[relationship.name] else {
            throw CoreDataError.make(.persistentStoreOperation,
                "\(Swift.type(of: self)): the node of \(objectID) has no value for '\(relationship.name)', and newValue(forRelationship:forObjectWith:with:) is not overridden")
        }
        return value
    }

    /// Permanent IDs for new objects, one per object in order, made with
    /// ``newObjectID(for:referenceObject:)``. The base implementation throws 134091.
    ///
    /// ```swift
    /// return array.map { newObjectID(for: $0.entity, referenceObject: UUID().uuidString) }
    /// ```
    open func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        throw CoreDataError.make(.unsupportedRequestType, "\(Swift.type(of: self)) does not override obtainPermanentIDs(for:)")
    }

    /// Called when a context starts using the objects these IDs name: a count of interest per
    /// ID, one more each time an ID is named (an array may name one twice), which
    /// ``managedObjectContextDidUnregisterObjects(with:)`` takes back. A context registers an object when it first holds it under a permanent ID of
    /// this store (a fetch, a fault, `object(with:)`, a new object's ID from
    /// ``obtainPermanentIDs(for:)`` at a save); temporary IDs are never passed. Called on the
    /// context's queue, after the operation that registered them, with no lock of the context
    /// held: the store may call the context back. The base does nothing.
    ///
    /// ```swift
    /// override func managedObjectContextDidRegisterObjects(with objectIDs: [NSManagedObjectID]) { cache.retain(objectIDs) }
    /// ```
    open func managedObjectContextDidRegisterObjects(with objectIDs: [NSManagedObjectID]) {}

    /// Called when a context stops using the objects these IDs name, once for each earlier
    /// registration: the object went (from its `deinit`, passed on at the context's next
    /// operation), or the context was reset or went. Called on the context's queue, with no lock
    /// of the context held. The base does nothing.
    ///
    /// ```swift
    /// override func managedObjectContextDidUnregisterObjects(with objectIDs: [NSManagedObjectID]) { cache.release(objectIDs) }
    /// ```
    open func managedObjectContextDidUnregisterObjects(with objectIDs: [NSManagedObjectID]) {}

    // MARK: Object IDs (not for overriding)

    /// The ID of the object of `entity` that the store knows by `data` (a `String`, a number,
    /// a `UUID`: any `Hashable` value). The same reference object always gives an equal ID.
    /// Traps when `data` is not `Hashable` (a programmer error).
    ///
    /// ```swift
    /// let id = newObjectID(for: entity, referenceObject: "note-42")
    /// ```
    public final func newObjectID(for entity: NSEntityDescription, referenceObject data: Any) -> NSManagedObjectID {
        objectID(of: entity, referenceObject: data, in: referenceTable)
    }

    /// The reference object an ID of this store was made with (a positive integer reference
    /// comes back as an `Int`). Traps for a temporary ID or another store's (a programmer error,
    /// as on Apple platforms).
    ///
    /// ```swift
    /// let key = referenceObject(for: object.objectID) as! String
    /// ```
    public final func referenceObject(for objectID: NSManagedObjectID) -> Any {
        reference(of: objectID, in: referenceTable)
    }

    // MARK: The internal store API, routed to the methods above (NSIncrementalStore+Requests.swift)

    override func open(model: NSManagedObjectModel) throws {
        try loadMetadata()
        guard let metadata, metadata[NSStoreTypeKey] is String, let uuid = metadata[NSStoreUUIDKey] as? String else {
            throw CoreDataError.make(.persistentStoreOpen,
                "\(Swift.type(of: self)).loadMetadata() must set the store's metadata with NSStoreTypeKey and NSStoreUUIDKey (strings); the store was not added")
        }
        identifier = uuid
        RequestingContext.begin()
    }

    override func writeMetadata(_ metadata: [String: Any]) throws { self.metadata = metadata }

    override func fetchRows(_ plan: FetchPlan) throws -> [FetchedRow] {
        try withRequestContext { context in
            try fetchedIDs(plan, resultType: .managedObjectResultType, context: context).compactMap { id in
                try snapshot(for: id, context: context).map { FetchedRow(id: id, snapshot: $0) }
            }
        }
    }

    /// A context's fetch of objects: the IDs of the objects `execute(_:with:)` returns for a
    /// `.managedObjectResultType` request; the context makes them faults, whose values
    /// `newValuesForObject(with:with:)` gives when they fire (``fetchesFaults``).
    override func fetchKeys(_ plan: FetchPlan) throws -> [FetchedKey] {
        try withRequestContext { try fetchedIDs(plan, resultType: .managedObjectResultType, context: $0) }
            .map { FetchedKey(entity: $0.entity, primaryKey: $0.key.value) }
    }

    override var fetchesFaults: Bool { true }

    override func fetchIDs(_ plan: FetchPlan) throws -> [NSManagedObjectID] {
        try withRequestContext { try fetchedIDs(plan, resultType: .managedObjectIDResultType, context: $0) }
    }

    override func count(_ plan: FetchPlan) throws -> Int {
        try withRequestContext { try fetchedCount(plan, context: $0) }
    }

    override func fetchDictionaryRows(_ plan: DictionaryPlan) throws -> [ContiguousArray<StoreValue>] {
        try withRequestContext { try fetchedDictionaries(plan, context: $0) }
    }

    override func row(for id: NSManagedObjectID) throws -> RowSnapshot? {
        try withRequestContext { try snapshot(for: id, context: $0) }
    }

    override func relatedIDs(for relationship: NSRelationshipDescription, of id: NSManagedObjectID) throws -> [NSManagedObjectID] {
        try withRequestContext { context in
            try relatedIDs(from: newValue(forRelationship: relationship, forObjectWith: id, with: context), of: relationship, owner: id)
        }
    }

    /// Never called for this store: its new objects' IDs come from ``obtainPermanentIDs(for:)``
    /// (`NSManagedObjectContext.obtainPermanentIDs(for:)` and the save call it).
    override func allocatePrimaryKeys(for entity: NSEntityDescription, count: Int) throws -> [Int64] {
        throw CoreDataError.make(.unsupportedRequestType, "An NSIncrementalStore makes its objects' IDs in obtainPermanentIDs(for:)")
    }

    override var makesIDsOfObjects: Bool { true }


    override func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID] {
        requestLock.lock()
        defer { requestLock.unlock() }
        return try checkedPermanentIDs(try obtainPermanentIDs(for: objects), for: objects, from: "obtainPermanentIDs(for:)")
    }

    override func save(_ changes: SaveChanges, rowCache: StoreRowCache?, beforeCommitting: () throws -> Void) throws -> SaveResult {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store is read-only; nothing was saved") }
        return try write(changes, beforeCommitting: beforeCommitting)
    }
}
