import Foundation

// Foundation on Linux declares `NSSortDescriptor` but marks its key-based API unavailable (there
// is no key-value coding). These declarations, with the same signatures, win overload resolution
// in code that imports CoreData.
//
// A key-based descriptor is a Foundation descriptor with the identity key path `\Any.self` and a
// comparator that reads the key from each object. Asked to compare an internal `SortProbe`, the
// comparator hands over its key and selector instead (see `sortKey()`).

extension NSSortDescriptor {
    /// Creates a sort descriptor that orders objects by the value of `key` (a key path such as
    /// `"owner.name"`), compared with `compare:`.
    ///
    /// ```swift
    /// request.sortDescriptors = [NSSortDescriptor(key: "year", ascending: false)]
    /// ```
    public convenience init(key: String?, ascending: Bool) {
        self.init(sortSpecification: SortSpecification(key: key, comparison: .compare, comparator: nil), ascending: ascending)
    }

    /// Creates a sort descriptor that compares values with the named selector: `"compare:"`,
    /// `"caseInsensitiveCompare:"`, `"localizedCompare:"`, `"localizedCaseInsensitiveCompare:"`
    /// or `"localizedStandardCompare:"`.
    ///
    /// Linux has no Objective-C selectors, so the selector is named by a string; a string literal
    /// compiles on Apple platforms too, where `Selector` is `ExpressibleByStringLiteral`.
    ///
    /// ```swift
    /// let byName = NSSortDescriptor(key: "name", ascending: true, selector: "caseInsensitiveCompare:")
    /// ```
    public convenience init(key: String?, ascending: Bool, selector: String?) {
        self.init(sortSpecification: SortSpecification(key: key, comparison: SortKey.Comparison(selector: selector), comparator: nil),
                  ascending: ascending)
    }

    /// Creates a sort descriptor that compares the values of `key` with a comparator. It sorts in
    /// memory; fetches from the SQLite store refuse it, as on Apple platforms.
    ///
    /// ```swift
    /// let byLength = NSSortDescriptor(key: "name", ascending: true) { a, b in
    ///     let (x, y) = ((a as! String).count, (b as! String).count)
    ///     return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    /// }
    /// ```
    public convenience init(key: String?, ascending: Bool, comparator cmptr: @escaping Comparator) {
        self.init(sortSpecification: SortSpecification(key: key, comparison: .comparator, comparator: ComparatorBox(cmptr)),
                  ascending: ascending)
    }

    /// The key path the descriptor sorts by, or `nil` (objects compared themselves, or a Swift key
    /// path that is not a chain of `@Managed` properties of a model in use).
    ///
    /// ```swift
    /// NSSortDescriptor(key: "owner.name", ascending: true).key // "owner.name"
    /// ```
    public var key: String? {
        guard let specification = try? sortSpecification() else { return nil }
        return specification.keyPath.isEmpty ? nil : specification.keyPath.joined(separator: ".")
    }

    // MARK: Internal

    internal convenience init(sortSpecification specification: SortSpecification, ascending: Bool) {
        self.init(keyPath: SortSpecification.identityKeyPath, ascending: ascending, comparator: { a, b in
            if let probe = a as? SortProbe {
                probe.specification = specification
                return .orderedSame
            }
            return specification.sortKey(ascending: true).compare(a, b)
        })
    }

    /// A descriptor whose specification is worked out when first asked for (from a Swift key
    /// path, once the model is in use), and which compares objects in memory with `compare`.
    internal convenience init(resolving resolution: TypedLazyResult<SortSpecification>, ascending: Bool,
                              comparing compare: @escaping (Any, Any) -> ComparisonResult) {
        self.init(keyPath: SortSpecification.identityKeyPath, ascending: ascending, comparator: { a, b in
            if let probe = a as? SortProbe {
                switch resolution.result {
                case .success(let specification): probe.specification = specification
                case .failure(let error): probe.error = error
                }
                return .orderedSame
            }
            return compare(a, b)
        })
    }

    private func sortSpecification() throws -> SortSpecification? {
        guard keyPath == SortSpecification.identityKeyPath as AnyKeyPath else {
            // Foundation's own `NSSortDescriptor(keyPath:ascending:comparator:)`: its comparator
            // compares the values the key path reads.
            let names = try TypedKeyPaths.names(of: keyPath)
            return SortSpecification(key: names.joined(separator: "."), comparison: .comparator, comparator: ComparatorBox(comparator))
        }
        let probe = SortProbe()
        _ = compare(probe, to: probe)
        if let error = probe.error { throw error }
        return probe.specification
    }

    /// The descriptor as a ``SortKey`` for the store and the context. Throws when its key path
    /// is not a chain of Core Data properties.
    internal func sortKey() throws -> SortKey {
        guard let specification = try sortSpecification() else {
            throw PredicateErrors.unsupportedSort("the sort descriptor names no property")
        }
        return specification.sortKey(ascending: ascending)
    }
}

/// What a key-based sort descriptor's comparator holds.
internal struct SortSpecification: Sendable {
    var keyPath: [String]
    var comparison: SortKey.Comparison
    var comparator: ComparatorBox?

    init(key: String?, comparison: SortKey.Comparison, comparator: ComparatorBox?) {
        let path = key.map { $0.split(separator: ".").map(String.init) } ?? []
        self.keyPath = path.first.map { $0.uppercased() == "SELF" } == true ? Array(path.dropFirst()) : path
        self.comparison = comparison
        self.comparator = comparator
    }

    func sortKey(ascending: Bool) -> SortKey {
        SortKey(path: keyPath, ascending: ascending, comparison: comparison, comparator: comparator)
    }

    /// The key path every key-based descriptor is made with: it hands objects to the comparator unchanged.
    static var identityKeyPath: KeyPath<Any, Any> { \Any.self }
}

/// Handed to a sort descriptor's comparator to get its key back. Never seen by user code.
internal final class SortProbe {
    var specification: SortSpecification?
    /// Why a descriptor has no specification (a `SortDescriptor` whose key path is not a Core Data one).
    var error: (any Error)?
}
