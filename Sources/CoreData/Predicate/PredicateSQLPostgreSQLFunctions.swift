import Foundation

// The functions of stored values that SQLite runs through `cd_fn` (`PredicateFunctions.apply`),
// in the PostgreSQL dialect, with the evaluator's answers:
// - `divide:by:`, `raise:toPower:`, `sqrt:`, `ln:`, `log:` (base 10), `exp:`, `ceiling:`,
//   `floor:`, `trunc:` in `double precision`, as `Double`: where IEEE arithmetic gives an
//   infinity or NaN and PostgreSQL would fail instead (division by zero, the root or logarithm
//   of a negative number or zero, a zero raised to a negative power, `exp:` past the largest or
//   smallest double), a `CASE` gives IEEE's answer; NaN is `NULL` (the evaluator's `nil`).
//   A result of finite operands that overflows to an infinity (`1e300 / 1e-300`,
//   `raise:toPower:` of large numbers) or underflows to zero fails the fetch, as arithmetic does.
// - `modulus:by:` of integers (`bigint`'s `%`, the sign of the dividend, `nil` by zero);
//   `bitwiseAnd:with:`, `bitwiseOr:with:`, `bitwiseXor:with:`, `onesComplement:`,
//   `leftshift:by:`, `rightshift:by:` of integers, shifts as Swift's (64 places or more shift
//   everything out, a negative count shifts the other way).
// - `length:` counts UTF-16 code units, as `NSString`: characters plus one for each past U+FFFF.
// - `uppercase:`/`lowercase:` are Unicode's full default case mappings (`ß` → `SS`) in ICU's
//   root locale (`COLLATE "und-x-icu"`: the server must be built with ICU), `Σ` lowering to
//   `σ` also at the end of a word, as Swift's `lowercased()`.
// - `canonical:` folds case and diacritics as `[cd]` does (`PredicateSQLPostgreSQLFolding.swift`).
// `modulus:by:` of a floating-point number (PostgreSQL has no `fmod` of doubles), `random:` and
// the statistics of a single value still throw 134091.

extension PredicateSQLCompiler {
    /// A function of stored values in PostgreSQL (see the file's comment), or `nil` for one it
    /// does not compute (the caller refuses it). The operands' kinds are already checked:
    /// numbers, or strings for the string functions.
    ///
    /// ```swift
    /// compiler.postgreSQLFunction("sqrt:", [.value("t0.\"ZSCORE\"", .real)])
    /// // .value("NULLIF((CASE WHEN … < 0 THEN NULL ELSE sqrt(…) END), 'NaN')", .real)
    /// ```
    func postgreSQLFunction(_ name: String, _ operands: [Operand]) -> Operand? {
        var values: [SQLFragment] = []
        var integers = true
        for operand in operands {
            switch operand {
            case .value(let fragment, let kind):
                values.append(fragment)
                integers = integers && kind.isInteger
            case .constant(.int(let v)): values.append(.bind(.int(v)))
            case .constant(.double(let v)):
                values.append(.bind(.double(v)))
                integers = false
            case .constant(.string(let v)): values.append(.bind(.string(v)))
            case .constant(.null): return .constant(.null)   // nil in, nil out
            default: return nil
            }
        }
        if let text = values.first, values.count == 1, ["length:", "uppercase:", "lowercase:"].contains(name) {
            return Self.postgreSQLStringFunction(name, text)
        }
        if let text = values.first, values.count == 1, name == "canonical:" {
            // Case and diacritics folded, as `[cd]` folds them.
            return .value(postgreSQLFolded(text, [.caseInsensitive, .diacriticInsensitive]), .string)
        }
        if integers, let integer = Self.postgreSQLIntegerFunction(name, values.map { "CAST(" + $0 + " AS bigint)" }) {
            return .value(integer, .integer)
        }
        guard let real = Self.postgreSQLDoubleFunction(name, values.map { "CAST(" + $0 + " AS double precision)" }) else { return nil }
        return .value("NULLIF(" + real + ", CAST('NaN' AS double precision))", .real)
    }

    /// A key of a string attribute (`name.length`, `name.uppercaseString`,
    /// `name.lowercaseString`) in PostgreSQL: `value`, SQLite's form of it, with its function
    /// computed as ``postgreSQLFunction(_:_:)`` computes it; other keys' `value` unchanged.
    ///
    /// ```swift
    /// compiler.postgreSQLValueKey("length", of: "t0.\"ZNAME\"", sqliteForm)   // .value("(length(t0.\"ZNAME\") + …)", .integer)
    /// ```
    func postgreSQLValueKey(_ key: String, of column: SQLFragment, _ value: Operand) -> Operand {
        let functions = ["length": "length:", "uppercaseString": "uppercase:", "lowercaseString": "lowercase:"]
        guard case .value(let fragment, _) = value, fragment.sql.hasPrefix("cd_fn("), let name = functions[key] else { return value }
        return Self.postgreSQLStringFunction(name, column)
    }

    /// `length:`, `uppercase:`, `lowercase:` of a text.
    private static func postgreSQLStringFunction(_ name: String, _ text: SQLFragment) -> Operand {
        switch name {
        case "length:":
            return .value("(length(" + text + ") + length(regexp_replace(" + text + ", '[^\\U00010000-\\U0010FFFF]', '', 'g')))", .integer)
        case "uppercase:":
            return .value("upper(" + text + " COLLATE \"und-x-icu\")", .string)
        default:
            return .value("lower(replace(" + text + ", 'Σ', 'σ') COLLATE \"und-x-icu\")", .string)
        }
    }

