import Foundation

// The parsed form of a predicate. A format string is parsed once, into these values; the
// in-memory evaluator (`PredicateEvaluator`) and the SQL compiler (`PredicateSQLCompiler`) both
// work from the tree, never from the string.

/// A predicate: something true or false of an object.
internal indirect enum PredicateNode: Sendable {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`, `NSPredicate(value:)`.
    case constant(Bool)
    /// `a AND b AND …`; an empty list is true.
    case and([PredicateNode])
    /// `a OR b OR …`; an empty list is false.
    case or([PredicateNode])
    /// `NOT a`.
    case not(PredicateNode)
    /// `lhs op rhs`, with options and an `ANY`/`ALL`/`NONE` modifier.
    case comparison(ComparisonNode)
}

/// An expression: what a comparison compares.
internal indirect enum ExpressionNode: Sendable {
    /// `name`, `owner.name`, `%K`: a key path from the evaluated object. Never empty.
    case keyPath([String])
    /// A key path from another expression's value: `$car.name`, `SUBQUERY(…).@count`.
    case keyPathFrom(ExpressionNode, [String])
    /// A literal, `%@`, `%d`, … or a folded arithmetic result.
    case constant(PredicateValue)
    /// `$NAME`, replaced from substitution variables.
    case variable(String)
    /// `SELF`: the evaluated object itself.
    case evaluatedObject
    /// `{a, b, c}`: an aggregate of expressions.
    case aggregate([ExpressionNode])
    /// A function of its arguments, named as Apple names them in `NSExpression(forFunction:)`:
    /// `add:to:`, `from:subtract:`, `multiply:by:`, `divide:by:`, `raise:toPower:`, `now`, ….
    case function(String, [ExpressionNode])
    /// `SUBQUERY(collection, $variable, predicate)`. Parsed, not yet evaluated (part 2).
    case subquery(ExpressionNode, String, PredicateNode)
    /// `TERNARY(predicate, then, else)`. Parsed, not yet evaluated (part 2).
    case conditional(PredicateNode, ExpressionNode, ExpressionNode)
    /// `FETCH(request, context, countOnly)`: the result of a fetch request executed on a context
    /// (``NSFetchRequestExpression``). A fetch runs it before the store sees the predicate
    /// (`NSFetchRequestExpression.swift`); an in-memory evaluation runs it when it meets it.
    case fetchRequest(ExpressionNode, ExpressionNode, countOnly: Bool)
    /// `NSExpression(block:arguments:)`: a Swift closure of the evaluated object, its arguments'
    /// values and the variables. Evaluated in memory only: a fetch or batch request refuses it
    /// before a store sees it (`plan(for:)`, `BatchKeyPaths`), as Apple's SQLite store does.
    case block(ExpressionBlock, [ExpressionNode])
}

/// The closure of a block expression, shared by the tree's copies.
internal final class ExpressionBlock: @unchecked Sendable {
    let body: (Any?, [Any], NSMutableDictionary?) -> Any
    /// Whether the block evaluates a block predicate (`NSPredicate.inMemoryTree`), which takes
    /// substituted variables as its bindings; a block expression of the app's is left as it is.
    let evaluatesPredicate: Bool
    init(evaluatesPredicate: Bool = false, _ body: @escaping (Any?, [Any], NSMutableDictionary?) -> Any) {
        self.evaluatesPredicate = evaluatesPredicate
        self.body = body
    }
}

/// One comparison: `[modifier] lhs op[options] rhs`.
internal struct ComparisonNode: Sendable {
    var lhs: ExpressionNode
    var op: ComparisonOperator
    var rhs: ExpressionNode
    var options: ComparisonOptions = []
    var modifier: ComparisonModifier = .direct
}

/// The operator of a comparison, as `NSComparisonPredicate.Operator`.
internal enum ComparisonOperator: String, Sendable, CaseIterable {
    case equalTo = "=="
    case notEqualTo = "!="
    case lessThan = "<"
    case lessThanOrEqualTo = "<="
    case greaterThan = ">"
    case greaterThanOrEqualTo = ">="
    case between = "BETWEEN"
    /// `x IN collection`, or `'sub' IN string` (substring).
    case `in` = "IN"
    /// `string CONTAINS 'sub'`, or `collection CONTAINS x` (membership).
    case contains = "CONTAINS"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    /// `*` matches any run of characters, `?` one character; `\` escapes either.
    case like = "LIKE"
    /// ICU regular expression matching the whole string.
    case matches = "MATCHES"

    /// The same comparison with its operands swapped (`a < b` is `b > a`), for operators that have one.
    var swapped: ComparisonOperator? {
        switch self {
        case .equalTo, .notEqualTo: return self
        case .lessThan: return .greaterThan
        case .lessThanOrEqualTo: return .greaterThanOrEqualTo
        case .greaterThan: return .lessThan
        case .greaterThanOrEqualTo: return .lessThanOrEqualTo
        default: return nil
        }
    }

    /// Whether the operator orders its operands (`<`, `<=`, `>`, `>=`).
    var isOrdering: Bool {
        switch self {
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo: return true
        default: return false
        }
    }

    /// Whether the operator works on strings only.
    var isStringOperator: Bool {
        switch self {
        case .beginsWith, .endsWith, .like, .matches: return true
        default: return false
        }
    }
}

/// `[c]`, `[d]`, `[n]`, `[l]`: how strings are compared.
internal struct ComparisonOptions: OptionSet, Sendable, Hashable {
    let rawValue: Int
    /// `[c]`: case-insensitive.
    static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: diacritic-insensitive.
    static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
    /// `[n]`: the operands are already normalized; accepted and ignored.
    static let normalized = ComparisonOptions(rawValue: 4)
    /// `[l]`: locale-sensitive; accepted and ignored.
    static let localeSensitive = ComparisonOptions(rawValue: 8)

    /// The options that change how strings compare: `[c]` and `[d]`.
    var folding: ComparisonOptions { intersection([.caseInsensitive, .diacriticInsensitive]) }

    /// The `String.CompareOptions` used to fold strings for these options.
    var foldingOptions: String.CompareOptions {
        var options: String.CompareOptions = []
        if contains(.caseInsensitive) { options.insert(.caseInsensitive) }
        if contains(.diacriticInsensitive) { options.insert(.diacriticInsensitive) }
        return options
    }

    var formatSuffix: String {
        var letters = ""
        if contains(.caseInsensitive) { letters += "c" }
        if contains(.diacriticInsensitive) { letters += "d" }
        if contains(.normalized) { letters += "n" }
        if contains(.localeSensitive) { letters += "l" }
        return letters.isEmpty ? "" : "[\(letters)]"
    }
}

/// `ANY`/`SOME`, `ALL`, `NONE`, or none: how a collection on the left is compared.
internal enum ComparisonModifier: String, Sendable {
    case direct = ""
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

// MARK: - Format strings (for messages and debugging)

extension PredicateNode: CustomStringConvertible {
    /// The predicate in Apple's format syntax, close to what `predicateFormat` prints on Apple platforms.
    var description: String { format(nested: false) }

    private func format(nested: Bool) -> String {
        switch self {
        case .constant(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let parts):
            if parts.isEmpty { return "TRUEPREDICATE" }
            let text = parts.map { $0.format(nested: true) }.joined(separator: " AND ")
            return nested && parts.count > 1 ? "(\(text))" : text
        case .or(let parts):
            if parts.isEmpty { return "FALSEPREDICATE" }
            let text = parts.map { $0.format(nested: true) }.joined(separator: " OR ")
            return nested && parts.count > 1 ? "(\(text))" : text
        case .not(let inner): return "NOT \(inner.format(nested: true))"
        case .comparison(let comparison): return comparison.description
        }
    }
}

extension ComparisonNode: CustomStringConvertible {
    var description: String {
        let modifier = self.modifier == .direct ? "" : self.modifier.rawValue + " "
        return "\(modifier)\(lhs) \(op.rawValue)\(options.formatSuffix) \(rhs)"
    }
}

extension ExpressionNode: CustomStringConvertible {
    var description: String {
        switch self {
        case .keyPath(let path): return path.joined(separator: ".")
        case .keyPathFrom(let base, let path): return ([base.description] + path).joined(separator: ".")
        case .constant(let value): return value.formatDescription
        case .variable(let name): return "$" + name
        case .evaluatedObject: return "SELF"
        case .aggregate(let items): return "{" + items.map(\.description).joined(separator: ", ") + "}"
        case .function(let name, let args):
            if let chain = infixChain() { return chain }
            if let word = PredicateFunctions.setOperators[name], args.count == 2 { return "(\(args[0]) \(word) \(args[1]))" }
            if name == "negate:", args.count == 1 { return "-\(args[0])" }
            if PredicateFunctions.invokesMethod(name), let receiver = args.first {
                // A method invoked on its receiver, spaced as Apple prints it:
                // `FUNCTION($manager, "sourceContext")`, `FUNCTION($entityPolicy, "toInt16WithValue:" , $source.points)`.
                let rest = args.dropFirst().map { ", \($0)" }.joined()
                return "FUNCTION(\(receiver), \(name.debugDescription)\(rest.isEmpty ? "" : " " + rest))"
            }
            if name.firstIndex(of: ":") == nil || name.firstIndex(of: ":") == name.index(before: name.endIndex) {
                return "\(name)(\(args.map(\.description).joined(separator: ", ")))" // now(), sum:(price)
            }
            guard let receiver = args.first else { return "FUNCTION(nil, \(name.debugDescription))" }
            return "FUNCTION(\(([receiver.description, name.debugDescription] + args.dropFirst().map(\.description)).joined(separator: ", ")))"
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(\(collection), $\(variable), \(predicate))"
        case .conditional(let predicate, let a, let b): return "TERNARY(\(predicate), \(a), \(b))"
        case .fetchRequest(let request, let context, let countOnly):
            // The request without its predicate, which could hold this expression.
            let requestText: String
            if case .constant(let value) = request, let fetch = value.walkable as? ExpressionFetchRequest {
                requestText = fetch.expressionDescription
            } else {
                requestText = request.description
            }
            return "FETCH(\(requestText), \(context), \(countOnly ? "YES" : "NO"))"
        case .block(let block, let args):
            return "BLOCK(<block \(ObjectIdentifier(block))>" + args.map { ", \($0)" }.joined() + ")"
        }
    }

    /// The symbols of the arithmetic functions the format writes between their operands.
    private static let infixSymbols: [String: String] = ["add:to:": "+", "from:subtract:": "-", "multiply:by:": "*",
                                                          "divide:by:": "/", "raise:toPower:": "**"]

    /// `(a + b - c)` for an arithmetic function: a left-nested chain of operators of one
    /// precedence (`+` and `-`, or `*` and `/`) in one pair of parentheses, as the parser reads it
    /// back (left to right), and walked without recursion, so that a chain thousands of terms
    /// long prints, and parses again, without nesting. `nil` for other expressions.
    private func infixChain() -> String? {
        guard case .function(let name, let args) = self, args.count == 2, let symbol = Self.infixSymbols[name] else { return nil }
        let group: Set<String> = symbol == "**" ? [] : (symbol == "+" || symbol == "-" ? ["add:to:", "from:subtract:"] : ["multiply:by:", "divide:by:"])
        var tail = [(symbol, args[1])]
        var head = args[0]
        while case .function(let inner, let innerArgs) = head, innerArgs.count == 2, group.contains(inner) {
            tail.append((Self.infixSymbols[inner]!, innerArgs[1]))
            head = innerArgs[0]
        }
        var text = "(" + head.description
        for (symbol, operand) in tail.reversed() { text += " \(symbol) \(operand)" }
        return text + ")"
    }
}
