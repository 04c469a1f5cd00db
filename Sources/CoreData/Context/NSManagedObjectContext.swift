import Foundation
import Observation
import Synchronization

/// Apple's top-level name of ``NSManagedObjectContext/ConcurrencyType``: both spellings name
/// the same type, as on Apple platforms.
///
/// ```swift
/// let type: NSManagedObjectContextConcurrencyType = .privateQueueConcurrencyType
/// let context = NSManagedObjectContext(concurrencyType: type)
/// ```
public typealias NSManagedObjectContextConcurrencyType = NSManagedObjectContext.ConcurrencyType

/// An object graph in memory: the objects fetched from and inserted into the stores, their
/// changes, and the queue they live on.
///
/// ```swift
/// let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
/// context.persistentStoreCoordinator = coordinator
/// try context.performAndWait {
///     let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
///     car.setValue("Model T", forKey: "name")
///     try context.save()
/// }
/// ```
///
/// A context is `Sendable`, its objects are not: touch a context and its objects only on the
/// context's queue (inside ``perform(_:)`` / ``performAndWait(_:)``, or on the main queue for a
/// main-queue context), and pass ``NSManagedObjectID``s between queues.
open class NSManagedObjectContext: NSObject, @unchecked Sendable {
    /// How a context relates to threads and queues.
    public enum ConcurrencyType: UInt, Sendable {
        /// Deprecated: the context is used on the thread that made it; `perform` is not available.
        case confinementConcurrencyType = 0
        /// The context has its own serial queue.
        case privateQueueConcurrencyType = 1
        /// The context lives on the main queue.
        case mainQueueConcurrencyType = 2

        /// The context has its own serial queue (Apple's iOS 15 spelling of
        /// ``privateQueueConcurrencyType``).
        ///
        /// ```swift
        /// let background = NSManagedObjectContext(.privateQueue)
        /// ```
        public static let privateQueue = ConcurrencyType.privateQueueConcurrencyType
        /// The context lives on the main queue (Apple's iOS 15 spelling of ``mainQueueConcurrencyType``).
        public static let mainQueue = ConcurrencyType.mainQueueConcurrencyType
    }

    /// When ``perform(schedule:_:)`` runs its block.
    public enum ScheduledTaskType: Sendable {
        /// At once if already on the context's queue, otherwise enqueued.
        case immediate
        /// Always enqueued behind the blocks already waiting.
        case enqueued
    }

    /// The context's concurrency type.
    public let concurrencyType: ConcurrencyType
    /// A name for debugging.
    open var name: String?
    /// How save conflicts are resolved; `NSErrorMergePolicy` by default.
    open var mergePolicy: Any = NSErrorMergePolicy
    /// Whether the context turns faults whose rows are gone (deleted behind its back) into
    /// deleted objects when they fire (`true` by default), instead of stopping the process.
    ///
    /// As Apple's: such an object's attributes read nil or 0 (and its relationships nil or
    /// empty), its `isDeleted` is `true` and it is in ``deletedObjects``, it is exempt from
    /// validation, and the next ``save()`` writes nothing for it (it stays registered, deleted,
    /// as a merged delete does) — an object that refers to it keeps its key in the store, since
    /// a save writes only what changed. ``rollback()`` and `refresh(_:mergeChanges:)` make it a
    /// fault again. A join-table row whose destination row is gone is no member of the
    /// relationship (the relationship is read through the destination's table, as Apple's store
    /// reads it); it stays in the table until its owner is deleted.
    ///
    /// A store that fails (rather than answering that the row is gone) is another matter: see
    /// ``save()``.
    ///
    /// ```swift
    /// context.shouldDeleteInaccessibleFaults = false // a vanished row stops the process
    /// ```
    open var shouldDeleteInaccessibleFaults: Bool = true

    /// Asked when a fault fires whose row is gone (deleted behind the context's back): `true`
    /// makes the object read as deleted, as ``shouldDeleteInaccessibleFaults`` describes;
    /// `false` stops the process (Apple raises "CoreData could not fulfill a fault"). The
    /// default logs the fault and returns ``shouldDeleteInaccessibleFaults``.
    ///
    /// `property` is the property whose use fired the fault (a key-value read or write, an
    /// accessor, a relationship); `nil` when the fault fired for the whole object. As Apple's,
    /// the method is not asked by the calls that throw instead (``existingObject(with:)``), for
    /// an object no longer in a context, or while delete rules run (an object being deleted whose
    /// row is gone is simply deleted).
    ///
    /// ```swift
    /// final class AuditingContext: NSManagedObjectContext, @unchecked Sendable {
    ///     override func shouldHandleInaccessibleFault(_ fault: NSManagedObject, for oid: NSManagedObjectID,
    ///                                                 triggeredByProperty property: NSPropertyDescription?) -> Bool {
    ///         audit.append(oid)
    ///         return true
    ///     }
    /// }
    /// ```
    open func shouldHandleInaccessibleFault(_ fault: NSManagedObject, for oid: NSManagedObjectID,
                                            triggeredByProperty property: NSPropertyDescription?) -> Bool {
        CoreDataLog.error("Inaccessible fault for '\(oid.uriRepresentation().absoluteString)'\(property.map { " (its property '\($0.name)')" } ?? ""): its row is gone from the store")
        return shouldDeleteInaccessibleFaults
    }
    /// Whether delete rules run at the end of each event — each ``processPendingChanges()``,
    /// which fetches, merges and undo call too — (`true`, the default) or only when the
    /// context saves.
    ///
    /// With `false`, deleting an object marks only that object: the objects a cascade rule
    /// would delete stay, and the relationships a nullify rule would clear still lead to the
    /// deleted object, until ``save()`` applies the rules (before `willSave()` and validation,
    /// so a deny rule is still checked). A new object deleted before the save stays in the
    /// context until then.
    ///
    /// ```swift
    /// context.propagatesDeletesAtEndOfEvent = false
    /// context.delete(album)          // its tracks (cascade) are not deleted yet
    /// try context.save()             // now they are, in the same transaction
    /// ```
    open var propagatesDeletesAtEndOfEvent: Bool = true
    /// Whether registered objects are kept alive by the context (`false`: only changed ones are).
    open var retainsRegisteredObjects: Bool = false {
        didSet {
            _retainsRegistered = retainsRegisteredObjects
            if !retainsRegisteredObjects { retained.removeAll() }
        }
    }
    /// ``retainsRegisteredObjects`` as a plain stored flag, read by every registration.
    @exclusivity(unchecked) private var _retainsRegistered = false
    /// How old cached row data may be before a fault goes back to the store (negative, the
    /// default: no limit; `0`: never use cached data).
    ///
    /// Linux note: the coordinator's row cache is checked against the store file before each
    /// use (SQLite's `data_version`), so its rows are never older than the store's; only `0`
    /// changes anything — faults then always read the store.
    open var stalenessInterval: TimeInterval = -1
    /// Whether changes saved to the context's parent context (by the parent or a sibling), or —
    /// for a context on a coordinator — by other contexts on the coordinator, are merged in
    /// automatically, on this context's queue, as ``mergeChanges(fromContextDidSave:)`` does.
    ///
    /// ```swift
    /// viewContext.automaticallyMergesChangesFromParent = true
    /// ```
    open var automaticallyMergesChangesFromParent: Bool = false {
        didSet { if automaticallyMergesChangesFromParent != oldValue { updateAutomaticMerging() } }
    }
    /// The observer behind ``automaticallyMergesChangesFromParent``.
    internal var autoMergeObserver: (any NSObjectProtocol)?
    /// The undo manager that records the context's changes; `nil` by default (as on iOS), when
    /// changes cost nothing to record. Changes are recorded when the context processes them
    /// (``processPendingChanges()``, which ``save()`` calls): each such pass is one undo step
    /// unless a group the app opened with `beginUndoGrouping()` takes them. ``rollback()`` and
    /// ``reset()`` remove the context's operations from it; ``save()`` does not.
    ///
    /// Linux note: Foundation on Linux has no `UndoManager`; this package provides Apple's.
    ///
    /// ```swift
    /// context.undoManager = UndoManager()
    /// car.name = "Model A"
    /// context.undo()
    /// ```
    open var undoManager: UndoManager? {
        get { undoTracking?.undoManager }
        set { setUndoManager(newValue) }
    }
    /// The undo state while there is an undo manager (`NSManagedObjectContext+Undo.swift`).
    @exclusivity(unchecked) internal var undoTracking: UndoTracking?
    /// Free-form information.
    open var userInfo: NSMutableDictionary = NSMutableDictionary()
    /// A transaction author name for persistent history: each save (and batch request) of this
    /// context to a store with ``NSPersistentHistoryTrackingKey`` writes it as its transaction's
    /// ``NSPersistentHistoryTransaction/author``.
    open var transactionAuthor: String?

