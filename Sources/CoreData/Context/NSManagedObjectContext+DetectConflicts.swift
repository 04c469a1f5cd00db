import Foundation

// Conflict detection for objects a save does not change (`detectConflicts(for:)`): optimistic
// locking for objects read, not written. A marked object goes to its store with the save as a
// `SaveChanges.Lock`, its ID and the version (`Z_OPT`) the object read; the store checks the row
// still has it, in the save's transaction, and reports a conflict as it does for an update.

extension NSManagedObjectContext {
    /// Marks `object` for conflict detection: the next ``save()`` fails if the object's row was
    /// changed or deleted in the store since the object read it, although the save writes
    /// nothing for it. This is optimistic locking for unchanged objects; changed and deleted
    /// objects are always checked.
    ///
    /// The conflict is handled as one of a changed object: by the ``mergePolicy`` (the default
    /// `NSErrorMergePolicy` throws `NSManagedObjectMergeError`, 133020, with an `NSMergeConflict`
    /// for the object under `conflictList`; the other policies update the object and save again).
    /// Nothing is written by a save that throws.
    ///
    /// ```swift
    /// let rate = try context.existingObject(with: rateID)  // read, not changed
    /// context.detectConflicts(for: rate)
    /// invoice.setValue(total * (rate.value(forKey: "value") as! Double), forKey: "amount")
    /// try context.save() // 133020 if another writer changed the rate meanwhile
    /// ```
    ///
    /// The mark lasts until a save succeeds, or until ``rollback()`` or ``reset()``. The version
    /// checked is the one the object holds at the save (a refresh that reads the row moves it
    /// on), else the one it held when marked; a fault that never read its row is not checked.
    /// A save with nothing to save checks nothing, nor is an object of a read-only store
    /// checked. In a child context, a save carries the mark, with the version the child read,
    /// to the parent's object, which the parent's save checks.
    ///
    /// Marking an object of another context is a programmer error and stops the process, as
    /// Apple's raises.
    public func detectConflicts(for object: NSManagedObject) {
        checkQueue("detectConflicts(for:)")
        precondition(object._context === self, "CoreData: detectConflicts(for:) takes an object of this context; \(object.objectID) is not")
        objectsDetectingConflicts[ObjectIdentifier(object)] = ConflictDetectionMark(object: object, version: object.readVersion, isFixed: false)
    }

    /// The objects marked by ``detectConflicts(for:)`` that the save about to be written checks,
    /// with the version each must still have: saved objects of this context that the save
    /// neither writes nor deletes, with a version known.
    internal var objectsToLock: [(object: NSManagedObject, version: Int64)] {
        objectsDetectingConflicts.values.compactMap { mark in
            let object = mark.object
            guard object._context === self, !object._isInserted, !object._isDeleted,
                  !(object._isUpdated && object._changed.contains { !object.layout.properties[$0].isTransient }),
                  let version = mark.isFixed ? max(mark.version ?? 0, object.readVersion ?? 0) : (object.readVersion ?? mark.version) else { return nil }
            return (object, version)
        }
    }

    /// A child's save marks this (parent) context's objects that the child marked, with the
    /// versions the child read.
    internal func detectConflicts(forChildMarked marks: [(id: NSManagedObjectID, version: Int64)]) {
        for (id, version) in marks {
            let object = registered(id.key) ?? self.object(with: id)
            guard object._context === self, !object._isDeleted else { continue }
            objectsDetectingConflicts[ObjectIdentifier(object)] = ConflictDetectionMark(object: object, version: version, isFixed: true)
        }
    }
}

/// An object marked by `detectConflicts(for:)`, held until the context's next successful save.
internal struct ConflictDetectionMark {
    let object: NSManagedObject
    /// The version the object held when it was marked (checked if it holds none at the save, as
    /// after a refresh), or the one a child read (`isFixed`: checked unless the object here has
    /// read a newer one since, as a merge policy's refresh does).
    var version: Int64?
    var isFixed: Bool
}

extension NSManagedObject {
    /// The version (`Z_OPT`) of the row the object read, if it read one.
    internal var readVersion: Int64? { _snapshotValues == nil ? nil : _snapshotVersion }
}
