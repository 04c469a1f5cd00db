import Foundation

/// The object IDs one `NSManagedObjectContextObjectsDidChange` notification carried: a
/// `Sendable` value, unlike the notification's objects, so it crosses isolation freely.
///
/// An element of ``NSManagedObjectContext/changes``. A set is empty when the notification had
/// no such objects. Inserted objects that were not saved yet carry temporary IDs
/// (`isTemporaryID`); after a save, `permanentID`s identify them.
///
/// ```swift
/// for await change in context.changes {
///     print("\(change.inserted.count) inserted, \(change.deleted.count) deleted")
/// }
/// ```
public struct ManagedObjectIDChanges: Sendable, Hashable {
    /// IDs of the objects inserted (`NSInsertedObjectsKey`).
    public var inserted: Set<NSManagedObjectID>
    /// IDs of the objects updated (`NSUpdatedObjectsKey`).
    public var updated: Set<NSManagedObjectID>
    /// IDs of the objects deleted (`NSDeletedObjectsKey`).
    public var deleted: Set<NSManagedObjectID>
    /// IDs of the objects refreshed (`NSRefreshedObjectsKey`), as by a merge or `refresh(_:mergeChanges:)`.
    public var refreshed: Set<NSManagedObjectID>
    /// IDs of the objects invalidated (`NSInvalidatedObjectsKey`, and every object under
    /// `NSInvalidatedAllObjectsKey`).
    public var invalidated: Set<NSManagedObjectID>
    /// Whether the context invalidated all its objects (`NSInvalidatedAllObjectsKey`, as after `reset()`).
    public var invalidatedAll: Bool

    /// A value with the given sets, for tests and for callers that build their own.
    ///
    /// ```swift
    /// let change = ManagedObjectIDChanges(inserted: [note.objectID])
    /// ```
    public init(inserted: Set<NSManagedObjectID> = [], updated: Set<NSManagedObjectID> = [], deleted: Set<NSManagedObjectID> = [],
                refreshed: Set<NSManagedObjectID> = [], invalidated: Set<NSManagedObjectID> = [], invalidatedAll: Bool = false) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.refreshed = refreshed
        self.invalidated = invalidated
        self.invalidatedAll = invalidatedAll
    }

    /// The IDs of an `NSManagedObjectContextObjectsDidChange` notification's user info; read on
    /// the posting context's queue, where its objects may be touched.
    init(userInfo: [AnyHashable: Any]) {
        func ids(_ key: String) -> Set<NSManagedObjectID> {
            guard let objects = userInfo[key] as? Set<NSManagedObject> else { return [] }
            return Set(objects.map(\.objectID))
        }
        let all = userInfo[NSInvalidatedAllObjectsKey] as? [NSManagedObjectID]
        self.init(inserted: ids(NSInsertedObjectsKey), updated: ids(NSUpdatedObjectsKey), deleted: ids(NSDeletedObjectsKey),
                  refreshed: ids(NSRefreshedObjectsKey), invalidated: ids(NSInvalidatedObjectsKey).union(all ?? []),
                  invalidatedAll: all != nil)
    }
}
