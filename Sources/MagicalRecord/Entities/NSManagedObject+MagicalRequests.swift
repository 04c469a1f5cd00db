import CoreData
import Foundation

// MagicalRecord's `NSManagedObject (MagicalRequests)` category (2.3): fetch requests for a
// class's entity, which the finders run. Only the forms that take a context are here.

extension NSManagedObject {
    /// The batch size of the sorted requests (`mr_requestAllSorted…`), 20 unless set.
    ///
    /// ```swift
    /// NSManagedObject.mr_setDefaultBatchSize(50)
    /// ```
    public class func mr_defaultBatchSize() -> UInt {
        MagicalBatchSize.value
    }

    /// Sets the batch size of the sorted requests, for every class.
    ///
    /// ```swift
    /// NSManagedObject.mr_setDefaultBatchSize(50)
    /// ```
    public class func mr_setDefaultBatchSize(_ newBatchSize: UInt) {
        MagicalBatchSize.value = newBatchSize
    }

    /// A fetch request for this class's entity in the context's model.
    ///
    /// ```swift
    /// let request = Person.mr_createFetchRequest(in: context)
    /// ```
    ///
    /// When the model has no entity for the class, the request names the entity
    /// ``mr_entityName()``, and running it fails with the store's error (the finders then
    /// return nil and log it).
    public class func mr_createFetchRequest(in context: NSManagedObjectContext) -> NSFetchRequest<NSFetchRequestResult> {
        let request = NSFetchRequest<NSFetchRequestResult>()
        if let entity = mr_entityDescription(in: context) {
            request.entity = entity
        } else {
            request.entityName = mr_entityName()
        }
        return request
    }

    /// A request for every object of this class's entity.
    ///
    /// ```swift
    /// let request = Person.mr_requestAll(in: context)
    /// ```
    public class func mr_requestAll(in context: NSManagedObjectContext) -> NSFetchRequest<NSFetchRequestResult> {
        mr_createFetchRequest(in: context)
    }

    /// A request for the objects of this class's entity that match a predicate (all for nil).
    ///
    /// ```swift
    /// let request = Person.mr_requestAll(with: NSPredicate(format: "age > 30"), in: context)
    /// ```
    public class func mr_requestAll(with searchTerm: NSPredicate?, in context: NSManagedObjectContext) -> NSFetchRequest<NSFetchRequestResult> {
        let request = mr_createFetchRequest(in: context)
        request.predicate = searchTerm
        return request
    }

    /// A request for the objects whose `property` equals `value`.
    ///
    /// ```swift
    /// let request = Person.mr_requestAllWhere("lastName", isEqualTo: "Lovelace", in: context)
    /// ```
    public class func mr_requestAllWhere(_ property: String, isEqualTo value: Any, in context: NSManagedObjectContext) -> NSFetchRequest<NSFetchRequestResult> {
        mr_requestAll(with: MagicalPredicates.attribute(property, equals: value), in: context)
    }

    /// A request for the first object that matches a predicate (`fetchLimit` 1).
    ///
    /// ```swift
    /// let request = Person.mr_requestFirst(with: NSPredicate(format: "age > 30"), in: context)
    /// ```
    public class func mr_requestFirst(with searchTerm: NSPredicate?, in context: NSManagedObjectContext) -> NSFetchRequest<NSFetchRequestResult> {
        let request = mr_requestAll(with: searchTerm, in: context)
        request.fetchLimit = 1
        return request
    }

    /// A request for the first object whose `attribute` equals `searchValue` (`fetchLimit` 1);
    /// a nil value matches objects whose attribute is nil.
    ///
    /// ```swift
    /// let request = Person.mr_requestFirst(byAttribute: "personID", withValue: 7, in: context)
    /// ```
    public class func mr_requestFirst(byAttribute attribute: String, withValue searchValue: Any?,
                                      in context: NSManagedObjectContext) -> NSFetchRequest<NSFetchRequestResult> {
        let request = mr_requestAll(with: MagicalPredicates.attribute(attribute, equals: searchValue), in: context)
        request.fetchLimit = 1
        return request
    }