    internal let queue: DispatchQueue
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    /// Marks the main queue, so that code running on it is recognized wherever it runs.
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    private var _coordinator: NSPersistentStoreCoordinator? {
        didSet { coordinatorModel = _coordinator.map { Unmanaged.passUnretained($0.managedObjectModel) } }
    }
    /// The model of `_coordinator`, which keeps it (a coordinator's model never changes):
    /// lent by ``withModel(_:)`` to every `insertNewObject` without a retain and release.
    private var coordinatorModel: Unmanaged<NSManagedObjectModel>?
    internal private(set) var _parent: NSManagedObjectContext?

    // The object graph.
    /// Objects by ID, behind a lock: objects unregister from their `deinit`, on any thread.
    /// (A pthread mutex: every fetched object takes it twice, once in and once out; held once
    /// for all the objects a save lets go of: ``lettingGoOfSavedObjects(_:)``.)
    private let registry = HoldableLocked(ObjectRegistry())
    /// Temporary IDs of objects from child contexts that became permanent when this context
    /// saved (used on the root context of a chain; see `NSManagedObjectContext+Nesting.swift`).
    internal let idForwarding = IDForwarding()
    /// Whether a context has ever had this one as its parent: children may know this context's
    /// new objects by their temporary IDs, so a save records the permanent IDs they get
    /// (``recordForwarding(of:from:to:)``). Set on the child's thread, read on this context's queue.
    internal let hasChildren = Atomic<Bool>(false)
    @exclusivity(unchecked) private var retained: [IDKey: NSManagedObject] = [:]
    @exclusivity(unchecked) internal var inserted = OrderedObjectSet()
    @exclusivity(unchecked) internal var updated = OrderedObjectSet()
    @exclusivity(unchecked) internal var deleted = OrderedObjectSet()
    /// Deleted objects whose delete rules have not been applied yet.
    @exclusivity(unchecked) internal var pendingDeletes: [NSManagedObject] = []
    /// Whether delete rules are running (``processPendingChangesReporting(propagatingDeletes:)``):
    /// a fault they fire whose row is gone is deleted without asking
    /// ``shouldHandleInaccessibleFault(_:for:triggeredByProperty:)``.
    internal var isPropagatingDeletes = false
    /// Whether a save skips validation: a migration manager's destination context between its
    /// passes, whose objects get their relationships in the second pass and are validated in the
    /// third (`NSMigrationManager+Passes.swift`).
    internal var savesWithoutValidation = false
    /// The objects marked by ``detectConflicts(for:)`` since the last save, rollback or reset
    /// (held: as Apple's, a context retains the objects a pending save needs).
    internal var objectsDetectingConflicts: [ObjectIdentifier: ConflictDetectionMark] = [:]
    /// The objects ``shouldHandleInaccessibleFault(_:for:triggeredByProperty:)`` is being asked
    /// about: one its override fires again is not asked about again (it would recurse).
    internal var askingAboutInaccessibleFaults: Set<ObjectIdentifier> = []
    /// The lock of the deprecated ``lock()``, ``unlock()`` and ``tryLock()``.
    internal let contextLock = NSRecursiveLock()
    /// Objects changed since the last `processPendingChanges`, for `ObjectsDidChange`. The
    /// inserted ones are not listed while ``noticeInsertsAreInsertedSet``.
    @exclusivity(unchecked) internal var pendingChangeNotice = (inserted: [NSManagedObject](), updated: [NSManagedObject](), deleted: [NSManagedObject]())
    /// Whether the objects inserted since the last `processPendingChanges` are exactly the
    /// inserted set's, in order (new objects inserted while none were pending, the usual case):
    /// then they are not listed a second time, with a retain and release of each.
    @exclusivity(unchecked) private var noticeInsertsAreInsertedSet = true
    /// Whether one of the context's objects has taken a value of the wrong type for its
    /// attribute (kept for validation to report) since a save last succeeded: until then, a save
    /// validates every changed object even when its model has no rules (see `validateForSave`).
    @exclusivity(unchecked) internal var heldMistypedValue = false
    /// Sets ``heldMistypedValue`` if `object`, joining a change set, holds a value of the wrong
    /// type (taken before it had a context, or before a save that did not save it).
    @inline(__always)
    private func noteMistypedValue(of object: NSManagedObject) {
        if object._hasMistypedValue { heldMistypedValue = true }
    }
    /// During `save()`: the sets of objects its notifications carried, for the later ones to reuse.
    @exclusivity(unchecked) internal var saveSetMemo: ObjectSetMemo?
    /// The persistent history a save to the stores wrote, until its did-save notification carries it.
    internal var savedHistoryToken: NSPersistentHistoryToken?
    /// The query generation the context is pinned to, `nil` when unpinned
    /// (`NSManagedObjectContext+QueryGenerations.swift`).
    @exclusivity(unchecked) internal var queryGeneration: QueryGeneration?
    /// Loads the store failed since the last `rollback()` or `reset()` and not done since: the
    /// next save throws the first (`NSManagedObjectContext+UnfulfilledFaults.swift`).
    @exclusivity(unchecked) internal var unfulfilledFaults: [UnfulfilledFault] = []

