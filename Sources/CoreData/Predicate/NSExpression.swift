import Foundation

// Linux difference: swift-corelibs-foundation declares `NSExpression` but deprecates it as
// unsupported. This class, declared in CoreData (which imports Foundation), shadows Foundation's
// in code that imports CoreData, so `NSExpression(forKeyPath: "price")` means this one.

/// An expression in a predicate: a constant, a key path, a variable, `SELF`, a function, an
/// aggregate, a subquery or a conditional.
///
/// Comparison predicates compare two expressions; dictionary-result fetches compute them
/// through ``NSExpressionDescription``:
///
/// ```swift
/// let price = NSExpression(forKeyPath: "price")
/// let predicate = NSComparisonPredicate(leftExpression: price,
///                                       rightExpression: NSExpression(forConstantValue: 10),
///                                       modifier: .direct, type: .greaterThan)
/// let total = NSExpression(forFunction: "sum:", arguments: [price])
/// let doubled = NSExpression(format: "price * 2")
/// doubled.expressionValue(with: ["price": 21], context: nil) // 42
/// ```
open class NSExpression: NSObject, NSCopying {
    /// What kind of expression it is, with Apple's raw values.
    public enum ExpressionType: UInt, Sendable {
        case constantValue = 0
        case evaluatedObject = 1
        case variable = 2
        case keyPath = 3
        case function = 4
        case unionSet = 5
        case intersectSet = 6
        case minusSet = 7
        case subquery = 13
        case aggregate = 14
        case anyKey = 15
        case block = 19
        case conditional = 20
        /// An ``NSFetchRequestExpression``. Apple's Core Data declares this value as the constant
        /// ``NSFetchRequestExpressionType`` (50) outside the enumeration; Swift enumerations here
        /// need a case for it. Linux difference.
        case fetchRequest = 50
    }

    /// The parsed form, shared with the SQL compiler and the evaluator.
    internal let node: ExpressionNode

    internal init(node: ExpressionNode) {
        self.node = node
        super.init()
    }

    /// An expression for a parsed node: an ``NSFetchRequestExpression`` for `FETCH(…)`, as Apple's
    /// accessors (`leftExpression`, `arguments`, …) give one.
    internal static func wrapping(_ node: ExpressionNode) -> NSExpression {
        if case .fetchRequest = node { return NSFetchRequestExpression(node: node) }
        return NSExpression(node: node)
    }

    /// An expression of the given type; only `.evaluatedObject` needs nothing more (`SELF`).
    public convenience init(expressionType type: ExpressionType) {
        self.init(node: type == .evaluatedObject ? .evaluatedObject : .constant(.null))
    }

    /// Parses an expression in Apple's format syntax, with `%@`, `%K`, … taken from `args`.
    ///
    /// ```swift
    /// let expression = NSExpression(format: "%K + 1", "year")
    /// ```
    ///
    /// A malformed format is a programmer error (Apple raises an exception): it stops the process
    /// with the parse error. Use ``init(validatingFormat:argumentArray:)`` for formats from input.
    public convenience init(format expressionFormat: String, _ args: CVarArg...) {
        self.init(format: expressionFormat, argumentArray: args.map { $0 as Any })
    }

    /// Parses an expression, with `%@`, `%K`, … taken from `arguments`.
    ///
    /// A malformed format stops the process, as ``init(format:_:)``.
    public convenience init(format expressionFormat: String, argumentArray arguments: [Any]) {
        do {
            try self.init(validatingFormat: expressionFormat, argumentArray: arguments)
        } catch {
            preconditionFailure("NSExpression(format:): \(error.localizedDescription)")
        }
    }

