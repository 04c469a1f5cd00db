import Foundation

// The option keys Apple's NSPersistentStoreCoordinator.h declares, with Apple's values (the
// strings Core Data itself holds, which are not always the constant's name). Code written for
// Apple platforms passes them in `addPersistentStore(ofType:configurationName:at:options:)` or
// `NSPersistentStoreDescription.setOption(_:forKey:)`, so each exists here. Those the package acts
// on say what it does; the others say that they are ignored here, and why.
//
// ```swift
// try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: [
//     NSSQLiteManualVacuumOption: true,         // VACUUM when added
//     NSPersistentStoreTimeoutOption: 10,       // wait 10 s for another connection's lock
//     NSPersistentHistoryTrackingKey: true,     // record persistent history
// ])
// ```

// MARK: Store options

/// Opens the store read-only (`true`): saves to it fail, and a missing file is an error.
///
/// ```swift
/// try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url,
///                                    options: [NSReadOnlyPersistentStoreOption: true])
/// ```
public let NSReadOnlyPersistentStoreOption = "NSReadOnlyPersistentStoreOption"

/// How long, in seconds, a SQLite connection waits for a lock another connection holds before
/// failing (5 s when the option is absent; `NSPersistentContainer` passes its `timeout`, 240 s).
///
/// ```swift
/// let options: [AnyHashable: Any] = [NSPersistentStoreTimeoutOption: 30]
/// ```
public let NSPersistentStoreTimeoutOption = "NSPersistentStoreTimeoutOption"

/// SQLite pragmas, by name, run after the store's own when it opens (`journal_mode`,
/// `synchronous`, `cache_size`, …). A name that is not letters and `_`, or a value that is not
/// letters, digits, `_` and `-`, is skipped: no SQL reaches SQLite from an option.
///
/// ```swift
/// let options: [AnyHashable: Any] = [NSSQLitePragmasOption: ["synchronous": "FULL"]]
/// ```
public let NSSQLitePragmasOption = "NSSQLitePragmasOption"

/// Runs SQLite's `ANALYZE` when the store is added (`true`), so that the query planner has
/// statistics about the store's indexes. Ignored by in-memory and read-only stores.
///
/// ```swift
/// let options: [AnyHashable: Any] = [NSSQLiteAnalyzeOption: true]
/// ```
public let NSSQLiteAnalyzeOption = "NSSQLiteAnalyzeOption"

/// Runs SQLite's `VACUUM` when the store is added (`true`): the file is rebuilt without the pages
/// deleted rows left free, as on Apple platforms. Ignored by in-memory and read-only stores. A
/// `VACUUM` that fails (another connection is reading, the disk is full) fails the add.
///
/// ```swift
/// let options: [AnyHashable: Any] = [NSSQLiteManualVacuumOption: true]
/// ```
public let NSSQLiteManualVacuumOption = "NSSQLiteManualVacuumOption"

/// The most reader connections a SQLite store opens (a positive integer; 4 by default). A value
/// that is not a positive integer makes the add fail.
///
/// ```swift
/// let options: [AnyHashable: Any] = [NSPersistentStoreConnectionPoolMaxSizeKey: 2]
/// ```
public let NSPersistentStoreConnectionPoolMaxSizeKey = "NSPersistentStoreConnectionPoolMaxSize"

/// Ignored here: `destroyPersistentStore(at:ofType:options:)` always removes the files, whatever
/// other connections hold them, as Apple's does with this option set.
///
/// ```swift
/// try coordinator.destroyPersistentStore(at: url, ofType: NSSQLiteStoreType,
///                                        options: [NSPersistentStoreForceDestroyOption: true])
/// ```
public let NSPersistentStoreForceDestroyOption = "NSPersistentStoreForceDestroyOption"

