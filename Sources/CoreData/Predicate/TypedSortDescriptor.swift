import Foundation

// Foundation's `SortDescriptor<Car>` as an `NSSortDescriptor`, as Apple's
// `NSSortDescriptor.init(_:)` does on iOS 17 / macOS 14: the same key-based descriptor as
// `NSSortDescriptor(key:ascending:selector:)` (NSSortDescriptor+Key.swift), with the key path
// mapped to property names (TypedKeyPaths.swift) and the string comparator to a selector.

extension NSSortDescriptor {
    /// Creates a sort descriptor from a Swift `SortDescriptor` over a managed object class.
    ///
    /// ```swift
    /// request.sortDescriptors = [
    ///     NSSortDescriptor(SortDescriptor(\Car.owner?.name)),
    ///     NSSortDescriptor(SortDescriptor<Car>(\.year, order: .reverse)),
    ///     NSSortDescriptor(SortDescriptor(\Car.name, comparator: .lexical)),
    /// ]
    /// ```
    ///
    /// The string comparator becomes the selector: `.lexical` (and descriptors over
    /// non-string or `Comparable` values) `compare:`, `.localized` `localizedCompare:`,
    /// `.localizedStandard` `localizedStandardCompare:` (Foundation on Linux declares only
    /// `.lexical` so far; use `NSSortDescriptor(key:ascending:selector:)` for the others). The key path is mapped when a fetch first
    /// uses the descriptor; one that is not a chain of `@Managed` properties makes that fetch
    /// throw `NSCocoaErrorDomain` 134091 naming it. Linux difference: Foundation on Linux sorts
    /// `SortDescriptor(\Car.name)` as `Comparable` (`compare:`), where Apple's default is
    /// `.localizedStandard`.
    public convenience init<Compared: NSObject>(_ sortDescriptor: SortDescriptor<Compared>) {
        let resolution = TypedLazyResult { try TypedSortResolution.specification(of: sortDescriptor) }
        self.init(resolving: resolution, ascending: sortDescriptor.order == .forward) { a, b in
            if case .success(let specification) = resolution.result {
                return specification.sortKey(ascending: true).compare(a, b)
            }
            guard let x = a as? Compared, let y = b as? Compared else { return .orderedSame }
            var forward = sortDescriptor
            forward.order = .forward
            return forward.compare(x, y)
        }
    }
}

/// A `SortDescriptor`'s key path and comparison as a key-based descriptor's.
internal enum TypedSortResolution {
    static func specification<Compared>(of descriptor: SortDescriptor<Compared>) throws -> SortSpecification {
        guard let keyPath = descriptor.keyPath else {
            throw PredicateErrors.unsupportedSort("SortDescriptor<\(Compared.self)> has no key path")
        }
        let names = try TypedKeyPaths.names(of: keyPath)
        return SortSpecification(key: names.joined(separator: "."), comparison: comparison(descriptor.stringComparator), comparator: nil)
    }

    /// The sort selector of a string comparator, from its options and whether it is localized.
    static func comparison(_ comparator: String.StandardComparator?) -> SortKey.Comparison {
        guard let comparator else { return .compare }
        let (options, localized) = comparator.typedSortOptions
        return comparison(options: options, localized: localized)
    }

    /// `.lexical` → `compare:`, `.localized` → `localizedCompare:`, `.localizedStandard`
    /// (numeric, case-insensitive) → `localizedStandardCompare:`, as Apple defines them.
    static func comparison(options: String.CompareOptions, localized: Bool) -> SortKey.Comparison {
        switch (localized, options.contains(.caseInsensitive), options.contains(.numeric)) {
        case (false, false, _): return .compare
        case (false, true, _): return .caseInsensitiveCompare
        case (true, _, true): return .localizedStandardCompare
        case (true, true, false): return .localizedCaseInsensitiveCompare
        case (true, false, false): return .localizedCompare
        }
    }
}

extension String.StandardComparator {
    /// The comparator's options and whether it is localized, read from its `Codable` form
    /// (Foundation keeps them private).
    var typedSortOptions: (String.CompareOptions, Bool) {
        struct Fields: Decodable { var options: UInt; var isLocalized: Bool }
        guard let data = try? JSONEncoder().encode(self),
              let fields = try? JSONDecoder().decode(Fields.self, from: data) else { return ([], false) }
        return (String.CompareOptions(rawValue: fields.options), fields.isLocalized)
    }
}
