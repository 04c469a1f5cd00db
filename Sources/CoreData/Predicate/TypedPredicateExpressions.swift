import Foundation

// How each of Foundation's `PredicateExpressions` translates into a `PredicateNode` term
// (`TypedPredicate.swift`). A type without a conformance here is reported by name when a fetch
// uses the predicate.

extension PredicateExpressions.Variable: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        guard let bound = t.bindings[key] else { throw TypedPredicateTranslator.unsupported("a variable outside its scope") }
        return .value(bound)
    }
}

/// `PredicateExpressions.Value`: a value captured when the predicate was made.
internal protocol TypedCapturedValue {}
extension PredicateExpressions.Value: TypedCapturedValue {}

extension PredicateExpressions.Value: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        if let range = value as? any TypedRangeValue { return range.typedRange }
        return .value(.constant(typedConstant(value)))
    }
}

extension PredicateExpressions.NilLiteral: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm { .value(.constant(.null)) }
}

extension PredicateExpressions.KeyPath: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        // A key path from captured values alone (`names.isEmpty`, `filter.limits.min`,
        // `range.lowerBound`) reads no object: its value now. (Evaluating one that reads the
        // predicate's object throws, its variable unbound: it is translated below.)
        if let captured = try? evaluate(PredicateBindings()) {
            return .value(.constant(typedConstant(captured)))
        }
        let base = try t.value(root)
        let path = keyPath as AnyKeyPath
        if let collection = Root.Output.self as? any TypedCollectionKeyPaths.Type {
            if path == collection.countKeyPath { return .value(try t.extend(base, ["@count"])) }
            if path == collection.isEmptyKeyPath {
                return .predicate(.comparison(ComparisonNode(lhs: try t.extend(base, ["@count"]), op: .equalTo, rhs: .constant(.int(0)))))
            }
        }
        if root is any TypedCapturedValue {
            // A key path from a captured value (`#Predicate { $0.year > limits.year }`): read it now.
            return .value(.constant(typedConstant(try evaluate(PredicateBindings()))))
        }
        return .value(try t.extend(base, try TypedKeyPaths.names(of: path)))
    }
}

extension PredicateExpressions.Equal: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm { .predicate(try t.compare(lhs, .equalTo, rhs)) }
}

extension PredicateExpressions.NotEqual: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm { .predicate(try t.compare(lhs, .notEqualTo, rhs)) }
}

extension PredicateExpressions.Comparison: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        let operators: [PredicateExpressions.ComparisonOperator: ComparisonOperator] = [
            .lessThan: .lessThan, .lessThanOrEqual: .lessThanOrEqualTo,
            .greaterThan: .greaterThan, .greaterThanOrEqual: .greaterThanOrEqualTo,
        ]
        return .predicate(try t.compare(lhs, operators[op] ?? .equalTo, rhs))
    }
}

extension PredicateExpressions.Conjunction: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        .predicate(.and([try t.predicate(lhs), try t.predicate(rhs)]))
    }
}

extension PredicateExpressions.Disjunction: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        .predicate(.or([try t.predicate(lhs), try t.predicate(rhs)]))
    }
}

extension PredicateExpressions.Negation: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm { .predicate(.not(try t.predicate(wrapped))) }
}

extension PredicateExpressions.ForcedUnwrap: TypedPredicateTerm {
    /// `x!`: as `x` (a key path to nil compares as nil, where Swift would trap).
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm { try t.term(inner) }
}

extension PredicateExpressions.OptionalFlatMap: TypedPredicateTerm {
    /// `x?.y` / `x.flatMap { $0.y }`: key paths from the unwrapped value continue `x`'s key path
    /// (a key path through nil is nil, as Swift's optional chaining).
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        let base = try t.value(wrapped)
        if case .constant(.null) = base { return .value(.constant(.null)) }
        t.bindings[variable.key] = base
        defer { t.bindings[variable.key] = nil }
        return .value(try t.value(transform))
    }
}

extension PredicateExpressions.NilCoalesce: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        let value = try t.value(lhs)
        let fallback = try t.value(rhs)
        switch (value, fallback) {
        case (.constant(.null), _): return .value(fallback)
        case (.constant, _): return .value(value)
        case (_, .constant(let constant)): return .coalesced(value, constant)
        default: throw TypedPredicateTranslator.unsupported("?? needs a constant on its right (\(value) ?? \(fallback))")
        }
    }
}

// MARK: Arithmetic

extension PredicateExpressions.Arithmetic: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        let name: String
        switch op {
        case .add: name = "add:to:"
        case .subtract: name = "from:subtract:"
        case .multiply: name = "multiply:by:"
        @unknown default: throw TypedPredicateTranslator.unsupported("the arithmetic operator \(op)")
        }
        return .value(.function(name, [try t.value(lhs), try t.value(rhs)]))
    }
}

extension PredicateExpressions.FloatDivision: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        .value(.function("divide:by:", [try t.value(lhs), try t.value(rhs)]))
    }
}