/// Ignored here: iOS's data-protection classes have no Linux counterpart. A store's files get
/// the permissions of the process's `umask`; protect them with the folder's permissions.
///
/// ```swift
/// description.setOption("NSFileProtectionComplete" as NSString, forKey: NSPersistentStoreFileProtectionKey)
/// ```
public let NSPersistentStoreFileProtectionKey = "NSPersistentStoreFileProtectionKey"

/// Ignored here: it applies to the XML store, which exists on macOS only.
///
/// ```swift
/// let options: [AnyHashable: Any] = [NSValidateXMLStoreOption: true]
/// ```
public let NSValidateXMLStoreOption = "NSValidateXMLStoreOption"

/// Ignored here: it applies to the binary store, which Linux does not have.
///
/// ```swift
/// let options: [AnyHashable: Any] = [NSBinaryStoreSecureDecodingClasses: Set([NSString.self])]
/// ```
public let NSBinaryStoreSecureDecodingClasses = "NSBinaryStoreSecureDecodingClasses"

/// Ignored here: it applies to the binary store, which Linux does not have.
///
/// ```swift
/// let options: [AnyHashable: Any] = [NSBinaryStoreInsecureDecodingCompatibilityOption: true]
/// ```
public let NSBinaryStoreInsecureDecodingCompatibilityOption = "NSBinaryStoreInsecureDecodingCompatibilityOption"

/// Ignored here: Core Spotlight does not exist on Linux.
///
/// ```swift
/// description.setOption(exporter, forKey: NSCoreDataCoreSpotlightExporter)
/// ```
public let NSCoreDataCoreSpotlightExporter = "NSCoreDataCoreSpotlightExporter"

// MARK: Migration options

/// Opens a store without comparing its entity version hashes with the model's (`true`): a store
/// written with another model opens instead of failing with
/// `NSPersistentStoreIncompatibleVersionHashError`, and the app answers for the difference (a
/// fetch or save that meets a missing table or column throws). The store's type is still checked.
/// Linux difference: the hashes in the store's metadata are not rewritten.
///
/// ```swift
/// let options: [AnyHashable: Any] = [NSIgnorePersistentStoreVersioningOption: true]
/// ```
public let NSIgnorePersistentStoreVersioningOption = "NSIgnorePersistentStoreVersioningOption"

/// Migrates a SQLite store written with another version of the model when it is added. Its source
/// model is looked for where ``NSManagedObjectModel/mergedModel(from:forStoreMetadata:)`` looks
/// (`NSMigrationMissingSourceModelError`, 134130, if none matches). Then, in Apple's order: a
/// mapping model the app ships for the two versions (``NSMappingModel/init(from:forSourceModel:destinationModel:)``)
/// is run by an ``NSMigrationManager`` into a new file, whose contents then replace the store's in
/// one transaction; else, with
/// ``NSInferMappingModelAutomaticallyOption`` also true, the mapping is inferred
/// (`NSInferredMappingModelError`, 134190, if it can't be) and the file rewritten in place in one
/// transaction; else `NSMigrationMissingMappingModelError` (134140). Without this option such a
/// store fails to open with `NSPersistentStoreIncompatibleVersionHashError` (134100). Every
/// failure leaves the store as it was.
///
/// ```swift
/// let options: [AnyHashable: Any] = [NSMigratePersistentStoresAutomaticallyOption: true,
///                                    NSInferMappingModelAutomaticallyOption: true]
/// ```
public let NSMigratePersistentStoresAutomaticallyOption = "NSMigratePersistentStoresAutomaticallyOption"

/// Lets a migration infer its mapping model (lightweight migration) when the app ships none for
/// the two versions, with ``NSMigratePersistentStoresAutomaticallyOption``: see there.
///
/// ```swift
/// let options: [AnyHashable: Any] = [NSInferMappingModelAutomaticallyOption: true]
/// ```
public let NSInferMappingModelAutomaticallyOption = "NSInferMappingModelAutomaticallyOption"