    /// Parses an expression whose arguments come in a C `va_list`, as
    /// `NSPredicate(format:arguments:)` reads them.
    ///
    /// ```swift
    /// func expression(_ format: String, _ args: CVarArg...) -> NSExpression {
    ///     withVaList(args) { NSExpression(format: format, arguments: $0) }
    /// }
    /// ```
    ///
    /// A malformed format stops the process, as ``init(format:_:)``.
    public convenience init(format expressionFormat: String, arguments argList: CVaListPointer) {
        self.init(format: expressionFormat, argumentArray: PredicateVaList.arguments(for: expressionFormat, from: argList))
    }

    /// Parses an expression, throwing a parse error (`NSCocoaErrorDomain` 2048, naming the
    /// position) instead of stopping. Linux addition.
    ///
    /// ```swift
    /// let expression = try NSExpression(validatingFormat: "price * %@", argumentArray: [2])
    /// ```
    public convenience init(validatingFormat expressionFormat: String, argumentArray arguments: [Any]) throws {
        self.init(node: try PredicateParser.parseExpression(expressionFormat, arguments: arguments))
    }

    /// A constant: a number, string, date, collection, managed object, object ID, or `nil`.
    ///
    /// ```swift
    /// let ten = NSExpression(forConstantValue: 10)
    /// ```
    public convenience init(forConstantValue obj: Any?) {
        self.init(node: .constant(PredicateValue(obj)))
    }

    /// `SELF`: the object being evaluated.
    ///
    /// ```swift
    /// let me = NSExpression.expressionForEvaluatedObject()
    /// ```
    open class func expressionForEvaluatedObject() -> NSExpression {
        NSExpression(node: .evaluatedObject)
    }

    /// `$name`, replaced by `withSubstitutionVariables(_:)` or an evaluation's variables.
    ///
    /// ```swift
    /// let variable = NSExpression(forVariable: "NAME")
    /// ```
    public convenience init(forVariable string: String) {
        self.init(node: .variable(string))
    }

    /// A key path from the evaluated object (`"owner.name"`; `"SELF"` alone is the object).
    ///
    /// ```swift
    /// let ownerName = NSExpression(forKeyPath: "owner.name")
    /// ```
    public convenience init(forKeyPath keyPath: String) {
        let keys = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if keys.first?.uppercased() == "SELF" {
            self.init(node: keys.count == 1 ? .evaluatedObject : .keyPath(Array(keys.dropFirst())))
        } else {
            self.init(node: .keyPath(keys))
        }
    }

    /// A function of `parameters`, by Apple's names: `sum:`, `count:`, `min:`, `max:`,
    /// `average:`, `median:`, `mode:`, `stddev:`, `add:to:`, `from:subtract:`, `multiply:by:`,
    /// `divide:by:`, `modulus:by:`, `sqrt:`, `log:`, `ln:`, `raise:toPower:`, `exp:`,
    /// `ceiling:`, `floor:`, `abs:`, `trunc:`, `uppercase:`, `lowercase:`, `canonical:` (case and
    /// diacritics folded away, as derived attributes use it), `length:`,
    /// `bitwiseAnd:with:`, `bitwiseOr:with:`, `bitwiseXor:with:`, `leftshift:by:`,
    /// `rightshift:by:`, `onesComplement:`, `noindex:`, `random`, `random:`, `now`.
    ///
    /// An unknown name is a programmer error and stops the process (Apple raises an exception).
    ///
    /// ```swift
    /// let total = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "price")])
    /// ```
    public convenience init(forFunction name: String, arguments parameters: [Any]) {
        guard PredicateFunctions.isKnown(name, argumentCount: parameters.count) else {
            preconditionFailure("NSExpression(forFunction:arguments:): unsupported function '\(name)' with \(parameters.count) argument(s)")
        }
        self.init(node: .function(name, parameters.map(NSExpression.node(of:))))
    }

    /// An aggregate `{a, b, …}` of expressions.
    ///
    /// ```swift
    /// let bounds = NSExpression(forAggregate: [NSExpression(forConstantValue: 1), NSExpression(forConstantValue: 5)])
    /// ```
    public convenience init(forAggregate subexpressions: [NSExpression]) {
        self.init(node: .aggregate(subexpressions.map(\.node)))
    }

