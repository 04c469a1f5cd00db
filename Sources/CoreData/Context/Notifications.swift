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
    /// The did-save notifications' key of the `NSPersistentHistoryToken` of the history the save
    /// wrote (stores with `NSPersistentHistoryTrackingKey`), as Apple's framework names it (it
    /// declares no constant): `note.userInfo?["newChangeToken"] as? NSPersistentHistoryToken`.
    internal static let newChangeTokenKey = "newChangeToken"
}

/// Keys of the notifications' user info, with Apple's values.
public let NSInsertedObjectsKey = "inserted"
/// The key of the set of updated objects, in objects-did-change and did-save notifications.
public let NSUpdatedObjectsKey = "updated"
/// The key of the set of deleted objects, in objects-did-change and did-save notifications.
public let NSDeletedObjectsKey = "deleted"
/// The key of the set of refreshed objects, in objects-did-change notifications.
public let NSRefreshedObjectsKey = "refreshed"
/// The key of the set of invalidated objects, in objects-did-change notifications.
public let NSInvalidatedObjectsKey = "invalidated"
/// The key present when all of the context's objects were invalidated (`reset()`), in
/// objects-did-change notifications.
public let NSInvalidatedAllObjectsKey = "invalidatedAll"
/// The key of the set of inserted objects' IDs, in did-save-object-IDs and did-merge notifications.
public let NSInsertedObjectIDsKey = "inserted_objectIDs"
/// The key of the set of updated objects' IDs, in did-save-object-IDs and did-merge notifications.
public let NSUpdatedObjectIDsKey = "updated_objectIDs"
/// The key of the set of deleted objects' IDs, in did-save-object-IDs and did-merge notifications.
public let NSDeletedObjectIDsKey = "deleted_objectIDs"
/// The key of the set of refreshed objects' IDs, in did-save-object-IDs and did-merge notifications.
public let NSRefreshedObjectIDsKey = "refreshed_objectIDs"
/// The key of the set of invalidated objects' IDs, in did-save-object-IDs and did-merge notifications.
public let NSInvalidatedObjectIDsKey = "invalidated_objectIDs"

extension NSManagedObjectContext {
    /// The keys of the user info of a context's notifications, as a Swift enumeration; each
    /// case's raw value is the key (``NSInsertedObjectsKey`` and the others).
    ///
    /// ```swift
    /// let inserted = notification.userInfo?[NSManagedObjectContext.NotificationKey.insertedObjects.rawValue] as? Set<NSManagedObject>
    /// ```
    public enum NotificationKey: String, Sendable {
        case insertedObjects = "inserted"
        case updatedObjects = "updated"
        case deletedObjects = "deleted"
        case refreshedObjects = "refreshed"
        case invalidatedObjects = "invalidated"
        case invalidatedAllObjects = "invalidatedAll"
        case insertedObjectIDs = "inserted_objectIDs"
        case updatedObjectIDs = "updated_objectIDs"
        case deletedObjectIDs = "deleted_objectIDs"
        case refreshedObjectIDs = "refreshed_objectIDs"
        case invalidatedObjectIDs = "invalidated_objectIDs"
        /// ``NSManagedObjectContextQueryGenerationKey``.
        case queryGeneration = "newQueryGeneration"
    }
}

/// The user info of a change notification: only the keys whose sets are not empty, as in Apple's
/// notifications (so `userInfo[NSUpdatedObjectsKey]` is `nil` when nothing was updated). Also
/// cheaper: a `[AnyHashable: Any]` entry costs a string hash and, on a collision, an
/// `AnyHashable` comparison.
internal struct ChangeInfo {
    private(set) var userInfo: [AnyHashable: Any] = [:]
    /// Sets made earlier for the keys, reused when made of the same objects (a save's
    /// `ObjectsDidChange` and did-save notifications usually carry the same objects).
    var memo: ObjectSetMemo?

    mutating func add(_ key: String, _ objects: [NSManagedObject]) {
        guard !objects.isEmpty else { return }
        userInfo[key] = memo != nil ? memo!.set(of: objects, for: key) : Set(retainingFirst: objects)
    }

    mutating func add(_ key: String, _ ids: [NSManagedObjectID]) {
        if !ids.isEmpty { userInfo[key] = ids }
    }

    mutating func add(_ key: String, _ ids: Set<NSManagedObjectID>) {
        if !ids.isEmpty { userInfo[key] = ids }
    }

    mutating func add(_ key: String, _ token: NSQueryGenerationToken) {
        userInfo[key] = token
    }

    mutating func add(_ key: String, _ token: NSPersistentHistoryToken) {
        userInfo[key] = token
    }
}

/// The sets of objects a save's notifications carried, by key, with the objects they were made
/// from: a set of the same objects in the same order is not made (hashed) again.
internal struct ObjectSetMemo {
    /// (A struct, not a tuple: a generic tuple's metadata is made at run time, on first use.)
    private struct Entry {
        var key: String
        var objects: [NSManagedObject]
        var set: Set<NSManagedObject>
    }
    private var entries: [Entry] = []

    mutating func set(of objects: [NSManagedObject], for key: String) -> Set<NSManagedObject> {
        let index = entries.firstIndex { $0.key == key }
        if let index, Self.same(entries[index].objects, objects) { return entries[index].set }
        let set = Set(retainingFirst: objects)
        let entry = Entry(key: key, objects: objects, set: set)
        if let index { entries[index] = entry } else { entries.append(entry) }
        return set
    }
}

extension ObjectSetMemo {
    /// Whether two lists hold the same objects in the same order: at once when they are one
    /// buffer (a save's lists of inserted objects are), else element by element.
    fileprivate static func same(_ first: [NSManagedObject], _ second: [NSManagedObject]) -> Bool {
        guard first.count == second.count else { return false }
        let shared = first.withUnsafeBufferPointer { a in second.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
        return shared || zip(first, second).allSatisfy { $0 === $1 }
    }
}

extension Set where Element: AnyObject {
    /// A set of `elements` (a notification's objects), in a table sized for them once.
    ///
    /// The table is the usual size, not larger: every hash collision while inserting costs an
    /// `isEqual(_:)` call through an `Any?`, but a table twice the size is 1 MB more of fresh
    /// memory for 50,000 objects, each page of it a page fault, which cost more (session 12:
    /// about 1 ms less for the 50,000 objects of (b) in `coredata bench`, for 2% more instructions).
    ///
    /// The set's references are taken first, in one pass over the array in memory order, and
    /// then handed to the set: a retain is an atomic instruction, which waits for the memory
    /// reads before it, so retaining as each object went into the table made every insertion
    /// wait for its table slot and its cold object one after the other (building the set took
    /// 13.5% of (b) in `coredata bench`, 10.5% now). The array, a value the caller holds for
    /// the call (nothing else, not even app code in an overridden `hash`, can change it), keeps
    /// the objects alive in between. Each is added with `update(with:)`, which takes the reference and, unlike
    /// `insert(_:)`, does not hand back (retain, then release) the new member; a repeated
    /// element hands back the one it replaces, released when dropped. Hashing an object reads
    /// its header (the `hash` call is dynamic): the header of the object a few places ahead is
    /// asked for meanwhile, since the retains' pass has long left the first objects' behind
    /// (−1.5 ms of the 50,000 objects of (b) in `coredata bench`, session 9).
    init(retainingFirst elements: [Element]) {
        self.init(minimumCapacity: elements.count)
        elements.forEachUnretained { _ = Unmanaged.passUnretained($1).retain() }
        elements.forEachUnretainedPrefetchingHeaders { update(with: Unmanaged.passUnretained($1).takeRetainedValue()) }
    }
}