/// Accepted; nothing is deferred. Apple's lightweight migration may leave index and clean-up work
/// for ``NSPersistentStoreCoordinator/finishDeferredLightweightMigration()``; here a migration
/// completes in its one transaction, so there is never deferred work.
///
/// ```swift
/// description.setOption(true as NSNumber, forKey: NSPersistentStoreDeferredLightweightMigrationOptionKey)
/// ```
public let NSPersistentStoreDeferredLightweightMigrationOptionKey = "NSPersistentStoreDeferredLightweightMigrationOptionKey"

/// An `NSStagedMigrationManager` that migrates the store, stage by stage, when it was written with
/// another version of the model (`Migration/NSStagedMigrationManager+Migration.swift`).
///
/// ```swift
/// description.setOption(manager, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
/// ```
public let NSPersistentStoreStagedMigrationManagerOptionKey = "NSPersistentStoreStagedMigrationManagerOptionKey"

// MARK: History and remote changes

/// Records persistent history (`true`, as a `Bool` or `NSNumber`, or a dictionary of options,
/// ``NSPersistentHistoryTrackingEntitiesToInclude`` or ``NSPersistentHistoryTrackingEntitiesToExclude``):
/// a SQLite or PostgreSQL store opened read-write makes Apple's history tables (`ATRANSACTION`,
/// `ACHANGE`, `ATRANSACTIONSTRING`) if they are missing, and every save and every batch request
/// writes, in its own transaction, one transaction row (the context's `transactionAuthor` and `name`, the
/// bundle and process) with one change per inserted, updated and deleted row; a save or batch
/// that changed no tracked entity writes none. Read it with ``NSPersistentHistoryChangeRequest``.
/// Other store types (in-memory, atomic, incremental) record nothing.
///
/// ```swift
/// description.setOption(true as NSNumber, forKey: NSPersistentHistoryTrackingKey)
/// ```
public let NSPersistentHistoryTrackingKey = "NSPersistentHistoryTrackingKey"

/// In the dictionary form of ``NSPersistentHistoryTrackingKey``: an array of entity names whose
/// changes alone are recorded (each entity by its own name: a sub-entity is not included by its
/// parent's). A name the model lacks, or this key with ``NSPersistentHistoryTrackingEntitiesToExclude``,
/// fails `addPersistentStore` (134080). Apple's option key (its framework reads it; its public
/// headers do not declare it).
///
/// ```swift
/// description.setOption([NSPersistentHistoryTrackingEntitiesToInclude: ["Note"]] as NSDictionary,
///                       forKey: NSPersistentHistoryTrackingKey)
/// ```
public let NSPersistentHistoryTrackingEntitiesToInclude = "NSPersistentHistoryTrackingEntitiesToInclude"

/// In the dictionary form of ``NSPersistentHistoryTrackingKey``: an array of entity names whose
/// changes are not recorded (each entity by its own name); a name the model lacks is logged and
/// ignored, as Apple's store does. Apple's option key (its public headers do not declare it).
///
/// ```swift
/// description.setOption([NSPersistentHistoryTrackingEntitiesToExclude: ["Cache"]] as NSDictionary,
///                       forKey: NSPersistentHistoryTrackingKey)
/// ```
public let NSPersistentHistoryTrackingEntitiesToExclude = "NSPersistentHistoryTrackingEntitiesToExclude"

/// Makes the coordinator post `.NSPersistentStoreRemoteChange` after every write to a SQLite or
/// PostgreSQL store (`true`): saves and batch requests of any coordinator, in this process or
/// another, its own included, as Apple's framework does. The notification carries the store's URL, UUID and,
/// with ``NSPersistentHistoryTrackingKey``, the current history token; commits close together
/// may be posted once. Other processes' commits are noticed through a file-system watch and
/// SQLite's `data_version` (docs/PORTING.md); PostgreSQL's, from any server, through
/// `LISTEN`/`NOTIFY` (docs/POSTGRESQL.md). Other store types post nothing. Its value is Apple's,
/// `"NSPersistentStoreRemoteChangeNotificationOptionKey"`.
///
/// ```swift
/// description.setOption(true as NSNumber, forKey: NSPersistentStoreRemoteChangeNotificationPostOptionKey)
/// ```
public let NSPersistentStoreRemoteChangeNotificationPostOptionKey = "NSPersistentStoreRemoteChangeNotificationOptionKey"

