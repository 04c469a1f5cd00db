import CoreData
import Foundation

/// MagicalRecord's set-up options (2.3's `MagicalRecord+Options`), process-wide; ``cleanUp()``
/// keeps them.
extension MagicalRecord {
    /// Whether ``NSManagedObjectModel/mr_default()`` merges the program's models when no default
    /// model was set; `true` by default, as in MagicalRecord.
    ///
    /// ```swift
    /// if MagicalRecord.shouldAutoCreateManagedObjectModel() { print("models are merged") }
    /// ```
    public static func shouldAutoCreateManagedObjectModel() -> Bool {
        Options.shared.withLock { $0.autoCreateModel }
    }

    /// Sets whether ``NSManagedObjectModel/mr_default()`` merges the program's models when no
    /// default model was set.
    ///
    /// ```swift
    /// NSManagedObjectModel.mr_setDefaultManagedObjectModel(model)
    /// MagicalRecord.setShouldAutoCreateManagedObjectModel(false)
    /// ```
    public static func setShouldAutoCreateManagedObjectModel(_ autoCreate: Bool) {
        Options.shared.withLock { $0.autoCreateModel = autoCreate }
    }

    /// Whether the set-up methods delete a SQLite store that another version of the model wrote
    /// and they cannot migrate, and make a new empty one; `false` by default.
    ///
    /// ```swift
    /// print(MagicalRecord.shouldDeleteStoreOnModelMismatch())   // false
    /// ```
    public static func shouldDeleteStoreOnModelMismatch() -> Bool {
        Options.shared.withLock { $0.deleteStoreOnModelMismatch }
    }

    /// Sets whether the set-up methods delete a store they cannot open for its model version
    /// (Core Data's errors 134100, 134110 and 134130) and make a new empty one, for development
    /// while the model changes often. **The store's data is lost**; the deletion is logged as a
    /// warning. Linux: off by default, also in debug builds (MagicalRecord's debug builds turn it on).
    ///
    /// ```swift
    /// #if DEBUG
    /// MagicalRecord.setShouldDeleteStoreOnModelMismatch(true)
    /// #endif
    /// MagicalRecord.setupCoreDataStack(withStoreNamed: "Cars.sqlite")
    /// ```
    public static func setShouldDeleteStoreOnModelMismatch(_ shouldDelete: Bool) {
        Options.shared.withLock { $0.deleteStoreOnModelMismatch = shouldDelete }
    }

    /// The options' values.
    internal struct Options {
        var autoCreateModel = true
        var deleteStoreOnModelMismatch = false

        static let shared = LockedValue(Options())
    }
}
