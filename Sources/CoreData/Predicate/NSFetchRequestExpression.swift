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
/// - A fetch or count (of a context or a fetched results controller), a batch update or delete,
///   a dictionary fetch's column or a history request that holds one runs its fetch first, once,
///   on the expression's context with `performAndWait`, and works with the result; an error of
///   that fetch is thrown by the outer request. Stores (yours included) and a parent context get
///   the predicate with the result in place of `FETCH(…)`.
/// - Apple's SQLite store may compile the fetch into a SQL subquery instead, which sees only
///   saved rows; here the fetch is the context's `fetch(_:)`, so it sees the context's unsaved
///   changes as its request's `includesPendingChanges` says.
/// - The result stands in the predicate as it is (objects are compared by ID), and a dictionary
///   result of one property as that property's values (nil ones left out), as a SQL subquery
///   selects one column. A key path from the fetch (`%@.name`) is read on the expression's
///   context's queue.
/// - A fetched results controller runs the fetch at `performFetch()`; the changes it tracks
///   afterwards are judged against that result.
/// - The outer context waits for the expression's context: as with any `performAndWait`, two
///   contexts that wait for each other's queues (a main-queue context's fetch with a `FETCH` on a
///   background context whose queue waits for the main queue) deadlock.
/// - A request whose predicate holds, through `FETCH(…)`s, a fetch of itself throws 134060.
/// - `expressionValue(with:context:)` returns the fetch's results (or its count as a number) as
///   `fetch(_:)` returns them. Evaluated in memory where nothing can throw
///   (`NSPredicate.evaluate(with:)`), a fetch that fails is logged and reads as `nil`.
/// - Linux difference: `NSExpression(format: "FETCH(…)")` gives an `NSExpression` whose
///   ``NSExpression/expressionType`` is ``NSFetchRequestExpressionType`` but which is not an
///   `NSFetchRequestExpression` (an initializer cannot return a subclass); it evaluates the same.
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
}

/// A fetch request whatever its result type, as a fetch request expression runs it.
internal protocol ExpressionFetchRequest: AnyObject {
    /// What `fetch(_:)` on `context` returns, or `count(for:)` as an `NSNumber` when `countOnly`.
    func expressionResults(in context: NSManagedObjectContext, countOnly: Bool) throws -> Any
    /// The key of a dictionary result's one column: the request asks for dictionaries of one
    /// property or expression. `nil` otherwise.
    var singleColumnKey: String? { get }
    /// The request's predicate, parsed (`nil` for none, or one that is not a format).
    var expressionPredicateTree: PredicateNode? { get }
    /// The request without its predicate, for `FETCH(…)`'s description (a predicate could hold
    /// the request itself).
    var expressionDescription: String { get }
}

extension NSFetchRequest: ExpressionFetchRequest {
    func expressionResults(in context: NSManagedObjectContext, countOnly: Bool) throws -> Any {
        if countOnly { return NSNumber(value: try context.count(for: self)) }
        return try context.fetch(self).map { $0 as Any }
    }

    var singleColumnKey: String? {
        guard resultType == .dictionaryResultType, let properties = propertiesToFetch, properties.count == 1 else { return nil }
        switch properties[0] {
        case let name as String: return name
        case let description as NSPropertyDescription: return description.name
        case let keyPath as AnyKeyPath: return (try? TypedKeyPaths.names(of: keyPath))?.joined(separator: ".")
        default: return nil
        }
    }

    var expressionPredicateTree: PredicateNode? { try? predicate?.predicateTree() } // (no FETCH in one that is not a format)

    var expressionDescription: String { "<NSFetchRequest: \(ObjectIdentifier(self)), entity: \(entityName ?? "nil")>" }
}

/// Running the fetches of `FETCH(…)` expressions.
internal enum FetchRequestExpressions {
    /// The fetch request and context of a fetch request expression, checked: throws 134060 for
    /// operands of the wrong kind, or for a request whose predicate holds a `FETCH(…)` of a
    /// request being run (it would run itself without end).
    private static func operands(_ request: Any?, _ context: Any?) throws -> (ExpressionFetchRequest, NSManagedObjectContext) {
        guard let fetch = request as? ExpressionFetchRequest else {
            throw CoreDataError.make(.coreData, "A fetch request expression needs an NSFetchRequest, not \(request.map { "\(type(of: $0))" } ?? "nil")")
        }
        guard let context = context as? NSManagedObjectContext else {
            throw CoreDataError.make(.coreData, "A fetch request expression needs an NSManagedObjectContext, not \(context.map { "\(type(of: $0))" } ?? "nil")")
        }
        var walked: Set<ObjectIdentifier> = []
        if let cycle = cycle(from: fetch, done: &walked) {
            throw CoreDataError.make(.coreData, "A fetch request expression's request \(cycle.expressionDescription) holds, in its predicate or one of its fetch requests' predicates, a FETCH of itself: it would run without end")
        }
        return (fetch, context)
    }

    /// A request that a chain of `FETCH(…)` predicates from `request` reaches again, if any.
    /// `done` holds the requests whose chains were walked already: each is walked once.
    private static func cycle(from request: ExpressionFetchRequest, path: [ObjectIdentifier] = [],
                              done: inout Set<ObjectIdentifier>) -> ExpressionFetchRequest? {
        let id = ObjectIdentifier(request)
        if path.contains(id) { return request }
        guard done.insert(id).inserted, let tree = request.expressionPredicateTree else { return nil }
        var found: ExpressionFetchRequest?
        _ = tree.containsExpression { expression in
            guard case .fetchRequest(.constant(let value), _, _) = expression,
                  let inner = value.walkable as? ExpressionFetchRequest else { return false }
            found = cycle(from: inner, path: path + [id], done: &done)
            return found != nil // (the walk stops at the first cycle)
        }
        return found
    }

