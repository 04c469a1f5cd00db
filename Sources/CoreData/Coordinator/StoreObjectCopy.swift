import Foundation

// How `migratePersistentStore` moves a store to or from a store you write (`NSIncrementalStore`,
// `NSAtomicStore`): through objects, as Apple migrates such stores. The new store is added to
// a coordinator of its own, the old store's objects are copied into a context on it and saved
// (an `NSAtomicStore` makes its cache nodes and writes them with `save()`; an
// `NSIncrementalStore` gets its `obtainPermanentIDs(for:)` and an `NSSaveChangesRequest`), then
// the new store is removed from there and added to the migrating coordinator, which loads it
// again from what it saved. The objects get the new store's IDs.

extension NSPersistentStoreCoordinator {
    /// Whether a migration to `storeType` goes through objects (``migrateThroughObjects``): the
    /// old store or the new type is one you write, and the new store keeps what it saved once
    /// removed (not an in-memory store).
    internal func migratesThroughObjects(_ store: NSPersistentStore, to storeType: String) -> Bool {
        guard storeType != NSInMemoryStoreType else { return false }
        return store.makesIDsOfObjects || (storeType != NSSQLiteStoreType && Self.registeredStoreClass(forType: storeType) != nil)
    }

    /// The store `store`'s objects are copied into, at `url`, added to this coordinator; on a
    /// failure the new store is destroyed and `store` is left as it was.
    internal func migrateThroughObjects(_ store: NSPersistentStore, to url: URL, options: [AnyHashable: Any]?,
                                        type storeType: String) throws -> NSPersistentStore {
        let staging = NSPersistentStoreCoordinator(managedObjectModel: managedObjectModel)
        staging.postsStoreNotifications = false // the migration's own, never seen by the app
        let target = try staging.addPersistentStore(ofType: storeType, configurationName: store.configurationName, at: url, options: options)
        do {
            try copyObjects(of: store, into: staging)
            try staging.remove(target)
        } catch {
            try? staging.destroyPersistentStore(at: url, ofType: storeType)
            throw error
        }
        do {
            return try addStore(ofType: storeType, configurationName: store.configurationName, at: url, options: options, replacing: store)
        } catch {
            try? destroyPersistentStore(at: url, ofType: storeType)
            throw error
        }
    }

    /// Copies every object of `store` (of this coordinator) into `staging`'s store, with its
    /// stored attributes and its relationships among the copied objects, in one save.
    private func copyObjects(of store: NSPersistentStore, into staging: NSPersistentStoreCoordinator) throws {
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = self
        let writer = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        writer.persistentStoreCoordinator = staging
        let entities = managedObjectModel.entities(forConfigurationName: store.configurationName) ?? managedObjectModel.entities
        try reader.performAndWait {
            var originals: [NSManagedObject] = []
            for entity in entities where !entity.isAbstract {
                let request = NSFetchRequest<NSManagedObject>()
                request.entity = entity
                request.includesSubentities = false
                originals += try reader.fetch(request).filter { $0.objectID.persistentStore === store }
            }
            // Values are read on the reader's queue and set on the writer's.
            let copies: [NSManagedObjectID: NSManagedObject] = writer.performAndWait {
                Dictionary(uniqueKeysWithValues: originals.map { ($0.objectID, NSManagedObject(entity: $0.entity, insertInto: writer)) })
            }
            for original in originals {
                var values: [String: Any?] = [:]
                for (name, property) in original.entity.propertiesByName where !property.isTransient && !(property is NSDerivedAttributeDescription) {
                    guard let relationship = property as? NSRelationshipDescription else {
                        if property is NSAttributeDescription { values[name] = original.value(forKey: name) }
                        continue
                    }
                    let value = original.value(forKey: name)
                    if !relationship.isToMany {
                        values[name] = (value as? NSManagedObject).flatMap { copies[$0.objectID] }
                    } else if let ordered = value as? NSOrderedSet {
                        values[name] = NSOrderedSet(array: ordered.array.compactMap { ($0 as? NSManagedObject).flatMap { copies[$0.objectID] } })
                    } else {
                        values[name] = Set(((value as? Set<NSManagedObject>) ?? []).compactMap { copies[$0.objectID] })
                    }
                }
                let copy = copies[original.objectID]!
                nonisolated(unsafe) let pending = values
                writer.performAndWait { for (name, value) in pending { copy.setValue(value ?? nil, forKey: name) } }
            }
            try writer.performAndWait { try writer.save() }
        }
    }
}
