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
    /// The dictionary `expressionValue(with:context:)` was given, which a block expression
    /// receives as it is (``NSExpression/init(block:arguments:)``).
    var blockContext: NSMutableDictionary?

    init(variables: [String: Any]? = nil, blockContext: NSMutableDictionary? = nil) {
        self.variables = variables ?? [:]
        self.blockContext = blockContext
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
            switch rhs.dictionaryValues {
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
            if case .fetchRequest(let request, let context, let countOnly) = base {
                // Read on the fetch's context's queue (NSFetchRequestExpression.swift).
                return FetchRequestExpressions.evaluate(request: value(of: request, object: object).walkable,
                                                        context: value(of: context, object: object).walkable,
                                                        countOnly: countOnly, keyPath: path)
            }
            let start = value(of: base, object: object).walkable
            return PredicateValue(PredicateKeyValue.value(of: start, keyPath: path))
        case .variable(let name): return PredicateValue(variables[name])
        case .aggregate(let items): return .collection(items.map { value(of: $0, object: object) })
        case .function(let name, let arguments):
            if PredicateFunctions.invokesMethod(name), let receiver = arguments.first,
               let target = value(of: receiver, object: object).walkable as? ExpressionMethodReceiver {
                return PredicateValue(target.invokeExpressionMethod(name, arguments: arguments.dropFirst().map { value(of: $0, object: object).walkable }))
            }
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
            return (evaluate(predicate, object: object) ? value(of: a, object: object) : value(of: b, object: object)).computed
        case .fetchRequest(let request, let context, let countOnly):
            return FetchRequestExpressions.evaluate(request: value(of: request, object: object).walkable,
                                                    context: value(of: context, object: object).walkable, countOnly: countOnly)
        case .block(let block, let arguments):
            // Arguments as read (a key path's or variable's value unconverted: a Decimal stays one).
            let values = arguments.map { argument -> Any in
                switch argument {
                case .keyPath(let path): return PredicateKeyValue.value(of: object, keyPath: path) ?? NSNull()
                case .variable(let name): return variables[name] ?? NSNull()
                default: return value(of: argument, object: object).walkable ?? NSNull()
                }
            }
            let context = blockContext ?? NSMutableDictionary(dictionary: variables)
            return PredicateValue(block.body(object, values, context))
        }
    }
}

/// A running sum: exact while every value is an integer and the total fits in `Int64`, otherwise
/// a `Double` sum (in the order added). The SQLite store's `cd_sum` aggregate uses the same
/// struct, so `@sum` agrees in SQL and in memory. Plain data: SQLite keeps it in aggregate memory.
internal struct PredicateSum {
    private var exact: Int64 = 0
    private var approximate: Double = 0
    /// Whether a double or an overflow has made the sum approximate. `false` when zero: SQLite
    /// hands `cd_sum` zero-filled memory for its state, which must read as an empty exact sum.
    private var isInexact = false

    mutating func add(_ value: PredicateValue) {
        switch value {
        case .int(let v):
            approximate += Double(v)
            if !isInexact {
                let (total, overflow) = exact.addingReportingOverflow(v)
                if overflow { isInexact = true } else { exact = total }
            }
        case .double(let v):
            approximate += v
            isInexact = true
        default: break
        }
    }

    var value: PredicateValue { isInexact ? .double(approximate) : .int(exact) }
}