    /// Creates a context of the given concurrency type.
    public init(concurrencyType type: ConcurrencyType) {
        self.concurrencyType = type
        switch type {
        case .mainQueueConcurrencyType:
            queue = DispatchQueue.main
        case .privateQueueConcurrencyType, .confinementConcurrencyType:
            queue = DispatchQueue(label: "NSManagedObjectContext")
        }
        super.init()
        let address = UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())
        registry.withLock { $0.contextBits = address }
        if type != .mainQueueConcurrencyType {
            queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
        }
    }

    /// Creates a context of the given concurrency type; Apple's iOS 15 spelling of
    /// ``init(concurrencyType:)``.
    ///
    /// ```swift
    /// let context = NSManagedObjectContext(.privateQueue)
    /// context.persistentStoreCoordinator = coordinator
    /// ```
    public convenience init(_ type: ConcurrencyType) {
        self.init(concurrencyType: type)
    }

    /// A confinement context (deprecated on Apple platforms; seed code still uses it).
    public convenience override init() {
        self.init(concurrencyType: .confinementConcurrencyType)
    }

    deinit {
        if let autoMergeObserver { NotificationCenter.default.removeObserver(autoMergeObserver) }
        Self.detach(takeRegisteredObjects()) // strong, while we detach them
        waitForDeallocatingObjects()
        deliverStoreRegistrationsAsContextGoes()
        NotificationObservers.contextDidGo(ObjectIdentifier(self)) // (its `changes` and `observeResults` sequences end)
    }

    /// The registered objects, the new ones not yet registered under a temporary ID included
    /// (``register(_:key:)``), each once; the registry is emptied. Objects being deallocated on
    /// another thread at this moment are left out, and awaited (``waitForDeallocatingObjects()``).
    private func takeRegisteredObjects() -> [NSManagedObject] {
        let newObjects = unregisteredNewObjects
        return registry.withLock { registry in
            var objects = registry.objects()
            registry.removeAll()
            objects += newObjects
            // Cut loose under the lock: an `objectID` getter on another thread then registers
            // none of them in the emptied registry (``makeID(of:)``).
            for object in objects { object._context = nil }
            return objects
        }
    }

    /// Waits until the objects being deallocated on other threads whose `deinit` had already
    /// claimed this context (``NSManagedObject/Deallocating/willUnregister``) have left its
    /// registry: each one's `deinit` takes the registry's lock through its pointer to this
    /// context, which must stay valid until then. (Rare: the last references to a context and
    /// to one of its objects dropped at the same moment on two threads. Those `deinit`s run no
    /// user code any more; they only need the lock.)
    private func waitForDeallocatingObjects() {
        while registry.withLock({ !$0.awaitedDeinits.isEmpty }) { sched_yield() }
    }

    /// New objects that are registered without being in the registry: inserted ones (and deleted
    /// ones whose deletion is not processed yet) whose temporary ID has not been made.
    private var unregisteredNewObjects: [NSManagedObject] {
        (inserted.objects + pendingDeletes).filter { $0._isInserted && !$0._hasObjectID && $0._idStore == nil }
    }

    /// Cuts objects loose from a context that forgets them: no context pointer, and no
    /// relationship references (which would keep cycles of related objects alive forever).
    private static func detach(_ objects: [NSManagedObject]) {
        for object in objects { object._context = nil }
        for object in objects { object._relations.removeAll(); object.forgetFetchedPropertyValues() }
    }

    // MARK: Parent store

    /// The coordinator the context reads from and saves to (its own, or its parent's).
    open var persistentStoreCoordinator: NSPersistentStoreCoordinator? {
        get { _coordinator ?? _parent?.persistentStoreCoordinator }
        set {
            precondition(_parent == nil, "A context with a parent context can't also have a coordinator")
            _coordinator = newValue
        }
    }

    /// The context the receiver reads from and saves to, when it is a child context.
    open var parent: NSManagedObjectContext? {
        get { _parent }
        set {
            precondition(_coordinator == nil || newValue == nil, "A context with a coordinator can't also have a parent context")
            precondition(newValue !== self, "A context can't be its own parent")
            newValue?.hasChildren.store(true, ordering: .relaxed)
            _parent = newValue
        }
    }

    /// Calls `body` with ``model``; lent without a retain when the context has its own coordinator.
    internal func withModel<R>(_ body: (NSManagedObjectModel?) -> R) -> R {
        if let model = coordinatorModel { return model._withUnsafeGuaranteedRef(body) }
        return body(model)
    }

    internal var model: NSManagedObjectModel? {
        // A context on a coordinator: without the overridable getter (every insertNewObject asks).
        if let coordinator = _coordinator { return coordinator.managedObjectModel }
        return persistentStoreCoordinator?.managedObjectModel
    }

    // MARK: Queues

    /// Runs `block` asynchronously on the context's queue, in order, then calls
    /// ``processPendingChanges()``, as Apple's does: the block's changes are posted in
    /// `NSManagedObjectContextObjectsDidChange` (and recorded as one undo step) when it ends.
    ///
    /// A confinement context has no queue of its own (Apple raises here): the block runs at once
    /// on the calling thread, the thread the context is confined to.
    open func perform(_ block: @escaping @Sendable () -> Void) {
        if concurrencyType == .confinementConcurrencyType {
            withCurrent { block(); processPendingChanges() }
            return
        }
        queue.async { [self] in
            withCurrent { block(); processPendingChanges() }
        }
    }

    /// Runs `block` on the calling thread while holding the context's queue; reentrant.
    open func performAndWait(_ block: () -> Void) {
        if isOnQueue {
            withCurrent(block)
        } else {
            // For a main-queue context `queue` is the main queue: the block waits for the main thread.
            let holdsMainQueue = Self.isMainQueueHeldByCaller
            queue.sync { CurrentContext.holdingMainQueue(holdsMainQueue) { withCurrent(block) } }
        }
    }

    /// Runs `block` on the calling thread while holding the context's queue, returning its value.
    open func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        if isOnQueue { return try withCurrent(block) }
        let holdsMainQueue = Self.isMainQueueHeldByCaller
        return try queue.sync { try CurrentContext.holdingMainQueue(holdsMainQueue) { try withCurrent(block) } }
    }

    /// Whether the caller runs on the main queue (or thread) itself, where the main actor runs:
    /// main-actor messages are posted there (`CoreDataMessages`).
    internal static var isOnMainQueue: Bool {
        DispatchQueue.getSpecific(key: mainQueueKey) == true || Thread.isMainThread
    }

    /// Whether the calling code runs on the main queue — directly, or inside another context's
    /// `performAndWait` called from it (`queue.sync` runs the block on the caller's thread, which
    /// keeps the main queue, but `DispatchQueue.getSpecific` then answers for the inner queue).
    /// A child of a main-queue context reaches its parent from there without deadlock.
    private static var isMainQueueHeldByCaller: Bool {
        DispatchQueue.getSpecific(key: mainQueueKey) == true || Thread.isMainThread || CurrentContext.holdsMainQueue
    }

    /// Runs `block` on the context's queue and returns its value, or throws its error.
    ///
    /// A block queued behind others ends with ``processPendingChanges()``, as ``perform(_:)``'s
    /// does; one run at once on the queue it already holds (`.immediate` from inside the
    /// context's queue) leaves that to the code around it.
    ///
    /// As Apple's, the value need not be `Sendable` (objects fetched in the block, say): Swift's
    /// region checking at the call site makes it the caller's alone.
    ///
    /// ```swift
    /// let cars = try await context.perform { try context.fetch(Car.fetchRequest()) }
    /// ```
    @preconcurrency
    open func perform<T>(schedule: ScheduledTaskType = .immediate, _ block: @escaping @Sendable () throws -> T) async rethrows -> T {
        if schedule == .immediate && isOnQueue { return try withCurrent(block) }
        let work = UncheckedSendable(block)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<UncheckedSendable<Result<T, any Error>>, Never>) in
            queue.async { [self] in
                let result = Result { try withCurrent(work.value) }
                withCurrent { processPendingChanges() }
                continuation.resume(returning: UncheckedSendable(result))
            }
        }
        return try rethrowing(outcome.value, as: block)
    }

    /// Whether the calling code runs on the context's queue.
    internal var isOnQueue: Bool {
        if concurrencyType == .mainQueueConcurrencyType {
            // The main queue is not always drained by the main thread on Linux (Swift's main
            // executor may run it elsewhere), so ask the queue, and accept the main thread too.
            return Self.isMainQueueHeldByCaller
        }
        if concurrencyType == .confinementConcurrencyType { return true } // its caller's thread is its queue
        return DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) || CurrentContext.contains(self)
    }

    private func withCurrent<T>(_ body: () throws -> T) rethrows -> T {
        CurrentContext.push(self)
        defer { deliverStoreRegistrations(); CurrentContext.pop() }
        return try body()
    }

    /// The context whose `perform` or `performAndWait` block is running on this thread.
    internal static var current: NSManagedObjectContext? { CurrentContext.top }

    // MARK: Registration

    /// Registers `object` under its ID's key (`key`, when the caller has it already).
    ///
    /// A new object is registered under its temporary ID only once that ID is made (the
    /// `objectID` getter calls ``makeID(of:)``): until then nobody can ask for
    /// it by ID, and the inserted objects keep it. Most new objects never have their temporary ID
    /// asked for, so a save of new objects does not add and then remove a key per object.
    internal func register(_ object: NSManagedObject, key known: IDKey? = nil) {
        let key = known ?? object.idKey
        registry.withLock { $0[key] = Unmanaged.passUnretained(object) }
        if _retainsRegistered { retained[key] = object }
    }

    internal func unregister(_ object: NSManagedObject) {
        let key = object.idKey
        registry.withLock { registry in
            if let current = registry[key], current.toOpaque() == Unmanaged.passUnretained(object).toOpaque() { registry[key] = nil }
        }
        retained[object.idKey] = nil
    }

    /// The object leaves this context: unregistered, and no longer pointing at it.
    internal func leaveContext(_ object: NSManagedObject) {
        // Cut loose first: an `objectID` getter on another thread registers a new object's
        // temporary ID only while the object still points here (``makeID(of:)``);
        // one that registered before is removed by `unregister`.
        object._context = nil
        unregister(object)
    }

    /// Runs `body` with the registry locked (one lock for a whole fetch).
    internal func withRegistryLock(_ body: (inout ObjectRegistry) -> Void) {
        registry.withLock { body(&$0) }
    }

    /// Called with the number of objects made so far as a fetch makes each one (an asynchronous
    /// fetch reports its progress and stops when cancelled, by throwing). Set on the context's
    /// queue around one fetch.
    @exclusivity(unchecked) internal var _fetchRowObserver: ((Int) throws -> Void)?

    internal func retainRegistered(_ object: NSManagedObject) {
        retained[object.idKey] = object
    }

    /// How many times the registry's table was rebuilt (for tests).
    internal var registryRebuilds: Int { registry.withLock { $0.rebuilds } }
    /// How many keys the registry holds (for tests).
    internal var registryCount: Int { registry.withLock { $0.count } }

    /// Called by the `objectID` getter to make the ID of an object of this context that has
    /// none yet (from its permanent key, or a new object's temporary ID), on any thread: the
    /// registry has its own lock, under which a save gives new objects their permanent keys.
    /// A temporary ID is registered under it.
    internal func makeID(of object: NSManagedObject) -> NSManagedObjectID {
        // Maybe not on the context's queue: the object keeps its store (see `makeOwnID`).
        registry.withLock { makeID(of: object, in: &$0, takingStore: false) }
    }

    /// The IDs of `objects` (a save's, on the context's queue), as a set, made as ``makeID(of:)``
    /// makes them for those that have none yet, under one lock for all of them (a save's
    /// did-save notification carries the IDs of all its objects). Each ID goes into the set as
    /// it is made, while it is in the cache: a second pass over 50,000 IDs misses it at every
    /// retain. The set is sized for the objects, as `Set(retainingFirst:)` sizes its sets of objects.
    internal func idSet(of objects: [NSManagedObject]) -> Set<NSManagedObjectID> {
        var ids = Set<NSManagedObjectID>(minimumCapacity: objects.count)
        guard !objects.isEmpty else { return ids }
        var forwarded: [NSManagedObject] = []
        registry.withLock { registry in
            objects.forEachUnretainedPrefetching { _, object in
                if let id = object._objectID {
                    // An ID that may have moved up a chain of contexts is read by the getter,
                    // which takes the lock: after this one.
                    if object._mayBeForwarded { forwarded.append(object) } else { ids.update(with: id) }
                } else {
                    ids.update(with: makeID(of: object, in: &registry, takingStore: true))
                }
            }
        }
        for object in forwarded { ids.update(with: object.objectID) }
        return ids
    }

    /// ``makeID(of:)``'s work, with the registry locked.
    private func makeID(of object: NSManagedObject, in registry: inout ObjectRegistry, takingStore: Bool) -> NSManagedObjectID {
        // Checked again under the lock: a save may have given the object its permanent key
        // since the getter looked (an ID made from the serial number then would be a
        // temporary ID that the object keeps, while it is registered under the permanent one).
        if let id = object._objectID { return id }
        let temporary = object._idStore == nil
        let id = object.makeOwnID(takingStore: takingStore)
        // A temporary ID is registered, only while the object is still this context's (it may be
        // leaving it).
        if temporary && object._context === self { registry[id.key] = Unmanaged.passUnretained(object) }
        return id
    }

    /// Runs `body`, which lets go of objects (a save's lists, the last to hold the objects of a
    /// bulk import), holding the registry's lock: the objects' `deinit`s unregister them without
    /// each taking the lock (for 50,000 objects, 100,000 atomic operations fewer).
    ///
    /// Only for objects whose going runs no app code (plain `NSManagedObject`s of a model whose
    /// objects hold only plain values: ``NSManagedObjectModel/objectsHoldOnlyValues``): code
    /// run under the hold must not wait for another thread, which may be waiting for the lock.
    internal func lettingGoOfSavedObjects(_ body: () -> Void) {
        registry.holding(body)
    }

    /// Whether this thread is in ``lettingGoOfSavedObjects(_:)`` (for tests).
    internal var isLettingGoOfSavedObjects: Bool { registry.isHeldByCurrentThread }
    /// How many times ``lettingGoOfSavedObjects(_:)`` has held the registry's lock (for tests).
    internal var registryHolds: Int { registry.holds }

    /// Called from an object's `deinit`: removes `key` if it is the object's (`address`).
    internal func unregisterOnDeinit(_ key: IDKey?, address: UnsafeMutableRawPointer) {
        registry.withLock { registry in
            if let key { registry.remove(key, ifObjectAt: address) } else { registry.awaitedDeinits.remove(UInt(bitPattern: address)) }
        }
    }

    internal func registered(_ key: IDKey) -> NSManagedObject? {
        registered(key, followingForwarding: true)
    }

    internal func registered(_ key: IDKey, followingForwarding: Bool) -> NSManagedObject? {
        if let object = registry.withLock({ $0.object(for: key) }) { return object }
        return followingForwarding ? registeredFollowingForwarding(key) : nil
    }

    /// Registers an object a child's save inserted here, as this context's own insert.
    internal func adoptInsertedFromChild(_ object: NSManagedObject) {
        object._context = self
        object._isInserted = true
        register(object)
        addInserted(object)
    }

    /// A registered data-less fault for the temporary ID of an object a child inserted, made a
    /// new inserted object here (its values the entity's, until the child's are set).
    internal func adoptInsertedFromChild(fault object: NSManagedObject) {
        object._values = object.layout.newValues()
        object._hasData = true
        object._isFault = false
        object._isInserted = true
        addInserted(object)
    }

    /// Adds a newly inserted object to the inserted set, and to the pending `ObjectsDidChange`.
    private func addInserted(_ object: NSManagedObject) {
        noteMistypedValue(of: object)
        inserted.insert(object)
        if !noticeInsertsAreInsertedSet { pendingChangeNotice.inserted.append(object) }
    }

    /// Called before the inserted set changes other than by a new insert: the pending
    /// `ObjectsDidChange`'s inserted objects are listed from then on.
    internal func willChangeInsertedSet() {
        guard noticeInsertsAreInsertedSet else { return }
        noticeInsertsAreInsertedSet = false
        pendingChangeNotice.inserted = inserted.objects
    }

    /// Called after the inserted set was emptied (``willChangeInsertedSet()`` before).
    internal func insertedSetWasEmptied() {
        if pendingChangeNotice.inserted.isEmpty { noticeInsertsAreInsertedSet = true }
    }

    /// Forgets the changes pending for `ObjectsDidChange`.
    internal func clearPendingChangeNotice() {
        pendingChangeNotice = ([], [], [])
        noticeInsertsAreInsertedSet = inserted.isEmpty
        updated.setMark()
        inserted.setMark()
    }

    /// Moves an object to its new (permanent) ID.
    internal func reregister(_ object: NSManagedObject, as id: NSManagedObjectID) {
        let old = object.idKey
        let previous = object._objectID
        registry.withLock { registry in
            registry[old] = nil
            object.objectID = id
            registry[id.key] = Unmanaged.passUnretained(object)
        }
        if let previous { recordForwarding(of: object, from: previous, to: id) }
        if let kept = retained.removeValue(forKey: old) { retained[id.key] = kept }
    }

    /// Moves saved new objects from their temporary keys to their permanent ones, under one lock.
    /// Their permanent IDs are made when asked for, as a fetched object's are; they enter the
    /// registry's table when it is next used (``ObjectRegistry/registerLater(_:key:)``). `objects`
    /// are the save's inserted objects, which `saved` refers to by position.
    internal func reregister(_ saved: [SavedInserts], of objects: [NSManagedObject]) {
        // New objects whose temporary IDs children may know: those whose ID was made.
        let knownToChildren = hasChildren.load(ordering: .relaxed)
        var fromChildren: [(NSManagedObject, NSManagedObjectID)] = []
        registry.withLock { registry in
            // Room in the list of objects registered later for every row (rows with permanent
            // IDs, from `obtainPermanentIDs`, are rare), under the owner of the first new one:
            // a save's new objects usually have one owner (store and root entity); those of
            // another go straight into the table (``ObjectRegistry/registerLater(_:key:)``).
            if let owner = saved.lazy.compactMap({ group in
                group.inserts.first(where: \.isTemporary).map {
                    IDKey(store: group.store.tag, root: $0.entity.layout.rootNumber, value: 0).packedOwner
                }
            }).first {
                registry.reserveDeferred(saved.reduce(0) { $0 + $1.inserts.count }, owner: owner)
            }
            for group in saved {
                let store = group.store
                // (Rows with permanent IDs are walked and skipped: rare, and a walk over the
                // temporary ones alone would need a list of them.) One pass over the objects:
                // each leaves its temporary key, if its temporary ID was made
                // (``register(_:key:)``), and takes its permanent one.
                objects.forEachUnretainedPrefetching(positions: group.inserts.count, offset: { group.offsets[$0] }) { position, object in
                    guard group.inserts[position].isTemporary else { return }
                    if object._hasObjectID { registry.removeTemporary(group.inserts[position].key) }
                    if knownToChildren, let previous = object._objectID { fromChildren.append((object, previous)) }
                    object.setPermanentKey(group.keys[position], store: store)
                    registry.registerLater(Unmanaged.passUnretained(object), key: object.idKey)
                }
            }
        }
        for (object, previous) in fromChildren { recordForwarding(of: object, from: previous, to: object.objectID) }
        guard !retained.isEmpty else { return }
        for group in saved {
            group.inserts.forEachTemporary(offsets: group.offsets) { key, offset in
                retained[key] = nil
                retained[objects[offset].idKey] = objects[offset]
            }
        }
    }

    /// The objects registered in the context.
    open var registeredObjects: Set<NSManagedObject> {
        checkQueue("registeredObjects")
        let objects = registry.withLock { $0.objects() }
        return Set(objects + unregisteredNewObjects)
    }

    /// The object registered for `objectID`, or `nil`.
    open func registeredObject(for objectID: NSManagedObjectID) -> NSManagedObject? {
        checkQueue("registeredObject(for:)")
        if let object = registered(objectID.key) { return object }
        let local = localID(objectID)
        return local === objectID ? nil : registered(local.key)
    }

    /// `id` as this context's coordinator names it: the ID of a row of another coordinator's
    /// store on the same file (the same store UUID) becomes this coordinator's, so that one row
    /// is one object here. Asked only when the registry has no object for `id`.
    private func localID(_ id: NSManagedObjectID) -> NSManagedObjectID {
        guard let store = id.persistentStore, let coordinator = persistentStoreCoordinator,
              store.persistentStoreCoordinator !== coordinator, let own = coordinator.ownID(for: id) else { return id }
        return own
    }

    /// The object for `objectID`: the registered one, or a fault whose values load on first access.
    ///
    /// Never fails; if the object does not exist in the store, the fault reads as deleted when it fires.
    /// Use ``existingObject(with:)`` to find out at once.
    open func object(with objectID: NSManagedObjectID) -> NSManagedObject {
        checkQueue("object(with:)")
        defer { deliverStoreRegistrations() } // StoreRegistrations.swift
        if let object = registered(objectID.key) { return object }
        // A temporary ID the chain's root has made permanent since: a fault for the row.
        let objectID = objectID.isTemporaryID ? latestID(of: objectID) : localID(objectID)
        if let object = registered(objectID.key) { return object }
        let object = objectID.entity.layout.instanceClass.init(entity: objectID.entity, insertInto: nil)
        object.becomeFault(objectID, snapshot: nil, in: self)
        return object
    }

    /// The object for `objectID`, with its values loaded; throws
    /// `NSManagedObjectReferentialIntegrityError` (133000) if it does not exist, and
    /// `NSPersistentStoreOperationError` (134070, "CoreData could not fulfill a fault for …",
    /// the store's error under `NSUnderlyingErrorKey`) if the store could not read it.
    ///
    /// ```swift
    /// let car = try context.existingObject(with: id)
    /// ```
    open func existingObject(with objectID: NSManagedObjectID) throws -> NSManagedObject {
        checkQueue("existingObject(with:)")
        defer { deliverStoreRegistrations() } // StoreRegistrations.swift
        if let object = registered(objectID.key) {
            if object._isFault && !object._hasData {
                guard let snapshot = try snapshotForFault(objectID) else { throw missingObjectError(objectID) }
                object.adoptLoadedRow(snapshot)
            }
            if object._isInaccessible { throw missingObjectError(objectID) }
            object.fireFaultIfNeeded() // never a fault, as Apple's
            return object
        }
        let id = objectID.isTemporaryID ? latestID(of: objectID) : localID(objectID)
        if id !== objectID, registered(id.key) != nil { return try existingObject(with: id) }
        guard !id.isTemporaryID || _parent != nil, let snapshot = try snapshotForFault(id) else { throw missingObjectError(objectID) }
        let object = id.entity.layout.instanceClass.init(entity: snapshot.entity, insertInto: nil)
        object.becomeFault(id, snapshot: snapshot, in: self)
        object.fireFaultIfNeeded()
        return object
    }

    private func missingObjectError(_ id: NSManagedObjectID) -> NSError {
        CoreDataError.make(.referentialIntegrity, "No object with ID \(id.uriRepresentation().absoluteString) exists in the store",
                           extra: ["objectID": id])
    }

    /// The row for a fault, from the parent context or the store: `nil` if the row is gone;
    /// throws (``unfulfilledFaultError(_:for:relationship:)``) if the store failed.
    internal func snapshotForFault(_ id: NSManagedObjectID) throws -> RowSnapshot? {
        if let parent = _parent { return try parentSnapshot(for: id, in: parent) }
        let id = id.isTemporaryID ? latestID(of: id) : id
        if id.isTemporaryID { return nil }
        do {
            // stalenessInterval 0: no cached data acceptable, read the store.
            // A pinned context never takes the cache's rows, which may be newer than its generation.
            return try readingAtGeneration {
                try persistentStoreCoordinator?.row(for: id, usingCache: stalenessInterval != 0 && queryGeneration == nil)
            }
        } catch {
            throw Self.unfulfilledFaultError(error, for: id, relationship: nil)
        }
    }

    /// The destination IDs of a to-many relationship as the store (or the parent context) has
    /// them; throws (``unfulfilledFaultError(_:for:relationship:)``) if the store failed.
    internal func relatedObjectIDs(of object: NSManagedObject, index: Int) throws -> [NSManagedObjectID] {
        guard let relationship = object.layout.properties[index] as? NSRelationshipDescription else { return [] }
        if let parent = _parent {
            return try parent.performAndWait {
                let mirror = parent.object(with: object.objectID)
                return try mirror.storedToManyList(at: index).objects.map(\.objectID)
            }
        }
        do {
            return try readingAtGeneration { try persistentStoreCoordinator?.relatedIDs(for: relationship, of: object.objectID) ?? [] }
        } catch {
            throw Self.unfulfilledFaultError(error, for: object.objectID, relationship: relationship)
        }
    }

    // MARK: Inserting and deleting

    /// Inserts a new object; it gets a temporary ID and `awakeFromInsert` is called.
    ///
    /// Inserting an object that belongs to another context is a programmer error and stops the
    /// process, as Apple raises an exception.
    open func insert(_ object: NSManagedObject) {
        checkQueue("insert(_:)")
        if object._context === self {
            if object._isDeleted { undelete(object) }
            return
        }
        precondition(object._context == nil, "An NSManagedObject may only be in (or observed by) a single NSManagedObjectContext")
        object._extras?.assignedStore = nil // an assignment made in a context it left (rolled back) goes with it
        enter(object)
        object.awakeFromInsert()
    }

    /// `object`, in no context, joins this one as a new object (``insert(_:)`` without
    /// `awakeFromInsert`, which redo of an insert calls too).
    internal func enter(_ object: NSManagedObject) {
        object._context = self
        object._isInserted = true
        if object._hasObjectID || object._idStore != nil {
            register(object) // an ID made before, or a permanent one
        } else {
            // Registered under its temporary ID once that ID is made (``register(_:key:)``); the
            // serial number is drawn now, so that temporary IDs number objects in insertion order.
            let key = object.idKey
            if _retainsRegistered { retained[key] = object }
        }
        addInserted(object)
        if undoTracking != nil { noteUndoableChange(object) }
    }

    internal func undelete(_ object: NSManagedObject) {
        if undoTracking != nil { noteUndoableChange(object) }
        noteMistypedValue(of: object)
        object._isDeleted = false
        deleted.remove(object)
        pendingDeletes.removeAll { $0 === object }
        // A delete no `ObjectsDidChange` reported yet is withdrawn from the next one; a saved
        // object whose delete was reported is reported inserted again (as undo and rollback do).
        let unreportedDelete = pendingChangeNotice.deleted.lastIndex { $0 === object }
        if let unreportedDelete { pendingChangeNotice.deleted.remove(at: unreportedDelete) }
        if object._isInserted {
            willChangeInsertedSet()
            inserted.insert(object)
        } else {
            if unreportedDelete == nil {
                willChangeInsertedSet()
                pendingChangeNotice.inserted.append(object)
            }
            if !object._changed.isEmpty {
                // A saved object changed before it was deleted: its changes are saved after all.
                object._isUpdated = true
                updated.insert(object)
            }
        }
    }

    /// Marks an object for deletion at the next save. Its `prepareForDeletion()` is called at
    /// once (again if the object is deleted again, as Apple's is); delete rules are applied when
    /// pending changes are processed.
    ///
    /// Deleting an object of another context is a programmer error and stops the process.
    open func delete(_ object: NSManagedObject) {
        checkQueue("delete(_:)")
        precondition(object._context === self, "Can't delete an object that belongs to another context")
        // At once, as Apple's does, and again on a repeated delete; delete rules run later.
        object.prepareForDeletion()
        guard !object._isDeleted else { return }
        object._isDeleted = true
        if object._isInserted {
            willChangeInsertedSet()
            inserted.remove(object)
        } else {
            updated.remove(object)
            object._isUpdated = false
            deleted.insert(object)
        }
        pendingDeletes.append(object)
        pendingChangeNotice.deleted.append(object)
        if undoTracking != nil { noteUndoableChange(object) }
    }

    /// Called by objects when a value changes.
    internal func objectDidChange(_ object: NSManagedObject) {
        guard !object._isInserted, !object._isDeleted, !object._isUpdated else { return }
        noteMistypedValue(of: object)
        object._isUpdated = true
        updated.insert(object)
        pendingChangeNotice.updated.append(object)
        if undoTracking != nil { noteUndoableChange(object) }
    }

    /// Called by an updated object that changes again after an `ObjectsDidChange` reported it:
    /// the next one reports it again, as Apple's does. (It moves to the end of the updated set,
    /// past the mark of the objects reported: it is reported once however often it changes.)
    @inline(never)
    internal func updatedObjectDidChangeAgain(_ object: NSManagedObject) {
        updated.remove(object)
        updated.insert(object)
        pendingChangeNotice.updated.append(object)
        if undoTracking != nil { noteUndoableChange(object) }
    }

    /// Called by a new object that changes after an `ObjectsDidChange` reported it inserted:
    /// the next one reports it updated (once however often it changes).
    @inline(never)
    internal func insertedObjectDidChangeAgain(_ object: NSManagedObject) {
        if pendingChangeNotice.updated.last !== object { pendingChangeNotice.updated.append(object) }
    }

    /// While a save calls `willSave` (`callWillSave()`): the new objects of subclasses changed
    /// meanwhile, whose `willSave` runs again (an updated object changed again is reported by
    /// the next `ObjectsDidChange`; a new one is not). `nil` the rest of the time.
    @exclusivity(unchecked) internal var insertsChangedInWillSave: [NSManagedObject]?
    /// While a merge posts its notification: the rows updated elsewhere that no object of this
    /// context stands for (fetched results controllers look at them). Empty the rest of the time.
    @exclusivity(unchecked) internal var mergedUnregisteredUpdates: [NSManagedObjectID] = []
    /// Whether a save is calling `willSave` (``insertsChangedInWillSave``).
    internal var isCallingWillSave: Bool { @inline(__always) get { insertsChangedInWillSave != nil } }

    /// Called by a new object of a subclass that changes while a save calls `willSave`.
    @inline(never)
    internal func insertedObjectDidChangeInWillSave(_ object: NSManagedObject) {
        if insertsChangedInWillSave!.last !== object { insertsChangedInWillSave!.append(object) }
    }

    /// Objects inserted since the last save.
    open var insertedObjects: Set<NSManagedObject> { checkQueue("insertedObjects"); return Set(inserted.objects) }
    /// Objects changed since the last save.
    open var updatedObjects: Set<NSManagedObject> { checkQueue("updatedObjects"); return Set(updated.objects) }
    /// Objects that will be deleted at the next save.
    open var deletedObjects: Set<NSManagedObject> { checkQueue("deletedObjects"); return Set(deleted.objects) }
    /// Whether the context has unsaved changes.
    open var hasChanges: Bool { !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty }

    /// Applies delete rules to objects deleted since the last call and posts
    /// `NSManagedObjectContextObjectsDidChange`.
    open func processPendingChanges() {
        checkQueue("processPendingChanges()")
        processPendingChangesReporting()
    }

    /// Runs `object`'s delete rules, with ``isPropagatingDeletes`` set meanwhile (and put back
    /// after: a fetch in a `prepareForDeletion()` processes pending changes again).
    internal func applyDeleteRules(of object: NSManagedObject) {
        let wasPropagating = isPropagatingDeletes
        isPropagatingDeletes = true
        DeleteRules.apply(to: object, in: self)
        isPropagatingDeletes = wasPropagating
    }

    /// ``processPendingChanges()``'s work; returns the objects its `ObjectsDidChange` reported
    /// (inserted, updated and deleted since the last call). Delete rules run if
    /// `propagatingDeletes` (a save), else as ``propagatesDeletesAtEndOfEvent`` says.
    @discardableResult
    internal func processPendingChangesReporting(propagatingDeletes: Bool = false) -> (inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject]) {
        while !pendingDeletes.isEmpty && (propagatingDeletes || propagatesDeletesAtEndOfEvent) {
            let object = pendingDeletes.removeFirst()
            applyDeleteRules(of: object)
            if object._isInserted {
                // A new object deleted before it was saved leaves the context altogether.
                object._isInserted = false
                leaveContext(object)
            }
        }
        if let undoTracking { recordUndoEvent(undoTracking) }
        var notice = pendingChangeNotice
        if noticeInsertsAreInsertedSet { notice.inserted = inserted.objects }
        clearPendingChangeNotice()
        if !notice.inserted.isEmpty || !notice.updated.isEmpty || !notice.deleted.isEmpty {
            var info = ChangeInfo()
            info.memo = saveSetMemo
            saveSetMemo = nil
            info.add(NSInsertedObjectsKey, notice.inserted)
            info.add(NSUpdatedObjectsKey, notice.updated)
            info.add(NSDeletedObjectsKey, notice.deleted)
            saveSetMemo = info.memo
            info.memo = nil
            CoreDataMessages.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: info.userInfo)
        }
        return notice
    }

    // MARK: Discarding changes

    /// Discards all unsaved changes: inserted objects leave the context, deleted and updated ones
    /// get their last saved values back.
    ///
    /// `NSManagedObjectContextObjectsDidChange` reports it as undoing every change would (so a
    /// fetched results controller and the context's observers follow): the discarded new objects
    /// under `NSDeletedObjectsKey`, the deleted ones restored under `NSInsertedObjectsKey`, the
    /// updated ones under `NSUpdatedObjectsKey`.
    open func rollback() {
        checkQueue("rollback()")
        // New objects deleted since the last `processPendingChanges` are in neither the inserted
        // set nor the registry (unless their ID was made): they leave here, or nothing detaches them.
        var discarded: [NSManagedObject] = []
        for object in pendingDeletes where object._isInserted {
            object._isInserted = false
            object._isDeleted = false
            leaveContext(object)
            discarded.append(object) // (an `ObjectsDidChange` may have reported it inserted)
        }
        pendingDeletes.removeAll()
        objectsDetectingConflicts.removeAll()
        discarded += inserted.objects
        for object in inserted.objects {
            object._isInserted = false
            leaveContext(object)
        }
        var reverted: [NSManagedObject] = []
        var restored: [NSManagedObject] = []
        for object in deleted.objects + updated.objects {
            if object._isInaccessible {
                // Its row was gone when it fired: a fault again, which tries the store again.
                object._isDeleted = false
                object.turnIntoFault(keepingSnapshot: nil)
                continue
            }
            if object._isDeleted { restored.append(object) }
            object._isDeleted = false
            object.revertToSnapshot()
            reverted.append(object)
        }
        inserted.removeAll()
        updated.removeAll()
        deleted.removeAll()
        clearPendingChangeNotice()
        // No change is left that a failed load could have fed; what failed loads again when used.
        unfulfilledFaults.removeAll()
        forgetUndo()
        // Once the context is consistent again, as an override may read it.
        for object in reverted { object.awake(fromSnapshotEvents: .rollback) }
        if !discarded.isEmpty || !reverted.isEmpty {
            let restoredSet = Set(restored.map(ObjectIdentifier.init))
            var info = ChangeInfo()
            info.add(NSInsertedObjectsKey, restored)
            info.add(NSUpdatedObjectsKey, reverted.filter { !restoredSet.contains(ObjectIdentifier($0)) })
            info.add(NSDeletedObjectsKey, discarded)
            CoreDataMessages.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: info.userInfo)
        }
    }

    /// Forgets every object: the context is as new. Objects already handed out become invalid;
    /// `NSManagedObjectContextObjectsDidChange` is posted with their IDs under `NSInvalidatedAllObjectsKey`.
    open func reset() {
        checkQueue("reset()")
        defer { deliverStoreRegistrations() } // StoreRegistrations.swift
        let objects = takeRegisteredObjects()
        retained.removeAll()
        Self.detach(objects + inserted.objects + pendingDeletes)
        inserted.removeAll()
        updated.removeAll()
        deleted.removeAll()
        pendingDeletes.removeAll()
        objectsDetectingConflicts.removeAll()
        clearPendingChangeNotice()
        unfulfilledFaults.removeAll()
        moveQueryGenerationToCurrent()
        forgetUndo()
        // As Apple's: every object was invalidated.
        CoreDataMessages.post(name: .NSManagedObjectContextObjectsDidChange, object: self,
                                        userInfo: [NSInvalidatedAllObjectsKey: objects.map(\.objectID)])
    }

    /// Updates an object from the store: with `flag` false it becomes a fault (unsaved changes
    /// are discarded); with `flag` true its unsaved changes are kept on top of the stored values.
    ///
    /// Posts `NSManagedObjectContextObjectsDidChange` with the object under
    /// `NSRefreshedObjectsKey`, as Apple's does (not for a new object, which has nothing to
    /// refresh):
    ///
    /// ```swift
    /// context.refresh(car, mergeChanges: false) // car is a fault again
    /// ```
    open func refresh(_ object: NSManagedObject, mergeChanges flag: Bool) {
        checkQueue("refresh(_:mergeChanges:)")
        if refreshWithoutNotice(object, mergeChanges: flag) { postRefreshed([object]) }
    }

    /// Refreshes every registered object, keeping unsaved changes, and posts one
    /// `NSManagedObjectContextObjectsDidChange` with them under `NSRefreshedObjectsKey`.
    open func refreshAllObjects() {
        checkQueue("refreshAllObjects()")
        postRefreshed(registeredObjects.filter { refreshWithoutNotice($0, mergeChanges: true) })
    }

    /// ``refresh(_:mergeChanges:)``'s work, without the notification; whether the object was
    /// refreshed (it is this context's, and not new).
    internal func refreshWithoutNotice(_ object: NSManagedObject, mergeChanges flag: Bool) -> Bool {
        // Fetched properties are fetched again at their next read, as Apple documents.
        if object._context === self { object.forgetFetchedPropertyValues() }
        guard object._context === self, !object._isInserted else { return false }
        if object._isInaccessible {
            // Its row was gone when it fired: a fault again, out of the deleted set.
            deleted.remove(object)
            object._isDeleted = false
            object.turnIntoFault(keepingSnapshot: nil)
            return true
        }
        // Merging keeps the unsaved changes, and the transient values (Apple: "does not affect
        // any transient properties"): an object with either is reloaded in place. Any other is a
        // fault without data, whose next access reads the row then, as `stalenessInterval` says;
        // but one observed through Observation takes the row now, so that its observers hear of
        // the properties that changed only.
        let mergedChanges = flag && (object.hasChanges || object.holdsTransientValues)
        var fresh: RowSnapshot?
        var failure: (any Error)?
        if (mergedChanges || object.isObserved) && (!object.objectID.isTemporaryID || _parent != nil) {
            do { fresh = try snapshotForFault(object.objectID) } catch { failure = error }
        }
        if mergedChanges {
            object.merge(fresh)
        } else {
            if object._isUpdated { updated.remove(object); object._isUpdated = false }
            object.turnIntoFault(keepingSnapshot: fresh)
        }
        forgetUnfulfilledFaults(ofRefreshed: object)
        if let undoTracking { undoRefreshed(object, undoTracking) }
        // Kept values the store could not refresh are stale: not silently.
        if let failure, flag && object.hasChanges { recordUnfulfilledFault(failure, of: object, relationship: nil) }
        if mergedChanges { object.awake(fromSnapshotEvents: .refresh) }
        return true
    }

    /// `ObjectsDidChange` for refreshed objects (none: no notification).
    private func postRefreshed(_ objects: [NSManagedObject]) {
        var info = ChangeInfo()
        info.add(NSRefreshedObjectsKey, objects)
        guard !info.userInfo.isEmpty else { return }
        CoreDataMessages.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: info.userInfo)
    }

    /// Gives the objects permanent IDs now instead of at the next save.
    ///
    /// Only the objects inserted in this context take one: an object of another context (or in
    /// none), or one a parent inserted that this child only sees, keeps its temporary ID (given
    /// one here, it was lost to its own context's registry, or never matched the key its
    /// inserting context's save gave it).
    open func obtainPermanentIDs(for objects: [NSManagedObject]) throws {
        checkQueue("obtainPermanentIDs(for:)")
        defer { deliverStoreRegistrations() } // StoreRegistrations.swift
        guard let coordinator = persistentStoreCoordinator else { throw CoreDataError.make(.persistentStoreSave, "The context has no coordinator") }
        let temporary = objects.filter { $0.objectID.isTemporaryID && $0._context === self && $0._isInserted }
        // By entity and store (an object assigned to a store takes its ID there).
        struct Group: Hashable { let entity: ObjectIdentifier, store: ObjectIdentifier }
        var groups: [Group: [NSManagedObject]] = [:]
        var order: [(Group, NSEntityDescription, NSPersistentStore)] = []
        for object in temporary {
            let store = try store(forNew: object, in: coordinator)
            let group = Group(entity: ObjectIdentifier(object.entity), store: ObjectIdentifier(store))
            if groups[group] == nil { order.append((group, object.entity, store)) }
            groups[group, default: []].append(object)
        }
        for (key, entity, store) in order {
            let group = groups[key]!
            // A store you write makes its IDs of the objects themselves (NSIncrementalStore.swift).
            let ids = store.makesIDsOfObjects ? try store.permanentIDs(for: group) : try coordinator.permanentIDs(for: entity, count: group.count, in: store)
            for (object, id) in zip(group, ids) {
                reregister(object, as: id)
            }
        }
    }
}

