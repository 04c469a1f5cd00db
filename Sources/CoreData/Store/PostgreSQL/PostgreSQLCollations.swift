import Foundation

/// The ICU collations through which the PostgreSQL store sorts with the localized selectors, as
/// the SQLite store's collations call Foundation (``SortKey/Comparison``):
///
/// - `localizedCompare:` — `"cd_localized_<locale>"`: ICU's collation of the locale, strings
///   equal where ICU finds them equal (`deterministic = false`; `é` and `e` + U+0301), as
///   Foundation answers `orderedSame`;
/// - `localizedCaseInsensitiveCompare:` — the same collation over the `[c]` fold (`cd_fold_v1(…, 1)`),
///   as Foundation folds case first (`straße` and `STRASSE` are the same);
/// - `localizedStandardCompare:` — `"cd_localized_standard_<locale>"`: the same with numbers
///   compared by value (`item2` before `item10`).
///
/// The locale is the process's at the time the store opens (`Locale.current`), which creates the
/// collations then, in its opening's transaction, when the server has ICU, the database's encoding
/// is `UTF8` and the role may create in the schema (``PostgreSQLDatabaseObjects``); a sort whose collation is missing throws 134091 (``missingError(_:)``).
///
/// ```swift
/// PostgreSQLCollations.name(.localizedStandardCompare, locale: Locale(identifier: "en_001"))
/// // "cd_localized_standard_en-001"
/// ```
enum PostgreSQLCollations {
    /// The collation of `comparison` (`nil` for the selectors that are not localized).
    static func name(_ comparison: SortKey.Comparison, locale: Locale = .current) -> String? {
        switch comparison {
        case .localizedCompare, .localizedCaseInsensitiveCompare: return "cd_localized_" + tag(locale)
        case .localizedStandardCompare: return "cd_localized_standard_" + tag(locale)
        default: return nil
        }
    }

    /// The locale's BCP 47 tag, only letters, digits and `-` (it goes into SQL).
    private static func tag(_ locale: Locale) -> String {
        let tag = locale.identifier(.bcp47).filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        return tag.isEmpty ? "und" : tag
    }

    /// Creates the current locale's collations that are missing, when the server has ICU and
    /// the store may create them (``PostgreSQLDatabaseObjects``); one the server refuses is left missing.
    static func install(on connection: any PostgreSQLConnection) throws(PostgreSQLError) {
        let locale = tag(.current)
        // A tag with a Unicode extension already (`en-US-u-va-posix`) takes `kn` inside it.
        let numeric = locale.contains("-u-") ? locale + "-kn" : locale + "-u-kn"
        let collations = [(name(.localizedCompare)!, locale), (name(.localizedStandardCompare)!, numeric)]
        // Looked up first: `IF NOT EXISTS` would send a notice, which libpq prints, at every opening.
        let state = try connection.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collprovider = 'i'), \(PostgreSQLDatabaseObjects.mayCreate), "
            + "to_regcollation($1) IS NOT NULL, to_regcollation($2) IS NOT NULL",
            collations.map { .text("\"" + $0.0 + "\"") })
        guard state.text(0, 0) == "t", state.text(0, 1) == "t" else { return }
        for (index, (name, icu)) in collations.enumerated() where state.text(0, 2 + index) == "f" {
            try PostgreSQLDatabaseObjects.create("CREATE COLLATION \"\(name)\" (provider = icu, locale = '\(icu)', deterministic = false)", on: connection)
        }
    }

    /// The error of a sort that met a database without its collation (SQLSTATE 42704 naming
    /// it), else `nil`.
    static func missingError(_ failure: PostgreSQLError) -> NSError? {
        guard failure.sqlState == "42704", failure.message.contains("cd_localized_") else { return nil }
        return CoreDataError.make(.unsupportedRequestType,
            "A localized sort needs an ICU collation in the PostgreSQL database, which is missing: the store creates the collations of the locale current when it opens, if the server has ICU; \(PostgreSQLDatabaseObjects.whyMissing) (\(failure.message))",
            extra: [NSPostgreSQLMessageErrorKey: failure.message, NSPostgreSQLStateErrorKey: "42704"])
    }
}
