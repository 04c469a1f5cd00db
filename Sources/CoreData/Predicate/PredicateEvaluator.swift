import Foundation

/// Evaluates a ``PredicateNode`` against one object in memory, with Apple's semantics:
///
/// - `nil` equals only `nil`, so `name != 'x'` is true when `name` is `nil`; ordering an operand
///   that is `nil` (`age < 5` with no age) is false, and so is any comparison of values that have
///   no common order (a string and a number, two data values).
/// - Numbers compare by value across `Int`, `Double`, `Bool`, `NSNumber`, `Decimal`.
/// - Strings compare by UTF-8 bytes; `[c]` and `[d]` fold first (see ``PredicateStrings``).
/// - `ANY`/`ALL`/`NONE` apply the comparison to each element of the left-hand collection
///   (`nil` counts as an empty collection, any other single value as a one-element collection);
///   `ALL` and `NONE` are true of an empty collection.
/// - Without a modifier, `CONTAINS`/`IN` test membership when the collection side is a collection.
///
/// The SQL compiler produces SQL that gives exactly these answers for stored rows.
internal struct PredicateEvaluator {
    /// Substitution variables, by name without the `$`.
    var variables: [String: Any]

    init(variables: [String: Any]? = nil) {
        self.variables = variables ?? [:]
    }

    static func evaluate(_ node: PredicateNode, object: Any?, variables: [String: Any]? = nil) -> Bool {
        PredicateEvaluator(variables: variables).evaluate(node, object: object)
    }

    func evaluate(_ node: PredicateNode, object: Any?) -> Bool {
        switch node {
        case .constant(let value): return value
        case .and(let parts): return parts.allSatisfy { evaluate($0, object: object) }
        case .or(let parts): return parts.contains { evaluate($0, object: object) }
        case .not(let inner): return !evaluate(inner, object: object)
        case .comparison(let comparison): return evaluate(comparison, object: object)
        }
    }

    private func evaluate(_ comparison: ComparisonNode, object: Any?) -> Bool {
        let lhs = value(of: comparison.lhs, object: object)
        let rhs = value(of: comparison.rhs, object: object)
        switch comparison.modifier {
        case .direct:
            return Self.compare(lhs, comparison.op, rhs, options: comparison.options)
        case .any, .all, .none:
            let items: [PredicateValue]
            switch lhs {
            case .null: items = []
            case .collection(let elements): items = elements
            default: items = [lhs]
            }
            let test = { (item: PredicateValue) in Self.compare(item, comparison.op, rhs, options: comparison.options) }
            switch comparison.modifier {
            case .any: return items.contains(where: test)
            case .all: return items.allSatisfy(test)
            default: return !items.contains(where: test)
            }
        }
    }

    /// `lhs op rhs` on two evaluated values.
    static func compare(_ lhs: PredicateValue, _ op: ComparisonOperator, _ rhs: PredicateValue, options: ComparisonOptions) -> Bool {
        switch op {
        case .equalTo: return PredicateValue.equal(lhs, rhs, options: options)
        case .notEqualTo: return !PredicateValue.equal(lhs, rhs, options: options)
        case .lessThan: return PredicateValue.order(lhs, rhs, options: options) == .orderedAscending
        case .lessThanOrEqualTo:
            guard let order = PredicateValue.order(lhs, rhs, options: options) else { return false }
            return order != .orderedDescending
        case .greaterThan: return PredicateValue.order(lhs, rhs, options: options) == .orderedDescending
        case .greaterThanOrEqualTo:
            guard let order = PredicateValue.order(lhs, rhs, options: options) else { return false }
            return order != .orderedAscending
        case .between:
            guard case .collection(let bounds) = rhs, bounds.count == 2,
                  let low = PredicateValue.order(lhs, bounds[0], options: options),
                  let high = PredicateValue.order(lhs, bounds[1], options: options) else { return false }
            return low != .orderedAscending && high != .orderedDescending
        case .in:
            switch rhs {
            case .collection(let items): return items.contains { PredicateValue.equal(lhs, $0, options: options) }
            case .string(let text):
                guard case .string(let needle) = lhs else { return false }
                return PredicateStrings.evaluate(.in, needle, text, options: options)
            default: return false
            }
        case .contains:
            switch lhs {
            case .collection(let items): return items.contains { PredicateValue.equal($0, rhs, options: options) }
            case .string(let text):
                guard case .string(let needle) = rhs else { return false }
                return PredicateStrings.evaluate(.contains, text, needle, options: options)
            default: return false
            }
        case .beginsWith, .endsWith, .like, .matches:
            guard case .string(let text) = lhs, case .string(let pattern) = rhs else { return false }
            return PredicateStrings.evaluate(op, text, pattern, options: options)
        }
    }

