import Foundation

/// Query generations: a context pinned to a generation sees the SQLite and PostgreSQL stores as they were when
/// it first read after pinning, for its fetches and for faults that fire later, until it moves.
/// The generation itself (held WAL read transactions) is `Coordinator/QueryGeneration.swift`.
extension NSManagedObjectContext {
    /// The token of the generation the context is pinned to; `nil` when it is unpinned, and
    /// always for a child context, which sees its parent's data.
    ///
    /// ```swift
    /// try viewContext.setQueryGenerationFrom(.current)
    /// let token = viewContext.queryGenerationToken // pass it to another context of the coordinator
    /// ```
    public var queryGenerationToken: NSQueryGenerationToken? {
        checkQueue("queryGenerationToken")
        return queryGeneration.map { NSQueryGenerationToken(generation: $0) }
    }

    /// Pins the context to a generation of its stores' data, moves it, or unpins it (`nil`).
    ///
    /// - ``NSQueryGenerationToken/current``: the context pins itself to the latest generation
    ///   at its next read (fetch or fault).
    /// - another context's ``queryGenerationToken``: the context reads that generation too.
    /// - `nil`: the context reads the latest data again.
    ///
    /// A pinned context's fetches, counts and faults (its objects', its to-many relationships',
    /// those of batched fetches) all read its generation, whatever other contexts, coordinators or
    /// processes save meanwhile; a save of its own is made against the latest data and moves it
    /// to the latest generation, as do ``reset()``, ``mergeChanges(fromContextDidSave:)`` and
    /// ``mergeChanges(fromRemoteContextSave:into:)``. Batch requests do not move it. Objects
    /// already loaded keep their values until refreshed (``refreshAllObjects()``).
    ///
    /// Generations need a SQLite store in WAL mode (the default) or a PostgreSQL store: with
    /// none (an in-memory store, or another journal mode set by ``NSSQLitePragmasOption``),
    /// `.current` leaves the context unpinned, as Apple's contexts "gracefully revert to unpinned
    /// behaviour". A held generation never blocks a save, but keeps checkpoints from copying
    /// later saves into the database, so the `-wal` file grows until the context moves, unpins,
    /// resets or goes away: move contexts to `.current` as soon as an old generation is no
    /// longer needed. On PostgreSQL a generation is a `REPEATABLE READ` transaction on a session
    /// of its own, beside the store's pool; at most ``NSPersistentStoreConnectionPoolMaxSizeKey``
    /// generations (4 by default) hold one store at once, and the read that would pin one more
    /// throws 134070 until another generation ends.
    ///
    /// Throws `NSCoreDataError` (134060) for a token of another coordinator's generation ("this
    /// persistent store coordinator does not have any of the referenced stores"), for one whose
    /// generation has expired (no context uses it any more), for a context without a
    /// coordinator, and for a child context (Apple treats setting a child's generation as a
    /// programmer error: children defer to their parent's generation).
    ///
    /// ```swift
    /// try viewContext.setQueryGenerationFrom(.current)
    /// let cars = try viewContext.fetch(request)   // pins the generation
    /// // … other contexts save; viewContext still sees what it fetched
    /// try viewContext.setQueryGenerationFrom(.current) // move on: the next read sees the latest
    /// viewContext.refreshAllObjects()
    /// ```
    public func setQueryGenerationFrom(_ generation: NSQueryGenerationToken?) throws {
        checkQueue("setQueryGenerationFrom(_:)")
        guard let token = generation else {
            queryGeneration = nil
            return
        }
        guard _parent == nil else {
            throw CoreDataError.make(.coreData,
                "A child context can't be pinned to a query generation: it sees its parent's data, through the parent's generation. Pin the parent instead.")
        }
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError.make(.coreData, "The context has no persistent store coordinator to pin a query generation of")
        }
        if token.isCurrent {
            let supported = coordinator.persistentStores.contains { ($0 as? any QueryGenerationStore)?.supportsQueryGenerations == true }
            queryGeneration = supported ? QueryGeneration(coordinator: coordinator) : nil
            return
        }
        guard let target = token.generation else {
            throw CoreDataError.make(.coreData,
                "Invalid generation token: its generation has expired (no context uses it any more); pin the context to NSQueryGenerationToken.current instead")
        }
        guard target.coordinator === coordinator else {
            throw CoreDataError.make(.coreData,
                "Invalid generation token: this persistent store coordinator does not have any of the referenced stores (the token is another coordinator's)")
        }
        queryGeneration = target
    }

    /// Runs a store request of this context (`body`) at its generation: on the generation's
    /// connections when pinned, on the store's readers when not. An unpinned context pays a
    /// nil check, and an atomic load once some context somewhere is pinned. Once a store you
    /// write (`NSIncrementalStore`) was added in the process (it counts in `live` then), the
    /// request also names this context as the one the store is handed (`RequestingContext.swift`).
    @inline(__always)
    internal func readingAtGeneration<T>(_ body: () throws -> T) rethrows -> T {
        if queryGeneration == nil && QueryGeneration.live.load(ordering: .relaxed) == 0 { return try body() }
        return try RequestingContext.naming(self) { try QueryGeneration.reading(queryGeneration, body) }
    }

    /// A pinned context's move to the latest generation (at its next read), after a reset or a
    /// merge; nothing for an unpinned one.
    internal func moveQueryGenerationToCurrent() {
        guard let generation = queryGeneration, let coordinator = generation.coordinator else { return }
        queryGeneration = QueryGeneration(coordinator: coordinator)
    }
}

/// What a save does with its context's generation: the save runs unpinned (Apple: "query
/// generations are for fetched data only; they are not used during saving"), and a context that
/// was pinned is pinned to the latest generation once its changes are written, or to its old
/// one again if nothing was written.
internal struct QueryGenerationSave {
    private let context: NSManagedObjectContext
    private let pinned: QueryGeneration?
    private var moved = false

    init(suspending context: NSManagedObjectContext) {
        self.context = context
        self.pinned = context.queryGeneration
        if pinned != nil { context.queryGeneration = nil }
    }

    /// The changes are written: the context moves to the latest generation.
    mutating func moveToCurrent() {
        guard let pinned, let coordinator = pinned.coordinator else { return }
        context.queryGeneration = QueryGeneration(coordinator: coordinator)
        moved = true
    }

    /// The save is over: a context whose save wrote nothing keeps its generation.
    func end() {
        if let pinned, !moved { context.queryGeneration = pinned }
    }
}