/// The functions expressions can call, by Apple's `NSExpression(forFunction:arguments:)` names.
/// Arithmetic on numbers (any `nil` or non-number operand gives `nil`), statistics of a
/// collection (a single value counts as a one-element collection), strings, `now()`, `random`.
/// The SQLite store calls the same code through `cd_fn` (``PredicateSQLFunctions``), so a
/// function of stored values gives the same answer in SQL as in memory.
internal enum PredicateFunctions {
    /// Argument counts by function name, Apple's list (less `distanceToLocation:fromLocation:`,
    /// which needs Core Location) plus the internal `negate:`, `objectFrom:withIndex:` and
    /// `castObject:toType:` that format syntax produces.
    static let arities: [String: Int] = [
        "average:": 1, "sum:": 1, "count:": 1, "min:": 1, "max:": 1, "median:": 1, "mode:": 1, "stddev:": 1,
        "add:to:": 2, "from:subtract:": 2, "multiply:by:": 2, "divide:by:": 2, "modulus:by:": 2,
        "raise:toPower:": 2, "sqrt:": 1, "log:": 1, "ln:": 1, "exp:": 1, "ceiling:": 1, "floor:": 1,
        "abs:": 1, "trunc:": 1, "uppercase:": 1, "lowercase:": 1, "canonical:": 1, "length:": 1, "noindex:": 1,
        "bitwiseAnd:with:": 2, "bitwiseOr:with:": 2, "bitwiseXor:with:": 2, "leftshift:by:": 2,
        "rightshift:by:": 2, "onesComplement:": 1, "random": 0, "random:": 1, "now": 0,
        "negate:": 1, "objectFrom:withIndex:": 2, "castObject:toType:": 2,
    ]

    /// The statistics functions, whose argument is a collection.
    static let statistics: Set<String> = ["average:", "sum:", "count:", "min:", "max:", "median:", "mode:", "stddev:"]

    static func isKnown(_ name: String, argumentCount: Int) -> Bool {
        arities[name] == argumentCount
    }

    /// Whether a function node of this name is a method invoked on a receiver (its first
    /// argument), as `FUNCTION($manager, "sourceContext")` in a mapping model, rather than one of
    /// the functions above.
    static func invokesMethod(_ name: String) -> Bool {
        arities[name] == nil && setOperators[name] == nil
    }

    /// The value of the function `name` of `args`; a NaN result is `nil` (see
    /// ``PredicateValue/computed``), as the SQLite store gets it back from SQL.
    static func apply(_ name: String, _ args: [PredicateValue]) -> PredicateValue {
        compute(name, args).computed
    }

    private static func compute(_ name: String, _ args: [PredicateValue]) -> PredicateValue {
        if setOperators[name] != nil, args.count == 2 { return setOperation(name, args[0], args[1]) } // (PredicateSetExpressions.swift)
        guard arities[name] == args.count else { return .null }
        if statistics.contains(name) { return statistic(name, args[0]) }
        switch name {
        case "now": return .date(Date())
        case "random": return .double(Double.random(in: 0..<1))
        case "random:":
            guard case .int(let bound) = args[0], bound > 0 else { return .null }
            return .int(Int64.random(in: 0..<bound))
        case "negate:":
            switch args[0] {
            case .int(let v): return v == Int64.min ? .double(-Double(v)) : .int(-v)
            case .double(let v): return .double(-v)
            default: return .null
            }
        case "noindex:": return args[0]
        case "objectFrom:withIndex:":
            // A dictionary's value for a key (`info['color']`), as Apple's format syntax has it.
            if let dictionary = args[0].dictionary, case .string(let key) = args[1] { return PredicateValue(dictionary[key]) }
            guard case .collection(let items) = args[0] else { return .null }
            switch args[1] {
            case .string("FIRST"): return items.first ?? .null
            case .string("LAST"): return items.last ?? .null
            case .string("SIZE"): return .int(Int64(items.count))
            case .int(let i): return i >= 0 && i < items.count ? items[Int(i)] : .null
            default: return .null
            }
        case "castObject:toType:":
            guard case .string(let type) = args[1] else { return .null }
            return cast(args[0], to: type)
        case "add:to:", "from:subtract:", "multiply:by:", "divide:by:", "raise:toPower:", "modulus:by:":
            return arithmetic(name, args[0], args[1])
        case "bitwiseAnd:with:", "bitwiseOr:with:", "bitwiseXor:with:", "leftshift:by:", "rightshift:by:":
            guard case .int(let x) = args[0], case .int(let y) = args[1] else { return .null }
            switch name {
            case "bitwiseAnd:with:": return .int(x & y)
            case "bitwiseOr:with:": return .int(x | y)
            case "bitwiseXor:with:": return .int(x ^ y)
            case "leftshift:by:": return .int(x << y)
            default: return .int(x >> y)
            }
        case "onesComplement:":
            guard case .int(let x) = args[0] else { return .null }
            return .int(~x)
        case "abs:":
            switch args[0] {
            case .int(let v): return v == Int64.min ? .double(-Double(v)) : .int(Swift.abs(v))
            case .double(let v): return .double(Swift.abs(v))
            default: return .null
            }
        case "sqrt:", "log:", "ln:", "exp:", "ceiling:", "floor:", "trunc:":
            guard let x = double(args[0]) else { return .null }
            switch name {
            case "sqrt:": return .double(x.squareRoot())
            case "log:": return .double(log10(x))
            case "ln:": return .double(Foundation.log(x))
            case "exp:": return .double(Foundation.exp(x))
            case "ceiling:": return .double(x.rounded(.up))
            case "floor:": return .double(x.rounded(.down))
            default: return .double(x.rounded(.towardZero))
            }
        case "uppercase:", "lowercase:", "canonical:", "length:":
            guard case .string(let text) = args[0] else { return .null }
            switch name {
            case "uppercase:": return .string(text.uppercased())
            case "lowercase:": return .string(text.lowercased())
            case "canonical:": return .string(PredicateStrings.fold(text, [.caseInsensitive, .diacriticInsensitive]))
            default: return .int(Int64(text.utf16.count))
            }
        default: return .null
        }
    }

