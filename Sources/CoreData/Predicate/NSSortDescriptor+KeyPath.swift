import Foundation

extension NSSortDescriptor {
    /// Creates a sort descriptor that orders objects by the `@Managed` property a Swift key path
    /// names, with `compare:`, as Apple's `init(keyPath:ascending:)` does for any key path
    /// (Foundation on Linux takes only key paths to `Comparable` values, which optional
    /// properties are not).
    ///
    /// ```swift
    /// request.sortDescriptors = [
    ///     NSSortDescriptor(keyPath: \Item.timestamp, ascending: false),   // a Date?
    ///     NSSortDescriptor(keyPath: \Item.owner?.name, ascending: true),
    /// ]
    /// ```
    ///
    /// The key path is mapped to property names when a fetch first uses the descriptor (the model
    /// must be in use by then), as for `SortDescriptor`; one that is not a chain of `@Managed`
    /// properties makes that fetch throw `NSCocoaErrorDomain` 134091 naming it. Sorting in memory
    /// (`compare(_:to:)`) compares the values the key path reads. Linux difference: Apple's takes
    /// an `AnyKeyPath`; here the key path's root is a managed object class, and its static type
    /// must be known (a key path literal, or a `KeyPath` variable).
    public convenience init<Root: NSManagedObject, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool) {
        self.init(managedKeyPath: keyPath, ascending: ascending)
    }

    /// Creates a sort descriptor from a key path to a `Comparable` value of a managed object
    /// class: the same as the initializer for any value, declared so that Swift prefers it to
    /// Foundation's, whose descriptors name no Core Data property.
    ///
    /// ```swift
    /// let byYear = NSSortDescriptor(keyPath: \Car.year, ascending: true)
    /// ```
    public convenience init<Root: NSManagedObject, Value: Comparable>(keyPath: KeyPath<Root, Value>, ascending: Bool) {
        self.init(managedKeyPath: keyPath, ascending: ascending)
    }

    private convenience init(managedKeyPath keyPath: AnyKeyPath, ascending: Bool) {
        nonisolated(unsafe) let keyPath = keyPath // immutable; Foundation on Linux does not mark it Sendable
        let resolution = TypedLazyResult {
            SortSpecification(key: try TypedKeyPaths.names(of: keyPath).joined(separator: "."), comparison: .compare, comparator: nil)
        }
        let values = SortSpecification(key: nil, comparison: .compare, comparator: nil).sortKey(ascending: true)
        self.init(resolving: resolution, ascending: ascending) { a, b in
            values.compare(a[keyPath: keyPath], b[keyPath: keyPath])
        }
    }
}