// MARK: Deprecated by Apple

/// Ignored here: Spotlight external records are macOS's, and deprecated.
@available(*, deprecated, message: "Spotlight external records are deprecated; ignored on Linux")
public let NSExternalRecordsDirectoryOption = "NSExternalRecordsDirectoryOption"
/// Ignored here: Spotlight external records are macOS's, and deprecated.
@available(*, deprecated, message: "Spotlight external records are deprecated; ignored on Linux")
public let NSExternalRecordExtensionOption = "NSExternalRecordExtensionOption"
/// Ignored here: Spotlight external records are macOS's, and deprecated.
@available(*, deprecated, message: "Spotlight external records are deprecated; ignored on Linux")
public let NSExternalRecordsFileFormatOption = "NSExternalRecordsFileFormatOption"
/// Ignored here: iCloud ubiquitous stores are deprecated (use CloudKit), and Linux has no iCloud.
@available(*, deprecated, message: "iCloud ubiquitous stores are deprecated; ignored on Linux")
public let NSPersistentStoreUbiquitousContentNameKey = "NSPersistentStoreUbiquitousContentNameKey"
/// Ignored here: iCloud ubiquitous stores are deprecated (use CloudKit), and Linux has no iCloud.
@available(*, deprecated, message: "iCloud ubiquitous stores are deprecated; ignored on Linux")
public let NSPersistentStoreUbiquitousContentURLKey = "NSPersistentStoreUbiquitousContentURLKey"
/// Ignored here: iCloud ubiquitous stores are deprecated (use CloudKit), and Linux has no iCloud.
@available(*, deprecated, message: "iCloud ubiquitous stores are deprecated; ignored on Linux")
public let NSPersistentStoreUbiquitousPeerTokenOption = "NSPersistentStoreUbiquitousPeerTokenOption"
/// Ignored here: iCloud ubiquitous stores are deprecated (use CloudKit), and Linux has no iCloud.
@available(*, deprecated, message: "iCloud ubiquitous stores are deprecated; ignored on Linux")
public let NSPersistentStoreRemoveUbiquitousMetadataOption = "NSPersistentStoreRemoveUbiquitousMetadataOption"
/// Ignored here: iCloud ubiquitous stores are deprecated (use CloudKit), and Linux has no iCloud.
@available(*, deprecated, message: "iCloud ubiquitous stores are deprecated; ignored on Linux")
public let NSPersistentStoreUbiquitousContainerIdentifierKey = "NSPersistentStoreUbiquitousContainerIdentifierKey"
/// Ignored here: iCloud ubiquitous stores are deprecated (use CloudKit), and Linux has no iCloud.
@available(*, deprecated, message: "iCloud ubiquitous stores are deprecated; ignored on Linux")
public let NSPersistentStoreRebuildFromUbiquitousContentOption = "NSPersistentStoreRebuildFromUbiquitousContentOption"

extension NSPersistentStore {
    /// Whether the Boolean option `key` is set (`true`, `NSNumber(value: true)`, `"YES"`, `"1"`).
    internal func flag(_ key: String) -> Bool {
        switch options?[key] {
        case let value as Bool: return value
        case let value as NSNumber: return value.boolValue
        case let value as String: return ["YES", "TRUE", "1"].contains(value.uppercased())
        default: return false
        }
    }
}

// MARK: Reading options

/// The integer an option's value gives, as code passes it (an `Int`, an `NSNumber` holding a
/// whole number, or its decimal text); `nil` for anything else.
internal func integerOptionValue(_ value: Any) -> Int? {
    switch value {
    case let number as Int: number
    case let number as NSNumber: Int(exactly: number.doubleValue)
    case let text as String: Int(text)
    default: nil
    }
}
