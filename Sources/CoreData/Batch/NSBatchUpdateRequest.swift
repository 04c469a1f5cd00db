import Foundation

/// What an ``NSBatchUpdateRequest`` returns in its ``NSBatchUpdateResult``.
public enum NSBatchUpdateRequestResultType: UInt, Sendable {
    /// `result` is `true` once the rows are updated.
    case statusOnlyResultType = 0
    /// `result` is an array of the updated rows' `NSManagedObjectID`s.
    case updatedObjectIDsResultType = 1
    /// `result` is the number of rows updated.
    case updatedObjectsCountResultType = 2
}

/// A request that updates the rows of an entity in the store, in one SQL `UPDATE`, without
/// loading them.
///
/// ```swift
/// let request = NSBatchUpdateRequest(entityName: "Item")
/// request.predicate = NSPredicate(format: "count < %d", 10)
/// request.propertiesToUpdate = ["flagged": true, "count": NSExpression(format: "count + 1")]
/// request.resultType = .updatedObjectIDsResultType
/// let ids = (try context.execute(request) as! NSBatchUpdateResult).result as! [NSManagedObjectID]
/// NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: ids], into: [viewContext])
/// ```
///
/// As Apple's: ``propertiesToUpdate`` maps attribute names (or `NSAttributeDescription`s) to
/// constants or `NSExpression`s evaluated on each row (key paths of the row's attributes and
/// arithmetic on them: `count + 1`, `price * 2`); no validation rules run; each updated row's
/// `Z_OPT` goes up by one, so an object a context holds from before fails optimistic locking
/// on save as if another context had saved it. Contexts are not told: merge the IDs. An unknown
/// key, a relationship, a constant of the wrong type or a predicate on a missing key throws
/// (`NSManagedObjectValidationError` 1550, or the predicate's error) and nothing is written.
/// Attributes kept in external storage are not updated by batch (it throws). A value that two
/// rows would then share under a uniqueness constraint throws `NSManagedObjectConstraintMergeError`
/// (133021), nothing written.
open class NSBatchUpdateRequest: NSPersistentStoreRequest {
    /// A copy of the request, with its options.
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = entity.map(NSBatchUpdateRequest.init(entity:)) ?? NSBatchUpdateRequest(entityName: entityName)
        copy.affectedStores = affectedStores
        copy.predicate = predicate
        copy.includesSubentities = includesSubentities
        copy.resultType = resultType
        copy.propertiesToUpdate = propertiesToUpdate
        return copy
    }

    /// The name of the entity whose rows are updated.
    open private(set) var entityName: String
    /// The entity, if given (else found by ``entityName`` in the context's model when the request
    /// runs; Apple's is not optional, as Objective-C resolves it from the name).
    open private(set) var entity: NSEntityDescription?
    /// Which rows; `nil` for all.
    open var predicate: NSPredicate?
    /// Whether rows of sub-entities are updated too (`true` by default).
    open var includesSubentities: Bool = true
    /// What the result holds; ``NSBatchUpdateRequestResultType/statusOnlyResultType`` by default.
    open var resultType: NSBatchUpdateRequestResultType = .statusOnlyResultType
    /// Attribute names (or descriptions) and their new values: constants or `NSExpression`s.
    open var propertiesToUpdate: [AnyHashable: Any]?

    /// ``NSPersistentStoreRequestType/batchUpdateRequestType``: the request updates rows in the store.
    open override var requestType: NSPersistentStoreRequestType { .batchUpdateRequestType }

    /// A request updating the rows of the entity named `entityName`.
    public init(entityName: String) {
        self.entityName = entityName
        super.init()
    }

    /// A request updating the rows of `entity`.
    public init(entity: NSEntityDescription) {
        self.entityName = entity.name ?? ""
        self.entity = entity
        super.init()
    }
}
