import CoreData
import Foundation

// MagicalRecord's `NSManagedObject (MagicalFinders)` category (2.3): fetch and return objects
// of a class's entity. Each runs its request on the context's queue (`performAndWait`); a fetch
// that fails returns nil and logs its error, as MagicalRecord's `handleErrors:` does. Only the
// forms that take a context are here.

extension NSManagedObject {
    /// Every object of this class's entity in the context (saved and unsaved); nil if the fetch
    /// failed.
    ///
    /// ```swift
    /// let people = Person.mr_findAll(in: context) as? [Person] ?? []
    /// ```
    public class func mr_findAll(in context: NSManagedObjectContext) -> [NSManagedObject]? {
        mr_executeFetchRequest(mr_requestAll(in: context), in: context)
    }

    /// Every object, sorted by MagicalRecord's sort string (`"lastName,age:NO"`: see
    /// ``mr_requestAllSorted(by:ascending:in:)``).
    ///
    /// ```swift
    /// let people = Person.mr_findAllSorted(by: "lastName,firstName", ascending: true, in: context)
    /// ```
    public class func mr_findAllSorted(by sortTerm: String, ascending: Bool, in context: NSManagedObjectContext) -> [NSManagedObject]? {
        mr_executeFetchRequest(mr_requestAllSorted(by: sortTerm, ascending: ascending, in: context), in: context)
    }

    /// The objects that match a predicate, sorted by MagicalRecord's sort string.
    ///
    /// ```swift
    /// let adults = Person.mr_findAllSorted(by: "age", ascending: false,
    ///                                      with: NSPredicate(format: "age >= 18"), in: context)
    /// ```
    public class func mr_findAllSorted(by sortTerm: String, ascending: Bool, with searchTerm: NSPredicate?,
                                       in context: NSManagedObjectContext) -> [NSManagedObject]? {
        mr_executeFetchRequest(mr_requestAllSorted(by: sortTerm, ascending: ascending, with: searchTerm, in: context), in: context)
    }

    /// The objects that match a predicate (all for nil).
    ///
    /// ```swift
    /// let adults = Person.mr_findAll(with: NSPredicate(format: "age >= 18"), in: context)
    /// ```
    public class func mr_findAll(with searchTerm: NSPredicate?, in context: NSManagedObjectContext) -> [NSManagedObject]? {
        mr_executeFetchRequest(mr_requestAll(with: searchTerm, in: context), in: context)
    }

    /// The first object of this class's entity (in the store's order); nil if there is none.
    ///
    /// ```swift
    /// let anyone = Person.mr_findFirst(in: context)
    /// ```
    public class func mr_findFirst(in context: NSManagedObjectContext) -> Self? {
        mr_executeFetchRequestAndReturnFirstObject(mr_requestAll(in: context), in: context)
    }

    /// The first object that matches a predicate.
    ///
    /// ```swift
    /// let adult = Person.mr_findFirst(with: NSPredicate(format: "age >= 18"), in: context)
    /// ```
    public class func mr_findFirst(with searchTerm: NSPredicate?, in context: NSManagedObjectContext) -> Self? {
        mr_executeFetchRequestAndReturnFirstObject(mr_requestFirst(with: searchTerm, in: context), in: context)
    }

    /// The first object that matches a predicate in the order of a sort string (`property` may
    /// be MagicalRecord's `"key1,key2:NO"`; nil: the store's order).
    ///
    /// ```swift
    /// let youngest = Person.mr_findFirst(with: nil, sortedBy: "age", ascending: true, in: context)
    /// ```
    public class func mr_findFirst(with searchTerm: NSPredicate?, sortedBy property: String?, ascending: Bool,
                                   in context: NSManagedObjectContext) -> Self? {
        let request = property.map { mr_requestAllSorted(by: $0, ascending: ascending, with: searchTerm, in: context) }
            ?? mr_requestAll(with: searchTerm, in: context)
        return mr_executeFetchRequestAndReturnFirstObject(request, in: context)
    }

