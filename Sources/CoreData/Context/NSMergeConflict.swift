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

    public init(source srcObject: NSManagedObject, newVersion newvers: Int, oldVersion oldvers: Int,
                cachedSnapshot cachesnap: [String: Any]?, persistedSnapshot persnap: [String: Any]?) {
        self.sourceObject = srcObject
        self.newVersionNumber = newvers
        self.oldVersionNumber = oldvers
        self.cachedSnapshot = cachesnap
        self.persistedSnapshot = persnap
        var current: [String: Any] = [:]
        for property in srcObject.entity.properties where !property.isTransient && property is NSAttributeDescription {
            current[property.name] = srcObject.value(forKey: property.name) ?? NSNull()
        }
        self.objectSnapshot = current
        super.init()
    }

    open override var description: String {
        "NSMergeConflict (\(sourceObject.objectID)) oldVersion = \(oldVersionNumber), newVersion = \(newVersionNumber)"
    }
}

/// How a context resolves save conflicts.
open class NSMergePolicy: NSObject, @unchecked Sendable {
    /// The kinds of merge policy.
    public enum MergePolicyType: UInt, Sendable {
        case errorMergePolicyType = 0
        case mergeByPropertyStoreTrumpMergePolicyType = 1
        case mergeByPropertyObjectTrumpMergePolicyType = 2
        case overwriteMergePolicyType = 3
        case rollbackMergePolicyType = 4
    }

    /// The policy's kind.
    public let mergeType: MergePolicyType

    public init(merge ty: MergePolicyType) {
        self.mergeType = ty
        super.init()
    }

    /// Fails the save with `NSManagedObjectMergeError` (the default).
    public static let error = NSMergePolicy(merge: .errorMergePolicyType)
    /// Property by property, the store's values win.
    public static let mergeByPropertyStoreTrump = NSMergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType)
    /// Property by property, the context's values win.
    public static let mergeByPropertyObjectTrump = NSMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
    /// The context's objects overwrite the store's rows.
    public static let overwrite = NSMergePolicy(merge: .overwriteMergePolicyType)
    /// The context's changes to conflicting objects are discarded.
    public static let rollback = NSMergePolicy(merge: .rollbackMergePolicyType)
}

/// Fails a save on conflicts (the default merge policy).
nonisolated(unsafe) public let NSErrorMergePolicy: Any = NSMergePolicy.error
/// Merges property by property; the store's values win.
nonisolated(unsafe) public let NSMergeByPropertyStoreTrumpMergePolicy: Any = NSMergePolicy.mergeByPropertyStoreTrump
/// Merges property by property; the context's values win.
nonisolated(unsafe) public let NSMergeByPropertyObjectTrumpMergePolicy: Any = NSMergePolicy.mergeByPropertyObjectTrump
/// The context's objects overwrite the store.
nonisolated(unsafe) public let NSOverwriteMergePolicy: Any = NSMergePolicy.overwrite
/// The context's conflicting changes are discarded.
nonisolated(unsafe) public let NSRollbackMergePolicy: Any = NSMergePolicy.rollback
