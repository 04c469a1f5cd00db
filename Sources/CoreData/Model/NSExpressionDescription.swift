import Foundation

/// A column of a dictionary fetch computed from an expression: an aggregate (`sum:`, `average:`,
/// `count:`, `min:`, `max:` of an attribute over the fetched rows, or over each group with
/// `propertiesToGroupBy`), or a value computed for each row.
///
/// Put it in a fetch request's `propertiesToFetch` with `resultType = .dictionaryResultType`;
/// each result dictionary has the computed value under the description's ``NSPropertyDescription/name``.
///
/// ```swift
/// let total = NSExpressionDescription()
/// total.name = "total"
/// total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "price")])
/// total.expressionResultType = .doubleAttributeType
///
/// let request = NSFetchRequest<NSDictionary>(entityName: "Car")
/// request.resultType = .dictionaryResultType
/// request.propertiesToFetch = ["make", total]
/// request.propertiesToGroupBy = ["make"]
/// let rows = try context.fetch(request)   // [["make": "Ford", "total": 61000.0], …]
/// ```
///
/// The SQLite store computes the expression in SQL (`SUM`, `AVG`, `COUNT`, `MIN`, `MAX`, and the
/// functions a predicate may use); the in-memory store computes the same values in Swift.
open class NSExpressionDescription: NSPropertyDescription, @unchecked Sendable {
    /// The expression whose value the column holds.
    open var expression: NSExpression?
    /// The type of the value: the computed value is returned as this type (an `NSNumber` for
    /// numbers and Booleans, `Date`, `String`, `NSDecimalNumber`, …).
    /// `.undefinedAttributeType` (the default) returns it as computed: the attribute's type for
    /// `min:`/`max:` and plain key paths, an integer for `count:`, a number for the rest.
    open var expressionResultType: NSAttributeType = .undefinedAttributeType
    /// The type of the computed value; ``expressionResultType`` in Apple's iOS 15 spelling.
    ///
    /// ```swift
    /// total.resultType = .double
    /// ```
    public var resultType: NSAttributeDescription.AttributeType {
        get { NSAttributeDescription.AttributeType(expressionResultType) }
        set { expressionResultType = newValue.rawValue }
    }

    /// An empty expression description: set its name, ``expression`` and ``expressionResultType``.
    public required init() { super.init() }

    /// A copy with the same ``expression`` and ``expressionResultType``, in no entity.
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSExpressionDescription()
        copy.copyProperties(from: self)
        copy.expression = expression
        copy.expressionResultType = expressionResultType
        return copy
    }
}