extension PredicateExpressions.IntDivision: TypedPredicateTerm {
    /// Swift's integer division truncates toward zero: `trunc:(divide:by:)` (`divide:by:` alone
    /// divides as reals: `1908 / 100` was 19.08, not 19).
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        .value(.function("trunc:", [.function("divide:by:", [try t.value(lhs), try t.value(rhs)])]))
    }
}

extension PredicateExpressions.UnaryMinus: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        .value(.function("multiply:by:", [try t.value(wrapped), .constant(.int(-1))]))
    }
}

// MARK: Strings

extension PredicateExpressions.CollectionContainsCollection: TypedPredicateTerm {
    /// `string.contains(other)`: `CONTAINS`.
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        guard Base.Output.self is any StringProtocol.Type else {
            throw TypedPredicateTranslator.unsupported("contains(_:) of a subsequence is supported on strings only")
        }
        return .predicate(try t.compare(base, .contains, other))
    }
}

extension PredicateExpressions.SequenceStartsWith: TypedPredicateTerm {
    /// `string.starts(with: prefix)`: `BEGINSWITH`.
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        guard Base.Output.self is any StringProtocol.Type else {
            throw TypedPredicateTranslator.unsupported("starts(with:) is supported on strings only")
        }
        return .predicate(try t.compare(base, .beginsWith, prefix))
    }
}

// MARK: Collections

extension PredicateExpressions.SequenceContains: TypedPredicateTerm {
    /// `relationship.contains(object)`: `relationship CONTAINS object`; `constants.contains(x)`: `x IN constants`.
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        if Sequence.Output.self is any StringProtocol.Type {
            throw TypedPredicateTranslator.unsupported("contains(_:) of a Character; use contains(\"…\") with a String")
        }
        let collection = try t.value(sequence)
        let item = try t.value(element)
        if case .constant = collection {
            return .predicate(.comparison(ComparisonNode(lhs: item, op: .in, rhs: collection)))
        }
        return .predicate(.comparison(ComparisonNode(lhs: collection, op: .contains, rhs: item)))
    }

    private typealias Sequence = LHS
}

extension PredicateExpressions.SequenceContainsWhere: TypedPredicateTerm {
    /// `relationship.contains { $0.x > c }`: `ANY relationship.x > c`.
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        try t.quantified(.any, sequence: sequence, variable: variable.key, test: test)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: TypedPredicateTerm {
    /// `relationship.allSatisfy { $0.x > c }`: `ALL relationship.x > c`.
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        try t.quantified(.all, sequence: sequence, variable: variable.key, test: test)
    }
}

// MARK: Ranges

extension PredicateExpressions.ClosedRange: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        .range(try t.value(lower), try t.value(upper), closed: true)
    }
}

extension PredicateExpressions.Range: TypedPredicateTerm {
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        .range(try t.value(lower), try t.value(upper), closed: false)
    }
}

extension PredicateExpressions.RangeExpressionContains: TypedPredicateTerm {
    /// `(a...b).contains(x)`: `x >= a AND x <= b` (`< b` for `a..<b`).
    func typedTerm(_ t: inout TypedPredicateTranslator) throws -> TypedTerm {
        guard case .range(let lower, let upper, let closed) = try t.term(range) else {
            throw TypedPredicateTranslator.unsupported("contains(_:) of a range that is not a literal or captured range")
        }
        let item = try t.value(element)
        return .predicate(.and([
            .comparison(ComparisonNode(lhs: item, op: .greaterThanOrEqualTo, rhs: lower)),
            .comparison(ComparisonNode(lhs: item, op: closed ? .lessThanOrEqualTo : .lessThan, rhs: upper)),
        ]))
    }
}

/// A captured range's bounds.
internal protocol TypedRangeValue {
    var typedRange: TypedTerm { get }
}

extension ClosedRange: TypedRangeValue {
    var typedRange: TypedTerm { .range(.constant(typedConstant(lowerBound)), .constant(typedConstant(upperBound)), closed: true) }
}

extension Range: TypedRangeValue {
    var typedRange: TypedTerm { .range(.constant(typedConstant(lowerBound)), .constant(typedConstant(upperBound)), closed: false) }
}

/// `count` and `isEmpty` of the collections `@Managed` to-many properties are declared with.
internal protocol TypedCollectionKeyPaths {
    static var countKeyPath: AnyKeyPath { get }
    static var isEmptyKeyPath: AnyKeyPath { get }
}

extension Set: TypedCollectionKeyPaths {
    static var countKeyPath: AnyKeyPath { \Set<Element>.count }
    static var isEmptyKeyPath: AnyKeyPath { \Set<Element>.isEmpty }
}

extension Array: TypedCollectionKeyPaths {
    static var countKeyPath: AnyKeyPath { \[Element].count }
    static var isEmptyKeyPath: AnyKeyPath { \[Element].isEmpty }
}
