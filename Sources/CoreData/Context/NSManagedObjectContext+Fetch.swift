import Foundation

extension NSManagedObjectContext {
    /// Fetches the objects (or IDs, dictionaries, count) a request describes.
    ///
    /// The predicate runs in SQLite; unsaved inserts, updates and deletes of the context are taken
    /// into account unless `includesPendingChanges` is false. Without sort descriptors, objects
    /// come in primary-key order (the order they were inserted), then unsaved inserts in insertion order.
    ///
    /// Throws for an unknown entity, a malformed predicate format, or a store error.
    public func fetch<T>(_ request: NSFetchRequest<T>) throws -> [T] {
        checkQueue("fetch(_:) of '\(request.entityName ?? request.entity?.name ?? "?")'")
        defer { deliverStoreRegistrations() } // StoreRegistrations.swift
        let entity = try resolveEntity(request)
        if !(request.propertiesToGroupBy ?? []).isEmpty && request.resultType != .dictionaryResultType {
            throw CoreDataError.make(.coreData, "Invalid fetch request: propertiesToGroupBy requires resultType .dictionaryResultType")
        }
        let results: [Any]
        switch request.resultType {
        case .countResultType:
            results = [NSNumber(value: try count(for: request))]
        case .managedObjectIDResultType:
            results = try fetchIDs(request, entity: entity)
        case .dictionaryResultType:
            results = try fetchDictionaries(request, entity: entity)
        default:
            let objects = try fetchObjects(request, entity: entity)
            if T.self == NSManagedObject.self { return unsafeBitCast(objects, to: [T].self) }
            if T.self == (any NSFetchRequestResult).self {
                // `NSFetchRequest<NSFetchRequestResult>`, as much Core Data code writes it: every
                // object is one, so each is wrapped without a dynamic cast (a conformance lookup).
                var wrapped: [any NSFetchRequestResult] = []
                wrapped.reserveCapacity(objects.count)
                for object in objects { wrapped.append(object) }
                return unsafeBitCast(wrapped, to: [T].self)
            }
            // Each object is checked too: one registered before its class was known (or made with
            // `NSManagedObject(entity:insertInto:)`) is a plain `NSManagedObject`, which the
            // checked path below reports.
            if let cls = T.self as? NSManagedObject.Type,
               entity.layout.descendants.allSatisfy({ $0.layout.instanceClass.isSubclass(of: cls) }),
               objects.allSatisfy({ $0 is T }) {
                return unsafeBitCast(objects, to: [T].self)
            }
            results = objects
        }
        var typed: [T] = []
        typed.reserveCapacity(results.count)
        for result in results {
            guard let value = result as? T else {
                throw CoreDataError.make(.coreData,
                    "A fetch of '\(entity.name ?? "")' produced a \(type(of: result)), which is not a \(T.self): check the entity's class name (managedObjectClassName) and the request's result type")
            }
            typed.append(value)
        }
        return typed
    }

    /// The number of objects a fetch request would return.
    public func count<T>(for request: NSFetchRequest<T>) throws -> Int {
        checkQueue("count(for:)")
        let entity = try resolveEntity(request)
        if request.includesPendingChanges && hasChanges || _parentForFetch != nil {
            return try fetchIDs(request, entity: entity).count
        }
        let plan = try plan(for: request, entity: entity, withLimits: true)
        return try readingAtGeneration { try persistentStoreCoordinatorOrThrow().count(plan) }
    }

    internal var _parentForFetch: NSManagedObjectContext? { parent }

