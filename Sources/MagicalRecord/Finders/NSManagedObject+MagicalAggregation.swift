import CoreData
import Foundation

// MagicalRecord's `NSManagedObject (MagicalAggregation)` category (2.3): counts, and aggregate
// functions run by the store as dictionary fetches. A count that fails is 0 and a failed
// aggregate nil; their errors are logged. Only the forms that take a context are here.

extension NSManagedObject {
    /// The number of objects of this class's entity in the context, as an `NSNumber`.
    ///
    /// ```swift
    /// let total = Person.mr_numberOfEntities(with: context).intValue
    /// ```
    public class func mr_numberOfEntities(with context: NSManagedObjectContext) -> NSNumber {
        NSNumber(value: mr_countOfEntities(with: context))
    }

    /// The number of objects that match a predicate, as an `NSNumber`.
    ///
    /// ```swift
    /// let adults = Person.mr_numberOfEntities(with: NSPredicate(format: "age >= 18"), in: context)
    /// ```
    public class func mr_numberOfEntities(with searchTerm: NSPredicate?, in context: NSManagedObjectContext) -> NSNumber {
        NSNumber(value: mr_countOfEntities(with: searchTerm, in: context))
    }

    /// The number of objects of this class's entity in the context (saved and unsaved); 0 if the
    /// count failed (its error is logged).
    ///
    /// ```swift
    /// let total = Person.mr_countOfEntities(with: context)
    /// ```
    public class func mr_countOfEntities(with context: NSManagedObjectContext) -> UInt {
        mr_countOfEntities(with: nil, in: context)
    }

    /// The number of objects that match a predicate (all for nil); 0 if the count failed.
    ///
    /// ```swift
    /// let adults = Person.mr_countOfEntities(with: NSPredicate(format: "age >= 18"), in: context)
    /// ```
    public class func mr_countOfEntities(with searchFilter: NSPredicate?, in context: NSManagedObjectContext) -> UInt {
        UInt(MagicalFetch.count(of: mr_requestAll(with: searchFilter, in: context), in: context))
    }

    /// Whether the context has at least one object of this class's entity.
    ///
    /// ```swift
    /// if Person.mr_hasAtLeastOneEntity(in: context) { … }
    /// ```
    public class func mr_hasAtLeastOneEntity(in context: NSManagedObjectContext) -> Bool {
        mr_countOfEntities(with: context) > 0
    }

    /// An aggregate function of an attribute over the objects that match a predicate, computed
    /// by the store: `function` is an `NSExpression` function name (`"sum:"`, `"average:"`,
    /// `"min:"`, `"max:"`, `"count:"`). Nil if there are no objects or the fetch failed (its error
    /// is logged). The result has the attribute's type, as MagicalRecord asks for it.
    ///
    /// ```swift
    /// let total = Car.mr_aggregateOperation("sum:", onAttribute: "price", with: nil, in: context) as? Double
    /// ```
    ///
    /// Unsaved changes do not count, as for any dictionary fetch.
    public class func mr_aggregateOperation(_ function: String, onAttribute attributeName: String, with predicate: NSPredicate?,
                                            in context: NSManagedObjectContext) -> Any? {
        let description = NSExpressionDescription()
        description.name = "result"
        description.expression = NSExpression(forFunction: function, arguments: [NSExpression(forKeyPath: attributeName)])
        description.expressionResultType = mr_entityDescription(in: context)?.attributesByName[attributeName]?.attributeType
            ?? .undefinedAttributeType
        let request = mr_requestAll(with: predicate, in: context)
        request.propertiesToFetch = [description]
        request.resultType = .dictionaryResultType
        request.fetchLimit = 1
        let row = MagicalFetch.results(of: request, in: context)?.first
        return (row as? [String: Any])?["result"] ?? (row as? NSDictionary)?["result"]
    }

    /// An aggregate function of an attribute per group of objects: one dictionary per value of
    /// `groupingKeyPath`, holding that value under its key path and the function's result (of the
    /// attribute's type) under `"result"`, as MagicalRecord 2.3 names it. Nil if the fetch failed
    /// (its error is logged).
    ///
    /// ```swift
    /// let totals = Car.mr_aggregateOperation("sum:", onAttribute: "price", with: nil,
    ///                                        groupBy: "make", in: context)
    /// // [["make": "Saab", "result": 42000.0], …]
    /// ```
    public class func mr_aggregateOperation(_ collectionOperator: String, onAttribute attributeName: String, with predicate: NSPredicate?,
                                            groupBy groupingKeyPath: String?, in context: NSManagedObjectContext) -> [Any]? {
        let description = NSExpressionDescription()
        description.name = "result"
        description.expression = NSExpression(forFunction: collectionOperator, arguments: [NSExpression(forKeyPath: attributeName)])
        description.expressionResultType = mr_entityDescription(in: context)?.attributesByName[attributeName]?.attributeType
            ?? .undefinedAttributeType
        let request = mr_requestAll(with: predicate, in: context)
        request.propertiesToFetch = (groupingKeyPath.map { [$0] as [Any] } ?? []) + [description]
        request.propertiesToGroupBy = groupingKeyPath.map { [$0] }
        request.resultType = .dictionaryResultType
        return MagicalFetch.results(of: request, in: context)
    }
}
