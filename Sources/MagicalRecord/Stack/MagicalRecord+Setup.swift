import CoreData
import Foundation

/// Setting up the default stack, as MagicalRecord 2.3 does: the default model
/// (``NSManagedObjectModel/mr_default()``), a coordinator with one store, the root saving context
/// on it and the default context, its child.
///
/// Each set-up method does nothing when a default coordinator exists already (call
/// ``MagicalRecord/cleanUp()`` first to set up another). None can throw, as in MagicalRecord: a
/// store that cannot be added is logged as an error (`MagicalRecordLoggingLevel.error`, on by
/// default) and the stack is set up without it, so that saves then fail with Core Data's error
/// in their completion handler. Without any model, nothing is set up and the error is logged.
///
/// Linux: a store named `name` lives at `NSPersistentStore.mr_url(forStoreName: name)`, in
/// `$XDG_DATA_HOME/<program>/` (`~/.local/share/<program>/`), instead of Application Support.
extension MagicalRecord {
    /// Sets up the default stack on a SQLite store named ``defaultStoreName()``.
    ///
    /// ```swift
    /// NSManagedObjectModel.mr_setDefaultManagedObjectModel(model)
    /// MagicalRecord.setupCoreDataStack()
    /// ```
    public static func setupCoreDataStack() {
        setupCoreDataStack(withStoreNamed: defaultStoreName())
    }

    /// Sets up the default stack on an auto-migrating SQLite store named ``defaultStoreName()``.
    ///
    /// ```swift
    /// MagicalRecord.setupAutoMigratingCoreDataStack()
    /// ```
    public static func setupAutoMigratingCoreDataStack() {
        setupCoreDataStack(withAutoMigratingSqliteStoreNamed: defaultStoreName())
    }

    /// Sets up the default stack on the SQLite store named `storeName` in the XDG data folder.
    ///
    /// ```swift
    /// MagicalRecord.setupCoreDataStack(withStoreNamed: "Cars.sqlite")
    /// ```
    public static func setupCoreDataStack(withStoreNamed storeName: String) {
        setupCoreDataStackWithStore(at: NSPersistentStore.storeURL(named: storeName))
    }

    /// Sets up the default stack on the SQLite store named `storeName` in the XDG data folder,
    /// migrating it to the default model by lightweight migration
    /// (`NSPersistentStoreCoordinator.mr_autoMigrationOptions()`) when another version of the
    /// model wrote it.
    ///
    /// ```swift
    /// MagicalRecord.setupCoreDataStack(withAutoMigratingSqliteStoreNamed: "Cars.sqlite")
    /// ```
    public static func setupCoreDataStack(withAutoMigratingSqliteStoreNamed storeName: String) {
        setupCoreDataStackWithAutoMigratingSqliteStore(at: NSPersistentStore.storeURL(named: storeName))
    }

    /// Sets up the default stack on the SQLite store at `storeURL`.
    ///
    /// ```swift
    /// MagicalRecord.setupCoreDataStackWithStore(at: URL(fileURLWithPath: "/var/lib/garage/Cars.sqlite"))
    /// ```
    public static func setupCoreDataStackWithStore(at storeURL: URL) {
        setUp { $0.mr_addSqliteStore(at: storeURL, options: nil) }
    }

    /// Sets up the default stack on the SQLite store at `storeURL`, migrated by lightweight
    /// migration when another version of the model wrote it.
    ///
    /// ```swift
    /// MagicalRecord.setupCoreDataStackWithAutoMigratingSqliteStore(at: storeURL)
    /// ```
    public static func setupCoreDataStackWithAutoMigratingSqliteStore(at storeURL: URL) {
        setUp { $0.mr_addSqliteStore(at: storeURL, options: NSPersistentStoreCoordinator.mr_autoMigrationOptions()) }
    }

    /// Sets up the default stack on an in-memory store (tests, scratch data).
    ///
    /// ```swift
    /// MagicalRecord.setupCoreDataStackWithInMemoryStore()
    /// ```
    public static func setupCoreDataStackWithInMemoryStore() {
        setUp { $0.mr_addInMemoryStore() }
    }

    /// The store name of ``setupCoreDataStack()``: the main bundle's `CFBundleName` with
    /// `.sqlite`, or MagicalRecord's `"CoreDataStore.sqlite"` when there is none (a Linux program
    /// usually has no `Info.plist`).
    ///
    /// ```swift
    /// MagicalRecord.defaultStoreName()   // "CoreDataStore.sqlite"
    /// ```
    public static func defaultStoreName() -> String {
        var name = (Bundle.main.object(forInfoDictionaryKey: "CFBundleName") as? String).flatMap { $0.isEmpty ? nil : $0 }
            ?? "CoreDataStore.sqlite"
        if !name.hasSuffix("sqlite") { name += ".sqlite" }
        return name
    }

    /// Forgets the default stack: its contexts, coordinator, store and model. Objects and
    /// contexts the program still holds keep working; the next set-up call makes a new stack.
    ///
    /// ```swift
    /// MagicalRecord.cleanUp()
    /// ```
    public static func cleanUp() {
        setupLock.lock()
        defer { setupLock.unlock() }
        let observer = DefaultStack.shared.withLock { stack in
            let observer = stack.rootSaveObserver
            stack = DefaultStack()
            return observer
        }
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }

    /// Set-up and clean-up run one at a time.
    private static let setupLock = NSLock()

    /// Makes the default stack with the store `addStore` adds, unless there is one.
    private static func setUp(_ addStore: (NSPersistentStoreCoordinator) -> NSPersistentStore?) {
        setupLock.lock()
        defer { setupLock.unlock() }
        guard NSPersistentStoreCoordinator.mr_default() == nil else { return }
        guard let model = NSManagedObjectModel.mr_default() else {
            MagicalRecordLog.error("No managed object model: call NSManagedObjectModel.mr_setDefaultManagedObjectModel(_:) or MagicalRecord.setDefaultModelNamed(_:) before setting up the stack; nothing was set up")
            return
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = addStore(coordinator)
        NSPersistentStoreCoordinator.mr_setDefaultStoreCoordinator(coordinator)
        NSManagedObjectContext.mr_initializeDefaultContext(with: coordinator)
    }
}
