import Foundation

/// Migrates a store through a list of stages, oldest model version first: Apple's staged
/// migration (iOS 17), given to a store with ``NSPersistentStoreStagedMigrationManagerOptionKey``.
///
/// ```swift
/// let v1 = NSLightweightMigrationStage([v1Checksum])              // V1 → V2: lightweight
/// let split = NSCustomMigrationStage(migratingFrom: v2Reference, to: v3Reference)
/// split.didMigrateHandler = { manager, stage in                   // V2 → V3 with code
///     let context = manager.container!.newBackgroundContext()
///     try context.performAndWait { /* fill the new attributes */ try context.save() }
/// }
/// let manager = NSStagedMigrationManager([v1, split])
/// description.setOption(manager, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
/// ```
///
/// The stages list the model versions in order: a lightweight stage its checksums, a custom stage
/// its current and next model (a stage may start at the version the previous one ended with). A store is found in that list by the version hashes its metadata
/// records, and migrated one version at a time to the coordinator's model, each step in one
/// transaction: a step into a custom stage's next model runs the stage's handlers around it;
/// every other step is a lightweight migration (an inferred mapping). So V1 → V2 → V3 chains in
/// one open even when every stage is lightweight (Apple's framework then fails, asking for a
/// mapping model). One staged migration of a store runs at a time: another, in another
/// coordinator or process (an `flock` on a SQLite store's folder) or on another server (an
/// advisory lock in a PostgreSQL database), waits for its steps and handlers, then finds the
/// store migrated.
///
/// Before the store is touched, the migration throws an `NSError` in `NSCocoaErrorDomain`:
/// - `NSMigrationError` (134110) for a stage list Apple's framework raises an exception for: a
///   stage given twice ("Duplicate lightweight migration stages detected."), a checksum twice in
///   a lightweight stage ("Duplicate version checksums detected."), a custom stage from a model to
///   itself ("The current model reference and the next model reference cannot be equal."), a
///   checksum in two stages ("Duplicate version checksums across stages detected."; a stage may
///   start at the version the previous one ended with, as custom stages V1 → V2 and V2 → V3), a
///   stage that is neither lightweight nor custom;
/// - `NSManagedObjectModelReferenceNotFoundError` (134504) when the coordinator's model is in no
///   stage ("Cannot use staged migration with an unknown coordinator model version."), or a
///   model of the path cannot be found; `NSPersistentStoreIncompatibleVersionHashError` (134100)
///   for a reference whose model has another checksum (``NSManagedObjectModelReference``);
/// - `NSStagedMigrationFrameworkVersionMismatchError` (134505) when the store's metadata has no
///   version hashes;
/// - `NSMigrationMissingSourceModelError` (134130) when the store's model is in no stage;
/// - `NSStagedMigrationBackwardMigrationError` (134506) when the store's model comes after the
///   coordinator's ("A store file cannot be migrated backwards with staged migration.");
/// - `NSInferredMappingModelError` (134190) when a lightweight step cannot be inferred.
///
/// A step that fails (a handler's error, thrown as it is, or a migration error) stops the
/// migration: the store is left at the version of the last step that completed, and opens with
/// that version's model. What a handler saved stays saved: a `willMigrateHandler` that throws
/// leaves the store at the stage's current model with its saved changes; a `didMigrateHandler`
/// that throws leaves it at the stage's next model. Running the migration again resumes there.
open class NSStagedMigrationManager: NSObject {
    /// The stages, in order.
    ///
    /// ```swift
    /// let labels = manager.stages.map(\.label)
    /// ```
    public let stages: [NSMigrationStage]

    /// The container a custom stage's handlers use to read and change the store: while a
    /// `willMigrateHandler` runs, it has the store loaded with the stage's current model; while a
    /// `didMigrateHandler` runs, with its next model. `nil` outside the handlers.
    ///
    /// ```swift
    /// stage.willMigrateHandler = { manager, stage in
    ///     let context = manager.container!.newBackgroundContext()
    ///     try context.performAndWait { /* … */ try context.save() }
    /// }
    /// ```
    open internal(set) var container: NSPersistentContainer?

    /// A manager of `stages`, oldest model version first.
    ///
    /// ```swift
    /// let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1Checksum]), customStage])
    /// ```
    public init(_ stages: [NSMigrationStage]) {
        self.stages = stages
        super.init()
    }
}
