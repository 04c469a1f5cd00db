import Foundation

// How an `NSIncrementalStore` answers the internal store API (`NSPersistentStore.swift`), which
// deals in rows and IDs, through its public overrides, which deal in requests, nodes and objects.
//
// Where Apple hands the store a context (docs/PORTING.md):
// - fetches, faults and relationship loads get the context that asked (`RequestingContext`):
//   the objects the store makes there with `context.object(with:)` are the ones the fetch
//   returns. For a child context that is the root context its request reaches the coordinator
//   through. A request that comes from no context (a migration, `coordinator.execute` without
//   one) gets a private context of the store's own, made for the call;
// - a save gets the saving context itself, and its own objects in the `NSSaveChangesRequest`
//   (`SaveChanges.context`): the save runs on that context's queue.

extension NSIncrementalStore {
    /// Runs `body` holding the store's request lock, with the context that asked (on this
    /// coordinator), or else a private context of the store's own in whose `performAndWait` it runs.
    func withRequestContext<T>(_ body: (NSManagedObjectContext) throws -> T) throws -> T {
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError.make(.persistentStoreOperation, "The store \(type) is not added to a coordinator")
        }
        requestLock.lock()
        defer { requestLock.unlock() }
        if let requester = RequestingContext.current, requester.persistentStoreCoordinator === coordinator {
            return try body(requester)
        }
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return try context.performAndWait { try body(context) }
    }

    /// The fetch request the store is asked, made from a plan of a context's fetch request.
    func fetchRequest(for plan: FetchPlan, resultType: NSFetchRequestResultType) throws -> NSFetchRequest<NSFetchRequestResult> {
        // A plan made without a fetch request (batch requests, migration) has no NSPredicate to pass on.
        if (plan.predicate != nil && plan.requestPredicate == nil) || (!plan.sortKeys.isEmpty && plan.requestSortDescriptors == nil) {
            throw CoreDataError.make(.unsupportedRequestType, "The \(type) store answers fetch requests only")
        }
        let request = NSFetchRequest<NSFetchRequestResult>()
        request.entity = plan.entity
        request.predicate = plan.requestPredicate
        request.sortDescriptors = plan.requestSortDescriptors
        request.fetchLimit = plan.limit
        request.fetchOffset = plan.offset
        request.includesSubentities = plan.includesSubentities
        request.resultType = resultType
        request.affectedStores = [self]
        return request
    }

    /// The IDs of the objects `execute(_:with:)` returns for the plan, asked as `resultType`
    /// (objects or IDs); throws 134070 when the store returns something else.
    func fetchedIDs(_ plan: FetchPlan, resultType: NSFetchRequestResultType, context: NSManagedObjectContext) throws -> [NSManagedObjectID] {
        let result = try execute(fetchRequest(for: plan, resultType: resultType), with: context)
        let ids: [NSManagedObjectID]
        if resultType == .managedObjectIDResultType, let returned = result as? [NSManagedObjectID] {
            ids = returned
        } else if resultType == .managedObjectResultType, let objects = result as? [NSManagedObject] {
            ids = objects.map(\.objectID)
        } else {
            throw wrongResult(result, "an array of \(resultType == .managedObjectIDResultType ? "NSManagedObjectID" : "NSManagedObject")s for a fetch of \(plan.entity.name ?? "")")
        }
        for id in ids where id.persistentStore !== self {
            throw wrongResult(result, "object IDs of this store (made with newObjectID(for:referenceObject:)), not \(id)")
        }
        // Objects of another entity would be handed out as the request's type.
        for id in ids where plan.includesSubentities ? !id.entity.isKindOf(entity: plan.entity) : id.entity !== plan.entity {
            throw wrongResult(result, "objects of entity \(plan.entity.name ?? "")\(plan.includesSubentities ? " or its sub-entities" : ""), not \(id)")
        }
        return ids
    }

    /// The count `execute(_:with:)` returns for the plan as `.countResultType`: an array holding one number.
    func fetchedCount(_ plan: FetchPlan, context: NSManagedObjectContext) throws -> Int {
        let result = try execute(fetchRequest(for: plan, resultType: .countResultType), with: context)
        guard let array = result as? [Any], array.count == 1, let count = StoreValue.integer(array[0]), count >= 0 else {
            throw wrongResult(result, "an array holding one NSNumber for a count of \(plan.entity.name ?? "")")
        }
        return Int(count)
    }

    /// The dictionaries `execute(_:with:)` returns for a dictionary plan, as rows of the plan's
    /// columns: each value by the column's name, in its attribute's type (or the expression's
    /// result type); a missing key is `nil`.
    func fetchedDictionaries(_ plan: DictionaryPlan, context: NSManagedObjectContext) throws -> [ContiguousArray<StoreValue>] {
        let request = try fetchRequest(for: plan.fetch, resultType: .dictionaryResultType)
        request.propertiesToFetch = plan.requestPropertiesToFetch
        request.propertiesToGroupBy = plan.requestPropertiesToGroupBy
        request.havingPredicate = plan.requestHavingPredicate
        request.returnsDistinctResults = plan.distinct
        let result = try execute(request, with: context)
        let dictionaries: [[String: Any]]
        if let swift = result as? [[String: Any]] {
            dictionaries = swift
        } else if let objects = result as? [NSDictionary] {
            dictionaries = objects.map { $0 as? [String: Any] ?? [:] }
        } else {
            throw wrongResult(result, "an array of dictionaries for a dictionary fetch of \(plan.fetch.entity.name ?? "")")
        }
        return try dictionaries.map { dictionary in
            try ContiguousArray(plan.columns.map { column -> StoreValue in
                // A composite asked for whole: each leaf column from the composite's dictionary.
                let value = column.part.map { CompositeValues.value(of: $0.leaf, in: dictionary[$0.key], prefix: $0.prefix.count) } ?? dictionary[column.name]
                guard let value, !StoreValue.isNull(value) else { return .null }
                if let id = value as? NSManagedObjectID { return .objectID(id) }
                guard let attribute = column.attribute else {
                    // An expression's value: in its result type when it converts, else as it is.
                    return StoreValue.storage(of: value, for: column.resultType) ?? .object(ObjectBox(value))
                }
                guard let stored = StoreValue.storage(of: value, for: attribute.attributeType) else {
                    throw wrongResult(value, "a value of the type of '\(column.name)'")
                }
                return stored
            })
        }
    }

    func wrongResult(_ result: Any, _ expected: String) -> NSError {
        CoreDataError.make(.persistentStoreOperation, "\(Swift.type(of: self)).execute(_:with:) returned \(Swift.type(of: result)); expected \(expected)")
    }

    /// The row of the object `id` names, from its node; `nil` when the store no longer has it
    /// (`newValuesForObject` threw 133000).
    func snapshot(for id: NSManagedObjectID, context: NSManagedObjectContext) throws -> RowSnapshot? {
        let node: NSIncrementalStoreNode
        do {
            node = try newValuesForObject(with: id, with: context)
        } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code == NSManagedObjectReferentialIntegrityError {
            return nil
        }
        return try snapshot(of: node, for: id, context: context)
    }

    /// A node as a row: each attribute's value converted to its type, each to-one as an object
    /// ID (asked of `newValue(forRelationship:…)` when the node leaves it out).
    func snapshot(of node: NSIncrementalStoreNode, for id: NSManagedObjectID, context: NSManagedObjectContext) throws -> RowSnapshot {
        // The node's ID names the object's own entity (a fetch of a parent entity may have made `id` with it).
        let entity = node.objectID.entity.isKindOf(entity: id.entity) ? node.objectID.entity : id.entity
        let layout = entity.layout
        var values = layout.nullValues()
        for index in layout.rowIndexes {
            let property = layout.properties[index]
            if let relationship = property as? NSRelationshipDescription {
                let value = try node.values[relationship.name] ?? newValue(forRelationship: relationship, forObjectWith: id, with: context)
                if StoreValue.isNull(value) || Self.isNone(value) { continue }
                guard let target = value as? NSManagedObjectID else {
                    throw wrongValue(value, property, id, "an NSManagedObjectID or NSNull")
                }
                values[index] = .objectID(target)
            } else if let attribute = property as? NSAttributeDescription {
                // A composite's element: from the node's dictionary of the composite.
                let leaf = attribute as? CompositeLeafAttribute
                guard let value = leaf.map({ leaf in leaf.composite.flatMap { CompositeValues.value(of: leaf, in: node.values[$0.name]) } }) ?? node.values[attribute.name],
                      !Self.isNone(value)
                else { continue }
                guard let stored = StoreValue.storage(of: value, for: attribute.attributeType) else {
                    throw wrongValue(value, property, id, "a value of the attribute's type")
                }
                values[index] = stored
            }
        }
        return RowSnapshot(entity: entity, values: values, version: Int64(clamping: node.version))
    }

    /// Whether `value` is a Swift `nil` put in an `Any` (`name as Any` of a `String?`): a nil
    /// value, as Apple's bridging makes it `NSNull`.
    static func isNone(_ value: Any) -> Bool {
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .optional && mirror.children.isEmpty
    }

    func wrongValue(_ value: Any, _ property: NSPropertyDescription, _ id: NSManagedObjectID, _ expected: String) -> NSError {
        CoreDataError.make(.persistentStoreOperation,
            "\(Swift.type(of: self)) gave \(Swift.type(of: value)) for '\(property.name)' of \(id); expected \(expected)")
    }

    /// The members of a to-many relationship as `newValue(forRelationship:…)` gave them: an
    /// array (in order) or a set of object IDs.
    func relatedIDs(from value: Any, of relationship: NSRelationshipDescription, owner: NSManagedObjectID) throws -> [NSManagedObjectID] {
        if let ids = value as? [NSManagedObjectID] { return ids }
        if let ids = value as? Set<NSManagedObjectID> { return Array(ids) }
        if let ids = value as? NSSet, let all = ids.allObjects as? [NSManagedObjectID] { return all }
        // An ordered relationship's members, in order, as Apple's header allows.
        if let ids = value as? NSOrderedSet, let all = ids.array as? [NSManagedObjectID] { return all }
        throw wrongValue(value, relationship, owner, "an array, set or ordered set of NSManagedObjectIDs")
    }

    /// One save: the versions of the updated and deleted objects checked against their nodes
    /// (optimistic locking), then `execute(_:with:)` with an `NSSaveChangesRequest` of the
    /// saving context's objects. Every new object already has its permanent ID (the context
    /// asked `obtainPermanentIDs(for:)` before it built the changes).
    ///
    /// The only nodes a save asks for (`newValuesForObject(with:with:)`) are those of the
    /// updated, deleted and locked (`detectConflicts(for:)`, the request's `lockedObjects`)
    /// objects the context holds a version of, before it writes: Apple's coordinator detects
    /// conflicts by the node's version (`NSIncrementalStoreNode.version`).
    /// None is asked afterwards: a node's version goes up by exactly one at each save (Apple's
    /// rule), so the context takes one more than before (1 for a new object) without asking.
    /// A record conflicts when its node is gone or its version went past the one the context
    /// holds: another writer saved it since. A store whose records keep one version (many
    /// stores written for Apple's Core Data always say 0 or 1) thus never conflicts.
    func write(_ changes: SaveChanges, beforeCommitting: () throws -> Void) throws -> SaveResult {
        guard let context = changes.context else {
            throw CoreDataError.make(.persistentStoreSave, "The \(type) store saves a context's changes only; nothing was saved")
        }
        requestLock.lock()
        defer { requestLock.unlock() }
        var inserted = Set<NSManagedObject>(), updated = Set<NSManagedObject>(), deleted = Set<NSManagedObject>()
        for insert in changes.inserts {
            guard !insert.isTemporary, let object = context.registeredObject(for: NSManagedObjectID(entity: insert.entity, store: self, key: insert.key)) else {
                throw CoreDataError.make(.persistentStoreSave, "A new object of \(insert.entity.name ?? "") has no permanent ID of the \(type) store; nothing was saved")
            }
            inserted.insert(object)
        }
        var conflicts: [StoreConflict] = []
        func check(_ id: NSManagedObjectID, expectedVersion: Int64?) throws {
            guard let expectedVersion else { return }
            let current = try snapshot(for: id, context: context)
            if current.map({ $0.version > expectedVersion }) ?? true {
                conflicts.append(StoreConflict(id: id, expectedVersion: expectedVersion, persisted: current))
            }
        }
        for update in changes.updates {
            try check(update.id, expectedVersion: update.expectedVersion)
            if let object = context.registeredObject(for: update.id) { updated.insert(object) }
        }
        for delete in changes.deletes {
            try check(delete.id, expectedVersion: delete.expectedVersion)
            if let object = context.registeredObject(for: delete.id) { deleted.insert(object) }
        }
        var locked = Set<NSManagedObject>()
        for lock in changes.locks {
            try check(lock.id, expectedVersion: lock.expectedVersion)
            if let object = context.registeredObject(for: lock.id) { locked.insert(object) }
        }
        if !conflicts.isEmpty { throw StoreConflictError(conflicts: conflicts) }
        // The stores of a save over several write in turn (the coordinator's order); this one
        // cannot roll back what `execute` wrote, so it writes once the others have.
        try beforeCommitting()
        let request = NSSaveChangesRequest(inserted: inserted, updated: updated, deleted: deleted, locked: locked)
        _ = try execute(request, with: context)
        return SaveResult(insertedKeys: changes.inserts.map(\.key.value))
    }
}
