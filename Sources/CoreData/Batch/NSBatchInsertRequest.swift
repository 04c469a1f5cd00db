import Foundation

/// What an ``NSBatchInsertRequest`` returns in its ``NSBatchInsertResult``.
public enum NSBatchInsertRequestResultType: UInt, Sendable {
    /// `result` is `true` once the rows are written.
    case statusOnly = 0
    /// `result` is an array of the rows' `NSManagedObjectID`s, in the order given.
    case objectIDs = 1
    /// `result` is the number of rows written (inserted or, under a uniqueness constraint, updated).
    case count = 2
}

/// A request that inserts rows of one entity straight into the store, in one transaction,
/// without making managed objects (the managed-object handler form makes one per row, which no
/// context holds).
///
/// ```swift
/// let request = NSBatchInsertRequest(entityName: "Item", objects: [["name": "a", "count": 1], ["name": "b"]])
/// request.resultType = .objectIDs
/// let result = try context.execute(request) as! NSBatchInsertResult
/// let ids = result.result as! [NSManagedObjectID]
/// NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSInsertedObjectsKey: ids], into: [viewContext])
/// ```
///
/// As Apple's:
/// - Rows get primary keys in the order given, `Z_OPT` 1, and the attribute's default value for
///   a key that is missing or `NSNull`.
/// - On an entity with `uniquenessConstraints`, a row whose constrained values match a stored
///   row updates that row (an upsert: its other given attributes are overwritten, its `Z_OPT`
///   goes up by one, its key is kept and returned).
/// - Only attributes are set: a relationship key, an unknown key, a value of the wrong type, or a
///   missing value for a non-optional attribute without a default throws
///   `NSManagedObjectValidationError` (1550) or `NSValidationMissingMandatoryPropertyError`
///   (1570), naming the row (its index from 0, in the message and as `"row"` in the user info)
///   and the key (`NSValidationKeyErrorKey`), and nothing is written.
/// - Contexts are not told: merge the result's IDs with
///   ``NSManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
/// - The handler forms call their handler once per row until it returns `true` (that call's
///   row is not inserted).
open class NSBatchInsertRequest: NSPersistentStoreRequest {
    /// A copy of the request, with its options (the same rows and handlers).
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = entity.map { NSBatchInsertRequest(entity: $0, objects: objectsToInsert ?? []) }
            ?? NSBatchInsertRequest(entityName: entityName, objects: objectsToInsert ?? [])
        copy.objectsToInsert = objectsToInsert
        copy.dictionaryHandler = dictionaryHandler
        copy.managedObjectHandler = managedObjectHandler
        copy.affectedStores = affectedStores
        copy.resultType = resultType
        return copy
    }

    /// The name of the entity whose rows are inserted.
    open private(set) var entityName: String
    /// The entity, if given (else found by ``entityName`` in the context's model).
    open private(set) var entity: NSEntityDescription?
    /// The rows to insert, as dictionaries of attribute name to value.
    open var objectsToInsert: [[String: Any]]?
    /// Called once per row with an emptied dictionary to fill; returns `true` to stop.
    open var dictionaryHandler: ((NSMutableDictionary) -> Bool)?
    /// Called once per row with a new object (in no context) to fill; returns `true` to stop.
    open var managedObjectHandler: ((NSManagedObject) -> Bool)?
    /// What the result holds; ``NSBatchInsertRequestResultType/statusOnly`` by default.
    open var resultType: NSBatchInsertRequestResultType = .statusOnly

    /// ``NSPersistentStoreRequestType/batchInsertRequestType``: the request inserts rows into the store.
    open override var requestType: NSPersistentStoreRequestType { .batchInsertRequestType }

    /// Inserts `dictionaries` into the entity named `entityName`.
    public init(entityName: String, objects dictionaries: [[String: Any]]) {
        self.entityName = entityName
        self.objectsToInsert = dictionaries
        super.init()
    }

    /// Inserts `dictionaries` into `entity`.
    public init(entity: NSEntityDescription, objects dictionaries: [[String: Any]]) {
        self.entityName = entity.name ?? ""
        self.entity = entity
        self.objectsToInsert = dictionaries
        super.init()
    }

    /// Inserts the rows `handler` fills in, one per call, into `entity`, until it returns `true`.
    public init(entity: NSEntityDescription, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.entityName = entity.name ?? ""
        self.entity = entity
        self.dictionaryHandler = handler
        super.init()
    }

    /// Inserts the rows `handler` fills in, one per call, into the entity named `entityName`.
    public init(entityName: String, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.entityName = entityName
        self.dictionaryHandler = handler
        super.init()
    }

    /// Inserts the objects `handler` fills in, one per call, into `entity`, until it returns `true`.
    public init(entity: NSEntityDescription, managedObjectHandler handler: @escaping (NSManagedObject) -> Bool) {
        self.entityName = entity.name ?? ""
        self.entity = entity
        self.managedObjectHandler = handler
        super.init()
    }

    /// Inserts the objects `handler` fills in, one per call, into the entity named `entityName`.
    public init(entityName: String, managedObjectHandler handler: @escaping (NSManagedObject) -> Bool) {
        self.entityName = entityName
        self.managedObjectHandler = handler
        super.init()
    }
}