    /// The value of an expression for `object`.
    func value(of expression: ExpressionNode, object: Any?) -> PredicateValue {
        switch expression {
        case .constant(let value): return value
        case .evaluatedObject: return PredicateValue(object)
        case .keyPath(let path): return PredicateValue(PredicateKeyValue.value(of: object, keyPath: path))
        case .keyPathFrom(let base, let path):
            let start = value(of: base, object: object).walkable
            return PredicateValue(PredicateKeyValue.value(of: start, keyPath: path))
        case .variable(let name): return PredicateValue(variables[name])
        case .aggregate(let items): return .collection(items.map { value(of: $0, object: object) })
        case .function(let name, let arguments):
            return PredicateFunctions.apply(name, arguments.map { value(of: $0, object: object) })
        case .subquery(let collection, let variable, let predicate):
            let source = value(of: collection, object: object)
            guard case .collection(let items) = source else { return .collection([]) }
            let matching = items.filter { item in
                var scoped = self
                scoped.variables[variable] = item.walkable
                return scoped.evaluate(predicate, object: object)
            }
            return .collection(matching)
        case .conditional(let predicate, let a, let b):
            return evaluate(predicate, object: object) ? value(of: a, object: object) : value(of: b, object: object)
        }
    }
}

/// The functions expressions can call, by Apple's `NSExpression` names. Arithmetic on numbers
/// (any `nil` or non-number operand gives `nil`); `now()`.
internal enum PredicateFunctions {
    static func apply(_ name: String, _ args: [PredicateValue]) -> PredicateValue {
        switch (name, args.count) {
        case ("now", 0): return .date(Date())
        case ("negate:", 1):
            switch args[0] {
            case .int(let v): return v == Int64.min ? .double(-Double(v)) : .int(-v)
            case .double(let v): return .double(-v)
            default: return .null
            }
        case ("objectFrom:withIndex:", 2):
            guard case .collection(let items) = args[0] else { return .null }
            switch args[1] {
            case .string("FIRST"): return items.first ?? .null
            case .string("LAST"): return items.last ?? .null
            case .string("SIZE"): return .int(Int64(items.count))
            case .int(let i): return i >= 0 && i < items.count ? items[Int(i)] : .null
            default: return .null
            }
        case ("castObject:toType:", 2):
            guard case .string(let type) = args[1] else { return .null }
            return cast(args[0], to: type)
        case ("add:to:", 2), ("from:subtract:", 2), ("multiply:by:", 2), ("divide:by:", 2), ("raise:toPower:", 2):
            return arithmetic(name, args[0], args[1])
        default: return .null
        }
    }

    private static func arithmetic(_ name: String, _ a: PredicateValue, _ b: PredicateValue) -> PredicateValue {
        if case .int(let x) = a, case .int(let y) = b {
            switch name {
            case "add:to:": let (r, o) = x.addingReportingOverflow(y); if !o { return .int(r) }
            case "from:subtract:": let (r, o) = x.subtractingReportingOverflow(y); if !o { return .int(r) }
            case "multiply:by:": let (r, o) = x.multipliedReportingOverflow(by: y); if !o { return .int(r) }
            default: break
            }
        }
        guard let x = double(a), let y = double(b) else { return .null }
        switch name {
        case "add:to:": return .double(x + y)
        case "from:subtract:": return .double(x - y)
        case "multiply:by:": return .double(x * y)
        case "divide:by:": return .double(x / y)
        default: return .double(pow(x, y))
        }
    }

    /// `CAST(value, 'NSDate')` (seconds since 2001-01-01), `'NSNumber'`, `'NSString'`.
    private static func cast(_ value: PredicateValue, to type: String) -> PredicateValue {
        switch (type, value) {
        case ("NSDate", .int(let v)): return .date(Date(timeIntervalSinceReferenceDate: Double(v)))
        case ("NSDate", .double(let v)): return .date(Date(timeIntervalSinceReferenceDate: v))
        case ("NSDate", .string(let s)): return Double(s).map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null
        case ("NSDate", .date): return value
        case ("NSNumber", .int), ("NSNumber", .double): return value
        case ("NSNumber", .date(let d)): return .double(d.timeIntervalSinceReferenceDate)
        case ("NSNumber", .string(let s)): return Int64(s).map { .int($0) } ?? Double(s).map { .double($0) } ?? .null
        case ("NSString", .string): return value
        case ("NSString", .int(let v)): return .string(String(v))
        case ("NSString", .double(let v)): return .string(String(v))
        default: return .null
        }
    }

    private static func double(_ value: PredicateValue) -> Double? {
        switch value {
        case .int(let v): return Double(v)
        case .double(let v): return v
        default: return nil
        }
    }
}
