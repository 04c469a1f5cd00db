import Foundation

/// One stage of a staged migration: the base class of ``NSLightweightMigrationStage`` and
/// ``NSCustomMigrationStage``, which an ``NSStagedMigrationManager`` runs in order.
///
/// ```swift
/// let stage = NSLightweightMigrationStage([v1Checksum])
/// stage.label = "V1 to V2: add Car.color"
/// ```
open class NSMigrationStage: NSObject {
    /// A name for the stage, for logs and messages; empty by default.
    ///
    /// ```swift
    /// stage.label = "V2 to V3: split Person.name"
    /// ```
    open var label: String = ""

    /// A stage; use one of the subclasses.
    ///
    /// ```swift
    /// let stage: NSMigrationStage = NSLightweightMigrationStage([v1Checksum])
    /// ```
    public override init() {
        super.init()
    }
}
