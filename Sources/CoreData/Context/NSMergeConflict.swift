import Foundation

/// An optimistic-locking conflict: an object whose row changed in the store since it was read.
open class NSMergeConflict: NSObject {
    /// The object that could not be saved.
    public let sourceObject: NSManagedObject
    /// The object's values in the context.
    public let objectSnapshot: [String: Any]?
    /// The values the context last read from the store.
    public let cachedSnapshot: [String: Any]?
    /// The values in the store now (`nil` if the row was deleted).
    public let persistedSnapshot: [String: Any]?
    /// The store's version of the row.
    public let newVersionNumber: Int
    /// The version the context read.
    public let oldVersionNumber: Int

    /// The store's row as the store returned it (`nil`: deleted), for the merge policies.
    internal var persistedRow: RowSnapshot?
    /// Whether the row was deleted from the store (rather than changed).
    internal var rowWasDeleted = false

    /// A conflict for `srcObject`: the store's row is at version `newvers`, the context read version
    /// `oldvers`; `cachesnap` holds the values it read, `persnap` the store's now (`nil`: deleted). The
    /// object's current values of attributes and to-one relationships (object IDs) become
    /// ``objectSnapshot``. Saves make conflicts; merge
    /// policies read them.
    public init(source srcObject: NSManagedObject, newVersion newvers: Int, oldVersion oldvers: Int,
                cachedSnapshot cachesnap: [String: Any]?, persistedSnapshot persnap: [String: Any]?) {
        self.sourceObject = srcObject
        self.newVersionNumber = newvers
        self.oldVersionNumber = oldvers
        self.cachedSnapshot = cachesnap
        self.persistedSnapshot = persnap
        var current: [String: Any] = [:]
        // Attributes and to-one relationships (as object IDs), as Apple's snapshots hold them.
        // A fault (a merge or refresh turned it into one) is not fired for it: firing inside the
        // save read another version of the row, or found it gone; its values are the cached ones.
        if srcObject._isFault { current = cachesnap ?? [:] }
        for property in srcObject.entity.properties where !property.isTransient && !srcObject._isFault {
            if property is NSAttributeDescription {
                current[property.name] = srcObject.value(forKey: property.name) ?? NSNull()
            } else if let relationship = property as? NSRelationshipDescription, !relationship.isToMany {
                current[property.name] = (srcObject.value(forKey: property.name) as? NSManagedObject)?.objectID ?? NSNull()
            }
        }
        self.objectSnapshot = current
        super.init()
    }

    open override var description: String {
        "NSMergeConflict (\(sourceObject.objectID)) oldVersion = \(oldVersionNumber), newVersion = \(newVersionNumber)"
    }
}
