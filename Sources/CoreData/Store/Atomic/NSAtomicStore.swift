import Foundation

/// The base of a store you write that holds all its objects in memory and reads and writes its
/// file whole: Core Data fetches from the store's cache nodes and, at each save, updates them
/// and asks the store to write them, as on Apple platforms.
///
/// ```swift
/// final class NotesFileStore: NSAtomicStore {
///     override func load() throws {
///         // read the file; for each record:
///         let node = NSAtomicStoreCacheNode(objectID: objectID(for: entity, withReferenceObject: record.key))
///         node.setValue(record.title, forKey: "title")
///         addCacheNodes([node])
///         metadata = [NSStoreTypeKey: "NotesFileStore", NSStoreUUIDKey: savedUUID]
///     }
///     override func newReferenceObject(for managedObject: NSManagedObject) -> Any { UUID().uuidString }
///     override func save() throws { /* write cacheNodes() and metadata to the file */ }
/// }
/// NSPersistentStoreCoordinator.registerStoreClass(NotesFileStore.self, forStoreType: "NotesFileStore")
/// ```
///
/// What the store is asked: ``load()`` when it is added (it adds its nodes with
/// ``addCacheNodes(_:)`` and sets its metadata; when the metadata lacks `NSStoreTypeKey` or
/// `NSStoreUUIDKey`, the type it was added as and a new UUID are put in; the model's version
/// hashes are put in too, as Apple's store does, so `metadata` holds `Data` values: archive it
/// as a property list. Metadata with hashes of another model version is refused, 134100); for each save,
/// ``newReferenceObject(for:)`` for every new object, ``newCacheNode(for:)`` for each, then
/// ``updateCacheNode(_:from:)`` for every new or changed object, ``willRemoveCacheNodes(_:)``
/// for the deleted ones, and ``save()``. If `save()` throws, the cache nodes are put back as
/// they were and the context keeps its changes. Fetches, faults and relationships are answered
/// from the nodes by Core Data itself (predicates and sorts evaluated in memory). Core Data
/// calls the store one request at a time.
open class NSAtomicStore: NSPersistentStore, @unchecked Sendable {
    /// The type the coordinator added the store as.
    internal var addedType = ""
    internal let referenceTable = IncrementalStoreReferences()
    override var references: IncrementalStoreReferences? { referenceTable }
    /// Held around every use of the nodes and every call into the subclass.
    internal let lock = NSRecursiveLock()
    /// The cache nodes by their IDs' keys.
    internal var nodes: [IDKey: NSAtomicStoreCacheNode] = [:]
    /// Each node's optimistic-locking version (1 once loaded, one more at each save of it).
    internal var versions: [IDKey: Int64] = [:]

    /// Creates the store; the coordinator calls it for a registered type, then ``load()``.
    ///
    /// ```swift
    /// let store = NotesFileStore(persistentStoreCoordinator: coordinator, configurationName: nil, at: url, options: nil)
    /// ```
    public required override init(persistentStoreCoordinator coordinator: NSPersistentStoreCoordinator?, configurationName: String?,
                                  at url: URL, options: [AnyHashable: Any]? = nil) {
        super.init(persistentStoreCoordinator: coordinator, configurationName: configurationName, at: url, options: options)
    }

    /// The store's type: `NSStoreTypeKey` of its metadata.
    ///
    /// ```swift
    /// print(store.type) // "NotesFileStore"
    /// ```
    open override var type: String { (metadata?[NSStoreTypeKey] as? String) ?? addedType }

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

    /// Reads the store's file: make a node per object and add them with ``addCacheNodes(_:)``.
    /// The base implementation throws 134091.
    ///
    /// ```swift
    /// override func load() throws { addCacheNodes(Set(try readRecords().map(node(of:)))) }
    /// ```
    open func load() throws {
        throw CoreDataError.make(.unsupportedRequestType, "\(Swift.type(of: self)) does not override load()")
    }

    /// Writes every cache node (``cacheNodes()``) to the store's file. The base implementation throws 134091.
    ///
    /// ```swift
    /// override func save() throws { try write(cacheNodes(), metadata: metadata) }
    /// ```
    open func save() throws {
        throw CoreDataError.make(.unsupportedRequestType, "\(Swift.type(of: self)) does not override save()")
    }

