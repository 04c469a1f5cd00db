import Foundation

extension SQLiteStore {
    /// Replaces the metadata of the store file at `url` without adding the store (the class
    /// methods `setMetadata(_:forPersistentStoreOfType:at:options:)`): `metadata` with the store
    /// type, and the file's UUID unless `metadata` names one.
    ///
    /// Everything that can refuse is checked before the file is opened for writing (a value that
    /// is not a property-list value, before the file is read at all; a missing file, one that is
    /// not a SQLite database or not a Core Data store, a damaged one), so a refused file is left
    /// byte for byte as it was; the write itself is one transaction. (Reading a store in WAL mode
    /// lets SQLite create its `-wal` and `-shm` files next to it, as any read of the file does.)
    static func replaceMetadata(_ metadata: [String: Any]?, at url: URL) throws {
        var replacement = metadata ?? [:]
        replacement[NSStoreTypeKey] = NSSQLiteStoreType
        // Checked before the file is opened at all (the UUID goes to `Z_UUID`, not in the plist).
        let plist = try plistData(replacement)
        let current = try readMetadata(at: url)
        let uuid = replacement[NSStoreUUIDKey] as? String ?? current[NSStoreUUIDKey] as? String ?? UUID().uuidString
        do {
            let connection = try SQLiteConnection(path: url.path, create: false)
            try connection.transaction { try writeMetadata(plist: plist, uuid: uuid, to: connection) }
        } catch let error as NSError {
            throw openError(error, url: url)
        }
    }

    /// `metadata` as Apple stores it in `Z_METADATA.Z_PLIST`: a binary property list, without the
    /// UUID (kept in `Z_UUID`). Throws `NSPropertyListWriteInvalidError` (3851) naming the first
    /// value that is not a property-list value.
    static func plistData(_ metadata: [String: Any]) throws -> Data {
        var plist = metadata
        plist[NSStoreUUIDKey] = nil
        for (key, value) in plist where !PropertyListSerialization.propertyList(value, isValidFor: .binary) {
            throw NSError(domain: NSCocoaErrorDomain, code: NSPropertyListWriteInvalidError, userInfo: [
                NSLocalizedDescriptionKey: "The metadata value for '\(key)' (\(Swift.type(of: value))) is not a property-list value, so it can't be stored",
            ])
        }
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
    }
}
