import Foundation

// Linux difference: swift-corelibs-foundation deprecates `NSComparisonPredicate` as unsupported.
// This class, declared in CoreData, shadows Foundation's in code that imports CoreData.
// `NSPredicate(format:)` returns one of these for a comparison, as on Apple platforms.

/// A predicate that compares two expressions: `name BEGINSWITH[c] "a"`, `ANY cars.year > 2000`.
///
/// ```swift
/// let predicate = NSComparisonPredicate(leftExpression: NSExpression(forKeyPath: "name"),
///                                       rightExpression: NSExpression(forConstantValue: "a"),
///                                       modifier: .direct, type: .beginsWith, options: [.caseInsensitive])
/// predicate.predicateFormat // name BEGINSWITH[c] "a"
/// let same = NSPredicate(format: "name BEGINSWITH[c] %@", "a") as? NSComparisonPredicate
/// ```
open class NSComparisonPredicate: NSPredicate {
    /// How the left-hand collection is compared (`ANY`, `ALL`, or neither), with Apple's raw
    /// values. (`NONE` is `NOT ANY`: an `NSCompoundPredicate` around an `.any` comparison.)
    public enum Modifier: UInt, Sendable {
        case direct = 0
        case all = 1
        case any = 2
    }

    /// The comparison, with Apple's raw values.
    public enum Operator: UInt, Sendable {
        case lessThan = 0
        case lessThanOrEqualTo = 1
        case greaterThan = 2
        case greaterThanOrEqualTo = 3
        case equalTo = 4
        case notEqualTo = 5
        case matches = 6
        case like = 7
        case beginsWith = 8
        case endsWith = 9
        case `in` = 10
        /// Not available on Linux (no Objective-C selectors): a predicate with it never matches
        /// and a fetch that uses it throws.
        case customSelector = 11
        case contains = 99
        case between = 100
    }

    /// `[c]`, `[d]`, `[n]`: how strings are compared.
    public struct Options: OptionSet, Sendable {
        /// The options' bits, with Apple's values.
        public let rawValue: UInt
        /// The options whose bits are `rawValue`.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// `[c]`
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`
        public static let diacriticInsensitive = Options(rawValue: 2)
        /// `[n]`
        public static let normalized = Options(rawValue: 4)
    }

    /// The parsed comparison (the modifier is `.direct`, `.any` or `.all`).
    internal let comparison: ComparisonNode

    internal init(comparison: ComparisonNode) {
        self.comparison = comparison
        super.init(value: false)
    }

    /// A comparison of two expressions.
    ///
    /// ```swift
    /// let adults = NSComparisonPredicate(leftExpression: NSExpression(forKeyPath: "age"),
    ///                                    rightExpression: NSExpression(forConstantValue: 18),
    ///                                    modifier: .direct, type: .greaterThanOrEqualTo)
    /// ```
    public init(leftExpression lhs: NSExpression, rightExpression rhs: NSExpression, modifier: Modifier,
                type: Operator, options: Options = []) {
        let op = Self.internalOperator(type)
        self.comparison = ComparisonNode(lhs: lhs.node, op: op ?? .equalTo, rhs: rhs.node,
                                         options: ComparisonOptions(rawValue: Int(options.rawValue)),
                                         modifier: modifier == .any ? .any : (modifier == .all ? .all : .direct))
        self.unsupportedOperator = op == nil
        super.init(value: false)
    }

    /// Whether the operator was `.customSelector` (never matches; fetches throw).
    internal private(set) var unsupportedOperator = false

    /// Linux difference: comparison predicates are not read from archives; always `nil`.
    public required init?(coder: NSCoder) { nil }

    // MARK: Properties

    /// The left-hand expression.
    open var leftExpression: NSExpression { NSExpression.wrapping(comparison.lhs) }
    /// The right-hand expression.
    open var rightExpression: NSExpression { NSExpression.wrapping(comparison.rhs) }
    /// The modifier: `.direct`, `.any` or `.all`.
    open var comparisonPredicateModifier: Modifier {
        switch comparison.modifier {
        case .any, .none: return .any
        case .all: return .all
        case .direct: return .direct
        }
    }
    /// The operator.
    open var predicateOperatorType: Operator {
        if unsupportedOperator { return .customSelector }
        return Self.operators.first { $0.1 == comparison.op }?.0 ?? .equalTo
    }
    /// The string options (`[c]`, `[d]`, `[n]`).
    open var options: Options { Options(rawValue: UInt(comparison.options.rawValue) & 7) }

    /// Apple's operators and the parsed tree's, one to one (`.customSelector` has none).
    private static let operators: [(Operator, ComparisonOperator)] = [
        (.lessThan, .lessThan), (.lessThanOrEqualTo, .lessThanOrEqualTo), (.greaterThan, .greaterThan),
        (.greaterThanOrEqualTo, .greaterThanOrEqualTo), (.equalTo, .equalTo), (.notEqualTo, .notEqualTo),
        (.matches, .matches), (.like, .like), (.beginsWith, .beginsWith), (.endsWith, .endsWith), (.in, .in),
        (.contains, .contains), (.between, .between),
    ]

    private static func internalOperator(_ type: Operator) -> ComparisonOperator? {
        operators.first { $0.0 == type }?.1
    }

    // MARK: NSPredicate

    /// The comparison in Apple's format syntax: `name BEGINSWITH[c] "a"`.
    open override var predicateFormat: String { PredicateNode.comparison(comparison).description }

    open override var description: String { formatText }

    /// Whether `object` satisfies the comparison, with `$variables` from `bindings`.
    open override func evaluate(with object: Any?, substitutionVariables bindings: [String: Any]?) -> Bool {
        guard !unsupportedOperator else { return false }
        return PredicateEvaluator.evaluate(.comparison(comparison), object: object, variables: bindings)
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSPredicate else { return false }
        return other === self || (other is NSComparisonPredicate && other.formatText == formatText)
    }

    open override var hash: Int { formatText.hashValue }

    /// The predicate itself: it cannot change (Foundation's copy on Linux made a `FALSEPREDICATE`).
    open override func copy(with zone: NSZone? = nil) -> Any { self }
}
