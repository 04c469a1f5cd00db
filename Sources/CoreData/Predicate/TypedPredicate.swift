import Foundation

// Foundation's `Predicate` (`#Predicate<Car> { $0.year > 2000 }`) as an `NSPredicate`, as Apple's
// `NSPredicate.init?(_:)` does on iOS 17 / macOS 14. The predicate's expression tree is translated
// into the same `PredicateNode` tree a format string parses into, so the SQLite store compiles it
// to the same SQL and the context evaluates it in memory with the same evaluator.

extension _CoreDataPredicateFormatInitializable where Self == NSPredicate {
    /// Creates a predicate from a Swift `Predicate` over a managed object class.
    ///
    /// ```swift
    /// let request = NSFetchRequest<Car>(entityName: "Car")
    /// request.predicate = NSPredicate(#Predicate<Car> { $0.year > 2000 && $0.owner?.name == "Ada" })
    /// ```
    ///
    /// Key paths must lead to `@Managed` properties (see `TypedKeyPaths.swift` for how they are
    /// mapped to property names). The translation happens when a fetch first uses the predicate
    /// (the model must be in use by a coordinator by then); anything it cannot translate makes
    /// that fetch throw `NSCocoaErrorDomain` 134091 naming the construct. Unlike Apple's, this
    /// initializer therefore never returns `nil`; it is failable to keep Apple's signature.
    /// Supported: `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||`, `!`, captured values and `nil`,
    /// key paths through to-one relationships (also with `?.` and `!`), `??` with a constant,
    /// `+`, `-`, `*`, `/` and unary `-`, `contains(_:)` and `starts(with:)` on strings,
    /// `localizedStandardContains(_:)` (`CONTAINS[cd]`), `caseInsensitiveCompare(_:)`,
    /// `contains(_:)` on a to-many relationship or on a captured collection (`IN`),
    /// `contains(where:)` (`ANY`) and `allSatisfy(_:)` (`ALL`) with one comparison of the element,
    /// `count` and `isEmpty` of a to-many relationship (`@count`), ranges' `contains(_:)`.
    public init?<Input: NSObject>(_ predicate: Predicate<Input>) {
        self = SwiftPredicate(predicate)
    }
}

/// What `NSPredicate(_: Predicate<Input>)` returns: the Swift predicate, translated on first use.
internal final class SwiftPredicate: NSPredicate {
    let translation: TypedLazyResult<PredicateNode>
    private let evaluateOriginal: (Any?) -> Bool

    init<Input: NSObject>(_ predicate: Predicate<Input>) {
        translation = TypedLazyResult { try TypedPredicateTranslator.translate(predicate) }
        evaluateOriginal = { object in
            guard let input = object as? Input else { return false }
            return (try? predicate.evaluate(input)) ?? false
        }
        super.init(value: false)
    }

    required init?(coder: NSCoder) { nil }

    /// In memory: the translated tree (as a fetch would run it), or the Swift predicate itself
    /// when it cannot be translated.
    override func evaluate(with object: Any?, substitutionVariables bindings: [String: Any]?) -> Bool {
        switch translation.result {
        case .success(let tree): return PredicateEvaluator.evaluate(tree, object: object, variables: bindings)
        case .failure: return evaluateOriginal(object)
        }
    }

    override var predicateFormat: String { formatText }
    override var description: String { formatText }
    /// Itself: it cannot change (Foundation's copy on Linux made a `FALSEPREDICATE`, so a
    /// copied request fetched nothing).
    override func copy(with zone: NSZone? = nil) -> Any { self }
    /// The same predicate, or one of the same translation (two that can't be translated yet,
    /// both `BLOCKPREDICATE`, are not equal).
    override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? SwiftPredicate else { return false }
        if other === self { return true }
        guard case .success(let mine) = translation.result, case .success(let theirs) = other.translation.result else { return false }
        return mine.description == theirs.description
    }
    /// One value for every Swift predicate: a translation's text would change once its model is
    /// in use, moving a predicate kept in a `Set` or as a dictionary key.
    override var hash: Int { 0x5F1 }
}

/// A value worked out on first use (a translation needs the model, in use only by fetch time)
/// and kept once it succeeds; a failure is tried again next time.
internal final class TypedLazyResult<Value: Sendable>: Sendable {
    private let make: @Sendable () throws -> Value
    private let value = Locked<Value?>(nil)

    init(_ make: @escaping @Sendable () throws -> Value) { self.make = make }

