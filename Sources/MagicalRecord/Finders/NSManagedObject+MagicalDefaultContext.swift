import CoreData
import Foundation

// The forms of MagicalRecord's `NSManagedObject` categories that take no context: each runs its
// `in:` form in the default context (`NSManagedObjectContext.mr_default()`), as MagicalRecord's
// own do. Set up a stack first (`MagicalRecord.setupCoreDataStack()`): without one, there is no
// default context, and these stop the process naming the problem, as `mr_default()` does.

extension NSManagedObject {
    // MARK: Entities (NSManagedObject+MagicalRecord)

    /// This class's entity in the default context's model.
    ///
    /// ```swift
    /// let entity = Person.mr_entityDescription()
    /// ```
    public class func mr_entityDescription() -> NSEntityDescription? { mr_entityDescription(in: .mr_default()) }

    /// The properties of this class's entity with the given names, in the default context's model.
    ///
    /// ```swift
    /// let properties = Person.mr_propertiesNamed(["name", "age"])
    /// ```
    public class func mr_propertiesNamed(_ properties: [String]) -> [NSPropertyDescription]? {
        mr_propertiesNamed(properties, in: .mr_default())
    }

    /// Runs a fetch request in the default context; nil if it failed.
    ///
    /// ```swift
    /// let people = Person.mr_executeFetchRequest(Person.mr_requestAll())
    /// ```
    public class func mr_executeFetchRequest(_ request: NSFetchRequest<NSFetchRequestResult>) -> [NSManagedObject]? {
        mr_executeFetchRequest(request, in: .mr_default())
    }

    /// The first object a fetch request gives in the default context.
    ///
    /// ```swift
    /// let first = Person.mr_executeFetchRequestAndReturnFirstObject(Person.mr_requestAll())
    /// ```
    public class func mr_executeFetchRequestAndReturnFirstObject(_ request: NSFetchRequest<NSFetchRequestResult>) -> Self? {
        mr_executeFetchRequestAndReturnFirstObject(request, in: .mr_default())
    }

    /// A new object of this class's entity, inserted into the default context.
    ///
    /// ```swift
    /// let person = Person.mr_createEntity()
    /// ```
    @discardableResult
    public class func mr_createEntity() -> Self? { mr_createEntity(in: .mr_default()) }

    /// Deletes the objects that match a predicate in the default context.
    ///
    /// ```swift
    /// Person.mr_deleteAll(matching: NSPredicate(format: "age < 18"))
    /// ```
    @discardableResult
    public class func mr_deleteAll(matching predicate: NSPredicate) -> Bool { mr_deleteAll(matching: predicate, in: .mr_default()) }

    /// Deletes every object of this class's entity in the default context.
    ///
    /// ```swift
    /// Person.mr_truncateAll()
    /// ```
    @discardableResult
    public class func mr_truncateAll() -> Bool { mr_truncateAll(in: .mr_default()) }

    /// The same object in the default context (MagicalRecord's `MR_inThreadContext`).
    ///
    /// ```swift
    /// let mine = person.mr_inThreadContext()
    /// ```
    @discardableResult
    public func mr_inThreadContext() -> Self? { mr_(in: .mr_default()) }

    // MARK: Requests (NSManagedObject+MagicalRequests)

    /// An empty fetch request for this class's entity, in the default context's model.
    ///
    /// ```swift
    /// let request = Person.mr_createFetchRequest()
    /// ```
    public class func mr_createFetchRequest() -> NSFetchRequest<NSFetchRequestResult> { mr_createFetchRequest(in: .mr_default()) }

    /// A request for every object of this class's entity.
    ///
    /// ```swift
    /// let request = Person.mr_requestAll()
    /// ```
    public class func mr_requestAll() -> NSFetchRequest<NSFetchRequestResult> { mr_requestAll(in: .mr_default()) }

    /// A request for the objects that match a predicate.
    ///
    /// ```swift
    /// let request = Person.mr_requestAll(with: NSPredicate(format: "age >= 18"))
    /// ```
    public class func mr_requestAll(with searchTerm: NSPredicate?) -> NSFetchRequest<NSFetchRequestResult> {
        mr_requestAll(with: searchTerm, in: .mr_default())
    }

    /// A request for the objects whose property equals a value.
    ///
    /// ```swift
    /// let request = Person.mr_requestAllWhere("name", isEqualTo: "Ada")
    /// ```
    public class func mr_requestAllWhere(_ property: String, isEqualTo value: Any) -> NSFetchRequest<NSFetchRequestResult> {
        mr_requestAllWhere(property, isEqualTo: value, in: .mr_default())
    }

