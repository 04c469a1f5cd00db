import Foundation

// Core Data's error codes in `NSCocoaErrorDomain`, with Apple's names and values.
/// 1550: an object failed validation (the generic validation error).
public let NSManagedObjectValidationError = 1550
/// 1551: objects violate a uniqueness constraint of their entity.
public let NSManagedObjectConstraintValidationError = 1551
/// 1560: several validation errors at once, listed under ``NSDetailedErrorsKey``.
public let NSValidationMultipleErrorsError = 1560
/// 1570: a non-optional property is `nil`.
public let NSValidationMissingMandatoryPropertyError = 1570
/// 1580: a to-many relationship holds fewer objects than its minimum count.
public let NSValidationRelationshipLacksMinimumCountError = 1580
/// 1590: a bounded to-many relationship holds more objects than its maximum count.
public let NSValidationRelationshipExceedsMaximumCountError = 1590
/// 1600: a deleted object's relationship with the deny delete rule still holds objects.
public let NSValidationRelationshipDeniedDeleteError = 1600
/// 1610: a number is larger than the attribute's maximum.
public let NSValidationNumberTooLargeError = 1610
/// 1620: a number is smaller than the attribute's minimum.
public let NSValidationNumberTooSmallError = 1620
/// 1630: a date is later than the attribute's maximum.
public let NSValidationDateTooLateError = 1630
/// 1640: a date is earlier than the attribute's minimum.
public let NSValidationDateTooSoonError = 1640
/// 1650: a date value fails to match the date pattern.
public let NSValidationInvalidDateError = 1650
/// 1660: a string is longer than the attribute's maximum length.
public let NSValidationStringTooLongError = 1660
/// 1670: a string is shorter than the attribute's minimum length.
public let NSValidationStringTooShortError = 1670
/// 1680: a string does not match the attribute's regular expression.
public let NSValidationStringPatternMatchingError = 1680
/// 1690: a URI value is not valid.
public let NSValidationInvalidURIError = 1690
/// 132000: a managed object context could not acquire a lock.
public let NSManagedObjectContextLockingError = 132000
/// 132010: a persistent store coordinator could not acquire a lock.
public let NSPersistentStoreCoordinatorLockingError = 132010
/// 133000: a fault fired for an object its store does not have.
public let NSManagedObjectReferentialIntegrityError = 133000
/// 133010: an object being saved has a relationship to an object in another store.
public let NSManagedObjectExternalRelationshipError = 133010
/// 133020: the merge policy could not complete a merge.
public let NSManagedObjectMergeError = 133020
/// 133021: the merge policy could not resolve conflicting uniqueness constraint violations.
public let NSManagedObjectConstraintMergeError = 133021
/// 134000: the store's type, format or version is unknown.
public let NSPersistentStoreInvalidTypeError = 134000
/// 134010: a store was accessed as a type it is not.
public let NSPersistentStoreTypeMismatchError = 134010
/// 134020: a database-level save error (a missing table, no permission).
public let NSPersistentStoreIncompatibleSchemaError = 134020
/// 134030: an unclassified save error: something the store depends on failed.
public let NSPersistentStoreSaveError = 134030
/// 134040: stores failed during a save; the user info says which stores or objects.
public let NSPersistentStoreIncompleteSaveError = 134040
/// 134050: a save met unresolved merge conflicts (``NSPersistentStoreSaveConflictsErrorKey``).
public let NSPersistentStoreSaveConflictsError = 134050
/// 134060: a general Core Data error.
public let NSCoreDataError = 134060
/// 134070: a persistent store operation failed.
public let NSPersistentStoreOperationError = 134070
/// 134080: a persistent store could not be opened.
public let NSPersistentStoreOpenError = 134080
/// 134090: the store was not reached within ``NSPersistentStoreTimeoutOption``.
public let NSPersistentStoreTimeoutError = 134090
/// 134091: a store was given a request type it does not support.
public let NSPersistentStoreUnsupportedRequestTypeError = 134091
/// 134100: the store's version hashes don't match the model's: it needs migrating.
public let NSPersistentStoreIncompatibleVersionHashError = 134100
/// 134110: a general migration error.
public let NSMigrationError = 134110
/// 134111: migration failed because objects violate a uniqueness constraint.
public let NSMigrationConstraintViolationError = 134111
/// 134120: migration was cancelled.
public let NSMigrationCancelledError = 134120
/// 134130: migration failed because the source model could not be found.
public let NSMigrationMissingSourceModelError = 134130
/// 134140: migration failed because no mapping model could be found.
public let NSMigrationMissingMappingModelError = 134140
/// 134150: migration failed because of a problem with the source store.
public let NSMigrationManagerSourceStoreError = 134150
/// 134160: migration failed because of a problem with the destination store.
public let NSMigrationManagerDestinationStoreError = 134160
/// 134170: migration failed in an entity migration policy.
public let NSEntityMigrationPolicyError = 134170
/// 134180: a general SQLite error.
public let NSSQLiteError = 134180
/// 134190: an inferred mapping model could not be created.
public let NSInferredMappingModelError = 134190
/// 134200: a general error while importing external records.
public let NSExternalRecordImportError = 134200
/// 134301: a persistent history request was given an expired token (the history after it was deleted).
public let NSPersistentHistoryTokenExpiredError = 134301
/// 134504: a staged migration could not find or load a referenced model (`NSManagedObjectModelReference`).
public let NSManagedObjectModelReferenceNotFoundError = 134504
/// 134505: a staged migration failed because the store's metadata does not support staged migrations.
public let NSStagedMigrationFrameworkVersionMismatchError = 134505
/// 134506: a staged migration failed because it would migrate backward, to an older model version.
public let NSStagedMigrationBackwardMigrationError = 134506

