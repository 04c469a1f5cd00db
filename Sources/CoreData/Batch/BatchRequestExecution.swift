import Foundation

// How `NSManagedObjectContext.execute(_:)` runs the batch requests: the request is checked
// against the model here, then the coordinator sends it to the stores holding its entity.
// The context's objects are not touched (merge the result's IDs to update them).

extension NSManagedObjectContext {
    /// The entity of a batch request: `entity`, else `entityName` in the model; 134060 if none.
    fileprivate func batchEntity(_ entity: NSEntityDescription?, named name: String, request: String) throws -> NSEntityDescription {
        if let entity { return entity }
        guard let entity = model?.entitiesByName[name] else {
            throw CoreDataError.make(.coreData, "\(request): the model has no entity named '\(name)'")
        }
        return entity
    }

}

extension NSBatchInsertRequest: ContextExecutableRequest {
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        let entity = try context.batchEntity(entity, named: entityName, request: "NSBatchInsertRequest")
        guard !entity.isAbstract else {
            // Rows of its own would be objects no fetch of a concrete entity or store copy knows.
            throw CoreDataError.make(.managedObjectValidation,
                "NSBatchInsertRequest: \(entity.name ?? "") is an abstract entity, which has no instances of its own; insert into one of its concrete subentities. Nothing was inserted")
        }
        let source: BatchInsertRows.Source
        if let objectsToInsert {
            source = .objects(objectsToInsert)
        } else if let dictionaryHandler {
            source = .dictionaryHandler(dictionaryHandler)
        } else if let managedObjectHandler {
            source = .managedObjectHandler(managedObjectHandler)
        } else {
            throw CoreDataError.make(.coreData, "NSBatchInsertRequest: no objects, dictionary handler or managed object handler")
        }
        let insert = BatchInsert(entity: entity, wantsKeys: resultType == .objectIDs, rows: BatchInsertRows(entity: entity, source: source),
                                 author: HistoryAuthor(of: context))
        let (outcome, ids) = try context.persistentStoreCoordinatorOrThrow().executeBatchInsert(insert, affectedStores: affectedStores)
        switch resultType {
        case .statusOnly: return NSBatchInsertResult(resultType: resultType, result: true)
        case .objectIDs: return NSBatchInsertResult(resultType: resultType, result: ids)
        case .count: return NSBatchInsertResult(resultType: resultType, result: outcome.count)
        }
    }
}

extension NSBatchUpdateRequest: ContextExecutableRequest {
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        let entity = try context.batchEntity(entity, named: entityName, request: "NSBatchUpdateRequest")
        var update = try BatchUpdate(self, entity: entity)
        update.author = HistoryAuthor(of: context)
        let (outcome, ids) = try context.persistentStoreCoordinatorOrThrow().executeBatchUpdate(update, affectedStores: affectedStores)
        switch resultType {
        case .statusOnlyResultType: return NSBatchUpdateResult(resultType: resultType, result: true)
        case .updatedObjectIDsResultType: return NSBatchUpdateResult(resultType: resultType, result: ids)
        case .updatedObjectsCountResultType: return NSBatchUpdateResult(resultType: resultType, result: outcome.count)
        }
    }
}

