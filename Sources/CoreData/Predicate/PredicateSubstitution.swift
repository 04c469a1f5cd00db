import Foundation

// Replacing `$NAME` variables with values (`withSubstitutionVariables(_:)`, fetch request templates).

extension PredicateNode {
    /// The predicate with each free `$NAME` that `variables` names replaced by a constant.
    /// Variables bound by a `SUBQUERY` inside are left alone.
    func substituting(_ variables: [String: Any]) -> PredicateNode {
        substituting(variables, bound: [])
    }

    fileprivate func substituting(_ variables: [String: Any], bound: Set<String>) -> PredicateNode {
        switch self {
        case .constant: return self
        case .and(let parts): return .and(parts.map { $0.substituting(variables, bound: bound) })
        case .or(let parts): return .or(parts.map { $0.substituting(variables, bound: bound) })
        case .not(let inner): return .not(inner.substituting(variables, bound: bound))
        case .comparison(var comparison):
            comparison.lhs = comparison.lhs.substituting(variables, bound: bound)
            comparison.rhs = comparison.rhs.substituting(variables, bound: bound)
            return .comparison(comparison)
        }
    }
}

extension ExpressionNode {
    fileprivate func substituting(_ variables: [String: Any], bound: Set<String>) -> ExpressionNode {
        switch self {
        case .variable(let name):
            guard !bound.contains(name), let value = variables[name] else { return self }
            return .constant(PredicateValue(value))
        case .keyPath, .constant, .evaluatedObject: return self
        case .keyPathFrom(let base, let path):
            return PredicateParser.appending(path, to: base.substituting(variables, bound: bound))
        case .aggregate(let items):
            let substituted = items.map { $0.substituting(variables, bound: bound) }
            var constants: [PredicateValue] = []
            for item in substituted {
                guard case .constant(let value) = item else { return .aggregate(substituted) }
                constants.append(value)
            }
            return .constant(.collection(constants))
        case .function(let name, let args):
            return .function(name, args.map { $0.substituting(variables, bound: bound) })
        case .subquery(let collection, let variable, let predicate):
            return .subquery(collection.substituting(variables, bound: bound), variable,
                             predicate.substituting(variables, bound: bound.union([variable])))
        case .conditional(let predicate, let a, let b):
            return .conditional(predicate.substituting(variables, bound: bound),
                                a.substituting(variables, bound: bound), b.substituting(variables, bound: bound))
        }
    }
}
