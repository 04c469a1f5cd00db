import Foundation

// UIKit's `IndexPath(row:section:)`, `.row` and `.section` (and AppKit's `item` spelling), which
// every client of `NSFetchedResultsController` uses. Foundation's `IndexPath` exists on Linux, but
// these members come from UIKit (and AppKit), which Linux does not have: they are declared here
// only where no UI framework declares them, so that code shared with Apple platforms compiles
// unchanged and nothing clashes there (UIKit has all four; AppKit has `item` and `section` but no
// `row`, so only `row` is added beside AppKit).

#if !canImport(UIKit)
extension IndexPath {
    /// An index path for a row in a section of a table: `[section, row]`, as UIKit's.
    ///
    /// ```swift
    /// let path = IndexPath(row: 3, section: 0)
    /// let car = controller.object(at: path)
    /// ```
    public init(row: Int, section: Int) {
        self.init(indexes: [section, row])
    }

    /// The row of a `[section, row]` index path (its second index), as UIKit's.
    ///
    /// ```swift
    /// IndexPath(row: 3, section: 1).row // 3
    /// ```
    ///
    /// An index path with fewer than two indexes is a programmer error and stops the process, as UIKit's.
    public var row: Int {
        get { self[1] }
        set { self[1] = newValue }
    }
}
#endif

#if !canImport(UIKit) && !canImport(AppKit)
extension IndexPath {
    /// An index path for an item in a section of a collection: `[section, item]`, as UIKit's and AppKit's.
    ///
    /// ```swift
    /// let path = IndexPath(item: 3, section: 0)
    /// ```
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// The item of a `[section, item]` index path (its second index), as UIKit's and AppKit's.
    ///
    /// ```swift
    /// IndexPath(item: 3, section: 1).item // 3
    /// ```
    ///
    /// An index path with fewer than two indexes is a programmer error and stops the process.
    public var item: Int {
        get { self[1] }
        set { self[1] = newValue }
    }

    /// The section of a `[section, row]` index path (its first index), as UIKit's and AppKit's.
    ///
    /// ```swift
    /// IndexPath(row: 3, section: 1).section // 1
    /// ```
    ///
    /// An empty index path is a programmer error and stops the process.
    public var section: Int {
        get { self[0] }
        set { self[0] = newValue }
    }
}
#endif