    /// Runs the fetch of a fetch request expression on its context's queue (reentrant when the
    /// caller is on it already): what `fetch(_:)` returns, or the count as an `NSNumber`.
    /// Throws the fetch's error, or 134060 (``operands(_:_:)``).
    static func run(request: Any?, context: Any?, countOnly: Bool) throws -> Any {
        let (fetch, context) = try operands(request, context)
        return try context.performAndWait { try fetch.expressionResults(in: context, countOnly: countOnly) }
    }

    /// ``run(request:context:countOnly:)`` for `expressionValue(with:context:)`, which cannot
    /// throw: a failed fetch is logged and gives `nil`.
    static func expressionValue(request: Any?, context: Any?, countOnly: Bool) -> Any? {
        do {
            return try run(request: request, context: context, countOnly: countOnly)
        } catch {
            CoreDataLog.error("FETCH(…, \(countOnly ? "YES" : "NO")) could not run its fetch, and gives nil: \((error as NSError).localizedDescription)")
            return nil
        }
    }

    /// The value of a `FETCH(…)` inside a predicate, followed by `keyPath` (`%@.name`, read on
    /// the fetch's context's queue): without a key path, a dictionary result of one column is
    /// that column's values (nil ones left out), as a SQL subquery selects one column.
    static func operandValue(request: Any?, context: Any?, countOnly: Bool, keyPath: [String] = []) throws -> PredicateValue {
        let (fetch, context) = try operands(request, context)
        return try context.performAndWait {
            // The async fetch that may be running on this context counts its own rows only.
            let observer = context._fetchRowObserver
            context._fetchRowObserver = nil
            defer { context._fetchRowObserver = observer }
            let results = try fetch.expressionResults(in: context, countOnly: countOnly)
            if !keyPath.isEmpty { return PredicateValue(PredicateKeyValue.value(of: results, keyPath: keyPath)) }
            if let key = fetch.singleColumnKey, let rows = results as? [Any] {
                return PredicateValue(rows.compactMap { ($0 as? [String: Any])?[key] })
            }
            return PredicateValue(results)
        }
    }

    /// ``operandValue(request:context:countOnly:keyPath:)`` where nothing can throw (in-memory
    /// evaluation): a failed fetch is logged and reads as `nil`.
    static func evaluate(request: Any?, context: Any?, countOnly: Bool, keyPath: [String] = []) -> PredicateValue {
        do {
            return try operandValue(request: request, context: context, countOnly: countOnly, keyPath: keyPath)
        } catch {
            CoreDataLog.error("FETCH(…, \(countOnly ? "YES" : "NO")) in a predicate evaluated in memory could not run its fetch, and reads as nil: \((error as NSError).localizedDescription)")
            return .null
        }
    }
}

extension PredicateNode {
    /// The predicate with each `FETCH(…)` (and key path from one) replaced by its value, fetched
    /// now: what a fetch, count or batch request does before its store sees the predicate.
    /// Throws the first fetch's error. The predicate's own variables must be substituted already.
    func runningFetchRequestExpressions() throws -> PredicateNode {
        guard containsFetchRequestExpression else { return self }
        return try replacingExpressions(ExpressionNode.fetchRequestValue)
    }

    /// Whether a `FETCH(…)` appears anywhere in the predicate (most predicates: no, cheaply).
    var containsFetchRequestExpression: Bool { containsExpression(where: ExpressionNode.isFetchRequest) }
}

extension ExpressionNode {
    /// The expression with each `FETCH(…)` replaced by its value, fetched now (a batch update's
    /// value, a dictionary fetch's column), as ``PredicateNode/runningFetchRequestExpressions()``.
    func runningFetchRequestExpressions() throws -> ExpressionNode {
        guard containsFetchRequestExpression else { return self }
        return try replacing(ExpressionNode.fetchRequestValue)
    }

    /// The rule that replaces a `FETCH(…)`, or a key path from one, by its value.
    fileprivate static func fetchRequestValue(_ expression: ExpressionNode) throws -> ExpressionNode? {
        let (fetch, keyPath): (ExpressionNode, [String])
        switch expression {
        case .fetchRequest: (fetch, keyPath) = (expression, [])
        case .keyPathFrom(let base, let path):
            guard case .fetchRequest = base else { return nil }
            (fetch, keyPath) = (base, path)
        default: return nil
        }
        guard case .fetchRequest(let request, let context, let countOnly) = fetch else { return nil }
        let evaluator = PredicateEvaluator(variables: [:])
        return .constant(try FetchRequestExpressions.operandValue(request: evaluator.value(of: request, object: nil).walkable,
                                                                 context: evaluator.value(of: context, object: nil).walkable,
                                                                 countOnly: countOnly, keyPath: keyPath))
    }

    fileprivate var containsFetchRequestExpression: Bool { contains(where: ExpressionNode.isFetchRequest) }

    fileprivate static func isFetchRequest(_ expression: ExpressionNode) -> Bool {
        if case .fetchRequest = expression { return true } else { return false }
    }
}
