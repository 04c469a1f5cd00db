import Foundation

/// Apple's expression type for an ``NSFetchRequestExpression`` (50).
///
/// ```swift
/// if expression.expressionType == NSFetchRequestExpressionType { … }
/// ```
public let NSFetchRequestExpressionType = NSExpression.ExpressionType.fetchRequest

/// An expression whose value is the result of a fetch request executed on a context: the objects
/// (or IDs, or dictionaries) the request fetches, or their count.
///
/// Use one in a predicate as a subquery the context runs first:
///
/// ```swift
/// let departments = NSFetchRequest<NSFetchRequestResult>(entityName: "Department")
/// departments.predicate = NSPredicate(format: "budget > 1000")
/// let rich = NSFetchRequestExpression.expression(forFetch: NSExpression(forConstantValue: departments),
///                                                context: NSExpression(forConstantValue: context),
///                                                countOnly: false)
/// let employees = NSFetchRequest<Employee>(entityName: "Employee")
/// employees.predicate = NSPredicate(format: "department IN %@", rich)
/// ```
///
/// How it runs here:
/// - A fetch, count or batch request whose predicate holds one runs its fetch first, on its
///   context (with `performAndWait`, so another context's queue is respected), and compares
///   with the result; an error of that fetch is thrown by the outer request. Apple's SQLite
///   store may compile the fetch into a SQL subquery instead; the results are the same.
/// - Inside a predicate, a dictionary result whose dictionaries have one key stands for that
///   key's values (`name IN FETCH(…)` with `propertiesToFetch = ["name"]`), as a SQL subquery
///   selects one column.
/// - ``expressionValue(with:context:)`` returns the fetch's results (or its count as a number)
///   as `fetch(_:)` returns them.
/// - Evaluated in memory where nothing can throw (`NSPredicate.evaluate(with:)`), a fetch that
///   fails is logged and reads as `nil`.
open class NSFetchRequestExpression: NSExpression {
    /// An expression whose value is the result of the fetch request `fetch` evaluates to, executed
    /// on the context `context` evaluates to: its count when `countFlag` is true, otherwise what
    /// `fetch(_:)` returns.
    ///
    /// ```swift
    /// let count = NSFetchRequestExpression.expression(forFetch: NSExpression(forConstantValue: request),
    ///                                                 context: NSExpression(forConstantValue: context),
    ///                                                 countOnly: true)
    /// ```
    open class func expression(forFetch fetch: NSExpression, context: NSExpression, countOnly countFlag: Bool) -> NSExpression {
        NSFetchRequestExpression(node: .fetchRequest(fetch.node, context.node, countOnly: countFlag))
    }

    /// The expression that gives the fetch request.
    open var requestExpression: NSExpression {
        guard case .fetchRequest(let request, _, _) = node else { return NSExpression(forConstantValue: nil) }
        return NSExpression.wrapping(request)
    }

    /// The expression that gives the managed object context.
    open var contextExpression: NSExpression {
        guard case .fetchRequest(_, let context, _) = node else { return NSExpression(forConstantValue: nil) }
        return NSExpression.wrapping(context)
    }

    /// Whether the context counts the request's results (`count(for:)`) rather than fetching them.
    open var isCountOnlyRequest: Bool {
        guard case .fetchRequest(_, _, let countOnly) = node else { return false }
        return countOnly
    }

    /// The fetch's results as `fetch(_:)` returns them, or their count as an `NSNumber`; `nil`
    /// (and a log message) when the fetch fails or the expressions do not give a fetch request
    /// and a context.
    open override func expressionValue(with object: Any?, context: NSMutableDictionary?) -> Any? {
        guard case .fetchRequest(let request, let contextNode, let countOnly) = node else { return nil }
        var variables: [String: Any] = [:]
        context?.forEach { key, value in if let key = key as? String { variables[key] = value } }
        let evaluator = PredicateEvaluator(variables: variables)
        do {
            return try FetchRequestExpressions.run(request: evaluator.value(of: request, object: object).walkable,
                                                   context: evaluator.value(of: contextNode, object: object).walkable,
                                                   countOnly: countOnly)
        } catch {
            CoreDataLog.error("\(description) could not run its fetch: \((error as NSError).localizedDescription)")
            return nil
        }
    }
}

/// A fetch request whatever its result type, as a fetch request expression runs it.
internal protocol ExpressionFetchRequest {
    /// What `fetch(_:)` on `context` returns, or `count(for:)` as an `NSNumber` when `countOnly`.
    func expressionResults(in context: NSManagedObjectContext, countOnly: Bool) throws -> Any
}

