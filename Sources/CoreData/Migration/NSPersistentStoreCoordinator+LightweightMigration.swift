import Foundation

// When a store is migrated: the coordinator opens it, and a SQLite store written with another
// version of the model (`NSPersistentStoreIncompatibleVersionHashError`, 134100) is migrated in
// place when the options ask for it (`SQLiteLightweightMigration.swift`), then opened again.
// Without the options the 134100 stands and the file is left as it was.

extension NSPersistentStoreCoordinator {
    /// Opens `store` with the coordinator's model, migrating its file first if it was written
    /// with another model and `NSMigratePersistentStoresAutomaticallyOption` and
    /// `NSInferMappingModelAutomaticallyOption` are both true.
    internal func openMigratingIfAsked(_ store: NSPersistentStore) throws {
        do {
            try store.open(model: managedObjectModel)
        } catch {
            guard let error = error.asNSError, error.domain == NSCocoaErrorDomain,
                  error.code == NSPersistentStoreIncompatibleVersionHashError,
                  store is SQLiteStore, !store.isReadOnly, let url = store.url, !SQLiteStore.isInMemory(url)
            else { throw error }
            // A staged migration manager, when the options give one, migrates stage by stage.
            if let manager = store.options?[NSPersistentStoreStagedMigrationManagerOptionKey] as? NSStagedMigrationManager {
                try manager.migrateStore(at: url, options: store.options, to: managedObjectModel)
                try store.open(model: managedObjectModel)
                return
            }
            guard store.flag(NSMigratePersistentStoresAutomaticallyOption), store.flag(NSInferMappingModelAutomaticallyOption) else { throw error }
            do {
                try SQLiteLightweightMigration.migrateStore(at: url, to: managedObjectModel)
            } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code == NSInferredMappingModelError {
                // As Apple's coordinator reports it: no mapping model found or inferred, the
                // inference's own error (entity, property, reason) underneath.
                throw CoreDataError.make(.migrationMissingMappingModel,
                    "Can't find or automatically infer a mapping model to migrate the store at \(url.path): \(error.localizedDescription)",
                    extra: [NSUnderlyingErrorKey: error, NSFilePathErrorKey: url.path])
            } catch {
                throw SQLiteStore.openError(error.asNSError ?? (error as NSError), url: url)
            }
            try store.open(model: managedObjectModel)
        }
    }
}
