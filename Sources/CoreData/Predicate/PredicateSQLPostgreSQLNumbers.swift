import Foundation

// Arithmetic and sums in the PostgreSQL dialect, computed as `PredicateFunctions` and
// `PredicateSum` compute them in memory (SQLite runs them through its own operators and
// `cd_sum`, which go on in floating point where PostgreSQL's integers fail on overflow):
// - integers add, subtract, multiply, negate and take `abs:` in `numeric`, exactly; the evaluator
//   goes on in `Double` past 2^63, so the two can differ there, in rounding only;
// - anything with a double is computed in `double precision`, as the evaluator's `Double`
//   (PostgreSQL fails where a double overflows to infinity: a fetch error, not other rows);
// - `@sum`/`sum:` of integers is exact (`SUM` of a `bigint` is `numeric`), of doubles in
//   `double precision`; of no values 0; `@avg`/`average:` is the sum over the count, `NULL`
//   for no values.
// - an integer compared with a double (`year > score`) exactly, as SQLite compares an INTEGER
//   with a REAL (PostgreSQL would turn the integer into a double, which rounds past 2^53).
// Division, `modulus:by:`, `sqrt:` and the other functions are `PredicateSQLPostgreSQLFunctions.swift`.

extension PredicateSQLCompiler {
    /// `+`, `-`, `*`, unary `-` and `abs:` of numbers in PostgreSQL; `nil` for other functions
    /// and for a constant that is not a finite number (the caller refuses those).
    ///
    /// ```swift
    /// compiler.postgreSQLArithmetic("add:to:", [.value("t0.\"ZYEAR\"", .integer), .constant(.int(1))])
    /// // .value("(CAST(t0.\"ZYEAR\" AS numeric) + CAST(? AS numeric))", .integer)
    /// ```
    func postgreSQLArithmetic(_ name: String, _ operands: [Operand]) -> Operand? {
        let symbols = ["add:to:": " + ", "from:subtract:": " - ", "multiply:by:": " * "]
        guard operands.count == (symbols[name] != nil ? 2 : 1),
              symbols[name] != nil || name == "negate:" || name == "abs:" else { return nil }
        var values: [SQLFragment] = []
        var integers = true
        for operand in operands {
            switch operand {
            case .value(let fragment, let kind) where kind.isNumeric:
                values.append(fragment)
                integers = integers && kind.isInteger
            case .constant(.int(let v)):
                values.append(.bind(.int(v)))
            case .constant(.double(let v)) where v.isFinite:
                values.append(.bind(.double(v)))
                integers = false
            case .constant(.null):
                return .constant(.null)   // nil in, nil out
            default:
                return nil
            }
        }
        let type = integers ? "numeric" : "double precision"
        let cast = values.map { "CAST(" + $0 + " AS \(type))" }
        let kind: ValueKind = integers ? .integer : .real
        switch name {
        case "negate:": return .value("(- " + cast[0] + ")", kind)
        case "abs:": return .value("abs(" + cast[0] + ")", kind)
        default: return .value("(" + cast[0] + symbols[name]! + cast[1] + ")", kind)
        }
    }

    /// `@sum` (`sum: true`) or `@avg` of a number column over the rows of an aggregate, in
    /// PostgreSQL, and the kind of its value.
    ///
    /// ```swift
    /// compiler.postgreSQLSum(true, of: "t2.\"ZYEAR\"", .integer)   // ("COALESCE(SUM(t2.\"ZYEAR\"), 0)", .integer)
    /// ```
    func postgreSQLSum(_ sum: Bool, of column: SQLFragment, _ kind: ValueKind) -> (SQLFragment, ValueKind) {
        let total = kind.isInteger ? "SUM(" + column + ")" : "SUM(CAST(" + column + " AS double precision))"
        if sum { return ("COALESCE(" + total + ", 0)", kind) }
        return ("(CAST(" + total + " AS double precision) / NULLIF(COUNT(" + column + "), 0))", .real)
    }

    /// `a op b` (`==`, `!=`, `<`, `<=`, `>`, `>=`) for an integer and a floating-point operand
    /// in PostgreSQL, exact: compared as doubles where the integer's nearest double differs from
    /// the other value (rounding to the nearest double keeps a strict order), else (the double
    /// is then a whole number) as integers. `nil` for the other operators.
    ///
    /// ```swift
    /// compiler.postgreSQLMixedComparison("t0.\"ZYEAR\"", .integer, .greaterThan, "t0.\"ZSCORE\"")
    /// // (t0."ZYEAR" IS NOT NULL AND t0."ZSCORE" IS NOT NULL AND (CASE WHEN … END))
    /// ```
    func postgreSQLMixedComparison(_ a: SQLFragment, _ aKind: ValueKind, _ op: ComparisonOperator, _ b: SQLFragment) -> SQLFragment? {
        let symbols: [ComparisonOperator: String] = [.equalTo: "=", .lessThan: "<", .lessThanOrEqualTo: "<=",
                                                     .greaterThan: ">", .greaterThanOrEqualTo: ">="]
        if op == .notEqualTo { return postgreSQLMixedComparison(a, aKind, .equalTo, b).map(Self.negate) }
        guard let swapped = op.swapped, let symbol = symbols[aKind.isInteger ? op : swapped] else { return nil }
        let (integer, real) = aKind.isInteger ? (a, b) : (b, a)
        let double = "CAST(" + real + " AS double precision)"
        let rounded = "CAST(" + integer + " AS double precision)"
        let exact = "(CASE WHEN " + rounded + " <> " + double + " THEN " + rounded + " \(symbol) " + double
            + " WHEN " + double + " >= CAST(9223372036854775808 AS double precision) THEN CAST(" + integer + " AS numeric) \(symbol) 9223372036854775808"
            + " ELSE " + integer + " \(symbol) CAST(" + double + " AS bigint) END)"
        let bothSet = "(" + a + " IS NOT NULL AND " + b + " IS NOT NULL AND " + exact + ")"
        return op == .equalTo ? "((" + a + " IS NULL AND " + b + " IS NULL) OR " + bothSet + ")" : bothSet
    }
}