/// The stack of contexts whose blocks run on the current thread.
internal enum CurrentContext {
    private static let key = "CoreData.CurrentContext"

    private final class Stack {
        var contexts: [Unmanaged<NSManagedObjectContext>] = []
        /// Nesting depth of `performAndWait` calls made while the main queue was held.
        var mainQueueDepth = 0
    }

    private static var stack: Stack {
        let dictionary = Thread.current.threadDictionary
        if let stack = dictionary[key] as? Stack { return stack }
        let stack = Stack()
        dictionary[key] = stack
        return stack
    }

    static func push(_ context: NSManagedObjectContext) { stack.contexts.append(.passUnretained(context)) }
    static func pop() { _ = stack.contexts.popLast() }
    static var top: NSManagedObjectContext? { stack.contexts.last?.takeUnretainedValue() }
    /// Whether this thread holds the main queue through an enclosing `performAndWait`.
    static var holdsMainQueue: Bool { stack.mainQueueDepth > 0 }

    /// Runs `body` noting, if `held`, that this thread holds the main queue meanwhile.
    static func holdingMainQueue<T>(_ held: Bool, _ body: () throws -> T) rethrows -> T {
        guard held else { return try body() }
        let stack = self.stack
        stack.mainQueueDepth += 1
        defer { stack.mainQueueDepth -= 1 }
        return try body()
    }

    static func contains(_ context: NSManagedObjectContext) -> Bool {
        stack.contexts.contains { $0.takeUnretainedValue() === context }
    }
}
