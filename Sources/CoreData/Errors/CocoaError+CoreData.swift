import Foundation

// Core Data's error codes as `CocoaError.Code` members, and typed access to its user-info keys,
// as Apple's Core Data overlay declares them: `catch let error as CocoaError where error.code ==
// .validationMissingMandatoryProperty`. Each member's value is the `NS…Error` constant's
// (`CoreDataErrors.swift`).

extension CocoaError.Code {
    /// `NSManagedObjectValidationError`.
    public static var managedObjectValidation: CocoaError.Code { CocoaError.Code(rawValue: NSManagedObjectValidationError) }
    /// `NSManagedObjectConstraintValidationError`.
    public static var managedObjectConstraintValidation: CocoaError.Code { CocoaError.Code(rawValue: NSManagedObjectConstraintValidationError) }
    /// `NSValidationMultipleErrorsError`.
    public static var validationMultipleErrors: CocoaError.Code { CocoaError.Code(rawValue: NSValidationMultipleErrorsError) }
    /// `NSValidationMissingMandatoryPropertyError`.
    public static var validationMissingMandatoryProperty: CocoaError.Code { CocoaError.Code(rawValue: NSValidationMissingMandatoryPropertyError) }
    /// `NSValidationRelationshipLacksMinimumCountError`.
    public static var validationRelationshipLacksMinimumCount: CocoaError.Code { CocoaError.Code(rawValue: NSValidationRelationshipLacksMinimumCountError) }
    /// `NSValidationRelationshipExceedsMaximumCountError`.
    public static var validationRelationshipExceedsMaximumCount: CocoaError.Code { CocoaError.Code(rawValue: NSValidationRelationshipExceedsMaximumCountError) }
    /// `NSValidationRelationshipDeniedDeleteError`.
    public static var validationRelationshipDeniedDelete: CocoaError.Code { CocoaError.Code(rawValue: NSValidationRelationshipDeniedDeleteError) }
    /// `NSValidationNumberTooLargeError`.
    public static var validationNumberTooLarge: CocoaError.Code { CocoaError.Code(rawValue: NSValidationNumberTooLargeError) }
    /// `NSValidationNumberTooSmallError`.
    public static var validationNumberTooSmall: CocoaError.Code { CocoaError.Code(rawValue: NSValidationNumberTooSmallError) }
    /// `NSValidationDateTooLateError`.
    public static var validationDateTooLate: CocoaError.Code { CocoaError.Code(rawValue: NSValidationDateTooLateError) }
    /// `NSValidationDateTooSoonError`.
    public static var validationDateTooSoon: CocoaError.Code { CocoaError.Code(rawValue: NSValidationDateTooSoonError) }
    /// `NSValidationInvalidDateError`.
    public static var validationInvalidDate: CocoaError.Code { CocoaError.Code(rawValue: NSValidationInvalidDateError) }
    /// `NSValidationStringTooLongError`.
    public static var validationStringTooLong: CocoaError.Code { CocoaError.Code(rawValue: NSValidationStringTooLongError) }
    /// `NSValidationStringTooShortError`.
    public static var validationStringTooShort: CocoaError.Code { CocoaError.Code(rawValue: NSValidationStringTooShortError) }
    /// `NSValidationStringPatternMatchingError`.
    public static var validationStringPatternMatching: CocoaError.Code { CocoaError.Code(rawValue: NSValidationStringPatternMatchingError) }
    /// `NSValidationInvalidURIError`.
    public static var validationInvalidURI: CocoaError.Code { CocoaError.Code(rawValue: NSValidationInvalidURIError) }
    /// `NSManagedObjectContextLockingError`.
    public static var managedObjectContextLocking: CocoaError.Code { CocoaError.Code(rawValue: NSManagedObjectContextLockingError) }
    /// `NSPersistentStoreCoordinatorLockingError`.
    public static var persistentStoreCoordinatorLocking: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreCoordinatorLockingError) }
    /// `NSManagedObjectReferentialIntegrityError`.
    public static var managedObjectReferentialIntegrity: CocoaError.Code { CocoaError.Code(rawValue: NSManagedObjectReferentialIntegrityError) }
    /// `NSManagedObjectExternalRelationshipError`.
    public static var managedObjectExternalRelationship: CocoaError.Code { CocoaError.Code(rawValue: NSManagedObjectExternalRelationshipError) }
    /// `NSManagedObjectMergeError`.
    public static var managedObjectMerge: CocoaError.Code { CocoaError.Code(rawValue: NSManagedObjectMergeError) }
    /// `NSManagedObjectConstraintMergeError`.
    public static var managedObjectConstraintMerge: CocoaError.Code { CocoaError.Code(rawValue: NSManagedObjectConstraintMergeError) }
    /// `NSPersistentStoreInvalidTypeError`.
    public static var persistentStoreInvalidType: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreInvalidTypeError) }
    /// `NSPersistentStoreTypeMismatchError`.
    public static var persistentStoreTypeMismatch: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreTypeMismatchError) }
    /// `NSPersistentStoreIncompatibleSchemaError`.
    public static var persistentStoreIncompatibleSchema: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreIncompatibleSchemaError) }
    /// `NSPersistentStoreSaveError`.
    public static var persistentStoreSave: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreSaveError) }
    /// `NSPersistentStoreIncompleteSaveError`.
    public static var persistentStoreIncompleteSave: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreIncompleteSaveError) }
    /// `NSPersistentStoreSaveConflictsError`.
    public static var persistentStoreSaveConflicts: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreSaveConflictsError) }
    /// `NSCoreDataError`.
    public static var coreData: CocoaError.Code { CocoaError.Code(rawValue: NSCoreDataError) }
    /// `NSPersistentStoreOperationError`.
    public static var persistentStoreOperation: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreOperationError) }
    /// `NSPersistentStoreOpenError`.
    public static var persistentStoreOpen: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreOpenError) }
    /// `NSPersistentStoreTimeoutError`.
    public static var persistentStoreTimeout: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreTimeoutError) }
    /// `NSPersistentStoreUnsupportedRequestTypeError`.
    public static var persistentStoreUnsupportedRequestType: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreUnsupportedRequestTypeError) }
    /// `NSPersistentStoreIncompatibleVersionHashError`.
    public static var persistentStoreIncompatibleVersionHash: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentStoreIncompatibleVersionHashError) }
    /// `NSMigrationError`.
    public static var migration: CocoaError.Code { CocoaError.Code(rawValue: NSMigrationError) }
    /// `NSMigrationConstraintViolationError`.
    public static var migrationConstraintViolation: CocoaError.Code { CocoaError.Code(rawValue: NSMigrationConstraintViolationError) }
    /// `NSMigrationCancelledError`.
    public static var migrationCancelled: CocoaError.Code { CocoaError.Code(rawValue: NSMigrationCancelledError) }
    /// `NSMigrationMissingSourceModelError`.
    public static var migrationMissingSourceModel: CocoaError.Code { CocoaError.Code(rawValue: NSMigrationMissingSourceModelError) }
    /// `NSMigrationMissingMappingModelError`.
    public static var migrationMissingMappingModel: CocoaError.Code { CocoaError.Code(rawValue: NSMigrationMissingMappingModelError) }
    /// `NSMigrationManagerSourceStoreError`.
    public static var migrationManagerSourceStore: CocoaError.Code { CocoaError.Code(rawValue: NSMigrationManagerSourceStoreError) }
    /// `NSMigrationManagerDestinationStoreError`.
    public static var migrationManagerDestinationStore: CocoaError.Code { CocoaError.Code(rawValue: NSMigrationManagerDestinationStoreError) }
    /// `NSEntityMigrationPolicyError`.
    public static var entityMigrationPolicy: CocoaError.Code { CocoaError.Code(rawValue: NSEntityMigrationPolicyError) }
    /// `NSSQLiteError`.
    public static var sqlite: CocoaError.Code { CocoaError.Code(rawValue: NSSQLiteError) }
    /// `NSInferredMappingModelError`.
    public static var inferredMappingModel: CocoaError.Code { CocoaError.Code(rawValue: NSInferredMappingModelError) }
    /// `NSExternalRecordImportError`.
    public static var externalRecordImport: CocoaError.Code { CocoaError.Code(rawValue: NSExternalRecordImportError) }
    /// `NSPersistentHistoryTokenExpiredError`.
    public static var persistentHistoryTokenExpired: CocoaError.Code { CocoaError.Code(rawValue: NSPersistentHistoryTokenExpiredError) }
    /// `NSManagedObjectModelReferenceNotFoundError`.
    public static var managedObjectModelReferenceNotFound: CocoaError.Code { CocoaError.Code(rawValue: NSManagedObjectModelReferenceNotFoundError) }
    /// `NSStagedMigrationFrameworkVersionMismatchError`.
    public static var stagedMigrationFrameworkVersionMismatch: CocoaError.Code { CocoaError.Code(rawValue: NSStagedMigrationFrameworkVersionMismatchError) }
    /// `NSStagedMigrationBackwardMigrationError`.
    public static var stagedMigrationBackwardMigration: CocoaError.Code { CocoaError.Code(rawValue: NSStagedMigrationBackwardMigrationError) }
}

