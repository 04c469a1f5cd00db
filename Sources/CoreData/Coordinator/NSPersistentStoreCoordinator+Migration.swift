import Foundation

extension NSPersistentStoreCoordinator {
    /// Moves a store's objects to a new store at `url`, of `storeType`, and puts the new store in
    /// the old one's place: the old store is removed from the coordinator (its file stays where
    /// it is), and the new one is returned. Used for "Save As" and to move a store between types.
    ///
    /// ```swift
    /// let store = coordinator.persistentStores[0]
    /// let moved = try coordinator.migratePersistentStore(store, to: archiveURL, withType: NSSQLiteStoreType)
    /// ```
    ///
    /// A SQLite store moved to a SQLite file is copied as it is (SQLite's backup API), its
    /// external binary data with it, and keeps its identifier, so object IDs' URIs still resolve.
    /// Between other types, every row and relationship is copied under its primary key, so
    /// an object's ID differs only in its store. To or from a store you write (an
    /// ``NSIncrementalStore`` or ``NSAtomicStore``), the objects are copied into the new store
    /// and saved there, which is then loaded again (`StoreObjectCopy.swift`); they get its IDs.
    ///
    /// Throws, leaving the old store in place, if `store` is not in this coordinator, if a file
    /// exists at `url` or a PostgreSQL database there holds a store (a migration never
    /// overwrites one), or if the copy fails (the new store is
    /// removed and its file deleted). Contexts that held the old store's objects should be reset.
    /// Saves through this coordinator wait while the store moves.
    @discardableResult
    public func migratePersistentStore(_ store: NSPersistentStore, to url: URL, options: [AnyHashable: Any]? = nil,
                                       withType storeType: String) throws -> NSPersistentStore {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw CoreDataError.make(.persistentStoreOperation, "The store to migrate is not one of this coordinator's stores")
        }
        if url.isFileURL, url.path != "/dev/null", FileManager.default.fileExists(atPath: url.path) {
            throw NSError(domain: NSCocoaErrorDomain, code: NSFileWriteFileExistsError, userInfo: [
                NSLocalizedDescriptionKey: "Can't migrate the store to \(url.path): a file is there already (a migration never overwrites one)",
                NSFilePathErrorKey: url.path,
            ])
        }
        if storeType == NSPostgreSQLStoreType, try PostgreSQLStore.holdsStore(at: url, options: options) {
            throw NSError(domain: NSCocoaErrorDomain, code: NSFileWriteFileExistsError, userInfo: [NSLocalizedDescriptionKey:
                "Can't migrate the store to \(PostgreSQLStore.location(of: url)): the database holds a store already (a migration never overwrites one)"])
        }
        // Under the save lock from the copy to the old store's removal: a save of another
        // context of this coordinator meanwhile would go to the old store only, and be lost.
        // The notifications come before and after, without the lock (an observer may save).
        postWillRemoveStore()
        let moved = try withSaveLock { try moveStore(store, to: url, options: options, type: storeType) }
        postStoresDidChange(added: [moved], removed: [store], uuidChanged: moved.identifier == store.identifier ? nil : [store, moved])
        return moved
    }

    /// ``migratePersistentStore(_:to:options:withType:)``'s copy and swap, under the save lock.
    private func moveStore(_ store: NSPersistentStore, to url: URL, options: [AnyHashable: Any]?, type storeType: String) throws -> NSPersistentStore {
        let moved: NSPersistentStore
        if migratesThroughObjects(store, to: storeType) {
            moved = try migrateThroughObjects(store, to: url, options: options, type: storeType)
        } else if let source = store.url, store is SQLiteStore, storeType == NSSQLiteStoreType,
                  !SQLiteStore.isInMemory(source), !SQLiteStore.isInMemory(url) {
            // (A `/dev/null` store, in memory, has no file to back up or to write: its rows are
            // copied as between types, below.)
            try replacePersistentStore(at: url, withPersistentStoreFrom: source, ofType: NSSQLiteStoreType)
            do {
                moved = try addStore(ofType: storeType, configurationName: store.configurationName, at: url, options: options, replacing: store)
            } catch {
                try? destroyPersistentStore(at: url, ofType: NSSQLiteStoreType)
                throw error
            }
        } else {
            moved = try addStore(ofType: storeType, configurationName: store.configurationName, at: url, options: options, replacing: store)
            do {
                try StoreCopy(from: store, to: moved, model: managedObjectModel).run()
            } catch {
                try? removeStore(moved, posting: false)
                if storeType == NSSQLiteStoreType || storeType == NSPostgreSQLStoreType { try? destroyPersistentStore(at: url, ofType: storeType, options: options) }
                throw error
            }
        }
        // One notification for the move, once it is complete (posted by the caller, outside the
        // save lock): the old store out, the new one in.
        migrationWillSwapHook?()
        try removeStore(store, posting: false)
        return moved
    }

    /// ``migratePersistentStore(_:to:options:withType:)``; the newer spelling.
    @discardableResult
    public func migratePersistentStore(_ store: NSPersistentStore, to url: URL, options: [AnyHashable: Any]? = nil,
                                       type: NSPersistentStore.StoreType) throws -> NSPersistentStore {
        try migratePersistentStore(store, to: url, options: options, withType: type.rawValue)
    }
}

