import Foundation

// Core Data's error codes in `NSCocoaErrorDomain`, with Apple's names and values.
public let NSManagedObjectValidationError = 1550
public let NSManagedObjectConstraintValidationError = 1551
public let NSValidationMultipleErrorsError = 1560
public let NSValidationMissingMandatoryPropertyError = 1570
public let NSValidationRelationshipLacksMinimumCountError = 1580
public let NSValidationRelationshipExceedsMaximumCountError = 1590
public let NSValidationRelationshipDeniedDeleteError = 1600
public let NSValidationNumberTooLargeError = 1610
public let NSValidationNumberTooSmallError = 1620
public let NSValidationDateTooLateError = 1630
public let NSValidationDateTooSoonError = 1640
public let NSValidationInvalidDateError = 1650
public let NSValidationStringTooLongError = 1660
public let NSValidationStringTooShortError = 1670
public let NSValidationStringPatternMatchingError = 1680
public let NSValidationInvalidURIError = 1690
public let NSManagedObjectContextLockingError = 132000
public let NSPersistentStoreCoordinatorLockingError = 132010
public let NSManagedObjectReferentialIntegrityError = 133000
public let NSManagedObjectExternalRelationshipError = 133010
public let NSManagedObjectMergeError = 133020
public let NSManagedObjectConstraintMergeError = 133021
public let NSPersistentStoreInvalidTypeError = 134000
public let NSPersistentStoreTypeMismatchError = 134010
public let NSPersistentStoreIncompatibleSchemaError = 134020
public let NSPersistentStoreSaveError = 134030
public let NSPersistentStoreIncompleteSaveError = 134040
public let NSPersistentStoreSaveConflictsError = 134050
public let NSCoreDataError = 134060
public let NSPersistentStoreOperationError = 134070
public let NSPersistentStoreOpenError = 134080
public let NSPersistentStoreTimeoutError = 134090
public let NSPersistentStoreUnsupportedRequestTypeError = 134091
public let NSPersistentStoreIncompatibleVersionHashError = 134100
public let NSMigrationError = 134110
public let NSMigrationConstraintViolationError = 134111
public let NSMigrationCancelledError = 134120
public let NSMigrationMissingSourceModelError = 134130
public let NSMigrationMissingMappingModelError = 134140
public let NSMigrationManagerSourceStoreError = 134150
public let NSMigrationManagerDestinationStoreError = 134160
public let NSEntityMigrationPolicyError = 134170
public let NSSQLiteError = 134180
public let NSInferredMappingModelError = 134190
public let NSExternalRecordImportError = 134200
public let NSPersistentHistoryTokenExpiredError = 134301
public let NSManagedObjectModelReferenceNotFoundError = 134504
public let NSStagedMigrationFrameworkVersionMismatchError = 134505
public let NSStagedMigrationBackwardMigrationError = 134506

// User-info keys, with Apple's string values.
public let NSDetailedErrorsKey = "NSDetailedErrors"
public let NSValidationObjectErrorKey = "NSValidationErrorObject"
public let NSValidationKeyErrorKey = "NSValidationErrorKey"
public let NSValidationPredicateErrorKey = "NSValidationErrorPredicate"
public let NSValidationValueErrorKey = "NSValidationErrorValue"
public let NSAffectedStoresErrorKey = "NSAffectedStoresErrorKey"
public let NSAffectedObjectsErrorKey = "NSAffectedObjectsErrorKey"
public let NSPersistentStoreSaveConflictsErrorKey = "NSPersistentStoreSaveConflicts"
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