    /// The first object that matches a predicate, fetched with only the named attributes
    /// (`propertiesToFetch`).
    ///
    /// ```swift
    /// let adult = Person.mr_findFirst(with: NSPredicate(format: "age >= 18"),
    ///                                 andRetrieveAttributes: ["name"], in: context)
    /// ```
    public class func mr_findFirst(with searchTerm: NSPredicate?, andRetrieveAttributes attributes: [Any]?,
                                   in context: NSManagedObjectContext) -> Self? {
        let request = mr_requestAll(with: searchTerm, in: context)
        request.propertiesToFetch = attributes
        return mr_executeFetchRequestAndReturnFirstObject(request, in: context)
    }

    /// The first object whose `attribute` equals `searchValue`.
    ///
    /// ```swift
    /// let ada = Person.mr_findFirst(byAttribute: "name", withValue: "Ada", in: context)
    /// ```
    public class func mr_findFirst(byAttribute attribute: String, withValue searchValue: Any,
                                   in context: NSManagedObjectContext) -> Self? {
        mr_executeFetchRequestAndReturnFirstObject(mr_requestFirst(byAttribute: attribute, withValue: searchValue, in: context), in: context)
    }

    /// The first object in the order of `attribute` (the smallest when ascending).
    ///
    /// ```swift
    /// let oldest = Person.mr_findFirstOrdered(byAttribute: "age", ascending: false, in: context)
    /// ```
    public class func mr_findFirstOrdered(byAttribute attribute: String, ascending: Bool,
                                          in context: NSManagedObjectContext) -> Self? {
        mr_executeFetchRequestAndReturnFirstObject(mr_requestAllSorted(by: attribute, ascending: ascending, in: context), in: context)
    }

    /// The first object whose `attribute` equals `searchValue`, or a new object inserted with
    /// that value.
    ///
    /// ```swift
    /// let ada = Person.mr_findFirstOrCreate(byAttribute: "name", withValue: "Ada", in: context)
    /// ```
    ///
    /// A class with no entity in the context's model is a programmer error and stops the process
    /// (MagicalRecord's declared non-nil result would be nil).
    @discardableResult
    public class func mr_findFirstOrCreate(byAttribute attribute: String, withValue searchValue: Any,
                                           in context: NSManagedObjectContext) -> Self {
        if let found = mr_findFirst(byAttribute: attribute, withValue: searchValue, in: context) { return found }
        guard let created = mr_createEntity(in: context) else {
            preconditionFailure("mr_findFirstOrCreate: no entity for class \(String(reflecting: self)) in the context's model")
        }
        created.setValue(searchValue, forKey: attribute)
        return created
    }

    /// The objects whose `attribute` equals `searchValue`.
    ///
    /// ```swift
    /// let lovelaces = Person.mr_find(byAttribute: "lastName", withValue: "Lovelace", in: context)
    /// ```
    public class func mr_find(byAttribute attribute: String, withValue searchValue: Any,
                              in context: NSManagedObjectContext) -> [NSManagedObject]? {
        mr_executeFetchRequest(mr_requestAllWhere(attribute, isEqualTo: searchValue, in: context), in: context)
    }

    /// The objects whose `attribute` equals `searchValue`, sorted by a sort string (nil: the
    /// store's order).
    ///
    /// ```swift
    /// let lovelaces = Person.mr_find(byAttribute: "lastName", withValue: "Lovelace",
    ///                                andOrderBy: "firstName", ascending: true, in: context)
    /// ```
    public class func mr_find(byAttribute attribute: String, withValue searchValue: Any, andOrderBy sortTerm: String?,
                              ascending: Bool, in context: NSManagedObjectContext) -> [NSManagedObject]? {
        let predicate = MagicalPredicates.attribute(attribute, equals: searchValue)
        let request = sortTerm.map { mr_requestAllSorted(by: $0, ascending: ascending, with: predicate, in: context) }
            ?? mr_requestAll(with: predicate, in: context)
        return mr_executeFetchRequest(request, in: context)
    }
}
