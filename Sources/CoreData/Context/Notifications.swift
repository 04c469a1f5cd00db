import Foundation

extension Notification.Name {
    /// Posted by a context when its objects change (at `processPendingChanges`).
    public static let NSManagedObjectContextObjectsDidChange = Notification.Name("NSObjectsChangedInManagingContextNotification")
    /// Posted by a context before it saves.
    public static let NSManagedObjectContextWillSave = Notification.Name("NSManagingContextWillSaveChangesNotification")
    /// Posted by a context after it saved, on its queue.
    public static let NSManagedObjectContextDidSave = Notification.Name("NSManagingContextDidSaveChangesNotification")
}

extension NSManagedObjectContext {
    /// The newer name of `NSManagedObjectContextDidSave`.
    public static let didSaveObjectsNotification = Notification.Name.NSManagedObjectContextDidSave
    /// The newer name of `NSManagedObjectContextObjectsDidChange`.
    public static let didChangeObjectsNotification = Notification.Name.NSManagedObjectContextObjectsDidChange
    /// The newer name of `NSManagedObjectContextWillSave`.
    public static let willSaveObjectsNotification = Notification.Name.NSManagedObjectContextWillSave
    /// Posted after a save with the IDs (not the objects) of what changed.
    public static let didSaveObjectIDsNotification = Notification.Name("NSManagedObjectContextDidSaveObjectIDsNotification")
    /// Posted after a merge with the IDs of what changed.
    public static let didMergeChangesObjectIDsNotification = Notification.Name("NSManagedObjectContextDidMergeChangesObjectIDsNotification")
}

/// Keys of the notifications' user info, with Apple's values.
public let NSInsertedObjectsKey = "inserted"
public let NSUpdatedObjectsKey = "updated"
public let NSDeletedObjectsKey = "deleted"
public let NSRefreshedObjectsKey = "refreshed"
public let NSInvalidatedObjectsKey = "invalidated"
public let NSInvalidatedAllObjectsKey = "invalidatedAll"
public let NSInsertedObjectIDsKey = "inserted_objectIDs"
public let NSUpdatedObjectIDsKey = "updated_objectIDs"
public let NSDeletedObjectIDsKey = "deleted_objectIDs"
public let NSRefreshedObjectIDsKey = "refreshed_objectIDs"
public let NSInvalidatedObjectIDsKey = "invalidated_objectIDs"

/// The user info of a change notification: only the keys whose sets are not empty, as in Apple's
/// notifications (so `userInfo[NSUpdatedObjectsKey]` is `nil` when nothing was updated). Also
/// cheaper: a `[AnyHashable: Any]` entry costs a string hash and, on a collision, an
/// `AnyHashable` comparison.
internal struct ChangeInfo {
    private(set) var userInfo: [AnyHashable: Any] = [:]

    mutating func add(_ key: String, _ objects: [NSManagedObject]) {
        if !objects.isEmpty { userInfo[key] = Set(objects) }
    }

    mutating func add(_ key: String, _ ids: Set<NSManagedObjectID>) {
        if !ids.isEmpty { userInfo[key] = ids }
    }
}
