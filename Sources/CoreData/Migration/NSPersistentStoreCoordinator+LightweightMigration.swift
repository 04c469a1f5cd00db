import Foundation

// When a store is migrated: the coordinator opens it, and a SQLite store written with another
// version of the model (`NSPersistentStoreIncompatibleVersionHashError`, 134100) is migrated when
// the options ask for it, then opened again: through a mapping model the app ships, into a new
// file whose contents then replace the store's (`SQLiteHeavyweightMigration.swift`), or through the inferred mapping, in place
// (`SQLiteLightweightMigration.swift`). Without the options the 134100 stands and the file is
// left as it was.

extension NSPersistentStoreCoordinator {
    /// Opens `store` with the coordinator's model, migrating its file first if it was written
    /// with another model and `NSMigratePersistentStoresAutomaticallyOption` is true: through the
    /// mapping model the app ships for the two versions when there is one (a heavyweight
    /// migration into a new file, whose contents then replace the store's), else, when
    /// `NSInferMappingModelAutomaticallyOption` is true too, through the inferred mapping, in place.
    internal func openMigratingIfAsked(_ store: NSPersistentStore) throws {
        do {
            try store.open(model: managedObjectModel)
        } catch {
            guard let error = error.asNSError, error.domain == NSCocoaErrorDomain,
                  error.code == NSPersistentStoreIncompatibleVersionHashError,
                  store is SQLiteStore || store is PostgreSQLStore, !store.isReadOnly, let url = store.url, !SQLiteStore.isInMemory(url)
            else { throw error }
            // A staged migration manager, when the options give one, migrates stage by stage (a
            // PostgreSQL store too: it refuses to open with one, leaving the stages to it).
            if let manager = store.options?[NSPersistentStoreStagedMigrationManagerOptionKey] as? NSStagedMigrationManager {
                try manager.migrateStore(at: url, ofType: store.type, options: store.options, to: managedObjectModel)
                try store.open(model: managedObjectModel)
                return
            }
            guard store.flag(NSMigratePersistentStoresAutomaticallyOption) else { throw error }
            if store is PostgreSQLStore {
                // It migrates itself in its opening through the inferred mapping
                // (`PostgreSQLStore+Migration.swift`), and leaves a mapping model to this.
                try migratePostgreSQLStore(store, at: url, refusal: error)
            } else {
                try migrate(store, at: url)
            }
            try store.open(model: managedObjectModel)
        }
    }

    /// Migrates the file of `store` to the coordinator's model, in Apple's order: the source model
    /// (134130 if none is found), then a mapping model found for the two models, then the inferred
    /// mapping if the options allow it (134140 if neither).
    private func migrate(_ store: NSPersistentStore, at url: URL) throws {
        let destination = managedObjectModel
        let metadata = try SQLiteStore.readMetadata(at: url)
        // Another coordinator or process may have migrated it since it was refused.
        if destination.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { return }
        guard let source = ModelSearch.sourceModel(forStoreMetadata: metadata, destination: destination) else {
            throw SQLiteLightweightMigration.missingSourceModel(url.path, metadata)
        }
        if let mapping = NSMappingModel(from: nil, forSourceModel: source, destinationModel: destination) {
            try SQLiteHeavyweightMigration.migrateStore(at: url, options: store.options, from: source, to: destination, mapping: mapping,
                                                        progress: Progress(totalUnitCount: 1000))
            return
        }
        guard store.flag(NSInferMappingModelAutomaticallyOption) else {
            throw SQLiteLightweightMigration.missingMappingModel(url.path, source: source, destination: destination, inference: nil)
        }
        do {
            try SQLiteLightweightMigration.migrateStore(at: url, from: source, to: destination)
        } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code == NSInferredMappingModelError {
            throw SQLiteLightweightMigration.missingMappingModel(url.path, source: source, destination: destination, inference: error)
        } catch {
            throw SQLiteStore.openError(error.asNSError ?? (error as NSError), url: url)
        }
    }
}

extension NSPersistentStoreCoordinator {
    /// Runs the mapping model the app ships for the PostgreSQL `store`'s version and the
    /// coordinator's model (`PostgreSQLHeavyweightMigration.swift`); `refusal`, the store's 134100,
    /// when there is none (its opening migrates without one, or said why it can't).
    private func migratePostgreSQLStore(_ store: NSPersistentStore, at url: URL, refusal: NSError) throws {
        let destination = managedObjectModel
        let metadata = try PostgreSQLStore.readMetadata(at: url, options: store.options)
        // Another coordinator or server may have migrated it since it was refused.
        if destination.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { return }
        guard let source = ModelSearch.sourceModel(forStoreMetadata: metadata, destination: destination),
              let mapping = NSMappingModel(from: nil, forSourceModel: source, destinationModel: destination) else { throw refusal }
        try PostgreSQLHeavyweightMigration.migrateStore(at: url, options: store.options, from: source, to: destination, mapping: mapping,
                                                        progress: Progress(totalUnitCount: 1000))
    }
}

extension NSPersistentStoreCoordinator {
    /// Finishes the work a deferred lightweight migration left. Here a migration completes in its
    /// one transaction when the store is added, so there is never any: this returns at once.
    ///
    /// ```swift
    /// try coordinator.finishDeferredLightweightMigration()
    /// ```
    public func finishDeferredLightweightMigration() throws {}

    /// Finishes the deferred work of one store's lightweight migration: there is none here (see
    /// ``finishDeferredLightweightMigration()``).
    ///
    /// ```swift
    /// try coordinator.finishDeferredLightweightMigrationTask()
    /// ```
    public func finishDeferredLightweightMigrationTask() throws {}
}
