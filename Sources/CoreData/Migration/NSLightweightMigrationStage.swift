import Foundation

/// A stage of model versions that migrate lightweight (with an inferred mapping) to the version
/// that follows them in the stage list.
///
/// ```swift
/// let lightweight = NSLightweightMigrationStage([v1Checksum, v2Checksum])
/// let custom = NSCustomMigrationStage(migratingFrom: v3Reference, to: v4Reference)
/// let manager = NSStagedMigrationManager([lightweight, custom])
/// ```
///
/// The checksums are ``NSManagedObjectModel/versionChecksum`` values, oldest first. A store of one
/// of these versions migrates one version at a time through the later ones to the next stage's
/// first version (here v1 → v2 → v3); a stage at the end of the list leads to the coordinator's
/// model. A checksum given twice makes the migration throw (see ``NSStagedMigrationManager``).
open class NSLightweightMigrationStage: NSMigrationStage {
    /// The version checksums of the stage's models, oldest first.
    ///
    /// ```swift
    /// NSLightweightMigrationStage([v1Checksum, v2Checksum]).versionChecksums.count   // 2
    /// ```
    public let versionChecksums: [String]

    /// A stage of the models with these version checksums, oldest first.
    ///
    /// ```swift
    /// let stage = NSLightweightMigrationStage([v1.versionChecksum, v2.versionChecksum])
    /// ```
    public init(_ versionChecksums: [String]) {
        self.versionChecksums = versionChecksums
        super.init()
    }
}