    var result: Result<Value, any Error> {
        if let value = value.withLock({ $0 }) { return .success(value) }
        let result = Result { try make() }
        if case .success(let made) = result { value.withLock { $0 = made } }
        return result
    }
}

/// What a translated Swift predicate expression is.
internal enum TypedTerm {
    /// Something true or false.
    case predicate(PredicateNode)
    /// A value: a key path, a constant, arithmetic.
    case value(ExpressionNode)
    /// `value ?? constant`.
    case coalesced(ExpressionNode, PredicateValue)
    /// `lower...upper` (closed) or `lower..<upper`.
    case range(ExpressionNode, ExpressionNode, closed: Bool)
    /// `a.caseInsensitiveCompare(b)`, which a comparison with a `ComparisonResult` turns into a predicate.
    case stringComparison(ExpressionNode, ExpressionNode, ComparisonOptions)
}

/// A `PredicateExpressions` type the translator understands.
internal protocol TypedPredicateTerm {
    func typedTerm(_ translator: inout TypedPredicateTranslator) throws -> TypedTerm
}

/// Walks a Swift predicate's expression tree.
internal struct TypedPredicateTranslator {
    /// The expression each variable stands for: the input is `SELF`, an optional's unwrapped
    /// value is the key path it came from, a collection's element is ``elementMarker``.
    var bindings: [PredicateExpressions.VariableID: ExpressionNode] = [:]
    private var elementCount = 0

    static func translate<Input: NSObject>(_ predicate: Predicate<Input>) throws -> PredicateNode {
        var translator = TypedPredicateTranslator()
        translator.bindings[predicate.variable.key] = .evaluatedObject
        return try translator.predicate(predicate.expression)
    }

    static func unsupported(_ reason: String) -> NSError {
        PredicateErrors.unsupportedPredicate("Swift predicate: \(reason)")
    }

    /// The short name of an expression's type: `StringContainsRegex` for `PredicateExpressions.StringContainsRegex<…>`.
    static func name(of expression: Any) -> String {
        String(String(describing: type(of: expression)).prefix { $0 != "<" })
    }

    mutating func term(_ expression: Any) throws -> TypedTerm {
        guard let translatable = expression as? any TypedPredicateTerm else {
            throw Self.unsupported("\(Self.name(of: expression)) cannot be translated to a Core Data predicate")
        }
        return try translatable.typedTerm(&self)
    }

    mutating func predicate(_ expression: Any) throws -> PredicateNode {
        switch try term(expression) {
        case .predicate(let node): return node
        case .coalesced(let value, let fallback):
            // `flag ?? false` as a condition: `(flag ?? false) == true`.
            return try compare(.coalesced(value, fallback), .equalTo, .value(.constant(.int(1))))
        case .value(.constant(let value)): return .constant(PredicateEvaluator.compare(value, .equalTo, .int(1), options: []))
        case .value(let value): return .comparison(ComparisonNode(lhs: value, op: .equalTo, rhs: .constant(.int(1))))
        default: throw Self.unsupported("\(Self.name(of: expression)) is not a condition")
        }
    }

    mutating func value(_ expression: Any) throws -> ExpressionNode {
        switch try term(expression) {
        case .value(let value): return value
        case .coalesced: throw Self.unsupported("?? is supported only in a comparison with a value")
        default: throw Self.unsupported("\(Self.name(of: expression)) is not a value Core Data can compare")
        }
    }

    /// `base.names`: a key path from the object or value `base` stands for.
    func extend(_ base: ExpressionNode, _ names: [String]) throws -> ExpressionNode {
        switch base {
        case .evaluatedObject: return .keyPath(names)
        case .keyPath(let path): return .keyPath(path + names)
        case .keyPathFrom(let from, let path): return .keyPathFrom(from, path + names)
        case .variable: return .keyPathFrom(base, names)
        default: throw Self.unsupported("key path \(names.joined(separator: ".")) from \(base), which is not an object of the store")
        }
    }

    // MARK: Comparisons

    mutating func compare(_ lhs: Any, _ op: ComparisonOperator, _ rhs: Any, options: ComparisonOptions = []) throws -> PredicateNode {
        try compare(term(lhs), op, term(rhs), options: options)
    }

