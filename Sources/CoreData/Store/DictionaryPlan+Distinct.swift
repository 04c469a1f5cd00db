import Foundation

// `returnsDistinctResults` in the SQL stores: which orders of distinct rows are defined.
// `SELECT DISTINCT a … ORDER BY b` (b not selected) sorts each distinct `a` by the `b` of
// whichever of its rows SQLite met first, an answer SQL leaves undefined and PostgreSQL
// refuses (42P10). The SQLite store answers as Apple's does (SQLite's order: an app written
// against Apple's store runs unchanged); the PostgreSQL store refuses such a fetch (134091)
// and sorts distinct rows only by what they fetch.

extension DictionaryPlan {
    /// The position of the fetched column that `key` sorts by: the column named by the key
    /// (`total`), or the one fetching the key's key path (`owner.name`); `nil` when the key
    /// sorts by something the fetch does not return.
    func columnIndex(sortedBy key: SortKey) -> Int? {
        columns.firstIndex { column in
            if column.name == key.keyPath { return true }
            if case .keyPath(let path) = column.expression { return path == key.path }
            return false
        }
    }

    /// The positions of the fetched columns that group the rows, in the order of
    /// `propertiesToGroupBy`; `nil` when one of them is not fetched.
    var groupColumnIndexes: [Int]? {
        var indexes: [Int] = []
        for group in groupBy {
            let index = columns.firstIndex { column in
                if case .keyPath(let path) = group.expression, case .keyPath(let fetched) = column.expression { return path == fetched }
                return column.name == group.name
            }
            guard let index else { return nil }
            indexes.append(index)
        }
        return indexes
    }

    /// Throws 134091 for a distinct fetch whose order SQL leaves undefined: a sort descriptor on
    /// something not fetched, or groups (which order the results when there are no sort
    /// descriptors) by a property not fetched.
    func checkDistinctOrder() throws {
        guard distinct else { return }
        for key in fetch.sortKeys where columnIndex(sortedBy: key) == nil {
            throw PredicateErrors.unsupportedSort(
                "returnsDistinctResults with a sort on '\(key.keyPath)', which is not in propertiesToFetch: the order of distinct rows is undefined; fetch '\(key.keyPath)' too or sort by a fetched property")
        }
        if fetch.sortKeys.isEmpty && groupColumnIndexes == nil {
            throw PredicateErrors.unsupportedSort(
                "returnsDistinctResults with propertiesToGroupBy that are not all in propertiesToFetch and no sort descriptors: the order of distinct rows is undefined; add sort descriptors on fetched properties")
        }
    }
}