// The older spellings, with an `Error` suffix, deprecated as Apple's are.
extension CocoaError.Code {
    /// 1550: an object failed validation (the generic validation error). Deprecated: use `managedObjectValidation`.
    @available(*, deprecated, renamed: "managedObjectValidation")
    public static var managedObjectValidationError: CocoaError.Code { .managedObjectValidation }
    /// 1560: several validation errors at once, listed under ``NSDetailedErrorsKey``. Deprecated: use `validationMultipleErrors`.
    @available(*, deprecated, renamed: "validationMultipleErrors")
    public static var validationMultipleErrorsError: CocoaError.Code { .validationMultipleErrors }
    /// 1570: a non-optional property is `nil`. Deprecated: use `validationMissingMandatoryProperty`.
    @available(*, deprecated, renamed: "validationMissingMandatoryProperty")
    public static var validationMissingMandatoryPropertyError: CocoaError.Code { .validationMissingMandatoryProperty }
    /// 1580: a to-many relationship holds fewer objects than its minimum count. Deprecated: use `validationRelationshipLacksMinimumCount`.
    @available(*, deprecated, renamed: "validationRelationshipLacksMinimumCount")
    public static var validationRelationshipLacksMinimumCountError: CocoaError.Code { .validationRelationshipLacksMinimumCount }
    /// 1590: a bounded to-many relationship holds more objects than its maximum count. Deprecated: use `validationRelationshipExceedsMaximumCount`.
    @available(*, deprecated, renamed: "validationRelationshipExceedsMaximumCount")
    public static var validationRelationshipExceedsMaximumCountError: CocoaError.Code { .validationRelationshipExceedsMaximumCount }
    /// 1600: a deleted object's relationship with the deny delete rule still holds objects. Deprecated: use `validationRelationshipDeniedDelete`.
    @available(*, deprecated, renamed: "validationRelationshipDeniedDelete")
    public static var validationRelationshipDeniedDeleteError: CocoaError.Code { .validationRelationshipDeniedDelete }
    /// 1610: a number is larger than the attribute's maximum. Deprecated: use `validationNumberTooLarge`.
    @available(*, deprecated, renamed: "validationNumberTooLarge")
    public static var validationNumberTooLargeError: CocoaError.Code { .validationNumberTooLarge }
    /// 1620: a number is smaller than the attribute's minimum. Deprecated: use `validationNumberTooSmall`.
    @available(*, deprecated, renamed: "validationNumberTooSmall")
    public static var validationNumberTooSmallError: CocoaError.Code { .validationNumberTooSmall }
    /// 1630: a date is later than the attribute's maximum. Deprecated: use `validationDateTooLate`.
    @available(*, deprecated, renamed: "validationDateTooLate")
    public static var validationDateTooLateError: CocoaError.Code { .validationDateTooLate }
    /// 1640: a date is earlier than the attribute's minimum. Deprecated: use `validationDateTooSoon`.
    @available(*, deprecated, renamed: "validationDateTooSoon")
    public static var validationDateTooSoonError: CocoaError.Code { .validationDateTooSoon }
    /// 1650: a date value fails to match the date pattern. Deprecated: use `validationInvalidDate`.
    @available(*, deprecated, renamed: "validationInvalidDate")
    public static var validationInvalidDateError: CocoaError.Code { .validationInvalidDate }
    /// 1660: a string is longer than the attribute's maximum length. Deprecated: use `validationStringTooLong`.
    @available(*, deprecated, renamed: "validationStringTooLong")
    public static var validationStringTooLongError: CocoaError.Code { .validationStringTooLong }
    /// 1670: a string is shorter than the attribute's minimum length. Deprecated: use `validationStringTooShort`.
    @available(*, deprecated, renamed: "validationStringTooShort")
    public static var validationStringTooShortError: CocoaError.Code { .validationStringTooShort }
    /// 1680: a string does not match the attribute's regular expression. Deprecated: use `validationStringPatternMatching`.
    @available(*, deprecated, renamed: "validationStringPatternMatching")
    public static var validationStringPatternMatchingError: CocoaError.Code { .validationStringPatternMatching }
    /// 132000: a managed object context could not acquire a lock. Deprecated: use `managedObjectContextLocking`.
    @available(*, deprecated, renamed: "managedObjectContextLocking")
    public static var managedObjectContextLockingError: CocoaError.Code { .managedObjectContextLocking }
    /// 132010: a persistent store coordinator could not acquire a lock. Deprecated: use `persistentStoreCoordinatorLocking`.
    @available(*, deprecated, renamed: "persistentStoreCoordinatorLocking")
    public static var persistentStoreCoordinatorLockingError: CocoaError.Code { .persistentStoreCoordinatorLocking }
    /// 133000: a fault fired for an object its store does not have. Deprecated: use `managedObjectReferentialIntegrity`.
    @available(*, deprecated, renamed: "managedObjectReferentialIntegrity")
    public static var managedObjectReferentialIntegrityError: CocoaError.Code { .managedObjectReferentialIntegrity }
    /// 133010: an object being saved has a relationship to an object in another store. Deprecated: use `managedObjectExternalRelationship`.
    @available(*, deprecated, renamed: "managedObjectExternalRelationship")
    public static var managedObjectExternalRelationshipError: CocoaError.Code { .managedObjectExternalRelationship }
    /// 133020: the merge policy could not complete a merge. Deprecated: use `managedObjectMerge`.
    @available(*, deprecated, renamed: "managedObjectMerge")
    public static var managedObjectMergeError: CocoaError.Code { .managedObjectMerge }
    /// 133021: the merge policy could not resolve conflicting uniqueness constraint violations. Deprecated: use `managedObjectConstraintMerge`.
    @available(*, deprecated, renamed: "managedObjectConstraintMerge")
    public static var managedObjectConstraintMergeError: CocoaError.Code { .managedObjectConstraintMerge }
    /// 134000: the store's type, format or version is unknown. Deprecated: use `persistentStoreInvalidType`.
    @available(*, deprecated, renamed: "persistentStoreInvalidType")
    public static var persistentStoreInvalidTypeError: CocoaError.Code { .persistentStoreInvalidType }
    /// 134010: a store was accessed as a type it is not. Deprecated: use `persistentStoreTypeMismatch`.
    @available(*, deprecated, renamed: "persistentStoreTypeMismatch")
    public static var persistentStoreTypeMismatchError: CocoaError.Code { .persistentStoreTypeMismatch }
    /// 134020: a database-level save error (a missing table, no permission). Deprecated: use `persistentStoreIncompatibleSchema`.
    @available(*, deprecated, renamed: "persistentStoreIncompatibleSchema")
    public static var persistentStoreIncompatibleSchemaError: CocoaError.Code { .persistentStoreIncompatibleSchema }
    /// 134030: an unclassified save error: something the store depends on failed. Deprecated: use `persistentStoreSave`.
    @available(*, deprecated, renamed: "persistentStoreSave")
    public static var persistentStoreSaveError: CocoaError.Code { .persistentStoreSave }
    /// 134040: stores failed during a save; the user info says which stores or objects. Deprecated: use `persistentStoreIncompleteSave`.
    @available(*, deprecated, renamed: "persistentStoreIncompleteSave")
    public static var persistentStoreIncompleteSaveError: CocoaError.Code { .persistentStoreIncompleteSave }
    /// 134050: a save met unresolved merge conflicts (``NSPersistentStoreSaveConflictsErrorKey``). Deprecated: use `persistentStoreSaveConflicts`.
    @available(*, deprecated, renamed: "persistentStoreSaveConflicts")
    public static var persistentStoreSaveConflictsError: CocoaError.Code { .persistentStoreSaveConflicts }
    /// 134060: a general Core Data error. Deprecated: use `coreData`.
    @available(*, deprecated, renamed: "coreData")
    public static var coreDataError: CocoaError.Code { .coreData }
    /// 134070: a persistent store operation failed. Deprecated: use `persistentStoreOperation`.
    @available(*, deprecated, renamed: "persistentStoreOperation")
    public static var persistentStoreOperationError: CocoaError.Code { .persistentStoreOperation }
    /// 134080: a persistent store could not be opened. Deprecated: use `persistentStoreOpen`.
    @available(*, deprecated, renamed: "persistentStoreOpen")
    public static var persistentStoreOpenError: CocoaError.Code { .persistentStoreOpen }
    /// 134090: the store was not reached within ``NSPersistentStoreTimeoutOption``. Deprecated: use `persistentStoreTimeout`.
    @available(*, deprecated, renamed: "persistentStoreTimeout")
    public static var persistentStoreTimeoutError: CocoaError.Code { .persistentStoreTimeout }
    /// 134091: a store was given a request type it does not support. Deprecated: use `persistentStoreUnsupportedRequestType`.
    @available(*, deprecated, renamed: "persistentStoreUnsupportedRequestType")
    public static var persistentStoreUnsupportedRequestTypeError: CocoaError.Code { .persistentStoreUnsupportedRequestType }
    /// 134100: the store's version hashes don't match the model's: it needs migrating. Deprecated: use `persistentStoreIncompatibleVersionHash`.
    @available(*, deprecated, renamed: "persistentStoreIncompatibleVersionHash")
    public static var persistentStoreIncompatibleVersionHashError: CocoaError.Code { .persistentStoreIncompatibleVersionHash }
    /// 134110: a general migration error. Deprecated: use `migration`.
    @available(*, deprecated, renamed: "migration")
    public static var migrationError: CocoaError.Code { .migration }
    /// 134120: migration was cancelled. Deprecated: use `migrationCancelled`.
    @available(*, deprecated, renamed: "migrationCancelled")
    public static var migrationCancelledError: CocoaError.Code { .migrationCancelled }
    /// 134130: migration failed because the source model could not be found. Deprecated: use `migrationMissingSourceModel`.
    @available(*, deprecated, renamed: "migrationMissingSourceModel")
    public static var migrationMissingSourceModelError: CocoaError.Code { .migrationMissingSourceModel }
    /// 134140: migration failed because no mapping model could be found. Deprecated: use `migrationMissingMappingModel`.
    @available(*, deprecated, renamed: "migrationMissingMappingModel")
    public static var migrationMissingMappingModelError: CocoaError.Code { .migrationMissingMappingModel }
    /// 134150: migration failed because of a problem with the source store. Deprecated: use `migrationManagerSourceStore`.
    @available(*, deprecated, renamed: "migrationManagerSourceStore")
    public static var migrationManagerSourceStoreError: CocoaError.Code { .migrationManagerSourceStore }
    /// 134160: migration failed because of a problem with the destination store. Deprecated: use `migrationManagerDestinationStore`.
    @available(*, deprecated, renamed: "migrationManagerDestinationStore")
    public static var migrationManagerDestinationStoreError: CocoaError.Code { .migrationManagerDestinationStore }
    /// 134170: migration failed in an entity migration policy. Deprecated: use `entityMigrationPolicy`.
    @available(*, deprecated, renamed: "entityMigrationPolicy")
    public static var entityMigrationPolicyError: CocoaError.Code { .entityMigrationPolicy }
    /// 134180: a general SQLite error. Deprecated: use `sqlite`.
    @available(*, deprecated, renamed: "sqlite")
    public static var sqliteError: CocoaError.Code { .sqlite }
    /// 134190: an inferred mapping model could not be created. Deprecated: use `inferredMappingModel`.
    @available(*, deprecated, renamed: "inferredMappingModel")
    public static var inferredMappingModelError: CocoaError.Code { .inferredMappingModel }
    /// 134200: a general error while importing external records. Deprecated: use `externalRecordImport`.
    @available(*, deprecated, renamed: "externalRecordImport")
    public static var externalRecordImportError: CocoaError.Code { .externalRecordImport }
}

