import Foundation

/// The kinds of store request.
public enum NSPersistentStoreRequestType: UInt, Sendable {
    case fetchRequestType = 1
    case saveRequestType = 2
    case batchInsertRequestType = 5
    case batchUpdateRequestType = 6
    case batchDeleteRequestType = 7
}

/// A request to the persistent stores: the base of ``NSFetchRequest``, the batch requests and the
/// history requests.
///
/// Every request copies (`NSCopying`, as Apple's), with its options: change a `copy()` where the
/// original must stay as it is. A subclass of your own overrides `copy(with:)`: Swift can't make
/// an object of a subclass it does not know (Apple's copy is of the object's own class).
///
/// ```swift
/// let again = request.copy() as! NSBatchUpdateRequest
/// again.predicate = NSPredicate(format: "year < 2000")
/// ```
open class NSPersistentStoreRequest: NSObject, NSCopying {
    /// The stores to search; `nil` for all.
    open var affectedStores: [NSPersistentStore]?
    /// The request's kind.
    open var requestType: NSPersistentStoreRequestType { .fetchRequestType }

    /// A copy of the request with its options; each kind of request returns its own kind.
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSPersistentStoreRequest()
        copy.affectedStores = affectedStores
        return copy
    }
}

/// What a fetch request returns.
public struct NSFetchRequestResultType: OptionSet, Sendable {
    /// The result type's bits, with Apple's values.
    public let rawValue: UInt
    /// The result type whose bits are `rawValue`.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Managed objects (the default).
    public static let managedObjectResultType = NSFetchRequestResultType([])
    /// Object IDs.
    public static let managedObjectIDResultType = NSFetchRequestResultType(rawValue: 1)
    /// Dictionaries of property values.
    public static let dictionaryResultType = NSFetchRequestResultType(rawValue: 2)
    /// The number of matching objects.
    public static let countResultType = NSFetchRequestResultType(rawValue: 4)
}

/// A description of objects to fetch: an entity, a predicate, sort descriptors, limits.
///
/// ```swift
/// let request = NSFetchRequest<Car>(entityName: "Car")
/// request.predicate = NSPredicate(format: "name = %@", "Model T")
/// request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
/// let cars = try context.fetch(request)   // [Car]
/// ```
///
/// The generic parameter is unconstrained (Apple's is `NSFetchRequestResult`), so that
/// `NSFetchRequest<NSFetchRequestResult>` compiles on Linux.
///
/// A model's fetch request template (``NSManagedObjectModel/fetchRequestTemplate(forName:)``) is
/// immutable once the model is in use: changing it is a programmer error that stops the process
/// (Apple raises an exception); change a `copy()` of it.
open class NSFetchRequest<ResultType>: NSPersistentStoreRequest {
    /// The name of the entity to fetch.
    open var entityName: String? { willSet { assertMutable() } }
    private var _entity: NSEntityDescription?
    /// The entity to fetch. Set directly, or found by ``entityName`` in the context's model.
    open var entity: NSEntityDescription? {
        get { _entity }
        set { assertMutable(); _entity = newValue; if let name = newValue?.name { entityName = name } }
    }
    /// Which objects to return; `nil` for all.
    open var predicate: NSPredicate? { willSet { assertMutable() } }
    /// The order of the results; primary-key (insertion) order when `nil` or empty.
    open var sortDescriptors: [NSSortDescriptor]? { willSet { assertMutable() } }
    /// The largest number of objects to return; 0 for no limit.
    open var fetchLimit: Int = 0 { willSet { assertMutable() } }
    /// How many matching objects to skip.
    open var fetchOffset: Int = 0 { willSet { assertMutable() } }
    /// The batch size for batched results; 0 for none.
    open var fetchBatchSize: Int = 0 { willSet { assertMutable() } }
    /// What the fetch returns.
    open var resultType: NSFetchRequestResultType = .managedObjectResultType { willSet { assertMutable() } }
    /// Whether objects of sub-entities match too.
    open var includesSubentities: Bool = true { willSet { assertMutable() } }
    /// Whether unsaved changes in the context are taken into account.
    open var includesPendingChanges: Bool = true { willSet { assertMutable() } }
    /// Whether fetched objects are faults (their values are cached and arrive on first access).
    open var returnsObjectsAsFaults: Bool = true { willSet { assertMutable() } }
    /// Whether property values are fetched along with the objects.
    open var includesPropertyValues: Bool = true { willSet { assertMutable() } }
    /// Whether objects already in the context get the fetched values.
    open var shouldRefreshRefetchedObjects: Bool = false { willSet { assertMutable() } }
    /// Relationship key paths whose objects are fetched along.
    open var relationshipKeyPathsForPrefetching: [String]? { willSet { assertMutable() } }
    /// The properties of dictionary results.
    open var propertiesToFetch: [Any]? { willSet { assertMutable() } }
    /// Whether dictionary results are distinct.
    open var returnsDistinctResults: Bool = false { willSet { assertMutable() } }
    /// The properties dictionary results are grouped by.
    open var propertiesToGroupBy: [Any]? { willSet { assertMutable() } }
    /// A predicate on grouped results.
    open var havingPredicate: NSPredicate? { willSet { assertMutable() } }

    /// A request with no entity; set ``entity`` or ``entityName`` before fetching.
    public override init() { super.init() }

    /// A request for the objects of the named entity.
    public convenience init(entityName: String) {
        self.init()
        self.entityName = entityName
        if let cls = ResultType.self as? NSManagedObject.Type { ManagedObjectClassRegistry.register(cls) }
    }

    /// A copy of the request, with every option; a copy of a model's template can be changed.
    ///
    /// ```swift
    /// let request = model.fetchRequestTemplate(forName: "RecentNotes")!.copy() as! NSFetchRequest<NSFetchRequestResult>
    /// request.fetchLimit = 10
    /// ```
    open override func copy(with zone: NSZone? = nil) -> Any {
        copiedRequest(as: ResultType.self)
    }

    /// Runs the request in the context whose `perform` block is running.
    open func execute() throws -> [ResultType] {
        guard let context = NSManagedObjectContext.current else {
            throw CoreDataError.make(.coreData, "NSFetchRequest.execute() must be called inside a context's perform or performAndWait block")
        }
        return try context.fetch(self)
    }

    /// Whether the request is a fetch request template of a model in use: it can no longer change
    /// (``NSManagedObjectModel/fetchRequestTemplate(forName:)``).
    internal var isImmutableTemplate = false

    /// Stops the process if the request is an immutable template: changing one is a programmer
    /// error (Apple raises `NSInternalInconsistencyException`).
    private func assertMutable() {
        if isImmutableTemplate {
            preconditionFailure("Can't modify a named fetch request in an immutable model: copy it (copy()) to change it")
        }
    }

    open override var description: String {
        "<NSFetchRequest: entity: \(entityName ?? "nil"); predicate: \(predicate.map { "\($0)" } ?? "nil"); limit: \(fetchLimit)>"
    }
}


