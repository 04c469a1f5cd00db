import Foundation

/// A section of a fetched results controller's results.
///
/// ```swift
/// for section in controller.sections ?? [] {
///     print(section.name, section.numberOfObjects)
/// }
/// ```
public protocol NSFetchedResultsSectionInfo {
    /// The section's name: the value of the controller's section key path its objects share
    /// (its description; "" for nil, and for a controller without a section key path).
    var name: String { get }
    /// The section's title in a section index (by default its name's capitalized first letter).
    var indexTitle: String? { get }
    /// How many objects the section has.
    var numberOfObjects: Int { get }
    /// The section's objects, in order.
    var objects: [Any]? { get }
}

/// A section as a controller hands it out: a view of the controller's list at the time it was
/// asked for.
internal final class FetchedResultsSection: NSFetchedResultsSectionInfo {
    let name: String
    let indexTitle: String?
    private let all: ArraySlice<AnyObject>

    init(name: String, indexTitle: String?, objects: ArraySlice<AnyObject>) {
        self.name = name
        self.indexTitle = indexTitle
        self.all = objects
    }

    var numberOfObjects: Int { all.count }
    var objects: [Any]? { Array(all) }
}
