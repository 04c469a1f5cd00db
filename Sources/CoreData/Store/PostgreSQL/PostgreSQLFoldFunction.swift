import Foundation

/// `cd_fold_v1(text, options)`: the SQL function through which the PostgreSQL dialect compares
/// strings with `[c]`, `[d]` and `[cd]`, folding as ``PredicateStrings/fold(_:_:)`` does
/// (Foundation's `String.folding(options:locale: nil)`), as SQLite's `cd_fold` runs it in Swift.
/// `options` is the ``ComparisonOptions`` raw value: 1 `[c]`, 2 `[d]`, 3 `[cd]`.
///
/// The store creates it when it opens, in its opening's transaction (under the advisory lock that
/// orders openings), if the database has none, its encoding is `UTF8` and the role may create in
/// its schema (``PostgreSQLDatabaseObjects``). The
/// function is plain SQL built from Foundation's own answers per code point
/// (`PostgreSQLFoldTables.swift`, made by `Scripts/generate-postgresql-fold-tables.swift`):
///
/// - ASCII text (as many characters as bytes): `lower` for `[c]` (ASCII only under `"C"`), as it is for `[d]`;
/// - otherwise, for `[d]`, the marks Foundation removes after a letter of Latin, Greek or
///   Cyrillic (a `regexp_replace` of a run of them after such a character), then the code points
///   that fold to several (`replace`), then those that fold to one (`translate`).
///
/// Where Foundation's answer depends on more than that (marks after a character of another script,
/// which it keeps, reorders or removes in part) the function removes none: ``isExact(_:_:)`` tells
/// those strings (docs/POSTGRESQL.md). It is not `STRICT`, so that PostgreSQL inlines it into the
/// query (NULL text gives NULL all the same). Its name carries a version: tables that change
/// (a new Unicode in Foundation) get a new name, so an index on `cd_fold_v1(…)` keeps its meaning.
///
/// ```swift
/// try PostgreSQLFoldFunction.install(on: connection)
/// // SELECT cd_fold_v1('Straße', 3) → 'strasse'
/// ```
package enum PostgreSQLFoldFunction {
    package static let name = "cd_fold_v1"

    /// Creates the function when the database has none and the store may create it
    /// (``PostgreSQLDatabaseObjects``); otherwise, or if the server refuses it, it is left
    /// missing, and a `[c]`/`[d]` query then fails with 134091 (``missingError(_:)``).
    static func install(on connection: any PostgreSQLConnection) throws(PostgreSQLError) {
        let state = try connection.execute(
            "SELECT to_regprocedure('\(name)(text,integer)') IS NOT NULL, \(PostgreSQLDatabaseObjects.mayCreate)", [])
        guard state.text(0, 0) == "f", state.text(0, 1) == "t" else { return }
        try PostgreSQLDatabaseObjects.create(createSQL, on: connection)
    }

    /// The error of a query that met a database without the function (SQLSTATE 42883 naming it),
    /// else `nil`.
    static func missingError(_ failure: PostgreSQLError) -> NSError? {
        guard failure.sqlState == "42883", failure.message.contains(name) else { return nil }
        return CoreDataError.make(.unsupportedRequestType,
            "A [c] or [d] string comparison needs the function \(name) in the PostgreSQL database, which is missing: \(PostgreSQLDatabaseObjects.whyMissing) (\(failure.message))",
            extra: [NSPostgreSQLMessageErrorKey: failure.message, NSPostgreSQLStateErrorKey: "42883"])
    }

    /// `CREATE OR REPLACE FUNCTION cd_fold_v1…` (the bench's raw libpq side runs it too).
    package static let createSQL: String = {
        func branch(_ oneToOne: String, _ expanding: String, bases: String?) -> String {
            var text = "t"
            if let bases {
                text = "regexp_replace(t, E'([\(regexClass(bases))])[\(regexClass(marks))]+', E'\\\\1', 'g')"
            }
            for (from, to) in pairs(expanding) { text = "replace(\(text), '\(from)', '\(to)')" }
            let table = pairs(oneToOne)
            return "translate(\(text), '\(table.map(\.from).joined())', '\(table.map(\.to).joined())')"
        }
        return """
            CREATE OR REPLACE FUNCTION \(name)(t text, options integer) RETURNS text
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $cd_fold$
            SELECT CASE
              WHEN options & 3 = 0 THEN t
              WHEN octet_length(t) = length(t) THEN CASE WHEN options & 1 = 1 THEN lower(t COLLATE "C") ELSE t END
              WHEN options & 3 = 1 THEN \(branch(caseOneToOne, caseExpanding, bases: nil))
              WHEN options & 3 = 2 THEN \(branch(diacriticOneToOne, diacriticExpanding, bases: diacriticBases))
              ELSE \(branch(bothOneToOne, bothExpanding, bases: bothBases))
            END
            $cd_fold$
            """
    }()

    /// Whether the function folds `text` exactly as Foundation does for `options`: false when a
    /// mark of ``marks`` follows a character after which Foundation does not simply remove it
    /// (a character outside ``diacriticBases``/``bothBases``, or a leading mark of another script
    /// with marks after it).
    static func isExact(_ text: String, _ options: ComparisonOptions) -> Bool {
        let folding = options.folding
        guard folding.contains(.diacriticInsensitive) else { return true }
        let bases = folding.contains(.caseInsensitive) ? bothBaseSet : diacriticBaseSet
        var afterBase = false
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            if markSet.contains(scalar.value) {
                if offset > 0 && !afterBase { return false }
                if offset == 0 { afterBase = bases.contains(scalar.value) }
            } else {
                afterBase = bases.contains(scalar.value)
            }
        }
        return true
    }

    // MARK: The tables

    private static let markSet = codePoints(marks)
    private static let diacriticBaseSet = codePoints(diacriticBases)
    private static let bothBaseSet = codePoints(bothBases)

    /// `from=to to;…` as characters.
    private static func pairs(_ table: String) -> [(from: String, to: String)] {
        table.split(separator: ";").map { item in
            let parts = item.split(separator: "=")
            return (characters(parts[0]), characters(parts[1]))
        }
    }

    private static func characters(_ hex: Substring) -> String {
        var text = String.UnicodeScalarView()
        for digits in hex.split(separator: " ") { text.append(Unicode.Scalar(UInt32(digits, radix: 16)!)!) }
        return String(text)
    }

    private static func ranges(_ list: String) -> [ClosedRange<UInt32>] {
        list.split(separator: ",").map { item in
            let ends = item.split(separator: "-").map { UInt32($0, radix: 16)! }
            return ends[0]...ends[ends.count - 1]
        }
    }

    private static func codePoints(_ list: String) -> Set<UInt32> {
        Set(ranges(list).flatMap { $0 })
    }

    /// Ranges as the inside of a regular expression's bracket expression, in PostgreSQL's escapes
    /// (`\u0300-\u036F`), backslashes doubled for an `E'…'` literal.
    private static func regexClass(_ list: String) -> String {
        func escape(_ v: UInt32) -> String {
            v > 0xFFFF ? "\\\\U" + String(format: "%08X", v) : "\\\\u" + String(format: "%04X", v)
        }
        return ranges(list).map { $0.count == 1 ? escape($0.lowerBound) : escape($0.lowerBound) + "-" + escape($0.upperBound) }.joined()
    }
}
