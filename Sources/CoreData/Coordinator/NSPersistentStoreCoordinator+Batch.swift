import Foundation

// The coordinator's part of batch requests: each goes to the stores holding its entity (of
// `affectedStores`, if given), each store's transaction nested in the previous one's (all or
// none, as a save to several stores); the coordinator's row cache is handed along so that a
// store can drop rows the request changed.
extension NSPersistentStoreCoordinator {
    /// The stores a batch request on `entity` goes to.
    private func batchTargets(_ entity: NSEntityDescription, affectedStores: [NSPersistentStore]?) throws -> [NSPersistentStore] {
        let targets = stores(for: entity, among: affectedStores)
        guard !targets.isEmpty else {
            throw CoreDataError.make(.persistentStoreOperation, "No persistent store holds entity \(entity.name ?? "") for the batch request")
        }
        return targets
    }

    /// The IDs of an outcome's keys, in `store`.
    private static func ids(_ outcome: BatchOutcome, in store: NSPersistentStore) -> [NSManagedObjectID] {
        outcome.keys.map { NSManagedObjectID(entity: $0.entity, store: store, primaryKey: $0.primaryKey) }
    }

    /// Inserts the rows into the first store that holds the entity (as a new object's store).
    internal func executeBatchInsert(_ insert: BatchInsert, affectedStores: [NSPersistentStore]?) throws -> (BatchOutcome, [NSManagedObjectID]) {
        let store = try batchTargets(insert.entity, affectedStores: affectedStores)[0]
        let outcome = try store.batchInsert(insert, rowCache: rowCache)
        return (outcome, Self.ids(outcome, in: store))
    }

    /// Updates the matching rows of every store that holds the entity, all or none.
    internal func executeBatchUpdate(_ update: BatchUpdate, affectedStores: [NSPersistentStore]?) throws -> (BatchOutcome, [NSManagedObjectID]) {
        let rowCache = rowCache
        return try nested(batchTargets(update.plan.entity, affectedStores: affectedStores).map { store in
            (store, { try store.batchUpdate(update, rowCache: rowCache, beforeCommitting: $0) })
        })
    }

    /// Deletes the matching rows of every store that holds the entity, all or none.
    internal func executeBatchDelete(_ delete: BatchDelete, affectedStores: [NSPersistentStore]?) throws -> (BatchOutcome, [NSManagedObjectID]) {
        try executeBatchDeletes(batchTargets(delete.plan.entity, affectedStores: affectedStores).map { ($0, delete) })
    }

    /// Runs each store's own delete (a delete by object IDs: each store's keys), all or none.
    internal func executeBatchDeletes(_ deletes: [(store: NSPersistentStore, delete: BatchDelete)]) throws -> (BatchOutcome, [NSManagedObjectID]) {
        let rowCache = rowCache
        return try nested(deletes.map { store, delete in
            (store, { try store.batchDelete(delete, rowCache: rowCache, beforeCommitting: $0) })
        })
    }

    /// Runs the stores' parts of one request, each inside the previous one's transaction (its
    /// `beforeCommitting`), in the order of a save's stores (``saveOrderKey(of:)``, so that two
    /// requests never take two stores' locks in opposite orders): a store that fails leaves the
    /// others as they were, as a save to several stores does. The outcomes added up, the IDs in
    /// the order the parts are given.
    private func nested(_ parts: [(store: NSPersistentStore, run: ((() throws -> Void)?) throws -> BatchOutcome)]) throws -> (BatchOutcome, [NSManagedObjectID]) {
        let held = persistentStores
        let order = Self.nestingOrder(of: parts.map(\.store), positions: parts.map { part in held.firstIndex { $0 === part.store } ?? held.count })
        var outcomes = [BatchOutcome](repeating: BatchOutcome(), count: parts.count)
        func run(from step: Int) throws {
            let index = order[step]
            let inner: (() throws -> Void)? = step + 1 < order.count ? { try run(from: step + 1) } : nil
            outcomes[index] = try parts[index].run(inner)
        }
        if !parts.isEmpty { try run(from: 0) }
        var total = BatchOutcome(), ids: [NSManagedObjectID] = []
        for (part, outcome) in zip(parts, outcomes) {
            ids += Self.ids(outcome, in: part.store)
            total.count += outcome.count
        }
        return (total, ids)
    }
}
