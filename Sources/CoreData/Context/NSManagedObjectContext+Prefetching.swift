import Foundation

// `relationshipKeyPathsForPrefetching`: after the main fetch, one query per relationship of
// each key path (per store) loads the related rows — the destinations of to-one relationships,
// and the contents of to-many ones (through a foreign key or a join table) — so that touching
// them later costs no I/O. Nested paths ("owner.cars") walk on from the objects just loaded.

extension NSManagedObjectContext {
    /// Prefetches `keyPaths` (relative to `entity`) for `objects`. Throws for a key path that
    /// does not name relationships.
    internal func prefetch(_ keyPaths: [String]?, of objects: [NSManagedObject], entity: NSEntityDescription) throws {
        guard let keyPaths, !keyPaths.isEmpty, _parent == nil else { return }
        for keyPath in keyPaths {
            var sources = objects
            var current = entity
            for name in keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
                guard let relationship = current.relationshipsByName[name], let destination = relationship.destinationEntity else {
                    throw CoreDataError.make(.coreData,
                        "relationshipKeyPathsForPrefetching: '\(keyPath)' is not a relationship key path of the entity '\(entity.name ?? "")' ('\(name)' is not a relationship of '\(current.name ?? "")')")
                }
                if !sources.isEmpty { sources = try prefetch(relationship, of: sources) }
                current = destination
            }
        }
    }

    /// Loads the objects `relationship` leads to from `sources` (their loaded objects), and
    /// returns them: the next step's sources.
    private func prefetch(_ relationship: NSRelationshipDescription, of sources: [NSManagedObject]) throws -> [NSManagedObject] {
        guard let coordinator = persistentStoreCoordinator else { return [] }
        let index = relationship.index
        var destinations: [NSManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        func collect(_ object: NSManagedObject) {
            if seen.insert(ObjectIdentifier(object)).inserted { destinations.append(object) }
        }
        if !relationship.isToMany {
            // Destinations still without data, by store and table: one query each.
            var missing: [IDKey: (store: NSPersistentStore, root: NSEntityDescription, keys: [Int64])] = [:]
            for source in sources where source._context === self && source._hasData {
                let destination: NSManagedObject
                if case .toOne(let object)? = source._relations[index] {
                    guard let object else { continue }
                    destination = object
                } else if index < source._values.count, case .objectID(let id) = source._values[index] {
                    // Materialized in the source (as a first access would), which keeps it alive.
                    destination = object(with: id)
                    source._relations[index] = .toOne(destination)
                } else {
                    continue
                }
                collect(destination)
                guard destination._isFault, !destination._hasData, destination._context === self,
                      let store = try coordinator.ownStore(of: destination.objectID), let pk = destination.objectID.primaryKey else { continue }
                let group = IDKey(store: store.tag, root: destination.layout.rootNumber, value: 0)
                missing[group, default: (store, destination.layout.root, [])].keys.append(pk)
            }
            for (store, root, keys) in missing.values {
                let rows = try readingAtGeneration { try coordinator.rows(primaryKeys: keys, root: root, in: store) }
                // The objects are held until the lock is given back (see `loadBatch`).
                var held: [NSManagedObject] = []
                withRegistryLock { registry in
                    for row in rows {
                        guard let object = registry.object(for: row.key) else { continue }
                        held.append(object)
                        if object._isFault && !object._hasData { object.adopt(row.snapshot) }
                    }
                }
                held.removeAll()
            }
            return destinations
        }
        // To-many: the owners whose relationship is not materialized yet, by store.
        var owners: [Int: (store: NSPersistentStore, entity: NSEntityDescription, objects: [Int64: NSManagedObject])] = [:]
        for source in sources where source._context === self && !source._isInserted {
            if case .toMany(let list)? = source._relations[index] {
                list.objects.forEach(collect)  // already materialized: the next step starts from it
                continue
            }
            let id = source.objectID
            guard let store = try coordinator.ownStore(of: id), let pk = id.primaryKey else { continue }
            owners[store.tag, default: (store, source.layout.root, [:])].objects[pk] = source
        }
        for (store, ownerEntity, objects) in owners.values {
            let related = try readingAtGeneration {
                try coordinator.relatedRows(for: relationship, owners: Array(objects.keys), ownerEntity: ownerEntity, in: store)
            }
            let members = materialize(related.map(\.row), refresh: false, asFaults: true)
            var lists: [Int64: [NSManagedObject]] = [:]
            for (item, member) in zip(related, members) {
                lists[item.owner, default: []].append(member)
                collect(member)
            }
            for (pk, owner) in objects where owner._relations[index] == nil {
                let list = lists[pk] ?? []
                owner._relations[index] = .toMany(ObjectList(list, original: list.map(\.objectID)))
            }
        }
        return destinations
    }
}
