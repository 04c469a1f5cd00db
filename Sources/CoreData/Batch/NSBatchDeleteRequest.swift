import Foundation

/// What an ``NSBatchDeleteRequest`` returns in its ``NSBatchDeleteResult``.
public enum NSBatchDeleteRequestResultType: UInt, Sendable {
    /// `result` is `true` once the rows are deleted.
    case resultTypeStatusOnly = 0
    /// `result` is an array of the deleted rows' `NSManagedObjectID`s, those deleted by a
    /// cascade rule included (so that a merge removes them too).
    case resultTypeObjectIDs = 1
    /// `result` is the number of rows deleted (cascaded ones included, as in the IDs).
    case resultTypeCount = 2
}

/// A request that deletes rows in the store, in SQL, without loading them.
///
/// ```swift
/// let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
/// fetch.predicate = NSPredicate(format: "done == YES")
/// let request = NSBatchDeleteRequest(fetchRequest: fetch)
/// request.resultType = .resultTypeObjectIDs
/// let ids = (try context.execute(request) as! NSBatchDeleteResult).result as! [NSManagedObjectID]
/// NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: ids], into: [viewContext])
/// ```
///
/// What it does with relationships, as Apple's batch delete (since macOS 10.15 / iOS 13)
/// does: no validation runs, but the delete rules of the deleted rows' relationships are
/// applied in SQL, in the same transaction:
/// - **Cascade**: the related rows are deleted too (and their own rules applied).
/// - **Deny**: if a deleted row still has related rows, it throws `NSValidationRelationshipDeniedDeleteError`
///   (1600) and nothing is deleted.
/// - **Nullify** and **no action**: nothing more; and whatever the rules, nothing is left
///   pointing at a deleted row: rows of other entities whose to-one relationship (or the hidden
///   key of a to-many without inverse) names a deleted row get `NULL` there, and the rows of
///   many-to-many join tables naming a deleted row are removed.
/// - The files of deleted rows' attributes kept in external storage are removed once the
///   transaction has committed.
///
/// The fetch request's entity, predicate and `includesSubentities` choose the rows; with a
/// `fetchLimit` or `fetchOffset`, only the rows the fetch returns, in its sort order ("delete all
/// but the newest 100"). The stores are those both the request's and the fetch request's
/// `affectedStores` allow. From object IDs, all must be of one entity (else it throws
/// 134060, nothing deleted), and each store deletes the rows of its own IDs. Contexts are not
/// told: merge the IDs.
open class NSBatchDeleteRequest: NSPersistentStoreRequest {
    /// A copy of the request, with its options (and its own copy of the fetch request).
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = objectIDs.map(NSBatchDeleteRequest.init(objectIDs:))
            ?? NSBatchDeleteRequest(fetchRequest: fetchRequest.copy() as! NSFetchRequest<NSFetchRequestResult>)
        copy.affectedStores = affectedStores
        copy.resultType = resultType
        return copy
    }

    /// The rows to delete (for the object-ID form, a request for `SELF IN ids`).
    open private(set) var fetchRequest: NSFetchRequest<NSFetchRequestResult>
    /// What the result holds; ``NSBatchDeleteRequestResultType/resultTypeStatusOnly`` by default.
    open var resultType: NSBatchDeleteRequestResultType = .resultTypeStatusOnly
    /// The IDs of the object-ID form.
    internal private(set) var objectIDs: [NSManagedObjectID]?

    /// ``NSPersistentStoreRequestType/batchDeleteRequestType``: the request deletes rows in the store.
    open override var requestType: NSPersistentStoreRequestType { .batchDeleteRequestType }

    /// Deletes the rows `fetch` matches.
    public init<ResultType>(fetchRequest fetch: NSFetchRequest<ResultType>) {
        self.fetchRequest = (fetch as? NSFetchRequest<NSFetchRequestResult>) ?? fetch.copiedRequest(as: NSFetchRequestResult.self)
        super.init()
    }

    /// Deletes the rows of `objects`, all of one entity.
    public init(objectIDs objects: [NSManagedObjectID]) {
        let request = NSFetchRequest<NSFetchRequestResult>()
        if let entity = objects.first?.entity { request.entity = entity }
        request.predicate = NSPredicate(format: "SELF IN %@", objects)
        self.fetchRequest = request
        self.objectIDs = objects
        super.init()
    }
}
