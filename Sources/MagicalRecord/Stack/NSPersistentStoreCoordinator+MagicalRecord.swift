import CoreData
import Foundation

extension NSPersistentStoreCoordinator {
    /// The coordinator of the default stack, or `nil` before a set-up call and after
    /// ``MagicalRecord/cleanUp()``.
    ///
    /// ```swift
    /// let context = NSManagedObjectContext.mr_context(with: NSPersistentStoreCoordinator.mr_default()!)
    /// ```
    public class func mr_default() -> NSPersistentStoreCoordinator? {
        DefaultStack.shared.withLock { $0.coordinator }
    }

    /// Makes `coordinator` the default one; its first store, if there is no default store yet,
    /// becomes ``NSPersistentStore/mr_default()``. The set-up methods call this.
    ///
    /// ```swift
    /// NSPersistentStoreCoordinator.mr_setDefaultStoreCoordinator(coordinator)
    /// NSManagedObjectContext.mr_initializeDefaultContext(with: coordinator)
    /// ```
    public class func mr_setDefaultStoreCoordinator(_ coordinator: NSPersistentStoreCoordinator?) {
        let firstStore = coordinator?.persistentStores.first
        DefaultStack.shared.withLock { stack in
            stack.coordinator = coordinator
            if coordinator != nil, stack.store == nil { stack.store = firstStore }
        }
    }

    /// The options of MagicalRecord's auto-migrating stores: lightweight migration
    /// (`NSMigratePersistentStoresAutomaticallyOption` and `NSInferMappingModelAutomaticallyOption`)
    /// and SQLite's write-ahead log.
    ///
    /// ```swift
    /// try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url,
    ///                                    options: NSPersistentStoreCoordinator.mr_autoMigrationOptions())
    /// ```
    public class func mr_autoMigrationOptions() -> [AnyHashable: Any] {
        [NSMigratePersistentStoresAutomaticallyOption: true,
         NSInferMappingModelAutomaticallyOption: true,
         NSSQLitePragmasOption: ["journal_mode": "WAL"]]
    }

    /// Adds the SQLite store at `url`, creating its folder first; a failure is logged as an error
    /// (MagicalRecord's set-up methods cannot throw) and leaves the coordinator without it. A
    /// store of another model version is deleted and made again, empty, only when
    /// `MagicalRecord.shouldDeleteStoreOnModelMismatch()`.
    @discardableResult
    internal func mr_addSqliteStore(at url: URL, options: [AnyHashable: Any]?) -> NSPersistentStore? {
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            do {
                return try addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
            } catch let error as NSError where MagicalRecord.shouldDeleteStoreOnModelMismatch() && Self.isModelMismatch(error) {
                MagicalRecordLog.warn("Removing the store at \(url.path), which another model version wrote (\(Self.describe(error))): shouldDeleteStoreOnModelMismatch is on")
                try destroyPersistentStore(at: url, ofType: NSSQLiteStoreType, options: options)
                return try addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
            }
        } catch {
            MagicalRecordLog.error("Could not add the SQLite store at \(url.path): \(error.localizedDescription) (\(Self.describe(error)))")
            return nil
        }
    }

    /// Whether `error` is one of the errors MagicalRecord deletes a mismatched store for.
    private static func isModelMismatch(_ error: NSError) -> Bool {
        error.domain == NSCocoaErrorDomain
            && [NSPersistentStoreIncompatibleVersionHashError, NSMigrationMissingSourceModelError, NSMigrationError].contains(error.code)
    }

    /// Adds an in-memory store; a failure is logged as an error.
    @discardableResult
    internal func mr_addInMemoryStore() -> NSPersistentStore? {
        do {
            return try addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        } catch {
            MagicalRecordLog.error("Could not add an in-memory store: \(error.localizedDescription) (\(Self.describe(error)))")
            return nil
        }
    }

    /// An error's domain and code, for the log.
    internal static func describe(_ error: any Error) -> String {
        let error = error as NSError
        return "\(error.domain) \(error.code)"
    }
}
