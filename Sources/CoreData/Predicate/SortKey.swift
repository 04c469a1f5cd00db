import Foundation

/// One sort criterion taken from an `NSSortDescriptor`: a key path, a direction and how values
/// compare. The SQL store turns it into an `ORDER BY` term (``PredicateSQLCompiler/orderBy(_:)``)
/// and the context sorts in memory with ``compare(_:_:)``; both order values the same way:
///
/// - `nil` first when ascending, last when descending (SQLite's `NULL` order, and Apple's);
/// - then numbers (and dates) by value, then strings (and URLs), then data (and UUIDs) by bytes,
///   as SQLite orders its storage classes;
/// - strings by UTF-8 bytes for `compare:`, by their case-folded form for `caseInsensitiveCompare:`,
///   and with Foundation's `localizedCompare`, `localizedCaseInsensitiveCompare`,
///   `localizedStandardCompare` for the localized selectors.
///
/// Values that compare the same are left in an order SQLite does not define; the store should
/// add `t0.Z_PK` as a last term if it needs a stable order.
internal struct SortKey: Sendable {
    enum Comparison: Sendable, Equatable {
        case compare
        case caseInsensitiveCompare
        case localizedCompare
        case localizedCaseInsensitiveCompare
        case localizedStandardCompare
        /// A selector with no known meaning: sorted as `compare:` in memory, refused by the store.
        case unknownSelector(String)
        /// `NSSortDescriptor(key:ascending:comparator:)`: in memory only.
        case comparator

        init(selector: String?) {
            switch selector {
            case nil, "compare:": self = .compare
            case "caseInsensitiveCompare:": self = .caseInsensitiveCompare
            case "localizedCompare:": self = .localizedCompare
            case "localizedCaseInsensitiveCompare:": self = .localizedCaseInsensitiveCompare
            case "localizedStandardCompare:": self = .localizedStandardCompare
            case let other?: self = .unknownSelector(other)
            }
        }

        /// The selector name, as Apple's `NSSortDescriptor.selector` prints it.
        var selectorName: String? {
            switch self {
            case .compare: return "compare:"
            case .caseInsensitiveCompare: return "caseInsensitiveCompare:"
            case .localizedCompare: return "localizedCompare:"
            case .localizedCaseInsensitiveCompare: return "localizedCaseInsensitiveCompare:"
            case .localizedStandardCompare: return "localizedStandardCompare:"
            case .unknownSelector(let name): return name
            case .comparator: return nil
            }
        }

        /// The SQLite collation ``PredicateSQLCompiler/registerFunctions(on:)`` installs for it.
        var collationName: String? {
            switch self {
            case .localizedCompare: return "CD_LOCALIZED"
            case .localizedCaseInsensitiveCompare: return "CD_LOCALIZED_NOCASE"
            case .localizedStandardCompare: return "CD_LOCALIZED_STANDARD"
            default: return nil
            }
        }
    }

    /// The key path's keys; empty for the objects themselves (`key: nil`).
    var path: [String]
    var ascending: Bool
    var comparison: Comparison
    /// The comparator of a comparator-based descriptor.
    var comparator: ComparatorBox?

    init(path: [String], ascending: Bool, comparison: Comparison = .compare, comparator: ComparatorBox? = nil) {
        self.path = path
        self.ascending = ascending
        self.comparison = comparison
        self.comparator = comparator
    }

    /// The key path as a dotted string (`"owner.name"`); empty for the objects themselves.
    var keyPath: String { path.joined(separator: ".") }

    /// `a` against `b` by this key, direction included.
    func compare(_ a: Any?, _ b: Any?) -> ComparisonResult {
        let x = path.isEmpty ? a : PredicateKeyValue.value(of: a, keyPath: path)
        let y = path.isEmpty ? b : PredicateKeyValue.value(of: b, keyPath: path)
        return directed(compareValues(x, y))
    }