    /// A request for the first object that matches a predicate.
    ///
    /// ```swift
    /// let request = Person.mr_requestFirst(with: NSPredicate(format: "age >= 18"))
    /// ```
    public class func mr_requestFirst(with searchTerm: NSPredicate?) -> NSFetchRequest<NSFetchRequestResult> {
        mr_requestFirst(with: searchTerm, in: .mr_default())
    }

    /// A request for the first object whose attribute equals a value.
    ///
    /// ```swift
    /// let request = Person.mr_requestFirst(byAttribute: "name", withValue: "Ada")
    /// ```
    public class func mr_requestFirst(byAttribute attribute: String, withValue searchValue: Any?) -> NSFetchRequest<NSFetchRequestResult> {
        mr_requestFirst(byAttribute: attribute, withValue: searchValue, in: .mr_default())
    }

    /// A request for every object, sorted by MagicalRecord's sort string (`"lastName,age:NO"`).
    ///
    /// ```swift
    /// let request = Person.mr_requestAllSorted(by: "name", ascending: true)
    /// ```
    public class func mr_requestAllSorted(by sortTerm: String, ascending: Bool) -> NSFetchRequest<NSFetchRequestResult> {
        mr_requestAllSorted(by: sortTerm, ascending: ascending, in: .mr_default())
    }

    /// A request for the objects that match a predicate, sorted by MagicalRecord's sort string.
    ///
    /// ```swift
    /// let request = Person.mr_requestAllSorted(by: "name", ascending: true, with: NSPredicate(format: "age >= 18"))
    /// ```
    public class func mr_requestAllSorted(by sortTerm: String, ascending: Bool, with searchTerm: NSPredicate?) -> NSFetchRequest<NSFetchRequestResult> {
        mr_requestAllSorted(by: sortTerm, ascending: ascending, with: searchTerm, in: .mr_default())
    }

    // MARK: Finders (NSManagedObject+MagicalFinders)

    /// Every object of this class's entity in the default context; nil if the fetch failed.
    ///
    /// ```swift
    /// let people = Person.mr_findAll() as? [Person] ?? []
    /// ```
    public class func mr_findAll() -> [NSManagedObject]? { mr_findAll(in: .mr_default()) }

    /// Every object, sorted by MagicalRecord's sort string.
    ///
    /// ```swift
    /// let people = Person.mr_findAllSorted(by: "name", ascending: true)
    /// ```
    public class func mr_findAllSorted(by sortTerm: String, ascending: Bool) -> [NSManagedObject]? {
        mr_findAllSorted(by: sortTerm, ascending: ascending, in: .mr_default())
    }

    /// The objects that match a predicate, sorted by MagicalRecord's sort string.
    ///
    /// ```swift
    /// let adults = Person.mr_findAllSorted(by: "age", ascending: false, with: NSPredicate(format: "age >= 18"))
    /// ```
    public class func mr_findAllSorted(by sortTerm: String, ascending: Bool, with searchTerm: NSPredicate?) -> [NSManagedObject]? {
        mr_findAllSorted(by: sortTerm, ascending: ascending, with: searchTerm, in: .mr_default())
    }

    /// The objects that match a predicate (all for nil).
    ///
    /// ```swift
    /// let adults = Person.mr_findAll(with: NSPredicate(format: "age >= 18"))
    /// ```
    public class func mr_findAll(with searchTerm: NSPredicate?) -> [NSManagedObject]? { mr_findAll(with: searchTerm, in: .mr_default()) }

    /// The first object of this class's entity; nil if there is none.
    ///
    /// ```swift
    /// let anyone = Person.mr_findFirst()
    /// ```
    public class func mr_findFirst() -> Self? { mr_findFirst(in: .mr_default()) }

    /// The first object that matches a predicate.
    ///
    /// ```swift
    /// let adult = Person.mr_findFirst(with: NSPredicate(format: "age >= 18"))
    /// ```
    public class func mr_findFirst(with searchTerm: NSPredicate?) -> Self? { mr_findFirst(with: searchTerm, in: .mr_default()) }

    /// The first object that matches a predicate, by a sort key.
    ///
    /// ```swift
    /// let oldest = Person.mr_findFirst(with: nil, sortedBy: "age", ascending: false)
    /// ```
    public class func mr_findFirst(with searchTerm: NSPredicate?, sortedBy property: String?, ascending: Bool) -> Self? {
        mr_findFirst(with: searchTerm, sortedBy: property, ascending: ascending, in: .mr_default())
    }