    /// A request for every object, sorted by `sortTerm`, with ``mr_defaultBatchSize()``.
    ///
    /// `sortTerm` is MagicalRecord's sort string: keys separated by commas, each optionally
    /// followed by `:` and a Boolean (`"lastName,age:NO"`), which sets the direction of that key
    /// and, as in MagicalRecord, of the keys after it that have none (`YES`, `true`, `1`:
    /// ascending; anything else: descending).
    ///
    /// ```swift
    /// let request = Person.mr_requestAllSorted(by: "lastName,firstName", ascending: true, in: context)
    /// ```
    public class func mr_requestAllSorted(by sortTerm: String, ascending: Bool, in context: NSManagedObjectContext) -> NSFetchRequest<NSFetchRequestResult> {
        mr_requestAllSorted(by: sortTerm, ascending: ascending, with: nil, in: context)
    }

    /// A request for the objects that match a predicate, sorted by `sortTerm` (see
    /// ``mr_requestAllSorted(by:ascending:in:)``), with ``mr_defaultBatchSize()``.
    ///
    /// ```swift
    /// let request = Person.mr_requestAllSorted(by: "age:NO", ascending: true,
    ///                                          with: NSPredicate(format: "age > 30"), in: context)
    /// ```
    public class func mr_requestAllSorted(by sortTerm: String, ascending: Bool, with searchTerm: NSPredicate?,
                                          in context: NSManagedObjectContext) -> NSFetchRequest<NSFetchRequestResult> {
        let request = mr_requestAll(with: searchTerm, in: context)
        request.fetchBatchSize = Int(clamping: mr_defaultBatchSize())
        request.sortDescriptors = MagicalSortTerm.descriptors(sortTerm, ascending: ascending)
        return request
    }
}

/// The batch size the sorted requests use (MagicalRecord's `kMagicalRecordDefaultBatchSize`).
internal enum MagicalBatchSize {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var stored: UInt = 20

    static var value: UInt {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}

/// MagicalRecord's sort strings: `"key1,key2:NO"`.
internal enum MagicalSortTerm {
    /// One sort descriptor per comma-separated key. A `key:flag` sets the direction from the
    /// flag's Boolean value (as `-[NSString boolValue]` reads it), for that key and the keys after
    /// it, as MagicalRecord does.
    static func descriptors(_ sortTerm: String, ascending: Bool) -> [NSSortDescriptor] {
        var ascending = ascending
        return sortTerm.components(separatedBy: ",").map { sortKey in
            let parts = sortKey.components(separatedBy: ":")
            if parts.count > 1 { ascending = MagicalStringValue.bool(parts[parts.count - 1]) }
            return NSSortDescriptor(key: parts[0], ascending: ascending)
        }
    }
}

/// What `-[NSString boolValue]` reads, for sort strings and imported Booleans.
internal enum MagicalStringValue {
    /// `-[NSString boolValue]`: true for a string whose first character after leading
    /// whitespace, an optional sign and leading zeros is `Y`, `y`, `T`, `t` or a digit 1–9.
    static func bool(_ string: String) -> Bool {
        var rest = Substring(string).drop { $0.isWhitespace }
        if let sign = rest.first, sign == "+" || sign == "-" { rest = rest.dropFirst() }
        rest = rest.drop { $0 == "0" }
        guard let first = rest.first else { return false }
        return "YyTt123456789".contains(first)
    }
}

/// The predicates the finders build.
internal enum MagicalPredicates {
    /// `attribute == value` (MagicalRecord's `%K = %@`); a nil value matches nil.
    static func attribute(_ attribute: String, equals value: Any?) -> NSPredicate {
        NSComparisonPredicate(leftExpression: NSExpression(forKeyPath: attribute),
                              rightExpression: NSExpression(forConstantValue: value is NSNull ? nil : value),
                              modifier: .direct, type: .equalTo)
    }
}