    /// An ascending comparison's result in this key's direction.
    func directed(_ result: ComparisonResult) -> ComparisonResult {
        guard !ascending else { return result }
        switch result {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// Two key values in ascending order.
    func compareValues(_ x: Any?, _ y: Any?) -> ComparisonResult {
        if case .comparator = comparison, let comparator {
            switch (x, y) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case (let x?, let y?): return comparator.compare(x, y)
            }
        }
        return Self.compare(PredicateValue(x), PredicateValue(y), comparison)
    }

    /// A key value converted once for many comparisons (a fetched results controller's placements):
    /// as a ``PredicateValue``, or as it is for a comparator.
    enum PreparedValue {
        case value(PredicateValue)
        case raw(Any?)
    }

    /// `x` made ready for ``compare(prepared:_:)``.
    func prepared(_ x: Any?) -> PreparedValue {
        if case .comparator = comparison, comparator != nil { return .raw(x) }
        return .value(PredicateValue(x))
    }

    /// Two prepared key values in ascending order, as ``compareValues(_:_:)`` orders them.
    func compare(prepared a: PreparedValue, _ b: PreparedValue) -> ComparisonResult {
        switch (a, b) {
        case (.value(let x), .value(let y)): return Self.compare(x, y, comparison)
        case (.raw(let x), .raw(let y)): return compareValues(x, y)
        case (.value, .raw), (.raw, .value): return .orderedSame // never: one key prepares all its values alike
        }
    }

    /// Whether `a` sorts before `b` under `keys` (the first key that differs decides).
    static func areInIncreasingOrder(_ a: Any?, _ b: Any?, by keys: [SortKey]) -> Bool {
        for key in keys {
            switch key.compare(a, b) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        return false
    }

    // MARK: Ordering values as SQLite does

    /// SQLite's storage class order: NULL, numbers, text, blobs; anything else last.
    private static func rank(_ value: PredicateValue) -> Int {
        switch value {
        case .null: return 0
        case .int, .double, .date: return 1
        case .string, .url: return 2
        case .data, .uuid: return 3
        default: return 4
        }
    }

    static func compare(_ a: PredicateValue, _ b: PredicateValue, _ comparison: Comparison) -> ComparisonResult {
        let (ra, rb) = (rank(a), rank(b))
        if ra != rb { return ra < rb ? .orderedAscending : .orderedDescending }
        switch (a, b) {
        case (.date(let x), .date(let y)):
            return PredicateValue.compareDoubles(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate) ?? .orderedSame
        case (.date(let x), _): return PredicateValue.compareNumbers(.double(x.timeIntervalSinceReferenceDate), b) ?? .orderedSame
        case (_, .date(let y)): return PredicateValue.compareNumbers(a, .double(y.timeIntervalSinceReferenceDate)) ?? .orderedSame
        case (.int, _), (.double, _): return PredicateValue.compareNumbers(a, b) ?? .orderedSame
        case (.string(let x), .string(let y)): return compareStrings(x, y, comparison)
        case (.url(let x), .url(let y)): return compareStrings(x.absoluteString, y.absoluteString, comparison)
        case (.string(let x), .url(let y)): return compareStrings(x, y.absoluteString, comparison)
        case (.url(let x), .string(let y)): return compareStrings(x.absoluteString, y, comparison)
        case (.data, _), (.uuid, _):
            return PredicateStrings.compareBytes(bytes(a), bytes(b))
        default: return .orderedSame
        }
    }

    private static func bytes(_ value: PredicateValue) -> [UInt8] {
        switch value {
        case .data(let d): return Array(d)
        case .uuid(let u): return PredicateValue.bytes(of: u)
        default: return []
        }
    }

    /// Strings ordered for a sort selector; the SQL collations call this too.
    static func compareStrings(_ x: String, _ y: String, _ comparison: Comparison) -> ComparisonResult {
        switch comparison {
        case .caseInsensitiveCompare:
            return PredicateStrings.compare(PredicateStrings.fold(x, .caseInsensitive), PredicateStrings.fold(y, .caseInsensitive))
        case .localizedCompare: return x.localizedCompare(y)
        case .localizedCaseInsensitiveCompare: return x.localizedCaseInsensitiveCompare(y)
        case .localizedStandardCompare: return x.localizedStandardCompare(y)
        case .compare, .unknownSelector, .comparator: return PredicateStrings.compare(x, y)
        }
    }
}

/// A sort descriptor's comparator. Comparators are called on the queue that sorts, as on Apple
/// platforms; the box only lets a ``SortKey`` be passed to the store's queue, which never calls it.
internal final class ComparatorBox: @unchecked Sendable {
    let compare: Comparator
    init(_ compare: @escaping Comparator) { self.compare = compare }
}
