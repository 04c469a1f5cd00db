import Foundation

/// The changes of one save, as an ``NSIncrementalStore`` receives them in
/// ``NSIncrementalStore/execute(_:with:)``: the saving context's inserted, updated and deleted
/// objects that belong to the store.
///
/// ```swift
/// override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
///     if let save = request as? NSSaveChangesRequest {
///         for object in save.insertedObjects ?? [] { try write(object) }
///         for object in save.deletedObjects ?? [] { try remove(object.objectID) }
///         return [Any]()
///     }
///     …
/// }
/// ```
///
/// The objects are the saving context's own, read on its queue (the call runs there): an
/// inserted object already has the permanent ID the store's
/// ``NSIncrementalStore/obtainPermanentIDs(for:)`` gave it.
open class NSSaveChangesRequest: NSPersistentStoreRequest {
    /// A copy of the request: the same sets of objects.
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSSaveChangesRequest(inserted: insertedObjects, updated: updatedObjects, deleted: deletedObjects, locked: lockedObjects)
        copy.affectedStores = affectedStores
        return copy
    }

    /// The objects inserted since the last save.
    ///
    /// ```swift
    /// let new = save.insertedObjects?.count ?? 0
    /// ```
    open private(set) var insertedObjects: Set<NSManagedObject>?
    /// The objects changed since the last save.
    ///
    /// ```swift
    /// for object in save.updatedObjects ?? [] { print(object.changedValues()) }
    /// ```
    open private(set) var updatedObjects: Set<NSManagedObject>?
    /// The objects deleted since the last save.
    ///
    /// ```swift
    /// let gone = save.deletedObjects?.map(\.objectID) ?? []
    /// ```
    open private(set) var deletedObjects: Set<NSManagedObject>?
    /// Objects that did not change but whose versions the save must check (none here: this Core
    /// Data has no `detectConflicts(for:)`, so the set is empty unless the request was made with one).
    ///
    /// ```swift
    /// let locked = save.lockedObjects ?? []
    /// ```
    open private(set) var lockedObjects: Set<NSManagedObject>?

    /// A save request with the given objects.
    ///
    /// ```swift
    /// let request = NSSaveChangesRequest(inserted: [note], updated: nil, deleted: nil, locked: nil)
    /// ```
    public init(inserted insertedObjects: Set<NSManagedObject>?, updated updatedObjects: Set<NSManagedObject>?,
                deleted deletedObjects: Set<NSManagedObject>?, locked lockedObjects: Set<NSManagedObject>?) {
        self.insertedObjects = insertedObjects
        self.updatedObjects = updatedObjects
        self.deletedObjects = deletedObjects
        self.lockedObjects = lockedObjects
        super.init()
    }

    /// ``NSPersistentStoreRequestType/saveRequestType``.
    open override var requestType: NSPersistentStoreRequestType { .saveRequestType }
}