    /// The reference object of a new object's ID (a `String` or a number; see
    /// ``objectID(for:withReferenceObject:)``). The base implementation gives a new UUID string.
    ///
    /// ```swift
    /// override func newReferenceObject(for managedObject: NSManagedObject) -> Any { nextNumber() }
    /// ```
    open func newReferenceObject(for managedObject: NSManagedObject) -> Any {
        UUID().uuidString
    }

    /// A node for a new object (whose ID is already permanent); its values are set by
    /// ``updateCacheNode(_:from:)`` next. The base implementation makes an empty node.
    ///
    /// ```swift
    /// override func newCacheNode(for managedObject: NSManagedObject) -> NSAtomicStoreCacheNode {
    ///     NSAtomicStoreCacheNode(objectID: managedObject.objectID)
    /// }
    /// ```
    open func newCacheNode(for managedObject: NSManagedObject) -> NSAtomicStoreCacheNode {
        NSAtomicStoreCacheNode(objectID: managedObject.objectID)
    }

    /// Sets `node`'s values from `managedObject`. The base implementation copies every stored
    /// property: attributes as they are, to-ones as the related objects' nodes, to-manys as
    /// sets (ordered: arrays) of nodes.
    ///
    /// ```swift
    /// override func updateCacheNode(_ node: NSAtomicStoreCacheNode, from managedObject: NSManagedObject) {
    ///     super.updateCacheNode(node, from: managedObject)
    ///     node.setValue(Date(), forKey: "savedAt")
    /// }
    /// ```
    open func updateCacheNode(_ node: NSAtomicStoreCacheNode, from managedObject: NSManagedObject) {
        // A composite as its dictionary (its leaves are not properties of the entity).
        for property in managedObject.entity.layout.properties where !property.isTransient && !(property is CompositeLeafAttribute) {
            let value = managedObject.value(forKey: property.name)
            guard let relationship = property as? NSRelationshipDescription else {
                node.setValue(value, forKey: property.name)
                continue
            }
            if !relationship.isToMany {
                node.setValue((value as? NSManagedObject).flatMap { cacheNode(for: $0.objectID) }, forKey: property.name)
            } else if let ordered = value as? NSOrderedSet {
                node.setValue(ordered.array.compactMap { ($0 as? NSManagedObject).flatMap { cacheNode(for: $0.objectID) } }, forKey: property.name)
            } else {
                node.setValue(Set(((value as? Set<NSManagedObject>) ?? []).compactMap { cacheNode(for: $0.objectID) }), forKey: property.name)
            }
        }
    }

    /// Called with the nodes of the objects a save deletes, before they leave the cache; the base does nothing.
    ///
    /// ```swift
    /// override func willRemoveCacheNodes(_ cacheNodes: Set<NSAtomicStoreCacheNode>) { removedCount += cacheNodes.count }
    /// ```
    open func willRemoveCacheNodes(_ cacheNodes: Set<NSAtomicStoreCacheNode>) {}

    // MARK: The cache (not for overriding)

    /// Every cache node of the store.
    ///
    /// ```swift
    /// let records = cacheNodes().map { ($0.objectID, $0.propertyCache) }
    /// ```
    public final func cacheNodes() -> Set<NSAtomicStoreCacheNode> {
        lock.lock()
        defer { lock.unlock() }
        return Set(nodes.values)
    }

    /// Adds nodes to the cache (a node for an ID already there replaces it).
    ///
    /// ```swift
    /// addCacheNodes([node])
    /// ```
    public final func addCacheNodes(_ cacheNodes: Set<NSAtomicStoreCacheNode>) {
        lock.lock()
        defer { lock.unlock() }
        for node in cacheNodes {
            nodes[node.objectID.key] = node
            if versions[node.objectID.key] == nil { versions[node.objectID.key] = 1 }
        }
    }

    /// The node of the object `objectID` names, or `nil`.
    ///
    /// ```swift
    /// let owner = cacheNode(for: ownerID)
    /// ```
    public final func cacheNode(for objectID: NSManagedObjectID) -> NSAtomicStoreCacheNode? {
        guard objectID.persistentStore === self else { return nil }
        lock.lock()
        defer { lock.unlock() }
        return nodes[objectID.key]
    }

