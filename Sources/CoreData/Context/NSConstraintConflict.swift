import Foundation

/// A uniqueness-constraint conflict found at save: objects whose constrained values are the same
/// as another object's in the same save, or as a row's already in the store.
///
/// ```swift
/// do { try context.save() } catch let error as NSError where error.code == NSManagedObjectConstraintMergeError {
///     let conflicts = error.userInfo["conflictList"] as? [NSConstraintConflict] ?? []
///     print(conflicts.map(\.constraintValues))
/// }
/// ```
open class NSConstraintConflict: NSObject {
    /// The names of the constrained properties.
    public let constraint: [String]
    /// The values the conflicting objects share, by property name.
    public let constraintValues: [String: Any]
    /// The object whose row already holds the values in the store (`nil` when the conflict is
    /// between objects of the save only).
    public let databaseObject: NSManagedObject?
    /// The stored values of ``databaseObject``.
    public let databaseSnapshot: [String: Any]?
    /// The objects of the save that conflict.
    public let conflictingObjects: [NSManagedObject]
    /// The conflicting objects' values as last saved (empty dictionaries for new objects).
    public let conflictingSnapshots: [[AnyHashable: Any]]

    /// A conflict over `contraint` (Apple's spelling) among `conflictingObjects`, and with
    /// `databaseObject`'s stored row when it is not `nil`; the save makes these, a merge policy's
    /// tests may too.
    ///
    /// ```swift
    /// let conflict = NSConstraintConflict(constraint: ["email"], database: nil, databaseSnapshot: nil,
    ///                                     conflicting: [first, second], conflictingSnapshots: [[:], [:]])
    /// ```
    public init(constraint contraint: [String], database databaseObject: NSManagedObject?, databaseSnapshot: [AnyHashable: Any]?,
                conflicting conflictingObjects: [NSManagedObject], conflictingSnapshots: [Any]) {
        self.constraint = contraint
        self.databaseObject = databaseObject
        var snapshot: [String: Any]? = nil
        if let databaseSnapshot {
            var converted: [String: Any] = [:]
            for (key, value) in databaseSnapshot { if let key = key as? String { converted[key] = value } }
            snapshot = converted
        }
        self.databaseSnapshot = snapshot
        self.conflictingObjects = conflictingObjects
        self.conflictingSnapshots = conflictingSnapshots.map { $0 as? [AnyHashable: Any] ?? [:] }
        var values: [String: Any] = [:]
        if let first = conflictingObjects.first {
            for name in contraint { values[name] = first.value(forKey: name) ?? NSNull() }
        }
        self.constraintValues = values
        super.init()
    }

    open override var description: String {
        "NSConstraintConflict (constraint: \(constraint), values: \(constraintValues), conflicting: \(conflictingObjects.count), databaseObject: \(databaseObject.map { "\($0.objectID)" } ?? "nil"))"
    }
}
