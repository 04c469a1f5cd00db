import Foundation

/// A stage that migrates the store from one model version to the next with code of the app's
/// around the lightweight migration: ``willMigrateHandler`` on the store of ``currentModel``,
/// then the migration, then ``didMigrateHandler`` on the store of ``nextModel``.
///
/// ```swift
/// let stage = NSCustomMigrationStage(migratingFrom: v2Reference, to: v3Reference)
/// stage.willMigrateHandler = { manager, stage in
///     let context = manager.container!.newBackgroundContext()
///     try context.performAndWait {
///         for person in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")) {
///             person.setValue(person.value(forKey: "name"), forKey: "fullName")
///         }
///         try context.save()
///     }
/// }
/// ```
///
/// In each handler the manager's ``NSStagedMigrationManager/container`` has the store loaded
/// with the model of that moment. An error a handler throws stops the migration and is thrown as
/// it is; what the handler saved before stays saved (see ``NSStagedMigrationManager``).
open class NSCustomMigrationStage: NSMigrationStage {
    /// The model the stage migrates from.
    ///
    /// ```swift
    /// stage.currentModel.versionChecksum
    /// ```
    public let currentModel: NSManagedObjectModelReference

    /// The model the stage migrates to.
    ///
    /// ```swift
    /// stage.nextModel.resolvedModel.entitiesByName["Person"]
    /// ```
    public let nextModel: NSManagedObjectModelReference

    /// Runs before the migration, with the store loaded in the manager's container on
    /// ``currentModel``.
    ///
    /// ```swift
    /// stage.willMigrateHandler = { manager, stage in
    ///     let context = manager.container!.newBackgroundContext()
    ///     try context.performAndWait { /* read and change data of the current model */ try context.save() }
    /// }
    /// ```
    open var willMigrateHandler: ((NSStagedMigrationManager, NSCustomMigrationStage) throws -> Void)?

    /// Runs after the migration, with the store loaded in the manager's container on
    /// ``nextModel``.
    ///
    /// ```swift
    /// stage.didMigrateHandler = { manager, stage in
    ///     let context = manager.container!.newBackgroundContext()
    ///     try context.performAndWait { /* fill what the new model added */ try context.save() }
    /// }
    /// ```
    open var didMigrateHandler: ((NSStagedMigrationManager, NSCustomMigrationStage) throws -> Void)?

    /// A stage from `currentModel` to `nextModel`. References of one checksum make the migration
    /// throw (see ``NSStagedMigrationManager``).
    ///
    /// ```swift
    /// let stage = NSCustomMigrationStage(migratingFrom: v2Reference, to: v3Reference)
    /// ```
    public init(migratingFrom currentModel: NSManagedObjectModelReference, to nextModel: NSManagedObjectModelReference) {
        self.currentModel = currentModel
        self.nextModel = nextModel
        super.init()
    }
}