extension NSBatchDeleteRequest: ContextExecutableRequest {
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        if objectIDs?.isEmpty == true { return result(BatchOutcome(), ids: []) }
        let fetch = fetchRequest
        let entity = try context.batchEntity(fetch.entity, named: fetch.entityName ?? "", request: "NSBatchDeleteRequest")
        var plan = FetchPlan(entity: entity)
        plan.includesSubentities = fetch.includesSubentities
        if let objectIDs {
            // From IDs: all of one entity, as Apple requires; the rows by key.
            if let other = objectIDs.first(where: { $0.entity !== entity }) {
                throw CoreDataError.make(.coreData, "NSBatchDeleteRequest(objectIDs:): the IDs mix entities (\(entity.name ?? "") and \(other.entity.name ?? "")); nothing was deleted")
            }
            if objectIDs.contains(where: \.isTemporaryID) {
                throw CoreDataError.make(.coreData, "NSBatchDeleteRequest(objectIDs:): an ID is temporary (its object was never saved); nothing was deleted")
            }
            plan.includesSubentities = true
        }
        let coordinator = try context.persistentStoreCoordinatorOrThrow()
        let wantsKeys = resultType == .resultTypeObjectIDs
        // The stores both the request and its fetch request allow.
        let scope = Self.intersection(affectedStores, fetch.affectedStores)
        guard let objectIDs else {
            if fetch.fetchLimit > 0 || fetch.fetchOffset > 0 {
                // Only the rows the fetch returns, in its order ("delete all but the newest 100"):
                // their IDs are read from the stores (pending changes aside), then deleted by key.
                var limited = try context.plan(for: fetch, entity: entity, withLimits: true)
                limited.affectedStores = scope // (the limit counts only rows it may delete)
                if let predicate = limited.predicate { try BatchKeyPaths.check(predicate, in: entity) }
                plan.includesSubentities = true
                return try delete(coordinator.fetchIDs(limited), plan: plan, coordinator: coordinator, context: context)
            }
            plan.predicate = try fetch.predicate.map { try PredicateBridge.tree(of: $0).runningFetchRequestExpressions() }
            if let predicate = plan.predicate { try BatchKeyPaths.check(predicate, in: entity) }
            let (outcome, ids) = try coordinator.executeBatchDelete(BatchDelete(plan: plan, wantsKeys: wantsKeys, author: HistoryAuthor(of: context)), affectedStores: scope)
            return result(outcome, ids: ids)
        }
        return try delete(objectIDs, plan: plan, coordinator: coordinator, context: context)
    }

    /// Deletes the rows of `objectIDs` (saved objects' IDs), store by store, with `plan`'s
    /// entity family.
    private func delete(_ objectIDs: [NSManagedObjectID], plan: FetchPlan, coordinator: NSPersistentStoreCoordinator,
                        context: NSManagedObjectContext) throws -> NSBatchDeleteResult {
        var plan = plan
        let wantsKeys = resultType == .resultTypeObjectIDs
        // Each store deletes its own IDs' rows (keys are per store).
        var stores: [NSPersistentStore] = []
        var byStore: [[NSManagedObjectID]] = []
        for id in objectIDs {
            guard let store = try coordinator.ownStore(of: id) else { continue }
            if let index = stores.firstIndex(where: { $0 === store }) { byStore[index].append(id) } else { stores.append(store); byStore.append([id]) }
        }
        var deletes: [(store: NSPersistentStore, delete: BatchDelete)] = []
        for (store, group) in zip(stores, byStore) where affectedStores?.contains(where: { $0 === store }) ?? true {
            plan.predicate = try PredicateBridge.tree(of: NSPredicate(format: "SELF IN %@", group))
            deletes.append((store, BatchDelete(plan: plan, wantsKeys: wantsKeys, author: HistoryAuthor(of: context))))
        }
        let (total, ids) = try coordinator.executeBatchDeletes(deletes) // all stores or none
        return result(total, ids: ids)
    }

    /// The stores of both lists (`nil`: every store).
    private static func intersection(_ a: [NSPersistentStore]?, _ b: [NSPersistentStore]?) -> [NSPersistentStore]? {
        guard let a else { return b }
        guard let b else { return a }
        return a.filter { store in b.contains { $0 === store } }
    }

    private func result(_ outcome: BatchOutcome, ids: [NSManagedObjectID]) -> NSBatchDeleteResult {
        switch resultType {
        case .resultTypeStatusOnly: return NSBatchDeleteResult(resultType: resultType, result: true)
        case .resultTypeObjectIDs: return NSBatchDeleteResult(resultType: resultType, result: ids)
        case .resultTypeCount: return NSBatchDeleteResult(resultType: resultType, result: outcome.count)
        }
    }
}