    /// The first object that matches a predicate, fetching only some attributes.
    ///
    /// ```swift
    /// let adult = Person.mr_findFirst(with: NSPredicate(format: "age >= 18"), andRetrieveAttributes: ["name"])
    /// ```
    public class func mr_findFirst(with searchTerm: NSPredicate?, andRetrieveAttributes attributes: [Any]?) -> Self? {
        mr_findFirst(with: searchTerm, andRetrieveAttributes: attributes, in: .mr_default())
    }

    /// The first object whose attribute equals a value.
    ///
    /// ```swift
    /// let ada = Person.mr_findFirst(byAttribute: "name", withValue: "Ada")
    /// ```
    public class func mr_findFirst(byAttribute attribute: String, withValue searchValue: Any) -> Self? {
        mr_findFirst(byAttribute: attribute, withValue: searchValue, in: .mr_default())
    }

    /// The first object in the order of an attribute.
    ///
    /// ```swift
    /// let youngest = Person.mr_findFirstOrdered(byAttribute: "age", ascending: true)
    /// ```
    public class func mr_findFirstOrdered(byAttribute attribute: String, ascending: Bool) -> Self? {
        mr_findFirstOrdered(byAttribute: attribute, ascending: ascending, in: .mr_default())
    }

    /// The first object whose attribute equals a value, or a new one with that value.
    ///
    /// ```swift
    /// let ada = Person.mr_findFirstOrCreate(byAttribute: "name", withValue: "Ada")
    /// ```
    @discardableResult
    public class func mr_findFirstOrCreate(byAttribute attribute: String, withValue searchValue: Any) -> Self {
        mr_findFirstOrCreate(byAttribute: attribute, withValue: searchValue, in: .mr_default())
    }

    /// The objects whose attribute equals a value.
    ///
    /// ```swift
    /// let adas = Person.mr_find(byAttribute: "name", withValue: "Ada")
    /// ```
    public class func mr_find(byAttribute attribute: String, withValue searchValue: Any) -> [NSManagedObject]? {
        mr_find(byAttribute: attribute, withValue: searchValue, in: .mr_default())
    }

    /// The objects whose attribute equals a value, sorted by MagicalRecord's sort string.
    ///
    /// ```swift
    /// let adas = Person.mr_find(byAttribute: "name", withValue: "Ada", andOrderBy: "age", ascending: true)
    /// ```
    public class func mr_find(byAttribute attribute: String, withValue searchValue: Any, andOrderBy sortTerm: String?,
                              ascending: Bool) -> [NSManagedObject]? {
        mr_find(byAttribute: attribute, withValue: searchValue, andOrderBy: sortTerm, ascending: ascending, in: .mr_default())
    }

    // MARK: Fetched results controllers (NSManagedObject+MagicalFetching)

    /// A fetched results controller over every object, fetched, with a delegate.
    ///
    /// ```swift
    /// let controller = Person.mr_fetchAll(withDelegate: self)
    /// ```
    public class func mr_fetchAll(withDelegate delegate: (any NSFetchedResultsControllerDelegate)?) -> NSFetchedResultsController<NSFetchRequestResult> {
        mr_fetchAll(withDelegate: delegate, in: .mr_default())
    }

    /// A fetched results controller over the objects that match a predicate, sorted and grouped.
    ///
    /// ```swift
    /// let controller = Person.mr_fetchAllSorted(by: "name", ascending: true, with: nil, groupBy: "city", delegate: self)
    /// ```
    public class func mr_fetchAllSorted(by sortTerm: String?, ascending: Bool, with searchTerm: NSPredicate?, groupBy groupingKeyPath: String?,
                                        delegate: (any NSFetchedResultsControllerDelegate)?) -> NSFetchedResultsController<NSFetchRequestResult> {
        mr_fetchAllSorted(by: sortTerm, ascending: ascending, with: searchTerm, groupBy: groupingKeyPath, delegate: delegate, in: .mr_default())
    }

    /// A fetched results controller grouped into sections by a key path, fetched.
    ///
    /// ```swift
    /// let controller = Person.mr_fetchAllGrouped(by: "city", with: nil, sortedBy: "city,name", ascending: true)
    /// ```
    public class func mr_fetchAllGrouped(by group: String?, with searchTerm: NSPredicate?, sortedBy sortTerm: String?,
                                         ascending: Bool) -> NSFetchedResultsController<NSFetchRequestResult> {
        mr_fetchAllGrouped(by: group, with: searchTerm, sortedBy: sortTerm, ascending: ascending, in: .mr_default())
    }

