import Foundation

/// A piece of SQL with the values bound to its `?` placeholders, in order. Fragments are only
/// ever joined with `+`, so the values stay in the order their placeholders appear in the text.
/// Values are never written into the SQL text.
internal struct SQLFragment: Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    var sql: String
    var bindings: [StoreValue]

    init(_ sql: String, _ bindings: [StoreValue] = []) {
        self.sql = sql
        self.bindings = bindings
    }

    init(stringLiteral value: String) { self.init(value) }

    /// A single `?` bound to `value`.
    static func bind(_ value: StoreValue) -> SQLFragment { SQLFragment("?", [value]) }

    static let alwaysTrue = SQLFragment("1")
    static let alwaysFalse = SQLFragment("0")

    static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(lhs.sql + rhs.sql, lhs.bindings + rhs.bindings)
    }

    static func + (lhs: SQLFragment, rhs: String) -> SQLFragment {
        SQLFragment(lhs.sql + rhs, lhs.bindings)
    }

    static func + (lhs: String, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(lhs + rhs.sql, rhs.bindings)
    }

    /// `parts` separated by `separator`.
    static func joined(_ parts: [SQLFragment], separator: String) -> SQLFragment {
        // In place, so that a long list (an `IN` list, many columns) takes linear time.
        var result = SQLFragment("")
        for (offset, part) in parts.enumerated() {
            if offset > 0 { result.sql += separator }
            result.sql += part.sql
            result.bindings += part.bindings
        }
        return result
    }

    var description: String { sql + (bindings.isEmpty ? "" : " \(bindings)") }
}