    internal func persistentStoreCoordinatorOrThrow() throws -> NSPersistentStoreCoordinator {
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError.make(.coreData, "The context has no persistent store coordinator")
        }
        return coordinator
    }

    internal func resolveEntity<T>(_ request: NSFetchRequest<T>) throws -> NSEntityDescription {
        if let entity = request.entity { return entity }
        guard let name = request.entityName else {
            throw CoreDataError.make(.coreData, "The fetch request has neither an entity nor an entity name")
        }
        guard let entity = model?.entitiesByName[name] else {
            throw CoreDataError.make(.coreData, "NSFetchRequest could not locate an NSEntityDescription for entity name '\(name)'")
        }
        return entity
    }

    internal func plan<T>(for request: NSFetchRequest<T>, entity: NSEntityDescription, withLimits: Bool) throws -> FetchPlan {
        var plan = FetchPlan(entity: entity)
        plan.includesSubentities = request.includesSubentities
        plan.requestPredicate = request.predicate
        if let predicate = request.predicate {
            let tree = try PredicateBridge.tree(of: predicate)
            if tree.containsBlock { // (every store: the in-memory ones evaluate rows, not objects)
                throw PredicateErrors.unsupportedPredicate("block expressions are evaluated in memory only, not in a fetch", in: tree)
            }
            if tree.containsFetchRequestExpression {
                // FETCH(…) runs now, once: the stores, a store you write and a parent context
                // get the predicate with its result (NSFetchRequestExpression.swift).
                plan.predicate = try tree.runningFetchRequestExpressions()
                plan.requestPredicate = NSPredicate.make(from: plan.predicate!)
            } else {
                plan.predicate = tree
            }
        }
        plan.sortKeys = try PredicateBridge.sortKeys(of: request.sortDescriptors ?? [])
        plan.requestSortDescriptors = request.sortDescriptors ?? []
        plan.affectedStores = request.affectedStores
        if withLimits {
            plan.limit = request.fetchLimit
            plan.offset = request.fetchOffset
        }
        return plan
    }

    /// The IDs of the objects a request matches, with pending changes merged in.
    private func fetchIDs<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription) throws -> [NSManagedObjectID] {
        if request.includesPendingChanges { holdingUndoEvent(endingEvent: false) { processPendingChanges() } }
        if !(request.includesPendingChanges && hasChanges) && _parent == nil && !sortsAcrossStores(request, entity: entity) {
            let plan = try plan(for: request, entity: entity, withLimits: true)
            return try readingAtGeneration { try persistentStoreCoordinatorOrThrow().fetchIDs(plan) }
        }
        return try fetchObjects(request, entity: entity).map(\.objectID)
    }

    /// The objects a request matches, with pending changes merged in. `applyLimits` false
    /// ignores the request's limit and offset (a child applies them after its own changes);
    /// `forChild` reads the rows' values at once (a child takes them all), never batched.
    internal func fetchObjects<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription, applyLimits: Bool = true,
                                  includesPendingChanges: Bool? = nil, forChild: Bool = false) throws -> [NSManagedObject] {
        let includesPendingChanges = includesPendingChanges ?? request.includesPendingChanges
        if includesPendingChanges { holdingUndoEvent(endingEvent: false) { processPendingChanges() } }
        let merging = includesPendingChanges && hasChanges
        let acrossStores = _parent == nil && sortsAcrossStores(request, entity: entity)
        let needsMemory = (merging || acrossStores) && (request.fetchLimit > 0 || request.fetchOffset > 0)
        let plan = try self.plan(for: request, entity: entity, withLimits: applyLimits && !needsMemory)
        var objects: [NSManagedObject]
        if let parent = _parent {
            // Reads walk up the chain: the parent answers with its own view, unsaved changes included.
            var forwarded = request
            if plan.requestPredicate !== request.predicate { // a FETCH(…) ran: the parent gets its result
                forwarded = request.copiedRequest(as: T.self)
                forwarded.predicate = plan.requestPredicate
            }
            let rows = try parent.performAndWait {
                try parent.snapshotsForChild(forwarded, entity: entity, applyLimits: applyLimits && !needsMemory)
            }
            objects = materialize(fromParent: rows, refresh: request.shouldRefreshRefetchedObjects,
                                  asFaults: request.returnsObjectsAsFaults, withValues: request.includesPropertyValues)
        } else if !forChild, request.fetchBatchSize > 0 || !request.includesPropertyValues
                    || persistentStoreCoordinator?.fetchesFaults(of: entity) == true {
            // IDs first; rows as faults fire, a batch at a time (NSManagedObjectContext+Batching.swift).
            // A store you write gives faults too, each read alone when it fires (`fetchesFaults`),
            // unless the request asks for values now.
            try prefetch(request.relationshipKeyPathsForPrefetching, of: [], entity: entity) // (checks the key paths now: the batches can't throw)
            let keys = try readingAtGeneration { try persistentStoreCoordinatorOrThrow().fetchKeys(plan) }
            objects = materializeFaults(keys, batchSize: max(request.fetchBatchSize, 0),
                                        prefetching: request.relationshipKeyPathsForPrefetching, refresh: request.shouldRefreshRefetchedObjects)
            if request.fetchBatchSize <= 0 && request.includesPropertyValues && !request.returnsObjectsAsFaults { // (a store's faults)
                for object in objects { object.fireFaultIfNeeded() }
            }
        } else {
            objects = try materializeRows(of: plan, refresh: request.shouldRefreshRefetchedObjects, asFaults: request.returnsObjectsAsFaults)
            try prefetch(request.relationshipKeyPathsForPrefetching, of: objects, entity: entity)
        }
        if merging {
            objects = try mergePendingChanges(into: objects, plan: plan, request: request, applyLimits: applyLimits,
                                              keepsStoreOrder: request.fetchBatchSize > 0 && !acrossStores)
        } else if acrossStores {
            // Each store sorted its own rows: the whole is sorted, then limited, here.
            if !plan.sortKeys.isEmpty { objects = PredicateBridge.sort(objects, by: plan.sortKeys) }
            if applyLimits && request.fetchOffset > 0 { objects = Array(objects.dropFirst(request.fetchOffset)) }
            if applyLimits && request.fetchLimit > 0 { objects = Array(objects.prefix(request.fetchLimit)) }
        }
        return objects
    }

    /// Whether the request reads several stores and asks for an order or a limit, which the
    /// stores can't give together: the context sorts and limits their objects.
    private func sortsAcrossStores<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription) -> Bool {
        guard !(request.sortDescriptors ?? []).isEmpty || request.fetchLimit > 0 || request.fetchOffset > 0,
              let coordinator = persistentStoreCoordinator else { return false }
        return coordinator.fetchSpansStores(entity, among: request.affectedStores)
    }

    /// Registered objects for fetched rows: existing ones are reused (uniquing), new ones are
    /// faults that carry their row, so firing them does not go back to the store. With
    /// `asFaults` false (`returnsObjectsAsFaults`), every returned object is fired.
    internal func materialize(_ rows: [FetchedRow], refresh: Bool, asFaults: Bool) -> [NSManagedObject] {
        var objects: [NSManagedObject] = []
        objects.reserveCapacity(rows.count)
        var maker = RowMaterializer()
        withRegistryLock { $0.reserveCapacity(rows.count) }
        rows.withUnsafeBufferPointer { rows in
            // Each row lent from the array as it is (a `for` loop would copy it: three retains).
            for index in rows.indices { objects.append(maker.object(for: LentRow(lending: rows[index]), in: self)) }
        }
        return finishMaterializing(objects, maker, refresh: refresh, asFaults: asFaults)
    }

    /// ``materialize(_:refresh:asFaults:)`` for the rows of a plan, each made into its object as
    /// the store reads it (no array of rows is held: a large fetch needs less memory and time).
    /// The registry's lock is taken per row, never across the store's read or an object's
    /// `init(entity:insertInto:)`.
    internal func materializeRows(of plan: FetchPlan, refresh: Bool, asFaults: Bool) throws -> [NSManagedObject] {
        let coordinator = try persistentStoreCoordinatorOrThrow()
        var objects: [NSManagedObject] = []
        var maker = RowMaterializer()
        let observer = _fetchRowObserver
        try readingAtGeneration {
            try coordinator.fetchRows(plan) { row in
                objects.append(maker.object(for: consume row, in: self))
                if let observer { try observer(objects.count) }
            }
        }
        return finishMaterializing(objects, maker, refresh: refresh, asFaults: asFaults)
    }

    /// Gives objects that were already registered their fetched rows (outside the registry's
    /// lock: refreshing one releases its related objects, whose `deinit` takes the lock), then
    /// retains and fires as the context and the request ask.
    private func finishMaterializing(_ objects: [NSManagedObject], _ maker: RowMaterializer, refresh: Bool, asFaults: Bool) -> [NSManagedObject] {
        for (object, snapshot) in maker.refetched { object.takeRefetched(snapshot, refresh: refresh) }
        if retainsRegisteredObjects { for object in objects { retainRegistered(object) } }
        if !asFaults { for object in objects { object.fireFaultIfNeeded() } }
        return objects
    }

    /// Adds unsaved inserts, drops deleted objects, re-checks updated ones; sorts and limits in memory.
    /// `keepsStoreOrder` (a batched fetch): the store's objects stay in the store's order and
    /// only the changed ones are placed among them, so that sorting fires few faults.
    /// Whether a changed object's row is (or, new, will be) in one of a request's
    /// `affectedStores`; `true` when it names none.
    internal func isObject(_ object: NSManagedObject, inAffectedStores affected: [NSPersistentStore]?) throws -> Bool {
        guard let affected else { return true }
        let store: NSPersistentStore?
        if object.objectID.isTemporaryID, let coordinator = persistentStoreCoordinator {
            store = try self.store(forNew: object, in: coordinator)
        } else {
            store = object.objectID.persistentStore
        }
        return affected.contains { $0 === store }
    }

    private func mergePendingChanges<T>(into objects: [NSManagedObject], plan: FetchPlan, request: NSFetchRequest<T>,
                                        applyLimits: Bool, keepsStoreOrder: Bool = false) throws -> [NSManagedObject] {
        let entityNumbers = Set(plan.includesSubentities ? plan.entity.layout.entityNumbers : [plan.entity.layout.entityNumber])
        func isCandidate(_ object: NSManagedObject) -> Bool { entityNumbers.contains(object.layout.entityNumber) }
        func matches(_ object: NSManagedObject) throws -> Bool {
            guard try isObject(object, inAffectedStores: plan.affectedStores) else { return false }
            guard let predicate = plan.predicate else { return true }
            return try PredicateBridge.evaluate(predicate, on: object)
        }
        var result: [NSManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        for object in objects where !object._isDeleted {
            if object._isUpdated, !(try matches(object)) { continue }
            result.append(object)
            seen.insert(ObjectIdentifier(object))
        }
        for object in updated.objects where isCandidate(object) && !seen.contains(ObjectIdentifier(object)) {
            if try matches(object) { result.append(object); seen.insert(ObjectIdentifier(object)) }
        }
        for object in inserted.objects where isCandidate(object) && !object._isDeleted {
            if try matches(object) { result.append(object) }
        }
        if !plan.sortKeys.isEmpty {
            result = keepsStoreOrder ? try placeChanged(result, by: plan.sortKeys) : PredicateBridge.sort(result, by: plan.sortKeys)
        } else {
            // Primary-key order, as the store returns it, then unsaved inserts (here or in a
            // parent) in insertion order: temporary IDs are numbered in creation order.
            let saved = result.filter { $0.idKey.store != IDKey.temporaryStore }.sorted { $0.idKey.value < $1.idKey.value }
            let unsaved = result.filter { $0.idKey.store == IDKey.temporaryStore }.sorted { $0.idKey.value < $1.idKey.value }
            result = saved + unsaved
        }
        guard applyLimits else { return result }
        if request.fetchOffset > 0 { result = Array(result.dropFirst(request.fetchOffset)) }
        if request.fetchLimit > 0 { result = Array(result.prefix(request.fetchLimit)) }
        return result
    }

    /// `objects` in sort order, when the unchanged ones already are (they came from the store,
    /// sorted): the changed ones are sorted, then each placed by binary search, comparing with
    /// (and so firing) about log₂(n) of the others. Ties go by primary key, unsaved objects last.
    private func placeChanged(_ objects: [NSManagedObject], by keys: [SortKey]) throws -> [NSManagedObject] {
        // (A new object may have a permanent ID already: `obtainPermanentIDs`, a child's save.)
        func isChanged(_ object: NSManagedObject) -> Bool { object._isUpdated || object._isInserted || object.idKey.store == IDKey.temporaryStore }
        func before(_ a: NSManagedObject, _ b: NSManagedObject) -> Bool {
            for key in keys {
                switch key.compare(a, b) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            let (x, y) = (a.idKey, b.idKey)
            if (x.store == IDKey.temporaryStore) != (y.store == IDKey.temporaryStore) { return y.store == IDKey.temporaryStore }
            return x.value < y.value
        }
        var result = objects.filter { !isChanged($0) }
        for object in PredicateBridge.sort(objects.filter(isChanged), by: keys) {
            var low = 0, high = result.count
            while low < high {
                let middle = (low + high) / 2
                if before(result[middle], object) { low = middle + 1 } else { high = middle }
            }
            result.insert(object, at: low)
        }
        return result
    }
}

/// Makes the registered object of one fetched row, remembering the class of the last entity
/// seen. Objects already registered are returned as they are and listed in ``refetched``, to
/// take their rows once the fetch has read them all.
internal struct RowMaterializer {
    /// Held so that ``lastEntityID`` names it; the identifier is what each row compares with
    /// (without a retain and release of the optional reference).
    private var lastEntity: NSEntityDescription?
    private var lastEntityID: ObjectIdentifier?
    private var lastClass: NSManagedObject.Type = NSManagedObject.self
    private var lastRoot = 0
    /// Registered objects the fetch found again, with their fetched rows.
    private(set) var refetched: [(NSManagedObject, RowSnapshot)] = []

    /// The object of `row`. A new one takes the row's values buffer (shared with its snapshot)
    /// and retains only what it keeps: its entity and store. (`__owned`, not `consuming`: Swift
    /// 6.3 crashes in its MoveOnlyTypeEliminator pass on a `consuming` `LentRow`, whose
    /// `unowned(unsafe)` references it does not handle; the code made is the same.)
    mutating func object(for row: __owned LentRow, in context: NSManagedObjectContext) -> NSManagedObject {
        if ObjectIdentifier(row.entity) != lastEntityID {
            // Looked up once per run of rows of one entity, not per row.
            let entity = row.entity
            lastEntity = entity
            lastEntityID = ObjectIdentifier(entity)
            let layout = entity.layout
            lastClass = layout.instanceClass
            lastRoot = layout.rootNumber
        }
        let key = IDKey(store: row.store.tag, root: lastRoot, value: row.primaryKey)
        if let existing = context.registered(key, followingForwarding: false) {
            refetched.append((existing, row.snapshot))
            return existing
        }
        let object = lastClass.init(entity: row.entity, insertInto: nil)
        object.setPermanentKey(row.primaryKey, store: row.store)
        object._context = context
        // The row's buffer is shared by the values and the snapshot, moved into the object (set
        // field by field: the `_snapshot` setter would retain and release an entity per row).
        object._snapshotVersion = row.version
        var row = row
        var values = PropertyValues()
        swap(&values, &row.values) // moved out of the row, not copied and released with it
        object._snapshotValues = values
        object._values = consume values
        object._isFault = true
        context.register(object, key: key)
        return object
    }
}
