import Foundation

/// What a fetched results controller tells its delegate when its results change. Every method is
/// optional, as Apple's: the protocol's extension gives each a default that does nothing.
///
/// ```swift
/// final class CarList: NSFetchedResultsControllerDelegate {
///     func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) { print("begin") }
///     func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
///                     at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {
///         print(type, indexPath as Any, newIndexPath as Any)
///     }
///     func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) { print("end") }
/// }
/// ```
///
/// A batch of changes is reported as a table view's batch of updates wants it: deletions at their
/// index paths before the change, insertions at their index paths after it, moves from one to the
/// other, updates at both; section deletions and insertions first.
///
/// When the controller has no section key path and the delegate implements
/// ``controller(_:didChangeContentWith:)``, that is the only method called, as on Apple platforms.
/// Apple's diffable-snapshot variant (`NSDiffableDataSourceSnapshot`) belongs to UIKit and AppKit
/// and does not exist on Linux.
///
/// Linux difference: the controller passed is a `NSFetchedResultsController<NSFetchRequestResult>`
/// sharing the results of the typed controller you made (Swift's generic classes do not convert),
/// so it is not `===` to that controller, and its ``NSFetchedResultsController/fetchRequest`` is a
/// copy of the typed controller's (an `NSFetchRequest` compares by identity): keep one delegate
/// per controller, or tell them apart by their requests' contents (`entityName`, `predicate`).
public protocol NSFetchedResultsControllerDelegate: AnyObject {
    /// Called before the controller reports a batch of changes.
    func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>)
    /// Called for each object inserted, deleted, moved or updated: `indexPath` is its place
    /// before the change (nil for an insertion), `newIndexPath` after it (nil for a deletion).
    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
                    at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?)
    /// Called for each section inserted (at its index after the change) or deleted (at its index before it).
    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange sectionInfo: NSFetchedResultsSectionInfo,
                    atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType)
    /// Called after the controller reported a batch of changes.
    func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>)
    /// The section index title of a section name; nil lets the controller use its own
    /// (``NSFetchedResultsController/sectionIndexTitle(forSectionName:)``).
    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, sectionIndexTitleForSectionName sectionName: String) -> String?
    /// A batch of changes as the difference between the object IDs of the results before and
    /// after it. Called only for a controller without a section key path; when implemented, no
    /// other method of the delegate is called for changes. Objects updated in place are not in a
    /// difference.
    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChangeContentWith diff: CollectionDifference<NSManagedObjectID>)
}

extension NSFetchedResultsControllerDelegate {
    /// Does nothing.
    public func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {}
    /// Does nothing.
    public func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
                           at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {}
    /// Does nothing.
    public func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange sectionInfo: NSFetchedResultsSectionInfo,
                           atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType) {}
    /// Does nothing.
    public func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {}
    /// Not implemented: the controller uses its own title.
    public func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, sectionIndexTitleForSectionName sectionName: String) -> String? {
        controller.core.delegateLacks.insert(.sectionIndexTitle)
        return nil
    }
    /// Not implemented: the controller calls the per-change methods instead.
    public func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChangeContentWith diff: CollectionDifference<NSManagedObjectID>) {
        controller.core.delegateLacks.insert(.difference)
    }
}