extension CocoaError {
    /// `NSManagedObjectValidationError`.
    public static var managedObjectValidation: CocoaError.Code { .managedObjectValidation }
    /// `NSManagedObjectConstraintValidationError`.
    public static var managedObjectConstraintValidation: CocoaError.Code { .managedObjectConstraintValidation }
    /// `NSValidationMultipleErrorsError`.
    public static var validationMultipleErrors: CocoaError.Code { .validationMultipleErrors }
    /// `NSValidationMissingMandatoryPropertyError`.
    public static var validationMissingMandatoryProperty: CocoaError.Code { .validationMissingMandatoryProperty }
    /// `NSValidationRelationshipLacksMinimumCountError`.
    public static var validationRelationshipLacksMinimumCount: CocoaError.Code { .validationRelationshipLacksMinimumCount }
    /// `NSValidationRelationshipExceedsMaximumCountError`.
    public static var validationRelationshipExceedsMaximumCount: CocoaError.Code { .validationRelationshipExceedsMaximumCount }
    /// `NSValidationRelationshipDeniedDeleteError`.
    public static var validationRelationshipDeniedDelete: CocoaError.Code { .validationRelationshipDeniedDelete }
    /// `NSValidationNumberTooLargeError`.
    public static var validationNumberTooLarge: CocoaError.Code { .validationNumberTooLarge }
    /// `NSValidationNumberTooSmallError`.
    public static var validationNumberTooSmall: CocoaError.Code { .validationNumberTooSmall }
    /// `NSValidationDateTooLateError`.
    public static var validationDateTooLate: CocoaError.Code { .validationDateTooLate }
    /// `NSValidationDateTooSoonError`.
    public static var validationDateTooSoon: CocoaError.Code { .validationDateTooSoon }
    /// `NSValidationInvalidDateError`.
    public static var validationInvalidDate: CocoaError.Code { .validationInvalidDate }
    /// `NSValidationStringTooLongError`.
    public static var validationStringTooLong: CocoaError.Code { .validationStringTooLong }
    /// `NSValidationStringTooShortError`.
    public static var validationStringTooShort: CocoaError.Code { .validationStringTooShort }
    /// `NSValidationStringPatternMatchingError`.
    public static var validationStringPatternMatching: CocoaError.Code { .validationStringPatternMatching }
    /// `NSValidationInvalidURIError`.
    public static var validationInvalidURI: CocoaError.Code { .validationInvalidURI }
    /// `NSManagedObjectContextLockingError`.
    public static var managedObjectContextLocking: CocoaError.Code { .managedObjectContextLocking }
    /// `NSPersistentStoreCoordinatorLockingError`.
    public static var persistentStoreCoordinatorLocking: CocoaError.Code { .persistentStoreCoordinatorLocking }
    /// `NSManagedObjectReferentialIntegrityError`.
    public static var managedObjectReferentialIntegrity: CocoaError.Code { .managedObjectReferentialIntegrity }
    /// `NSManagedObjectExternalRelationshipError`.
    public static var managedObjectExternalRelationship: CocoaError.Code { .managedObjectExternalRelationship }
    /// `NSManagedObjectMergeError`.
    public static var managedObjectMerge: CocoaError.Code { .managedObjectMerge }
    /// `NSManagedObjectConstraintMergeError`.
    public static var managedObjectConstraintMerge: CocoaError.Code { .managedObjectConstraintMerge }
    /// `NSPersistentStoreInvalidTypeError`.
    public static var persistentStoreInvalidType: CocoaError.Code { .persistentStoreInvalidType }
    /// `NSPersistentStoreTypeMismatchError`.
    public static var persistentStoreTypeMismatch: CocoaError.Code { .persistentStoreTypeMismatch }
    /// `NSPersistentStoreIncompatibleSchemaError`.
    public static var persistentStoreIncompatibleSchema: CocoaError.Code { .persistentStoreIncompatibleSchema }
    /// `NSPersistentStoreSaveError`.
    public static var persistentStoreSave: CocoaError.Code { .persistentStoreSave }
    /// `NSPersistentStoreIncompleteSaveError`.
    public static var persistentStoreIncompleteSave: CocoaError.Code { .persistentStoreIncompleteSave }
    /// `NSPersistentStoreSaveConflictsError`.
    public static var persistentStoreSaveConflicts: CocoaError.Code { .persistentStoreSaveConflicts }
    /// `NSCoreDataError`.
    public static var coreData: CocoaError.Code { .coreData }
    /// `NSPersistentStoreOperationError`.
    public static var persistentStoreOperation: CocoaError.Code { .persistentStoreOperation }
    /// `NSPersistentStoreOpenError`.
    public static var persistentStoreOpen: CocoaError.Code { .persistentStoreOpen }
    /// `NSPersistentStoreTimeoutError`.
    public static var persistentStoreTimeout: CocoaError.Code { .persistentStoreTimeout }
    /// `NSPersistentStoreUnsupportedRequestTypeError`.
    public static var persistentStoreUnsupportedRequestType: CocoaError.Code { .persistentStoreUnsupportedRequestType }
    /// `NSPersistentStoreIncompatibleVersionHashError`.
    public static var persistentStoreIncompatibleVersionHash: CocoaError.Code { .persistentStoreIncompatibleVersionHash }
    /// `NSMigrationError`.
    public static var migration: CocoaError.Code { .migration }
    /// `NSMigrationConstraintViolationError`.
    public static var migrationConstraintViolation: CocoaError.Code { .migrationConstraintViolation }
    /// `NSMigrationCancelledError`.
    public static var migrationCancelled: CocoaError.Code { .migrationCancelled }
    /// `NSMigrationMissingSourceModelError`.
    public static var migrationMissingSourceModel: CocoaError.Code { .migrationMissingSourceModel }
    /// `NSMigrationMissingMappingModelError`.
    public static var migrationMissingMappingModel: CocoaError.Code { .migrationMissingMappingModel }
    /// `NSMigrationManagerSourceStoreError`.
    public static var migrationManagerSourceStore: CocoaError.Code { .migrationManagerSourceStore }
    /// `NSMigrationManagerDestinationStoreError`.
    public static var migrationManagerDestinationStore: CocoaError.Code { .migrationManagerDestinationStore }
    /// `NSEntityMigrationPolicyError`.
    public static var entityMigrationPolicy: CocoaError.Code { .entityMigrationPolicy }
    /// `NSSQLiteError`.
    public static var sqlite: CocoaError.Code { .sqlite }
    /// `NSInferredMappingModelError`.
    public static var inferredMappingModel: CocoaError.Code { .inferredMappingModel }
    /// `NSExternalRecordImportError`.
    public static var externalRecordImport: CocoaError.Code { .externalRecordImport }
    /// `NSPersistentHistoryTokenExpiredError`.
    public static var persistentHistoryTokenExpired: CocoaError.Code { .persistentHistoryTokenExpired }
    /// `NSManagedObjectModelReferenceNotFoundError`.
    public static var managedObjectModelReferenceNotFound: CocoaError.Code { .managedObjectModelReferenceNotFound }
    /// `NSStagedMigrationFrameworkVersionMismatchError`.
    public static var stagedMigrationFrameworkVersionMismatch: CocoaError.Code { .stagedMigrationFrameworkVersionMismatch }
    /// `NSStagedMigrationBackwardMigrationError`.
    public static var stagedMigrationBackwardMigration: CocoaError.Code { .stagedMigrationBackwardMigration }