    /// The integer functions of `bigint` operands; `nil` for the others.
    private static func postgreSQLIntegerFunction(_ name: String, _ x: [SQLFragment]) -> SQLFragment? {
        let operators = ["modulus:by:": " % ", "bitwiseAnd:with:": " & ", "bitwiseOr:with:": " | ", "bitwiseXor:with:": " # "]
        switch name {
        case "modulus:by:":
            return "(" + x[0] + " % NULLIF(" + x[1] + ", 0))"
        case "bitwiseAnd:with:", "bitwiseOr:with:", "bitwiseXor:with:":
            return "(" + x[0] + operators[name]! + x[1] + ")"
        case "onesComplement:":
            return "(~ " + x[0] + ")"
        case "leftshift:by:", "rightshift:by:":
            // Swift's smart shifts: a negative count shifts the other way; 64 or more places
            // leave 0 (or -1, shifting a negative number right): `x & 0` and `x >> 63`, nil for nil.
            let (forward, backward) = name == "leftshift:by:" ? (" << ", " >> ") : (" >> ", " << ")
            let (zero, sign) = ("(" + x[0] + " & 0)", "(" + x[0] + " >> 63)")
            let (far, farBack) = name == "leftshift:by:" ? (zero, sign) : (sign, zero)
            return "(CASE WHEN " + x[1] + " >= 64 THEN " + far + " WHEN " + x[1] + " <= -64 THEN " + farBack
                + " WHEN " + x[1] + " >= 0 THEN " + x[0] + forward + "CAST(" + x[1] + " AS integer)"
                + " ELSE " + x[0] + backward + "CAST(- " + x[1] + " AS integer) END)"
        default:
            return nil
        }
    }

    /// The floating-point functions of `double precision` operands, IEEE's infinities and NaN
    /// where PostgreSQL would fail; `nil` for the others.
    private static func postgreSQLDoubleFunction(_ name: String, _ x: [SQLFragment]) -> SQLFragment? {
        let infinity: SQLFragment = "CAST('Infinity' AS double precision)"
        /// Whether a double's sign bit is set (also for -0.0, which equals 0).
        func negative(_ value: SQLFragment) -> SQLFragment { "(CAST(" + value + " AS text) LIKE '-%')" }
        switch name {
        case "divide:by:":
            // x / ±0 is ±infinity times the sign of x (NaN for 0 / 0).
            return "(CASE WHEN " + x[1] + " = 0 THEN " + x[0] + " * (CASE WHEN " + negative(x[1]) + " THEN -" + infinity
                + " ELSE " + infinity + " END) ELSE " + x[0] + " / " + x[1] + " END)"
        case "raise:toPower:":
            let (base, power) = (x[0], x[1])
            let oddInteger = "(" + power + " = trunc(" + power + ") AND trunc(" + power + " / 2) <> " + power + " / 2)"
            return "(CASE WHEN " + base + " = 0 AND " + power + " < 0 THEN (CASE WHEN " + negative(base) + " AND " + oddInteger
                + " THEN -" + infinity + " ELSE " + infinity + " END)"
                + " WHEN " + base + " < 0 AND " + power + " <> floor(" + power + ") THEN (CASE WHEN " + base + " <> -" + infinity
                + " THEN NULL WHEN " + power + " > 0 THEN " + infinity + " ELSE 0 END)"
                + " ELSE power(" + base + ", " + power + ") END)"
        case "sqrt:":
            return "(CASE WHEN " + x[0] + " < 0 THEN NULL ELSE sqrt(" + x[0] + ") END)"
        case "ln:", "log:":
            return "(CASE WHEN " + x[0] + " < 0 THEN NULL WHEN " + x[0] + " = 0 THEN -" + infinity
                + " ELSE " + (name == "ln:" ? "ln(" : "log(") + x[0] + ") END)"
        case "exp:":
            return "(CASE WHEN " + x[0] + " > " + .bind(.double(exponentLimits.overflow)) + " THEN " + infinity
                + " WHEN " + x[0] + " <= " + .bind(.double(exponentLimits.underflow)) + " THEN 0 ELSE exp(" + x[0] + ") END)"
        case "ceiling:": return "ceil(" + x[0] + ")"
        case "floor:": return "floor(" + x[0] + ")"
        case "trunc:": return "trunc(" + x[0] + ")"
        default: return nil
        }
    }

    /// The largest double whose `exp` is finite, and the largest whose `exp` is 0.
    private static let exponentLimits: (overflow: Double, underflow: Double) = (
        largestDouble(in: 709, 710) { Foundation.exp($0).isFinite },
        largestDouble(in: -746, -745) { Foundation.exp($0) == 0 })

    /// The largest double in `low...high` that meets `test`, which holds of every double up to
    /// some point and of none past it (and holds at `low`, fails at `high`).
    private static func largestDouble(in low: Double, _ high: Double, _ test: (Double) -> Bool) -> Double {
        var (low, high) = (low, high)
        while low.nextUp < high {
            let middle = low + (high - low) / 2
            if middle == low || middle == high { break }
            if test(middle) { low = middle } else { high = middle }
        }
        return low
    }
}