    /// A fetched results controller grouped into sections by a key path, with a delegate, fetched.
    ///
    /// ```swift
    /// let controller = Person.mr_fetchAllGrouped(by: "city", with: nil, sortedBy: "city,name", ascending: true, delegate: self)
    /// ```
    public class func mr_fetchAllGrouped(by group: String?, with searchTerm: NSPredicate?, sortedBy sortTerm: String?, ascending: Bool,
                                         delegate: (any NSFetchedResultsControllerDelegate)?) -> NSFetchedResultsController<NSFetchRequestResult> {
        mr_fetchAllGrouped(by: group, with: searchTerm, sortedBy: sortTerm, ascending: ascending, delegate: delegate, in: .mr_default())
    }

    // MARK: Counts and aggregates (NSManagedObject+MagicalAggregation)

    /// How many objects of this class's entity the default context has.
    ///
    /// ```swift
    /// let count = Person.mr_numberOfEntities().intValue
    /// ```
    public class func mr_numberOfEntities() -> NSNumber { mr_numberOfEntities(with: NSManagedObjectContext.mr_default()) }

    /// How many objects match a predicate.
    ///
    /// ```swift
    /// let adults = Person.mr_numberOfEntities(with: NSPredicate(format: "age >= 18"))
    /// ```
    public class func mr_numberOfEntities(with searchTerm: NSPredicate?) -> NSNumber {
        mr_numberOfEntities(with: searchTerm, in: .mr_default())
    }

    /// How many objects of this class's entity the default context has.
    ///
    /// ```swift
    /// let count = Person.mr_countOfEntities()
    /// ```
    public class func mr_countOfEntities() -> UInt { mr_countOfEntities(with: NSManagedObjectContext.mr_default()) }

    /// How many objects match a predicate.
    ///
    /// ```swift
    /// let adults = Person.mr_countOfEntities(with: NSPredicate(format: "age >= 18"))
    /// ```
    public class func mr_countOfEntities(with searchFilter: NSPredicate?) -> UInt {
        mr_countOfEntities(with: searchFilter, in: .mr_default())
    }

    /// Whether the default context has an object of this class's entity.
    ///
    /// ```swift
    /// if Person.mr_hasAtLeastOneEntity() { … }
    /// ```
    public class func mr_hasAtLeastOneEntity() -> Bool { mr_hasAtLeastOneEntity(in: .mr_default()) }

    /// An aggregate (`"sum:"`, `"max:"`, …) of an attribute over the objects that match a predicate.
    ///
    /// ```swift
    /// let total = Person.mr_aggregateOperation("sum:", onAttribute: "age", with: nil)
    /// ```
    public class func mr_aggregateOperation(_ function: String, onAttribute attributeName: String, with predicate: NSPredicate?) -> Any? {
        mr_aggregateOperation(function, onAttribute: attributeName, with: predicate, in: .mr_default())
    }

    /// An aggregate of an attribute, one per group.
    ///
    /// ```swift
    /// let byCity = Person.mr_aggregateOperation("sum:", onAttribute: "age", with: nil, groupBy: "city")
    /// ```
    public class func mr_aggregateOperation(_ collectionOperator: String, onAttribute attributeName: String, with predicate: NSPredicate?,
                                            groupBy groupingKeyPath: String?) -> [Any]? {
        mr_aggregateOperation(collectionOperator, onAttribute: attributeName, with: predicate, groupBy: groupingKeyPath, in: .mr_default())
    }

    // MARK: Importing (NSManagedObject+MagicalDataImport)

    /// Imports one object's data (a dictionary) into the default context.
    ///
    /// ```swift
    /// let person = Person.mr_import(from: ["name": "Ada", "personID": 1])
    /// ```
    @discardableResult
    public class func mr_import(from data: Any) -> Self { mr_import(from: data, in: .mr_default()) }

    /// Imports a list of objects' data into the default context.
    ///
    /// ```swift
    /// let people = Person.mr_import(from: json as [Any])
    /// ```
    @discardableResult
    public class func mr_import(from listOfObjectData: [Any]) -> [NSManagedObject] { mr_import(from: listOfObjectData, in: .mr_default()) }
}