    /// `sum:`, `count:`, `min:`, `max:`, `average:`, `median:`, `mode:`, `stddev:` of a collection,
    /// with the semantics of the key-path operators (`@sum` of nothing is 0, `@avg`/`@min`/`@max`
    /// of nothing are `nil`; `nil` elements are skipped except by `count:`).
    static func statistic(_ name: String, _ argument: PredicateValue) -> PredicateValue {
        computeStatistic(name, argument).computed
    }

    private static func computeStatistic(_ name: String, _ argument: PredicateValue) -> PredicateValue {
        let items: [PredicateValue]
        switch argument {
        case .collection(let elements): items = elements
        case .null: items = []
        default: items = [argument]
        }
        if name == "count:" { return .int(Int64(items.count)) }
        let values = items.filter { !$0.isNull }
        switch name {
        case "min:", "max:":
            var best: PredicateValue?
            for value in values {
                guard let current = best else { best = value; continue }
                if let order = PredicateValue.order(value, current),
                   order == (name == "min:" ? .orderedAscending : .orderedDescending) { best = value }
            }
            return best ?? .null
        case "mode:":
            var counts: [(PredicateValue, Int)] = []
            for value in values {
                if let index = counts.firstIndex(where: { PredicateValue.equal($0.0, value) }) { counts[index].1 += 1 } else { counts.append((value, 1)) }
            }
            // Every most frequent value, in the order met, as Apple's `mode:` gives an array.
            let most = counts.map(\.1).max() ?? 0
            return .collection(counts.filter { $0.1 == most }.map(\.0))
        default: break
        }
        var numbers: [Double] = []
        var sum = PredicateSum()
        for value in values {
            switch value {
            case .int(let v): numbers.append(Double(v))
            case .double(let v): numbers.append(v)
            default: return .null
            }
            sum.add(value)
        }
        switch name {
        case "sum:": return sum.value
        case "average:":
            guard !numbers.isEmpty else { return .null }
            switch sum.value {
            case .int(let total): return .double(Double(total) / Double(numbers.count))
            case .double(let total): return .double(total / Double(numbers.count))
            default: return .null
            }
        case "median:":
            guard !numbers.isEmpty else { return .null }
            let sorted = numbers.sorted()
            let middle = sorted.count / 2
            return .double(sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2)
        default: // stddev:
            guard !numbers.isEmpty else { return .null }
            let mean = numbers.reduce(0, +) / Double(numbers.count)
            return .double((numbers.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(numbers.count)).squareRoot())
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
        if name == "modulus:by:", case .int(let x) = a, case .int(let y) = b {
            guard y != 0 else { return .null }
            let (r, o) = x.remainderReportingOverflow(dividingBy: y)
            return .int(o ? 0 : r)
        }
        guard let x = double(a), let y = double(b) else { return .null }
        switch name {
        case "modulus:by:": return .double(fmod(x, y))
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
