import Foundation

// The coordinator's part of batch requests: each goes to the stores holding its entity (of
// `affectedStores`, if given), which run it in their own transaction; the coordinator's row
// cache is handed along so that a store can drop rows the request changed.
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

    /// Updates the matching rows of every store that holds the entity, one after the other.
    internal func executeBatchUpdate(_ update: BatchUpdate, affectedStores: [NSPersistentStore]?) throws -> (BatchOutcome, [NSManagedObjectID]) {
        try onEachStore(update.plan.entity, affectedStores: affectedStores) { try $0.batchUpdate(update, rowCache: rowCache) }
    }

    /// Deletes the matching rows of every store that holds the entity, one after the other.
    internal func executeBatchDelete(_ delete: BatchDelete, affectedStores: [NSPersistentStore]?) throws -> (BatchOutcome, [NSManagedObjectID]) {
        try onEachStore(delete.plan.entity, affectedStores: affectedStores) { try $0.batchDelete(delete, rowCache: rowCache) }
    }

    /// Runs `body` on each store holding `entity`: the outcomes added up, the IDs in store order.
    private func onEachStore(_ entity: NSEntityDescription, affectedStores: [NSPersistentStore]?,
                             _ body: (NSPersistentStore) throws -> BatchOutcome) throws -> (BatchOutcome, [NSManagedObjectID]) {
        var total = BatchOutcome(), ids: [NSManagedObjectID] = []
        for store in try batchTargets(entity, affectedStores: affectedStores) {
            let outcome = try body(store)
            ids += Self.ids(outcome, in: store)
            total.count += outcome.count
        }
        return (total, ids)
    }
}
