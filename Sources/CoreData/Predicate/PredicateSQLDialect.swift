import Foundation

// The compiler's two dialects. SQLite's output is what it always was; PostgreSQL's differs in:
// - names: the key column is `"Z_PK"`, quoted, as the PostgreSQL store creates every name;
// - conditions are PostgreSQL Booleans (never NULL, as SQLite's 0/1): `IS NOT DISTINCT FROM`
//   for SQLite's `IS`, and `TRUE`/`FALSE` for a condition that is constant
//   (``Dialect/condition(_:)``);
// - strings compare and sort byte by byte (`COLLATE "C"`, SQLite's `BINARY`), whatever the
//   database's collation;
// - `NULL` sorts first ascending and last descending, as in SQLite (PostgreSQL's default is
//   the reverse);
// - placeholders are `$1…$n` (``Dialect/numberedParameters(_:)``, once the SQL is whole).
// - `BEGINSWITH`, `ENDSWITH`, `CONTAINS` and `IN` a string are `strpos` and `right` on the
//   bytes of the text (``postgreSQLStringOperator(_:_:_:_:)``);
// - `[c]`/`[d]` fold through `cd_fold_v1`, a SQL function the store creates
//   (`PredicateSQLPostgreSQLFolding.swift`, `PostgreSQLFoldFunction.swift`), where SQLite's
//   `cd_fold` runs Swift.
// - `LIKE` and `MATCHES` with constant patterns (`PredicateSQLPostgreSQLStrings.swift`);
//   arithmetic, `@sum`/`@avg` and integers compared with doubles
//   (`PredicateSQLPostgreSQLNumbers.swift`).
// - the other functions of stored values SQLite runs through `cd_fn` (division, `sqrt:`, …,
//   `length:`, `uppercase:`; `PredicateSQLPostgreSQLFunctions.swift`).
// What else SQLite runs through the store's own functions (`cd_fold`, `cd_strop`, `cd_fn`:
// `MATCHES` with `[c]`/`[d]`, patterns read from columns, `modulus:by:` of doubles) has no exact PostgreSQL form yet: it throws
// `unsupportedPredicate` (134091) rather than compiling to something that would select other rows.

extension PredicateSQLCompiler {
    /// The SQL a compiler writes.
    enum Dialect {
        case sqlite
        case postgreSQL

        /// The equality that holds for two NULLs.
        var isOperator: String { self == .sqlite ? " IS " : " IS NOT DISTINCT FROM " }
        /// A condition that no row meets.
        var alwaysFalse: String { self == .sqlite ? "0" : "FALSE" }

        /// A compiled condition as a `WHERE` clause takes it: the constants `1`/`0` as Booleans
        /// in PostgreSQL.
        func condition(_ sql: String) -> String {
            guard self == .postgreSQL else { return sql }
            switch sql {
            case "1": return "TRUE"
            case "0": return "FALSE"
            default: return sql
            }
        }

        /// `sql` with its `?` placeholders numbered `$1`, `$2`, … in order (PostgreSQL); `?`
        /// inside quoted names or string literals is left alone. Read byte by byte, as the
        /// server reads it (the quotes and `?` are ASCII, never part of another UTF-8 character).
        static func numberedParameters(_ sql: String) -> String {
            var result: [UInt8] = []
            result.reserveCapacity(sql.utf8.count + 16)
            var number = 0
            var quote: UInt8 = 0 // the open quote, 0 outside quotes
            for byte in sql.utf8 {
                if quote != 0 {
                    if byte == quote { quote = 0 }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                } else if byte == UInt8(ascii: "?") {
                    number += 1
                    result.append(UInt8(ascii: "$"))
                    result.append(contentsOf: String(number).utf8)
                    continue
                }
                result.append(byte)
            }
            return String(decoding: result, as: UTF8.self)
        }
    }

    /// `alias.Z_PK` as the dialect names the key column.
    func primaryKey(of alias: String) -> String {
        dialect == .sqlite ? alias + ".Z_PK" : alias + ".\"Z_PK\""
    }

    /// `alias.Z_ENT` as the dialect names the entity column.
    func entityColumn(of alias: String) -> String {
        dialect == .sqlite ? alias + ".Z_ENT" : alias + ".\"Z_ENT\""
    }

    /// Throws, in PostgreSQL, for `what`, which only SQLite's functions compute exactly.
    func requireSQLite(_ what: String) throws(CompileError) {
        guard dialect == .postgreSQL else { return }
        throw CompileError(reason: "\(what) is not supported by the PostgreSQL store yet")
    }