extension NSFetchRequest: ExpressionFetchRequest {
    func expressionResults(in context: NSManagedObjectContext, countOnly: Bool) throws -> Any {
        if countOnly { return NSNumber(value: try context.count(for: self)) }
        return try context.fetch(self).map { $0 as Any }
    }
}

/// Running the fetches of `FETCH(…)` expressions.
internal enum FetchRequestExpressions {
    /// Runs the fetch of a fetch request expression: `request` must be a fetch request and
    /// `context` a managed object context. Runs on the context's queue (reentrant when the caller
    /// is on it already). Throws the fetch's error, or 134060 for operands of the wrong kind.
    static func run(request: Any?, context: Any?, countOnly: Bool) throws -> Any {
        guard let fetch = request as? ExpressionFetchRequest else {
            throw CoreDataError.make(.coreData, "A fetch request expression needs an NSFetchRequest, not \(request.map { "\(type(of: $0))" } ?? "nil")")
        }
        guard let context = context as? NSManagedObjectContext else {
            throw CoreDataError.make(.coreData, "A fetch request expression needs an NSManagedObjectContext, not \(context.map { "\(type(of: $0))" } ?? "nil")")
        }
        return try context.performAndWait { try fetch.expressionResults(in: context, countOnly: countOnly) }
    }

    /// The value of a `FETCH(…)` inside a predicate: its results, with one-key dictionaries
    /// standing for their values (a SQL subquery's one column).
    static func operandValue(request: Any?, context: Any?, countOnly: Bool) throws -> PredicateValue {
        let results = try run(request: request, context: context, countOnly: countOnly)
        guard let rows = results as? [Any], !rows.isEmpty,
              rows.allSatisfy({ ($0 as? [String: Any])?.count == 1 }) else { return PredicateValue(results) }
        return PredicateValue(rows.map { ($0 as! [String: Any]).first!.value })
    }

    /// ``operandValue(request:context:countOnly:)`` where nothing can throw (in-memory
    /// evaluation): a failed fetch is logged and reads as `nil`.
    static func evaluate(request: Any?, context: Any?, countOnly: Bool) -> PredicateValue {
        do {
            return try operandValue(request: request, context: context, countOnly: countOnly)
        } catch {
            CoreDataLog.error("FETCH(…, \(countOnly ? "YES" : "NO")) in a predicate evaluated in memory could not run its fetch, and reads as nil: \((error as NSError).localizedDescription)")
            return .null
        }
    }
}

extension PredicateNode {
    /// The predicate with each `FETCH(…)` replaced by its result, fetched now: what a fetch,
    /// count or batch request does before its store sees the predicate. Throws the first fetch's
    /// error. The predicate's own variables must be substituted already.
    func runningFetchRequestExpressions() throws -> PredicateNode {
        guard containsFetchRequestExpression else { return self }
        return try replacingExpressions { expression in
            guard case .fetchRequest(let request, let context, let countOnly) = expression else { return nil }
            let evaluator = PredicateEvaluator(variables: [:])
            return .constant(try FetchRequestExpressions.operandValue(request: evaluator.value(of: request, object: nil).walkable,
                                                                     context: evaluator.value(of: context, object: nil).walkable,
                                                                     countOnly: countOnly))
        }
    }

    /// Whether a `FETCH(…)` appears anywhere in the predicate (most predicates: no, cheaply).
    fileprivate var containsFetchRequestExpression: Bool {
        switch self {
        case .constant: return false
        case .and(let parts), .or(let parts): return parts.contains { $0.containsFetchRequestExpression }
        case .not(let inner): return inner.containsFetchRequestExpression
        case .comparison(let comparison):
            return comparison.lhs.containsFetchRequestExpression || comparison.rhs.containsFetchRequestExpression
        }
    }
}

extension ExpressionNode {
    fileprivate var containsFetchRequestExpression: Bool {
        switch self {
        case .fetchRequest: return true
        case .keyPath, .constant, .variable, .evaluatedObject: return false
        case .keyPathFrom(let base, _): return base.containsFetchRequestExpression
        case .aggregate(let items), .function(_, let items): return items.contains { $0.containsFetchRequestExpression }
        case .subquery(let collection, _, let predicate):
            return collection.containsFetchRequestExpression || predicate.containsFetchRequestExpression
        case .conditional(let predicate, let a, let b):
            return predicate.containsFetchRequestExpression || a.containsFetchRequestExpression || b.containsFetchRequestExpression
        }
    }
}
