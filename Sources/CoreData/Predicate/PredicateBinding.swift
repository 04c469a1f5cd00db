import Foundation

// Binding a predicate's variables for one evaluation, as a fetched property binds
// `$FETCH_SOURCE` and `$FETCHED_PROPERTY`. Unlike `substituting(_:)` (templates, which may keep
// variables for later), every variable must get a value, and key paths from the values are read
// at once.

/// A `$NAME` that a predicate uses but the bindings do not give.
internal struct UnboundPredicateVariable: Error {
    var name: String
}

extension PredicateNode {
    /// The predicate with `variables` in place of their `$NAME`s, and every key path from a value
    /// (`$FETCH_SOURCE.name`, `$FETCHED_PROPERTY.userInfo.key`) read now, on the caller's queue:
    /// the result holds constants only, so a parent context can run it on its own queue.
    /// Throws ``UnboundPredicateVariable`` for a variable `variables` lacks (those a `SUBQUERY`
    /// binds are left alone).
    func binding(_ variables: [String: Any]) throws -> PredicateNode {
        try substituting(variables).replacingExpressions { try $0.bindingRule(bound: []) }
    }
}

extension ExpressionNode {
    /// The rule of ``PredicateNode/binding(_:)`` for one expression; `bound` holds the names
    /// enclosing `SUBQUERY`s bind.
    fileprivate func bindingRule(bound: Set<String>) throws -> ExpressionNode? {
        switch self {
        case .variable(let name):
            guard bound.contains(name) else { throw UnboundPredicateVariable(name: name) }
            return self
        case .keyPathFrom(let base, let path):
            let read = try base.replacing { try $0.bindingRule(bound: bound) }
            guard case .constant(let value) = read else { return .keyPathFrom(read, path) }
            return .constant(PredicateValue(PredicateKeyValue.value(of: value.walkable, keyPath: path)))
        case .subquery(let collection, let variable, let predicate):
            let inside = bound.union([variable])
            return .subquery(try collection.replacing { try $0.bindingRule(bound: bound) }, variable,
                             try predicate.replacingExpressions { try $0.bindingRule(bound: inside) })
        default:
            return nil
        }
    }
}
