import Foundation

/// Why a managed object's values were put back from a snapshot: the flags that
/// ``NSManagedObject/awake(fromSnapshotEvents:)`` receives. Apple's values.
///
/// ```swift
/// final class Note: NSManagedObject {
///     override func awake(fromSnapshotEvents flags: NSSnapshotEventType) {
///         super.awake(fromSnapshotEvents: flags)
///         if flags.contains(.rollback) { recomputeCaches() }
///     }
/// }
/// ```
public struct NSSnapshotEventType: OptionSet, Sendable, Hashable {
    /// The events' bits, with Apple's values.
    public let rawValue: UInt

    /// Makes a set of snapshot events from Apple's raw value.
    ///
    /// ```swift
    /// let flags = NSSnapshotEventType(rawValue: 1 << 4) // .rollback
    /// ```
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// An undo took the object's insertion back: it is about to leave its context.
    public static let undoInsertion = NSSnapshotEventType(rawValue: 1 << 1)
    /// An undo took the object's deletion back: it is in its context again.
    public static let undoDeletion = NSSnapshotEventType(rawValue: 1 << 2)
    /// An undo (or redo) put property values back.
    public static let undoUpdate = NSSnapshotEventType(rawValue: 1 << 3)
    /// `rollback()` put the last saved values back.
    public static let rollback = NSSnapshotEventType(rawValue: 1 << 4)
    /// `refresh(_:mergeChanges: true)` (or a merge) took the store's values under unsaved changes.
    public static let refresh = NSSnapshotEventType(rawValue: 1 << 5)
    /// A merge policy changed the object's values while resolving a conflict at save.
    public static let mergePolicy = NSSnapshotEventType(rawValue: 1 << 6)
}
