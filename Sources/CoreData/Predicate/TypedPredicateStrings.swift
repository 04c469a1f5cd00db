import Foundation

// String methods `#Predicate` understands on Apple platforms but Foundation on Linux does not
// declare (there they need `FOUNDATION_FRAMEWORK`). The macro expands
// `$0.name.localizedStandardContains("a")` into `PredicateExpressions.build_localizedStandardContains(…)`,
// which these declarations provide, so shared sources compile here too.

extension PredicateExpressions {
    /// What a ``StringOperation`` does.
    public enum StringOperationKind: Codable, Sendable {
        /// `localizedStandardContains(_:)`: `CONTAINS[cd]` in a Core Data predicate.
        case localizedStandardContains
        /// `caseInsensitiveCompare(_:)`: compared with `.orderedSame`, `==[c]` in a Core Data
        /// predicate (`<[c]`, `>[c]` for the other results).
        case caseInsensitiveCompare
    }

    /// `string.localizedStandardContains(other)` (`Output` `Bool`) or
    /// `string.caseInsensitiveCompare(other)` (`Output` `ComparisonResult`).
    public struct StringOperation<Root: PredicateExpression, Other: PredicateExpression, Output>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        /// Which method the expression calls.
        public let kind: StringOperationKind
        /// The expression of the string the method is called on.
        public let root: Root
        /// The expression of the method's argument.
        public let other: Other

        /// Evaluates both expressions and calls the method on the two strings; throws if the result
        /// is not an `Output`.
        public func evaluate(_ bindings: PredicateBindings) throws -> Output {
            let (a, b) = (String(try root.evaluate(bindings)), String(try other.evaluate(bindings)))
            let result: Any = switch kind {
            case .localizedStandardContains: a.localizedStandardContains(b)
            case .caseInsensitiveCompare: a.caseInsensitiveCompare(b)
            }
            guard let output = result as? Output else {
                throw CocoaError(.coderInvalidValue, userInfo: [NSLocalizedDescriptionKey: "\(kind) does not give a \(Output.self)"])
            }
            return output
        }
    }

    /// `string.localizedStandardContains(other)`, as `#Predicate` expands it.
    public typealias StringLocalizedStandardContains<Root: PredicateExpression, Other: PredicateExpression> = StringOperation<Root, Other, Bool>
    where Root.Output: StringProtocol, Other.Output: StringProtocol
    /// `string.caseInsensitiveCompare(other)`, as `#Predicate` expands it.
    public typealias StringCaseInsensitiveCompare<Root: PredicateExpression, Other: PredicateExpression> = StringOperation<Root, Other, ComparisonResult>
    where Root.Output: StringProtocol, Other.Output: StringProtocol

    /// What `#Predicate` expands `root.localizedStandardContains(other)` into.
    public static func build_localizedStandardContains<Root, Other>(_ root: Root, _ other: Other) -> StringLocalizedStandardContains<Root, Other> {
        StringOperation(kind: .localizedStandardContains, root: root, other: other)
    }

    /// What `#Predicate` expands `root.caseInsensitiveCompare(other)` into.
    public static func build_caseInsensitiveCompare<Root, Other>(_ root: Root, _ other: Other) -> StringCaseInsensitiveCompare<Root, Other> {
        StringOperation(kind: .caseInsensitiveCompare, root: root, other: other)
    }
}

extension PredicateExpressions.StringOperation: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}
extension PredicateExpressions.StringOperation: Sendable where Root: Sendable, Other: Sendable {}
extension PredicateExpressions.StringOperation: Codable where Root: Codable, Other: Codable {}

extension PredicateExpressions.StringOperation: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        switch kind {
        case .localizedStandardContains:
            return .predicate(try t.compare(root, .contains, other, options: [.caseInsensitive, .diacriticInsensitive]))
        case .caseInsensitiveCompare:
            return .stringComparison(try t.value(root), try t.value(other), [.caseInsensitive])
        }
    }
}