    /// `SUBQUERY(expression, $variable, predicate)`: the elements of a collection for which the
    /// predicate holds, with each element as `$variable`.
    ///
    /// ```swift
    /// let cheap = NSExpression(forSubquery: NSExpression(forKeyPath: "items"), usingIteratorVariable: "item",
    ///                          predicate: NSPredicate(format: "$item.price < 5"))
    /// let predicate = NSPredicate(format: "%@.@count > 0", cheap) // or compare NSExpression(format:)
    /// ```
    ///
    /// A block predicate is evaluated in memory (a fetch refuses it, as Apple's SQLite store
    /// does). A predicate made from a malformed format is a programmer error that stops the
    /// process, naming the problem.
    public convenience init(forSubquery expression: NSExpression, usingIteratorVariable variable: String, predicate: NSPredicate) {
        do {
            self.init(node: .subquery(expression.node, variable, try predicate.inMemoryTree(evaluating: variable)))
        } catch {
            preconditionFailure("NSExpression(forSubquery:): \(error.localizedDescription)")
        }
    }

    /// `TERNARY(predicate, trueExpression, falseExpression)`.
    ///
    /// ```swift
    /// let label = NSExpression(forConditional: NSPredicate(format: "price > 10"),
    ///                          trueExpression: NSExpression(forConstantValue: "dear"),
    ///                          falseExpression: NSExpression(forConstantValue: "cheap"))
    /// ```
    ///
    /// A block predicate is evaluated in memory (a fetch refuses it). A predicate made from a
    /// malformed format is a programmer error that stops the process, naming the problem.
    public convenience init(forConditional predicate: NSPredicate, trueExpression: NSExpression, falseExpression: NSExpression) {
        do {
            self.init(node: .conditional(try predicate.inMemoryTree(), trueExpression.node, falseExpression.node))
        } catch {
            preconditionFailure("NSExpression(forConditional:): \(error.localizedDescription)")
        }
    }

    /// The union of two collections: each element of `left` and `right` once, `left`'s first.
    ///
    /// ```swift
    /// let either = NSExpression(forUnionSet: NSExpression(forConstantValue: ["a", "b"]),
    ///                           with: NSExpression(forConstantValue: ["b", "c"]))
    /// NSPredicate(format: "name IN %@", either) // name IN {"a", "b", "c"}
    /// ```
    ///
    /// Evaluated in memory, or in a fetch when both operands are constants (folded before the
    /// store sees them: a SQLite or PostgreSQL store throws 134091 for one of stored values). The
    /// value is an array, each element once; see ``PredicateFunctions/setOperation(_:_:_:)`` for
    /// `nil`, dictionaries and single values.
    public convenience init(forUnionSet left: NSExpression, with right: NSExpression) {
        self.init(node: .function("unionSet:with:", [left.node, right.node]))
    }

    /// The elements of `left` that `right` also holds, each once.
    ///
    /// ```swift
    /// let both = NSExpression(forIntersectSet: NSExpression(forConstantValue: [1, 2, 3]),
    ///                         with: NSExpression(forConstantValue: [2, 3, 4])) // {2, 3}
    /// ```
    public convenience init(forIntersectSet left: NSExpression, with right: NSExpression) {
        self.init(node: .function("intersectSet:with:", [left.node, right.node]))
    }

    /// The elements of `left` that `right` does not hold, each once.
    ///
    /// ```swift
    /// let rest = NSExpression(forMinusSet: NSExpression(forConstantValue: [1, 2, 3]),
    ///                         with: NSExpression(forConstantValue: [2])) // {1, 3}
    /// ```
    public convenience init(forMinusSet left: NSExpression, with right: NSExpression) {
        self.init(node: .function("minusSet:with:", [left.node, right.node]))
    }

