import Foundation

extension PredicateSQLCompiler {
    /// One `ORDER BY` term for `key` (`t0.ZNAME ASC`, `cd_fold(t1.ZNAME, 1) DESC`, …), joining
    /// to-one key paths as ``compile(_:)`` does. Binds nothing.
    ///
    /// `NULL` sorts first ascending and last descending (SQLite's default, and Apple's order).
    /// Throws (`NSCocoaErrorDomain` 134091) for to-many key paths, relationships themselves,
    /// comparator-based descriptors and unknown selectors, which a store cannot order by.
    ///
    /// ```swift
    /// let term = try compiler.orderBy(SortKey(path: ["owner", "name"], ascending: true))
    /// // term.sql == "t1.ZNAME ASC"; compiler.joins == ["LEFT JOIN ZPERSON t1 ON t1.Z_PK = t0.ZOWNER"]
    /// ```
    mutating func orderBy(_ key: SortKey) throws -> SQLFragment {
        let description = key.path.isEmpty ? "SELF" : key.keyPath
        switch key.comparison {
        case .comparator:
            throw PredicateErrors.unsupportedSort("a comparator-based sort descriptor (key \(description)) cannot be used in a fetch from a persistent store")
        case .unknownSelector(let name):
            throw PredicateErrors.unsupportedSort("the selector \(name) (key \(description)) is not supported; use compare:, caseInsensitiveCompare:, localizedCompare:, localizedCaseInsensitiveCompare: or localizedStandardCompare:")
        default: break
        }
        guard !key.path.isEmpty else {
            throw PredicateErrors.unsupportedSort("a sort descriptor needs a key")
        }
        let resolved: Operand
        do {
            resolved = try operand(.keyPath(key.path))
        } catch {
            throw PredicateErrors.unsupportedSort(error.reason)
        }
        guard case .value(let column, let kind) = resolved else {
            throw PredicateErrors.unsupportedSort("to-many key \(description) cannot be sorted by")
        }
        switch kind {
        case .object: throw PredicateErrors.unsupportedSort("the relationship \(description) cannot be sorted by; sort by one of its attributes")
        case .unsupported(let what): throw PredicateErrors.unsupportedSort("\(what) cannot be sorted by")
        default: break
        }
        var term = column.sql
        if dialect == .postgreSQL {
            return SQLFragment(try postgreSQLOrderTerm(term, kind, key))
        }
        if kind.isString || kind.isCompatible(with: .url) {
            if key.comparison == .caseInsensitiveCompare {
                term = "cd_fold(\(term), \(ComparisonOptions.caseInsensitive.rawValue))"
            } else if let collation = key.comparison.collationName {
                term += " COLLATE \(collation)"
            }
        }
        return SQLFragment(term + (key.ascending ? " ASC" : " DESC"))
    }
}
