import Foundation

extension NSPersistentStoreCoordinator {
    /// Replaces the metadata of the store file at `url` without a coordinator, as Apple's does:
    /// the store keeps its type (`NSStoreTypeKey`) and, unless `metadata` names another, its UUID.
    ///
    /// ```swift
    /// var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
    /// metadata["lastImport"] = Date()
    /// try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSSQLiteStoreType, at: url)
    /// ```
    ///
    /// Throws an `NSError` in `NSCocoaErrorDomain`, leaving the file byte for byte as it was, when
    /// there is no file (260), it is not a SQLite database or is damaged (259), it is not a Core
    /// Data store (134020), a value is not a property-list value (3851), or `storeType` is
    /// neither `NSSQLiteStoreType`, `NSPostgreSQLStoreType` nor a registered type (134000). For a
    /// registered type (``registerStoreClass(_:forStoreType:)``) the registered class's
    /// `setMetadata(_:forPersistentStoreAt:)` writes it. A PostgreSQL store's metadata is written
    /// in one transaction, with `options`' password (``NSPostgreSQLPasswordOption``); other
    /// stores do not use `options`.
    public class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreOfType storeType: String, at url: URL,
                                options: [AnyHashable: Any]? = nil) throws {
        if storeType != NSSQLiteStoreType, let storeClass = registeredStoreClass(forType: storeType) {
            try storeClass.setMetadata(metadata, forPersistentStoreAt: url)
            return
        }
        if storeType == NSPostgreSQLStoreType {
            try PostgreSQLStore.replaceMetadata(metadata, at: url, options: options)
            return
        }
        guard storeType == NSSQLiteStoreType else {
            throw CoreDataError.make(.persistentStoreInvalidType,
                "Only SQLite, PostgreSQL and registered store types have metadata without a coordinator (asked to set it for '\(storeType)')")
        }
        try SQLiteStore.replaceMetadata(metadata, at: url)
    }

    /// Replaces the metadata of the store file at `url`; the newer spelling of
    /// ``setMetadata(_:forPersistentStoreOfType:at:options:)``.
    ///
    /// ```swift
    /// try NSPersistentStoreCoordinator.setMetadata(metadata, type: .sqlite, at: url)
    /// ```
    public class func setMetadata(_ metadata: [String: Any]?, type: NSPersistentStore.StoreType, at url: URL,
                                options: [AnyHashable: Any]? = nil) throws {
        try setMetadata(metadata, forPersistentStoreOfType: type.rawValue, at: url, options: options)
    }
}
