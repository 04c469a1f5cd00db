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
    @available(*, deprecated, renamed: "managedObjectValidation")
    public static var managedObjectValidationError: CocoaError.Code { .managedObjectValidation }
    @available(*, deprecated, renamed: "validationMultipleErrors")
    public static var validationMultipleErrorsError: CocoaError.Code { .validationMultipleErrors }
    @available(*, deprecated, renamed: "validationMissingMandatoryProperty")
    public static var validationMissingMandatoryPropertyError: CocoaError.Code { .validationMissingMandatoryProperty }
    @available(*, deprecated, renamed: "validationRelationshipLacksMinimumCount")
    public static var validationRelationshipLacksMinimumCountError: CocoaError.Code { .validationRelationshipLacksMinimumCount }
    @available(*, deprecated, renamed: "validationRelationshipExceedsMaximumCount")
    public static var validationRelationshipExceedsMaximumCountError: CocoaError.Code { .validationRelationshipExceedsMaximumCount }
    @available(*, deprecated, renamed: "validationRelationshipDeniedDelete")
    public static var validationRelationshipDeniedDeleteError: CocoaError.Code { .validationRelationshipDeniedDelete }
    @available(*, deprecated, renamed: "validationNumberTooLarge")
    public static var validationNumberTooLargeError: CocoaError.Code { .validationNumberTooLarge }
    @available(*, deprecated, renamed: "validationNumberTooSmall")
    public static var validationNumberTooSmallError: CocoaError.Code { .validationNumberTooSmall }
    @available(*, deprecated, renamed: "validationDateTooLate")
    public static var validationDateTooLateError: CocoaError.Code { .validationDateTooLate }
    @available(*, deprecated, renamed: "validationDateTooSoon")
    public static var validationDateTooSoonError: CocoaError.Code { .validationDateTooSoon }
    @available(*, deprecated, renamed: "validationInvalidDate")
    public static var validationInvalidDateError: CocoaError.Code { .validationInvalidDate }
    @available(*, deprecated, renamed: "validationStringTooLong")
    public static var validationStringTooLongError: CocoaError.Code { .validationStringTooLong }
    @available(*, deprecated, renamed: "validationStringTooShort")
    public static var validationStringTooShortError: CocoaError.Code { .validationStringTooShort }
    @available(*, deprecated, renamed: "validationStringPatternMatching")
    public static var validationStringPatternMatchingError: CocoaError.Code { .validationStringPatternMatching }
    @available(*, deprecated, renamed: "managedObjectContextLocking")
    public static var managedObjectContextLockingError: CocoaError.Code { .managedObjectContextLocking }
    @available(*, deprecated, renamed: "persistentStoreCoordinatorLocking")
    public static var persistentStoreCoordinatorLockingError: CocoaError.Code { .persistentStoreCoordinatorLocking }
    @available(*, deprecated, renamed: "managedObjectReferentialIntegrity")
    public static var managedObjectReferentialIntegrityError: CocoaError.Code { .managedObjectReferentialIntegrity }
    @available(*, deprecated, renamed: "managedObjectExternalRelationship")
    public static var managedObjectExternalRelationshipError: CocoaError.Code { .managedObjectExternalRelationship }
    @available(*, deprecated, renamed: "managedObjectMerge")
    public static var managedObjectMergeError: CocoaError.Code { .managedObjectMerge }
    @available(*, deprecated, renamed: "managedObjectConstraintMerge")
    public static var managedObjectConstraintMergeError: CocoaError.Code { .managedObjectConstraintMerge }
    @available(*, deprecated, renamed: "persistentStoreInvalidType")
    public static var persistentStoreInvalidTypeError: CocoaError.Code { .persistentStoreInvalidType }
    @available(*, deprecated, renamed: "persistentStoreTypeMismatch")
    public static var persistentStoreTypeMismatchError: CocoaError.Code { .persistentStoreTypeMismatch }
    @available(*, deprecated, renamed: "persistentStoreIncompatibleSchema")
    public static var persistentStoreIncompatibleSchemaError: CocoaError.Code { .persistentStoreIncompatibleSchema }
    @available(*, deprecated, renamed: "persistentStoreSave")
    public static var persistentStoreSaveError: CocoaError.Code { .persistentStoreSave }
    @available(*, deprecated, renamed: "persistentStoreIncompleteSave")
    public static var persistentStoreIncompleteSaveError: CocoaError.Code { .persistentStoreIncompleteSave }
    @available(*, deprecated, renamed: "persistentStoreSaveConflicts")
    public static var persistentStoreSaveConflictsError: CocoaError.Code { .persistentStoreSaveConflicts }
    @available(*, deprecated, renamed: "coreData")
    public static var coreDataError: CocoaError.Code { .coreData }
    @available(*, deprecated, renamed: "persistentStoreOperation")
    public static var persistentStoreOperationError: CocoaError.Code { .persistentStoreOperation }
    @available(*, deprecated, renamed: "persistentStoreOpen")
    public static var persistentStoreOpenError: CocoaError.Code { .persistentStoreOpen }
    @available(*, deprecated, renamed: "persistentStoreTimeout")
    public static var persistentStoreTimeoutError: CocoaError.Code { .persistentStoreTimeout }
    @available(*, deprecated, renamed: "persistentStoreUnsupportedRequestType")
    public static var persistentStoreUnsupportedRequestTypeError: CocoaError.Code { .persistentStoreUnsupportedRequestType }
    @available(*, deprecated, renamed: "persistentStoreIncompatibleVersionHash")
    public static var persistentStoreIncompatibleVersionHashError: CocoaError.Code { .persistentStoreIncompatibleVersionHash }
    @available(*, deprecated, renamed: "migration")
    public static var migrationError: CocoaError.Code { .migration }
    @available(*, deprecated, renamed: "migrationCancelled")
    public static var migrationCancelledError: CocoaError.Code { .migrationCancelled }
    @available(*, deprecated, renamed: "migrationMissingSourceModel")
    public static var migrationMissingSourceModelError: CocoaError.Code { .migrationMissingSourceModel }
    @available(*, deprecated, renamed: "migrationMissingMappingModel")
    public static var migrationMissingMappingModelError: CocoaError.Code { .migrationMissingMappingModel }
    @available(*, deprecated, renamed: "migrationManagerSourceStore")
    public static var migrationManagerSourceStoreError: CocoaError.Code { .migrationManagerSourceStore }
    @available(*, deprecated, renamed: "migrationManagerDestinationStore")
    public static var migrationManagerDestinationStoreError: CocoaError.Code { .migrationManagerDestinationStore }
    @available(*, deprecated, renamed: "entityMigrationPolicy")
    public static var entityMigrationPolicyError: CocoaError.Code { .entityMigrationPolicy }
    @available(*, deprecated, renamed: "sqlite")
    public static var sqliteError: CocoaError.Code { .sqlite }
    @available(*, deprecated, renamed: "inferredMappingModel")
    public static var inferredMappingModelError: CocoaError.Code { .inferredMappingModel }
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