// User-info keys, with Apple's string values.
/// The user-info key of the array of errors when one operation has several (``NSValidationMultipleErrorsError``).
public let NSDetailedErrorsKey = "NSDetailedErrors"
/// The user-info key of the object that failed validation.
public let NSValidationObjectErrorKey = "NSValidationErrorObject"
/// The user-info key of the key (property name) that failed validation.
public let NSValidationKeyErrorKey = "NSValidationErrorKey"
/// The user-info key of the predicate whose condition failed validation.
public let NSValidationPredicateErrorKey = "NSValidationErrorPredicate"
/// The user-info key of the value that failed validation, when it is not `nil`.
public let NSValidationValueErrorKey = "NSValidationErrorValue"
/// The user-info key of the stores an error concerns.
public let NSAffectedStoresErrorKey = "NSAffectedStoresErrorKey"
/// The user-info key of the objects an error concerns.
public let NSAffectedObjectsErrorKey = "NSAffectedObjectsErrorKey"
/// The user-info key of the ``NSMergeConflict``s of a failed save (``NSPersistentStoreSaveConflictsError``).
public let NSPersistentStoreSaveConflictsErrorKey = "NSPersistentStoreSaveConflicts"
/// The domain of SQLite's own errors; also the user-info key under which an ``NSSQLiteError`` carries SQLite's result code.
public let NSSQLiteErrorDomain = "NSSQLiteErrorDomain"

/// Internal shorthand for Core Data's errors.
internal enum CoreDataError {
    enum Code: Int {
        case managedObjectValidation = 1550
        case multipleValidation = 1560
        case missingMandatoryProperty = 1570
        case relationshipLacksMinimumCount = 1580
        case relationshipExceedsMaximumCount = 1590
        case relationshipDeniedDelete = 1600
        case numberTooLarge = 1610
        case numberTooSmall = 1620
        case dateTooLate = 1630
        case dateTooSoon = 1640
        case stringTooLong = 1660
        case stringTooShort = 1670
        case stringPatternMatching = 1680
        case referentialIntegrity = 133000
        case externalRelationship = 133010
        case merge = 133020
        case constraintMerge = 133021
        case persistentStoreInvalidType = 134000
        case persistentStoreTypeMismatch = 134010
        case incompatibleSchema = 134020
        case persistentStoreSave = 134030
        case coreData = 134060
        case persistentStoreOperation = 134070
        case persistentStoreOpen = 134080
        /// A store already added to the coordinator, added again (Apple names no constant).
        case persistentStoreAlreadyAdded = 134081
        case unsupportedRequestType = 134091
        case incompatibleVersionHash = 134100
        case migration = 134110
        case migrationConstraintViolation = 134111
        case migrationMissingSourceModel = 134130
        case migrationMissingMappingModel = 134140
        case sqlite = 134180
        case inferredMappingModel = 134190
        case persistentHistoryTokenExpired = 134301
        /// Two persistent history tokens of different stores compared (Apple names no constant).
        case persistentHistoryTokensOfOtherStores = 134501
        case managedObjectModelReferenceNotFound = 134504
        case stagedMigrationFrameworkVersionMismatch = 134505
        case stagedMigrationBackwardMigration = 134506
        case fileReadUnknown = 256
        case fileReadCorruptFile = 259
        case fileReadNoSuchFile = 260
    }

    /// `NSUserCancelledError` (3072) in `NSCocoaErrorDomain`: a cancelled asynchronous request.
    static func cancelled(_ message: String) -> NSError {
        NSError(domain: NSCocoaErrorDomain, code: CocoaError.Code.userCancelled.rawValue, userInfo: [NSLocalizedDescriptionKey: message])
    }

    /// An `NSError` in `NSCocoaErrorDomain` whose `localizedDescription` is `message`.
    static func make(_ code: Code, _ message: String, extra: [String: Any] = [:]) -> NSError {
        var info = extra
        info[NSLocalizedDescriptionKey] = message
        return NSError(domain: NSCocoaErrorDomain, code: code.rawValue, userInfo: info)
    }
}