    /// An expression whose value `block` computes from the evaluated object, the values of
    /// `arguments`, and the evaluation's variables.
    ///
    /// ```swift
    /// let doubled = NSExpression(block: { _, args, _ in (args[0] as! Int) * 2 },
    ///                            arguments: [NSExpression(forKeyPath: "year")])
    /// NSPredicate(format: "%@ > 4000", doubled).evaluate(with: car)
    /// ```
    ///
    /// Evaluated in memory only (`evaluate(with:)`, `expressionValue(with:context:)`, validation
    /// predicates): a fetch or batch request whose predicate holds one throws 134091, from every
    /// kind of store, as Apple's SQLite store refuses it. The block gets the arguments' values as
    /// read (`NSNull()` for `nil`) and the `context` dictionary `expressionValue(with:context:)`
    /// was given (a dictionary of a predicate's substitution variables otherwise, empty if none). It runs on the queue of the
    /// code that evaluates it, and must not use other contexts.
    public convenience init(block: @escaping (Any?, [Any], NSMutableDictionary?) -> Any, arguments: [NSExpression]?) {
        self.init(node: .block(ExpressionBlock(block), (arguments ?? []).map(\.node)))
    }

    /// `NSExpression`s as they are, anything else as a constant.
    private static func node(of parameter: Any) -> ExpressionNode {
        (parameter as? NSExpression)?.node ?? .constant(PredicateValue(parameter))
    }

    // MARK: Properties

    /// The kind of expression.
    open var expressionType: ExpressionType {
        switch node {
        case .constant: return .constantValue
        case .evaluatedObject: return .evaluatedObject
        case .variable: return .variable
        case .keyPath, .keyPathFrom: return .keyPath
        case .function(let name, let args):
            switch name {
            case "unionSet:with:" where args.count == 2: return .unionSet
            case "intersectSet:with:" where args.count == 2: return .intersectSet
            case "minusSet:with:" where args.count == 2: return .minusSet
            default: return .function
            }
        case .block: return .block
        case .aggregate: return .aggregate
        case .subquery: return .subquery
        case .conditional: return .conditional
        case .fetchRequest: return .fetchRequest
        }
    }

    /// The value of a constant expression (numbers as `NSNumber`, collections as arrays).
    open var constantValue: Any? {
        if case .constant(let value) = node { return value.walkable }
        return nil
    }

    /// The key path of a key-path expression (`"owner.name"`).
    open var keyPath: String {
        switch node {
        case .keyPath(let path), .keyPathFrom(_, let path): return path.joined(separator: ".")
        default: return ""
        }
    }

    /// The function name of a function expression (`"sum:"`).
    open var function: String {
        if case .function(let name, _) = node, PredicateFunctions.setOperators[name] == nil { return name }
        return ""
    }

    /// The left operand of a set expression (``init(forUnionSet:with:)``, …).
    open var left: NSExpression {
        setOperands.map { NSExpression.wrapping($0.left) } ?? NSExpression(forConstantValue: nil)
    }

    /// The right operand of a set expression (``init(forUnionSet:with:)``, …).
    open var right: NSExpression {
        setOperands.map { NSExpression.wrapping($0.right) } ?? NSExpression(forConstantValue: nil)
    }

    /// The operands of a set expression, `nil` for another expression.
    private var setOperands: (left: ExpressionNode, right: ExpressionNode)? {
        guard case .function(let name, let args) = node, PredicateFunctions.setOperators[name] != nil, args.count == 2 else { return nil }
        return (args[0], args[1])
    }

    /// The closure of a block expression (``init(block:arguments:)``); for another expression, one
    /// that gives `NSNull()`.
    open var expressionBlock: (Any?, [Any], NSMutableDictionary?) -> Any {
        if case .block(let block, _) = node { return block.body }
        return { _, _, _ in NSNull() }
    }

    /// The variable name of a variable expression, or a subquery's iterator variable.
    open var variable: String {
        switch node {
        case .variable(let name), .subquery(_, let name, _): return name
        default: return ""
        }
    }