    /// The ID of the object of `entity` that the store knows by `data` (any `Hashable` value;
    /// strings and positive integers keep their URIs across launches). Traps when `data` is not
    /// `Hashable` (a programmer error).
    ///
    /// ```swift
    /// let id = objectID(for: entity, withReferenceObject: "note-42")
    /// ```
    public final func objectID(for entity: NSEntityDescription, withReferenceObject data: Any) -> NSManagedObjectID {
        objectID(of: entity, referenceObject: data, in: referenceTable)
    }

    /// The reference object an ID of this store was made with. Traps for a temporary ID or
    /// another store's (a programmer error).
    ///
    /// ```swift
    /// let key = referenceObject(for: node.objectID) as! String
    /// ```
    public final func referenceObject(for objectID: NSManagedObjectID) -> Any {
        reference(of: objectID, in: referenceTable)
    }

    // MARK: The internal store API, answered from the nodes (NSAtomicStore+Requests.swift)

    override func open(model: NSManagedObjectModel) throws {
        try locked { try load() }
        var metadata = self.metadata ?? [:]
        if !(metadata[NSStoreTypeKey] is String) { metadata[NSStoreTypeKey] = addedType }
        if !(metadata[NSStoreUUIDKey] is String) { metadata[NSStoreUUIDKey] = UUID().uuidString }
        // The model's version hashes, as Apple's atomic store keeps them: a file another model
        // version wrote is refused (134100), unless NSIgnorePersistentStoreVersioningOption or
        // automatic migration with an inferred mapping (the nodes are read with the current
        // model: new attributes read nil, removed ones are dropped at the next save), and the
        // metadata a save writes tells the model that wrote it.
        let migratesItself = flag(NSMigratePersistentStoresAutomaticallyOption) && flag(NSInferMappingModelAutomaticallyOption)
        if metadata[NSStoreModelVersionHashesKey] != nil {
            try SQLiteStore.checkCompatibility(metadata, model: model, type: metadata[NSStoreTypeKey] as? String ?? addedType,
                                               location: url?.path ?? "",
                                               ignoringVersions: flag(NSIgnorePersistentStoreVersioningOption) || migratesItself)
        }
        for (key, value) in SQLiteStore.makeMetadata(model: model, uuid: "") where key.hasPrefix("NS") && key != NSStoreUUIDKey && key != NSStoreTypeKey {
            metadata[key] = value
        }
        self.metadata = metadata
        identifier = metadata[NSStoreUUIDKey] as? String
    }

    override func writeMetadata(_ metadata: [String: Any]) throws { self.metadata = metadata }

    override func fetchRows(_ plan: FetchPlan) throws -> [FetchedRow] {
        try locked { try matching(plan).map { FetchedRow(id: $0.objectID, snapshot: try snapshot(of: $0)) } }
    }

    override func count(_ plan: FetchPlan) throws -> Int { try locked { try matching(plan).count } }

    override func fetchDictionaryRows(_ plan: DictionaryPlan) throws -> [ContiguousArray<StoreValue>] {
        try locked { try dictionaryRows(plan) }
    }

    override func row(for id: NSManagedObjectID) throws -> RowSnapshot? {
        try locked { try nodes[id.key].map(snapshot(of:)) }
    }

    override func relatedIDs(for relationship: NSRelationshipDescription, of id: NSManagedObjectID) throws -> [NSManagedObjectID] {
        try locked {
            guard let value = nodes[id.key]?.value(forKey: relationship.name) else { return [] }
            return try relatedIDs(value, of: relationship, owner: id)
        }
    }

    /// Never called for this store: its new objects' IDs come from ``newReferenceObject(for:)``.
    override func allocatePrimaryKeys(for entity: NSEntityDescription, count: Int) throws -> [Int64] {
        throw CoreDataError.make(.unsupportedRequestType, "An NSAtomicStore makes its objects' IDs with newReferenceObject(for:)")
    }

    override var makesIDsOfObjects: Bool { true }


    override func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID] {
        try locked {
            try checkedPermanentIDs(objects.map { objectID(for: $0.entity, withReferenceObject: newReferenceObject(for: $0)) },
                                    for: objects, from: "newReferenceObject(for:)", taken: { nodes[$0.key] != nil })
        }
    }

    override func save(_ changes: SaveChanges, rowCache: StoreRowCache?, beforeCommitting: () throws -> Void) throws -> SaveResult {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store is read-only; nothing was saved") }
        return try locked { try write(changes, beforeCommitting: beforeCommitting) }
    }

    /// Runs `body` holding the store's lock.
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
