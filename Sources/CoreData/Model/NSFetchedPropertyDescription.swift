import Foundation

/// A fetched property: a weak, one-way relationship defined by a fetch request.
///
/// Add it to an entity's `properties` like an attribute or a relationship. Its value, read with
/// `value(forKey:)`, is the array of objects its fetch request returns, fetched in the object's
/// context the first time it is read and then kept until the object is refreshed.
///
/// ```swift
/// let recentBooks = NSFetchedPropertyDescription()
/// recentBooks.name = "recentBooks"
/// let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Book")
/// request.predicate = NSPredicate(format: "ANY authors == $FETCH_SOURCE AND pages >= $FETCHED_PROPERTY.userInfo.minimumPages")
/// request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
/// recentBooks.fetchRequest = request
/// recentBooks.userInfo = ["minimumPages": 100]
/// author.properties = [name, books, recentBooks]
///
/// // later, in a context:
/// let books = ada.value(forKey: "recentBooks") as? [NSManagedObject] ?? []
/// ```
///
/// As on Apple platforms:
///
/// - **Variables.** The predicate may use `$FETCH_SOURCE`, the object whose property is read (and
///   key paths from it, `$FETCH_SOURCE.name`), and `$FETCHED_PROPERTY`, this description
///   (`$FETCHED_PROPERTY.userInfo.minimumPages` reads ``NSPropertyDescription/userInfo``).
/// - **Lazy and static.** Nothing is fetched until the value is first read; the fetch runs in
///   the object's context as ``NSManagedObjectContext/fetch(_:)`` would run it, unsaved changes
///   included, and its result is cached. It does not follow later changes: call
///   ``NSManagedObjectContext/refresh(_:mergeChanges:)`` (or `refreshAllObjects()`, `reset()`) to
///   have it fetched again at the next read.
/// - **An array**, in the request's sort order: `[NSManagedObject]` for the default result type
///   (Apple returns an `NSArray`); object IDs, dictionaries or a count for the other result types.
/// - **Not stored, not hashed.** A fetched property has no column, is never saved, never appears in
///   `changedValues()` or `committedValues(forKeys:)`, and leaves the entity's
///   ``NSEntityDescription/versionHash`` unchanged. ``isTransient`` is always `true`, as Apple's
///   descriptions report.
/// - **Read-only.** `setValue(_:forKey:)` does not change it.
///
/// Linux differences: a fetch that fails (another `$VARIABLE` than the two above, a malformed
/// predicate, an unknown entity) does not raise; `value(forKey:)` returns an empty array, writes
/// `CoreData: error: …` to standard error and tries again at the next read. Setting the value
/// writes such a line too and is otherwise ignored.
open class NSFetchedPropertyDescription: NSPropertyDescription, @unchecked Sendable {
    /// The request whose results are the property's value: its entity (or `entityName`) is the
    /// destination, its predicate, sort descriptors, limit and result type apply.
    ///
    /// Changing it once the model is used by a persistent store coordinator is a programmer
    /// error that stops the process (Apple raises an exception).
    ///
    /// ```swift
    /// let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Book")
    /// request.predicate = NSPredicate(format: "ANY authors == $FETCH_SOURCE")
    /// recentBooks.fetchRequest = request
    /// ```
    open var fetchRequest: NSFetchRequest<NSFetchRequestResult>? { willSet { assertMutable() } }

    /// Always `true`: a fetched property's value is never stored. Setting it has no effect.
    ///
    /// ```swift
    /// NSFetchedPropertyDescription().isTransient // true
    /// ```
    open override var isTransient: Bool {
        get { true }
        set {}
    }

    /// An empty fetched property; give it a name and a fetch request.
    ///
    /// ```swift
    /// let property = NSFetchedPropertyDescription()
    /// property.name = "recentBooks"
    /// ```
    public required init() { super.init() }

    /// A copy with a copy of the fetch request (the same entity, predicate and options).
    ///
    /// ```swift
    /// let copy = recentBooks.copy() as! NSFetchedPropertyDescription
    /// ```
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSFetchedPropertyDescription()
        copy.copyProperties(from: self)
        copy.fetchRequest = fetchRequest?.copiedRequest(as: NSFetchRequestResult.self)
        return copy
    }

    open override var description: String {
        super.description + ", fetchRequest \(fetchRequest.map { "\($0)" } ?? "nil")"
    }

    // MARK: Internal layout, fixed when the model is frozen

    /// The position of this property among its entity's fetched properties (inherited first):
    /// fetched properties have no place in an object's values (``NSPropertyDescription/index`` is -1).
    internal var fetchedIndex: Int = -1
}

/// What `$FETCHED_PROPERTY.…` key paths read: the description's `userInfo`, `name` and the like.
extension NSFetchedPropertyDescription: PredicateKeyValueCoding {
    func predicateValue(forKey key: String) -> Any? {
        switch key {
        case "userInfo": return userInfo
        case "name": return name
        case "entity": return entity
        case "fetchRequest": return fetchRequest
        case "optional", "isOptional": return isOptional
        default: return nil
        }
    }

    var predicateObjectID: NSManagedObjectID? { nil }
}

extension NSFetchRequest {
    /// A copy of the request, with every option, as a request for `ResultType` `U`.
    internal func copiedRequest<U>(as type: U.Type) -> NSFetchRequest<U> {
        let copy = NSFetchRequest<U>()
        copy.entityName = entityName
        if let entity { copy.entity = entity }
        copy.affectedStores = affectedStores
        copy.predicate = predicate
        copy.sortDescriptors = sortDescriptors
        copy.fetchLimit = fetchLimit
        copy.fetchOffset = fetchOffset
        copy.fetchBatchSize = fetchBatchSize
        copy.resultType = resultType
        copy.includesSubentities = includesSubentities
        copy.includesPendingChanges = includesPendingChanges
        copy.returnsObjectsAsFaults = returnsObjectsAsFaults
        copy.includesPropertyValues = includesPropertyValues
        copy.shouldRefreshRefetchedObjects = shouldRefreshRefetchedObjects
        copy.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
        copy.propertiesToFetch = propertiesToFetch
        copy.returnsDistinctResults = returnsDistinctResults
        copy.propertiesToGroupBy = propertiesToGroupBy
        copy.havingPredicate = havingPredicate
        return copy
    }
}
