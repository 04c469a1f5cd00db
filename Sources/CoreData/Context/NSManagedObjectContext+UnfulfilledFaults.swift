import Foundation

// Faults the store could not fulfill.
//
// Two things can keep a fault from loading, and they are told apart:
// - **The row is gone** (deleted behind the context's back): the store answers, with nothing.
//   The object reads as deleted (`shouldDeleteInaccessibleFaults`, `NSManagedObject.fireFault`),
//   and `existingObject(with:)` throws `NSManagedObjectReferentialIntegrityError` (133000).
// - **The store failed** (an I/O error, a store removed from its coordinator, an external binary
//   data file that cannot be read): nothing is known about the row. Apple raises "CoreData could
//   not fulfill a fault". Here the accessor returns what the object has (a fault's attributes
//   read nil or 0; a to-many relationship that failed to load reads empty, and is not kept as
//   loaded: the next access tries again); the context records the error and logs it once
//   (`CoreData: error: CoreData could not fulfill a fault for '<object ID>' …`); and every
//   `save()` throws it, before writing anything, until the record is cleared. So nothing is
//   ever written from a relationship that failed to load: its join rows, hidden keys, order
//   columns, the delete rules it cascaded or denied, the counts it validated.
//
// The record of a load is cleared by a later successful load of the same thing (the fault's
// next access, `existingObject(with:)`, the relationship's next access); the records of an
// object by `refresh(_:mergeChanges:)` (without merging; merging keeps those of relationships
// the object changed, whose lists may have been built on the failed load); all of them by
// `rollback()` and `reset()`, which leave no change behind that such a load could have fed.
//
// Nothing here runs while nothing has failed: fetching, firing faults and saving test one
// array for emptiness at most.

/// A load the store could not do: an object's row (`relationship` `nil`) or one of its to-many
/// relationships, and the error `save()` throws for it.
internal struct UnfulfilledFault {
    let key: IDKey
    let relationship: Int?
    let error: NSError
}

extension NSManagedObjectContext {
    /// Whether a load has failed since the records were last cleared.
    internal var hasUnfulfilledFaults: Bool { @inline(__always) get { !unfulfilledFaults.isEmpty } }

    /// The error a failed load throws or is recorded as: `NSPersistentStoreOperationError`
    /// (134070) with Apple's message, the store's error under `NSUnderlyingErrorKey`. (Not
    /// 133000, which Apple keeps for a store that answers that the object does not exist.)
    internal static func unfulfilledFaultError(_ error: any Error, for id: NSManagedObjectID,
                                               relationship: NSRelationshipDescription?) -> NSError {
        let underlying = error as NSError
        let what = relationship.map { " (its to-many relationship '\($0.name)')" } ?? ""
        return CoreDataError.make(.persistentStoreOperation,
            "CoreData could not fulfill a fault for '\(id)'\(what): \(underlying.localizedDescription)",
            extra: [NSUnderlyingErrorKey: underlying, "objectID": id])
    }

    /// Records that `object`'s row (`relationship` `nil`) or to-many relationship at
    /// `relationship` could not be loaded (`error`, as ``unfulfilledFaultError(_:for:relationship:)``
    /// made it where the load failed), and logs it: once, until the record is cleared.
    internal func recordUnfulfilledFault(_ error: any Error, of object: NSManagedObject, relationship: Int?) {
        let key = object.idKey
        guard !unfulfilledFaults.contains(where: { $0.key == key && $0.relationship == relationship }) else { return }
        let error = error as NSError
        unfulfilledFaults.append(UnfulfilledFault(key: key, relationship: relationship, error: error))
        CoreDataLog.error(error.localizedDescription)
    }

    /// A load of `object`'s row (`relationship` `nil`) or to-many relationship succeeded: its
    /// record, if any, is cleared.
    internal func forgetUnfulfilledFault(of object: NSManagedObject, relationship: Int?) {
        let key = object.idKey
        unfulfilledFaults.removeAll { $0.key == key && $0.relationship == relationship }
    }

    /// `object` was refreshed: its values and unchanged relationships will be loaded again, so
    /// their records go (those of relationships it changed stay: see the top of this file).
    internal func forgetUnfulfilledFaults(ofRefreshed object: NSManagedObject) {
        guard hasUnfulfilledFaults else { return }
        let key = object.idKey
        unfulfilledFaults.removeAll { $0.key == key && !($0.relationship.map(object._changed.contains) ?? false) }
    }

    /// Throws the first recorded failed load, if any: a save calls it before it writes.
    @inline(__always)
    internal func throwUnfulfilledFault() throws {
        if let first = unfulfilledFaults.first { throw first.error }
    }
}