    func compare(_ lhs: TypedTerm, _ op: ComparisonOperator, _ rhs: TypedTerm, options: ComparisonOptions = []) throws -> PredicateNode {
        switch (lhs, rhs) {
        case (.value(let a), .value(let b)):
            return .comparison(ComparisonNode(lhs: a, op: op, rhs: b, options: options))
        case (.coalesced(let value, let fallback), .value(.constant(let constant))):
            // (value ?? fallback) op constant: the fallback's answer is known now.
            let direct = PredicateNode.comparison(ComparisonNode(lhs: value, op: op, rhs: .constant(constant), options: options))
            if PredicateEvaluator.compare(fallback, op, constant, options: options) {
                return .or([.comparison(ComparisonNode(lhs: value, op: .equalTo, rhs: .constant(.null))), direct])
            }
            return .and([.comparison(ComparisonNode(lhs: value, op: .notEqualTo, rhs: .constant(.null))), direct])
        case (.predicate(let test), .value(.constant(let constant))), (.value(.constant(let constant)), .predicate(let test)):
            // `condition == true`, `condition != false`, …
            guard op == .equalTo || op == .notEqualTo else { break }
            let isTrue = PredicateEvaluator.compare(constant, .equalTo, .int(1), options: [])
            return isTrue == (op == .equalTo) ? test : .not(test)
        case (.value(.constant), .coalesced):
            guard let swapped = op.swapped else { break }
            return try compare(rhs, swapped, lhs, options: options)
        case (.stringComparison(let a, let b, let stringOptions), .value(.constant(let result))),
             (.value(.constant(let result)), .stringComparison(let a, let b, let stringOptions)):
            guard op == .equalTo || op == .notEqualTo, case .other(let box) = result,
                  let order = box.value as? ComparisonResult else { break }
            let ordered: ComparisonOperator = order == .orderedSame ? .equalTo : (order == .orderedAscending ? .lessThan : .greaterThan)
            let test = PredicateNode.comparison(ComparisonNode(lhs: a, op: ordered, rhs: b, options: stringOptions))
            return op == .equalTo ? test : .not(test)
        default: break
        }
        throw Self.unsupported("a comparison (\(op.rawValue)) of \(Self.describe(lhs)) with \(Self.describe(rhs)); ?? needs a constant on the other side")
    }

    static func describe(_ term: TypedTerm) -> String {
        switch term {
        case .predicate(let node): return "(\(node))"
        case .value(let value): return value.description
        case .coalesced(let value, let fallback): return "\(value) ?? \(fallback.formatDescription)"
        case .range(let lower, let upper, let closed): return "\(lower)\(closed ? "..." : "..<")\(upper)"
        case .stringComparison(let a, let b, _): return "\(a).compare(\(b))"
        }
    }

    // MARK: Collections

    /// `ANY collection.x op c` / `ALL …` from `sequence.contains { test }` / `allSatisfy`: the
    /// test must be one comparison of a key path from the element (or the element itself) with a value.
    mutating func quantified(_ modifier: ComparisonModifier, sequence: Any, variable: PredicateExpressions.VariableID,
                             test testExpression: Any) throws -> TypedTerm {
        let collection = try value(sequence)
        elementCount += 1
        let marker = "\u{1}element\(elementCount)"
        bindings[variable] = .variable(marker)
        defer { bindings[variable] = nil }
        let test = try predicate(testExpression)
        func relative(_ expression: ExpressionNode) -> [String]? {
            switch expression {
            case .variable(let name) where name == marker: return []
            case .keyPathFrom(.variable(let name), let path) where name == marker: return path
            default: return nil
            }
        }
        func mentions(_ expression: ExpressionNode) -> Bool {
            relative(expression) != nil || expression.description.contains(marker)
        }
        if case .comparison(var comparison) = test, comparison.modifier == .direct {
            if relative(comparison.lhs) == nil, relative(comparison.rhs) != nil, let swapped = comparison.op.swapped {
                comparison = ComparisonNode(lhs: comparison.rhs, op: swapped, rhs: comparison.lhs, options: comparison.options)
            }
            if let path = relative(comparison.lhs), !mentions(comparison.rhs) {
                comparison.lhs = try extend(collection, path)
                comparison.modifier = modifier
                return .predicate(.comparison(comparison))
            }
        }
        let name = modifier == .any ? "contains(where:)" : "allSatisfy(_:)"
        throw Self.unsupported("\(name) on a to-many relationship needs one comparison of the element with a value, not \(test)")
    }
}

/// A value from a `Value` expression, unwrapped from any optionals.
internal func typedConstant(_ value: Any) -> PredicateValue {
    let mirror = Mirror(reflecting: value)
    if mirror.displayStyle == .optional {
        guard let wrapped = mirror.children.first?.value else { return .null }
        return typedConstant(wrapped)
    }
    if value is ComparisonResult { return .other(ValueBox(value)) }
    return PredicateValue(value)
}