    /// The object that failed validation (`NSValidationObjectErrorKey`).
    ///
    /// ```swift
    /// catch let error as CocoaError where error.code == .validationMissingMandatoryProperty {
    ///     print(error.validationKey ?? "", error.validationObject ?? "")
    /// }
    /// ```
    public var validationObject: Any? { userInfo[NSValidationObjectErrorKey] }
    /// The key that failed validation (`NSValidationKeyErrorKey`).
    public var validationKey: String? { userInfo[NSValidationKeyErrorKey] as? String }
    /// The predicate that failed validation (`NSValidationPredicateErrorKey`).
    public var validationPredicate: NSPredicate? { userInfo[NSValidationPredicateErrorKey] as? NSPredicate }
    /// The value that failed validation (`NSValidationValueErrorKey`).
    public var validationValue: Any? { userInfo[NSValidationValueErrorKey] }
    /// The stores the error concerns (`NSAffectedStoresErrorKey`).
    public var affectedStores: [AnyObject]? { userInfo[NSAffectedStoresErrorKey] as? [AnyObject] }
    /// The objects the error concerns (`NSAffectedObjectsErrorKey`).
    public var affectedObjects: [AnyObject]? { userInfo[NSAffectedObjectsErrorKey] as? [AnyObject] }
    /// The conflicts of a failed save (`NSPersistentStoreSaveConflictsErrorKey`).
    public var persistentStoreSaveConflicts: [NSMergeConflict]? { userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict] }
}