/// Copies every row and relationship of one store into another, empty one, in one save: rows
/// keep their primary keys, references are pointed at the new store, and each root's key
/// sequence starts after its largest key.
private struct StoreCopy {
    let source: NSPersistentStore
    let destination: NSPersistentStore
    let model: NSManagedObjectModel

    init(from source: NSPersistentStore, to destination: NSPersistentStore, model: NSManagedObjectModel) {
        self.source = source
        self.destination = destination
        self.model = model
    }

    /// `id` in the destination store, if it named the source's.
    private func moved(_ id: NSManagedObjectID) -> NSManagedObjectID {
        guard id.persistentStore === source, let key = id.primaryKey else { return id }
        return NSManagedObjectID(entity: id.entity, store: destination, primaryKey: key)
    }

    func run() throws {
        let entities = model.entities(forConfigurationName: source.configurationName) ?? model.entities
        var changes = SaveChanges()
        var largest: [ObjectIdentifier: (root: NSEntityDescription, key: Int64)] = [:]
        for entity in entities where !entity.isAbstract {
            let layout = entity.layout
            for row in try source.fetchRows(FetchPlan(entity: entity, includesSubentities: false)) {
                var values = row.snapshot.values
                for index in layout.idValueIndexes {
                    if case .objectID(let id) = values[index] { values[index] = .objectID(moved(id)) }
                }
                changes.inserts.append(.init(entity: entity, key: IDKey(store: destination.tag, root: layout.rootNumber, value: row.primaryKey),
                                             values: values))
                let root = ObjectIdentifier(layout.root)
                if row.primaryKey > largest[root]?.key ?? 0 { largest[root] = (layout.root, row.primaryKey) }
                let owner = NSManagedObjectID(entity: entity, store: source, primaryKey: row.primaryKey)
                try copyToMany(of: owner, into: &changes)
            }
        }
        for (root, key) in largest.values { _ = try destination.allocatePrimaryKeys(for: root, count: Int(key)) }
        _ = try destination.save(changes, rowCache: nil, beforeCommitting: {})
    }

    /// The rows that keep `owner`'s to-many relationships: join rows (from the side that owns
    /// the table), keys of relationships without an inverse, and positions of ordered ones.
    private func copyToMany(of owner: NSManagedObjectID, into changes: inout SaveChanges) throws {
        let layout = owner.entity.layout
        for index in layout.relationshipIndexes {
            guard let relationship = layout.properties[index] as? NSRelationshipDescription,
                  relationship.isToMany, !relationship.isTransient else { continue }
            // A join table's rows are copied once, from the side that owns the table.
            let joins = relationship.joinTable?.isOwner == true
            let hidden = relationship.hiddenForeignKeyColumn != nil
            guard joins || hidden || relationship.isOrdered else { continue }
            let members = try source.relatedIDs(for: relationship, of: owner).map(moved)
            let newOwner = moved(owner)
            for (position, member) in members.enumerated() {
                if joins {
                    changes.joinInserts.append(.init(relationship: relationship, first: newOwner, second: member))
                } else if hidden {
                    changes.foreignKeyUpdates.append(.init(relationship: relationship, member: member, owner: newOwner))
                }
                if relationship.isOrdered {
                    changes.orderUpdates.append(.init(relationship: relationship, owner: newOwner, member: member, position: Int64(position + 1)))
                }
            }
        }
    }
}
