import Foundation

// Batched fetches (`fetchBatchSize` > 0) and ID-only fetches (`includesPropertyValues` false).
//
// The fetch reads only the matching rows' primary keys, in order, and returns an array of
// registered, data-less faults (uniqued as any fetched object). With a batch size, the faults
// are cut into batches of that size; each fault points at its `FetchBatch`, and the first fault
// of a batch to fire loads the rows of the whole batch with one query (`WHERE Z_PK IN (…)`).
// So the result has its count and order at once, and only touched batches ever hold row data.

/// The primary keys of up to `fetchBatchSize` consecutive results of a batched fetch (of one
/// store and one table), loaded together when the first of their faults fires.
internal final class FetchBatch {
    let store: NSPersistentStore
    let root: NSEntityDescription
    let primaryKeys: [Int64]
    /// Relationship key paths to prefetch for the batch's objects once loaded.
    let prefetching: [String]?
    var isLoaded = false

    init(store: NSPersistentStore, root: NSEntityDescription, primaryKeys: [Int64], prefetching: [String]?) {
        self.store = store
        self.root = root
        self.primaryKeys = primaryKeys
        self.prefetching = prefetching
    }
}

extension NSManagedObjectContext {
    /// Registered data-less faults for fetched keys, in order. With `batchSize` > 0, each new
    /// fault (and each registered data-less one) belongs to a batch of `batchSize` neighbours.
    internal func materializeFaults(_ groups: [(store: NSPersistentStore, keys: [FetchedKey])], batchSize: Int,
                                    prefetching: [String]?, refresh: Bool = false) -> [NSManagedObject] {
        var objects: [NSManagedObject] = []
        var refetched: [(NSManagedObject, FetchBatch?)] = []
        // Faults that carry a row an earlier fetch read, and no change: they take the batch's row
        // (as a fetch that reads rows gives them its own), not keep one that may be older.
        var carryingRows: [(NSManagedObject, FetchBatch?)] = []
        objects.reserveCapacity(groups.reduce(0) { $0 + $1.keys.count })
        withRegistryLock { registry in
            for (store, keys) in groups {
                registry.reserveCapacity(keys.count)
                // A store that fetches faults reads each object by its own ID when it fires.
                let batchSize = store.fetchesFaults ? 0 : batchSize
                var start = 0
                while start < keys.count {
                    let end = batchSize > 0 ? min(start + batchSize, keys.count) : keys.count
                    let batch = batchSize > 0
                        ? FetchBatch(store: store, root: keys[start].entity.layout.root, primaryKeys: keys[start..<end].map(\.primaryKey), prefetching: prefetching)
                        : nil
                    for key in keys[start..<end] {
                        let idKey = IDKey(store: store.tag, root: key.entity.layout.rootNumber, value: key.primaryKey)
                        if let existing = registry.object(for: idKey) {
                            if existing._isFault && !existing._hasData && existing._fetchBatch == nil { existing._fetchBatch = batch }
                            else if refresh { refetched.append((existing, batch)) }
                            else if batch != nil && existing._isFault && !existing.hasChanges { carryingRows.append((existing, batch)) }
                            objects.append(existing)
                            continue
                        }
                        let object = key.entity.layout.instanceClass.init(entity: key.entity, insertInto: nil)
                        object.setPermanentKey(key.primaryKey, store: store)
                        object._context = self
                        object.load(nil)
                        object._isFault = true
                        object._fetchBatch = batch
                        registry[idKey] = Unmanaged.passUnretained(object)
                        objects.append(object)
                    }
                    start = end
                }
            }
        }
        if retainsRegisteredObjects { for object in objects { retainRegistered(object) } }
        // (Here, out of the lock: letting go of a row's related objects may run their `deinit`.)
        for (object, batch) in carryingRows where object._isFault && object._hasData {
            object.load(nil)
            object._relations.removeAll()
            object._fetchBatch = batch
        }
        // `shouldRefreshRefetchedObjects`: objects met again take the store's values (their
        // changes kept on top), as in a fetch that reads rows; unchanged ones load with the batch.
        for (object, batch) in refetched where object._context === self && !object._isDeleted {
            _ = refreshWithoutNotice(object, mergeChanges: true)
            if object._isFault && !object._hasData && object._fetchBatch == nil { object._fetchBatch = batch }
        }
        return objects
    }

    /// Gives a batch's rows to those of its objects that are still data-less faults: one query
    /// for the batch. A row that has gone leaves its fault to fire alone (and read as deleted);
    /// so does a batch the store fails to read: each fault then loads its own row when it fires,
    /// and one the store cannot read is recorded by its context (`fireFault()`), the others load.
    internal func loadBatch(_ batch: FetchBatch) {
        guard !batch.isLoaded, let coordinator = persistentStoreCoordinator else { return }
        batch.isLoaded = true
        let rows: [FetchedRow]
        do {
            rows = try readingAtGeneration { try coordinator.rows(primaryKeys: batch.primaryKeys, root: batch.root, in: batch.store) }
        } catch {
            return // (each fault alone, as above)
        }
        var loaded: [NSManagedObject] = []
        loaded.reserveCapacity(rows.count)
        // Every object taken from the registry is held until the lock is given back: if another
        // thread let go of one meanwhile, its last reference goes here, and its `deinit` (which
        // takes the lock) must not run inside the body.
        var held: [NSManagedObject] = []
        withRegistryLock { registry in
            for row in rows {
                guard let object = registry.object(for: row.key) else { continue }
                if object._fetchBatch === batch { object._fetchBatch = nil }
                if object._isFault && !object._hasData {
                    object.adopt(row.snapshot)
                    loaded.append(object)
                } else {
                    held.append(object)
                }
            }
        }
        held.removeAll()
        if let keyPaths = batch.prefetching, let entity = loaded.first?.entity {
            // Prefetching only saves queries: a relationship it fails to load is not kept as
            // loaded (it keeps nothing from a query that failed), and loads on first use, where a
            // failure is recorded (`toManyList(at:)`, `fireFault()`). (Its key paths were checked
            // by the fetch.)
            do { try prefetch(keyPaths, of: loaded, entity: entity) } catch {}
        }
    }
}
