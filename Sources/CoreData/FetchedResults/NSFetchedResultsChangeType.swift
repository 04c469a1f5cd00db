import Foundation

/// The kinds of change a fetched results controller reports to its delegate, with Apple's raw values.
///
/// ```swift
/// func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
///                 at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {
///     switch type {
///     case .insert: rows.insert(anObject, at: newIndexPath!.row)
///     case .delete: rows.remove(at: indexPath!.row)
///     case .move, .update: break
///     @unknown default: break
///     }
/// }
/// ```
public enum NSFetchedResultsChangeType: UInt, Sendable {
    /// An object (or section) came into the results.
    case insert = 1
    /// An object (or section) left the results.
    case delete = 2
    /// An object changed its place (a sort or section key changed).
    case move = 3
    /// An object changed in its place.
    case update = 4
}