    /// What a key path starts from (`$item` in `$item.price`), or the receiver of a method a
    /// function expression invokes (`$manager` in `FUNCTION($manager, "sourceContext")`); `SELF`
    /// otherwise.
    open var operand: NSExpression {
        switch node {
        case .keyPathFrom(let base, _): return NSExpression.wrapping(base)
        case .function(let name, let args) where PredicateFunctions.invokesMethod(name) && !args.isEmpty:
            return NSExpression.wrapping(args[0])
        default: return NSExpression.expressionForEvaluatedObject()
        }
    }

    /// The arguments of a function or block expression (after the receiver, for a method it invokes).
    open var arguments: [NSExpression]? {
        if case .block(_, let args) = node { return args.map(NSExpression.wrapping) }
        guard case .function(let name, let args) = node, PredicateFunctions.setOperators[name] == nil else { return nil }
        return (PredicateFunctions.invokesMethod(name) ? args.dropFirst() : args[...]).map(NSExpression.wrapping)
    }

    /// The subexpressions of an aggregate (an array of `NSExpression`), or a subquery's collection
    /// expression.
    open var collection: Any {
        switch node {
        case .aggregate(let items): return items.map(NSExpression.wrapping)
        case .constant(.collection(let items)): return items.map { NSExpression(node: .constant($0)) }
        case .subquery(let source, _, _): return NSExpression.wrapping(source)
        default: return [NSExpression]()
        }
    }

    /// The predicate of a subquery or conditional expression.
    open var predicate: NSPredicate {
        switch node {
        case .subquery(_, _, let predicate), .conditional(let predicate, _, _): return NSPredicate.make(from: predicate)
        default: return NSPredicate(value: true)
        }
    }

    /// The expression a conditional gives when its predicate holds.
    open var `true`: NSExpression {
        if case .conditional(_, let a, _) = node { return NSExpression.wrapping(a) }
        return NSExpression(forConstantValue: nil)
    }

    /// The expression a conditional gives when its predicate does not hold.
    open var `false`: NSExpression {
        if case .conditional(_, _, let b) = node { return NSExpression.wrapping(b) }
        return NSExpression(forConstantValue: nil)
    }

    // MARK: Evaluation

    /// The expression's value for `object`, with `$variables` from `context`.
    ///
    /// ```swift
    /// NSExpression(format: "2 + 3").expressionValue(with: nil, context: nil) // 5
    /// NSExpression(forKeyPath: "name").expressionValue(with: car, context: nil) // "Model T"
    /// ```
    open func expressionValue(with object: Any?, context: NSMutableDictionary?) -> Any? {
        var variables: [String: Any] = [:]
        context?.forEach { key, value in if let key = key as? String { variables[key] = value } }
        return value(with: object, variables: variables, blockContext: context)
    }

    /// ``expressionValue(with:context:)`` with the variables in a Swift dictionary (no bridging);
    /// a block expression gets `blockContext` as it is.
    internal func value(with object: Any?, variables: [String: Any], blockContext: NSMutableDictionary? = nil) -> Any? {
        let evaluator = PredicateEvaluator(variables: variables, blockContext: blockContext)
        if case .fetchRequest(let request, let context, let countOnly) = node {
            // An NSFetchRequestExpression gives what fetch(_:) returns (NSFetchRequestExpression.swift).
            return FetchRequestExpressions.expressionValue(request: evaluator.value(of: request, object: object).walkable,
                                                           context: evaluator.value(of: context, object: object).walkable,
                                                           countOnly: countOnly)
        }
        return evaluator.value(of: node, object: object).walkable
    }

    /// Allows evaluation of an expression decoded from an archive; nothing to do here.
    open func allowEvaluation() {}

    /// The expression itself: expressions are immutable.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    /// The expression in Apple's format syntax (`price * 2`, `sum:(price)`).
    open override var description: String { node.description }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSExpression else { return false }
        return other === self || other.description == description
    }

    open override var hash: Int { description.hashValue }
}