    /// `BEGINSWITH`, `ENDSWITH`, `CONTAINS` and `IN` (a substring) in PostgreSQL, as ``PredicateStrings/evaluate(_:_:_:options:)`` judges them: by the bytes of
    /// the UTF-8 text (`strpos` and `right` work on whole characters of valid UTF-8, which is the
    /// same), an empty pattern matching nothing, NULL on either side matching nothing.
    /// `LIKE` and `MATCHES` are ``postgreSQLLike(_:_:)`` and ``postgreSQLMatches(_:_:)``.
    /// With `[c]`/`[d]` the operands come folded (``postgreSQLFolded(_:_:)``), and `unfolded`
    /// as they were, for the NULL tests; `MATCHES` with them throws.
    func postgreSQLStringOperator(_ op: ComparisonOperator, _ lhs: SQLFragment, _ rhs: SQLFragment,
                                  _ options: ComparisonOptions = [],
                                  unfolded: (SQLFragment, SQLFragment)? = nil) throws(CompileError) -> SQLFragment {
        let (lhsNull, rhsNull) = unfolded ?? (lhs, rhs)
        if op == .like { return try postgreSQLLike(lhs, rhs, unfoldedText: lhsNull) }
        if op == .matches {
            if !options.isEmpty { try requireSQLite("MATCHES with [c] or [d]") }
            return try postgreSQLMatches(lhs, rhs)
        }
        // The text searched and the pattern: `a IN b` is `b CONTAINS a`.
        let (text, pattern) = op == .in ? (rhs, lhs) : (lhs, rhs)
        let (textNull, patternNull) = op == .in ? (rhsNull, lhsNull) : (lhsNull, rhsNull)
        // PostgreSQL's text holds no NUL (binding one fails the fetch): no stored text contains
        // a pattern with one; a text with one, searched, can't be sent at all.
        if Self.bindsNUL(pattern) { return .alwaysFalse }
        if Self.bindsNUL(text) { throw CompileError(reason: "a string holding a NUL character can't be searched in the PostgreSQL store") }
        let test: SQLFragment
        switch op {
        case .beginsWith: test = "strpos(" + text + ", " + pattern + ") = 1"
        case .endsWith: test = "right(" + text + ", length(" + pattern + ")) = " + pattern
        default: test = "strpos(" + text + ", " + pattern + ") > 0"
        }
        return "(" + textNull + " IS NOT NULL AND " + patternNull + " IS NOT NULL AND " + pattern + " <> '' AND " + test + ")"
    }

    /// Whether `fragment` binds a string holding a NUL character.
    static func bindsNUL(_ fragment: SQLFragment) -> Bool {
        fragment.bindings.contains { if case .string(let text) = $0 { return text.utf8.contains(0) } else { return false } }
    }

    /// A number compared with a column of the other kind of number, bound so that PostgreSQL
    /// compares exactly as SQLite does (SQLite compares an integer with a real exactly;
    /// PostgreSQL turns a `bigint` into a `double precision`, which rounds past 2^53): an
    /// integral double against an integer column as an integer, a double below 2^53 in
    /// magnitude as it is (no integer so small rounds), an integer against a real column as a
    /// double when the double holds it exactly. Throws for the others; `nil` when the kinds
    /// agree (or NaN, which the caller treats as matching nothing).
    func postgreSQLNumber(_ value: PredicateValue, for kind: ValueKind) throws(CompileError) -> StoreValue? {
        switch (kind, value) {
        case (.integer, .double(let v)) where !v.isNaN:
            if let exact = Int64(exactly: v) { return .int(exact) }
            if abs(v) < 9_007_199_254_740_992 { return .double(v) }
            throw CompileError(reason: "comparing an integer attribute with \(v) is not exact in the PostgreSQL store yet")
        case (.real, .int(let v)):
            if let exact = Double(exactly: v) { return .double(exact) }
            throw CompileError(reason: "comparing a floating-point attribute with \(v) is not exact in the PostgreSQL store yet")
        default:
            return nil
        }
    }

    /// A string operand of `<`, `>`, … compared byte by byte (PostgreSQL: `COLLATE "C"`).
    func ordered(_ fragment: SQLFragment, _ kind: ValueKind) -> SQLFragment {
        dialect == .postgreSQL && kind.isString ? fragment + " COLLATE \"C\"" : fragment
    }

    /// A PostgreSQL `ORDER BY` term: strings and URLs byte by byte (`compare:`), or their
    /// `[c]` folds byte by byte (`caseInsensitiveCompare:`, as SQLite's `cd_fold(…, 1)`), or in
    /// the store's ICU collations (the localized selectors, ``PostgreSQLCollations``), `NULL`
    /// first ascending and last descending.
    func postgreSQLOrderTerm(_ column: String, _ kind: ValueKind, _ key: SortKey) throws -> String {
        var term = column
        if kind.isString || kind.isCompatible(with: .url) {
            let fold = "\(PostgreSQLFoldFunction.name)(\(term), \(ComparisonOptions.caseInsensitive.rawValue))"
            switch key.comparison {
            case .compare: term += " COLLATE \"C\""
            case .caseInsensitiveCompare: term = fold + " COLLATE \"C\""
            case .localizedCaseInsensitiveCompare: term = fold + " COLLATE \"\(PostgreSQLCollations.name(key.comparison)!)\""
            case .localizedCompare, .localizedStandardCompare: term += " COLLATE \"\(PostgreSQLCollations.name(key.comparison)!)\""
            default:
                throw PredicateErrors.unsupportedSort("\(key.comparison.selectorName ?? "a comparator") (key \(key.keyPath)) cannot be used in a fetch")
            }
        }
        return term + (key.ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST")
    }
}
