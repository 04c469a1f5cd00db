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
        case .fetchRequest(let request, let context, let countOnly):
            return .fetchRequest(request.substituting(variables, bound: bound), context.substituting(variables, bound: bound),
                                 countOnly: countOnly)
        case .block(let block, let args) where block.evaluatesPredicate:
            // A block predicate is given the variables when it runs, as its bindings (those it is
            // given then take precedence).
            let captured = ExpressionBlock(evaluatesPredicate: true) { object, arguments, context in
                let merged = NSMutableDictionary(dictionary: variables)
                if let context { merged.addEntries(from: context as? [AnyHashable: Any] ?? [:]) }
                return block.body(object, arguments, merged)
            }
            return .block(captured, args.map { $0.substituting(variables, bound: bound) })
        case .block(let block, let args):
            return .block(block, args.map { $0.substituting(variables, bound: bound) })
        }
    }
}

// Replacing expressions by a rule (a dictionary fetch's HAVING clause: column names, aggregates).

extension PredicateNode {
    /// The predicate with every expression for which `rule` gives a replacement replaced,
    /// looked at from the outside in: a replaced expression is not looked into.
    func replacingExpressions(_ rule: (ExpressionNode) throws -> ExpressionNode?) rethrows -> PredicateNode {
        switch self {
        case .constant: return self
        case .and(let parts): return .and(try parts.map { try $0.replacingExpressions(rule) })
        case .or(let parts): return .or(try parts.map { try $0.replacingExpressions(rule) })
        case .not(let inner): return .not(try inner.replacingExpressions(rule))
        case .comparison(var comparison):
            comparison.lhs = try comparison.lhs.replacing(rule)
            comparison.rhs = try comparison.rhs.replacing(rule)
            return .comparison(comparison)
        }
    }
}

extension ExpressionNode {
    /// The expression, or its replacement by `rule`, with `rule` applied inside it otherwise.
    func replacing(_ rule: (ExpressionNode) throws -> ExpressionNode?) rethrows -> ExpressionNode {
        if let replacement = try rule(self) { return replacement }
        switch self {
        case .keyPath, .constant, .evaluatedObject, .variable: return self
        case .keyPathFrom(let base, let path): return .keyPathFrom(try base.replacing(rule), path)
        case .aggregate(let items): return .aggregate(try items.map { try $0.replacing(rule) })
        case .function(let name, let args): return .function(name, try args.map { try $0.replacing(rule) })
        case .subquery(let collection, let variable, let predicate):
            return .subquery(try collection.replacing(rule), variable, try predicate.replacingExpressions(rule))
        case .conditional(let predicate, let a, let b):
            return .conditional(try predicate.replacingExpressions(rule), try a.replacing(rule), try b.replacing(rule))
        case .fetchRequest(let request, let context, let countOnly):
            return .fetchRequest(try request.replacing(rule), try context.replacing(rule), countOnly: countOnly)
        case .block(let block, let args): return .block(block, try args.map { try $0.replacing(rule) })
        }
    }
}

// Looking for an expression (a FETCH, a block) without building anything.

extension PredicateNode {
    /// Whether an expression anywhere in the predicate satisfies `test`.
    func containsExpression(where test: (ExpressionNode) -> Bool) -> Bool {
        switch self {
        case .constant: return false
        case .and(let parts), .or(let parts): return parts.contains { $0.containsExpression(where: test) }
        case .not(let inner): return inner.containsExpression(where: test)
        case .comparison(let comparison): return comparison.lhs.contains(where: test) || comparison.rhs.contains(where: test)
        }
    }

    /// Whether the predicate holds a block expression, which only in-memory evaluation runs.
    var containsBlock: Bool {
        containsExpression { if case .block = $0 { return true } else { return false } }
    }
}

extension ExpressionNode {
    /// Whether the expression, or one inside it, satisfies `test`.
    func contains(where test: (ExpressionNode) -> Bool) -> Bool {
        if test(self) { return true }
        switch self {
        case .keyPath, .constant, .variable, .evaluatedObject: return false
        case .keyPathFrom(let base, _): return base.contains(where: test)
        case .aggregate(let items), .function(_, let items), .block(_, let items): return items.contains { $0.contains(where: test) }
        case .subquery(let collection, _, let predicate):
            return collection.contains(where: test) || predicate.containsExpression(where: test)
        case .conditional(let predicate, let a, let b):
            return predicate.containsExpression(where: test) || a.contains(where: test) || b.contains(where: test)
        case .fetchRequest(let request, let context, _): return request.contains(where: test) || context.contains(where: test)
        }
    }

    /// Whether the expression holds a block expression.
    var containsBlock: Bool {
        contains { if case .block = $0 { return true } else { return false } }
    }
}
