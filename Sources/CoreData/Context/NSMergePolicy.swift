import Foundation

/// The kinds of merge policy, with Apple's raw values.
public enum NSMergePolicyType: UInt, Sendable {
    /// Fail the save (the default).
    case errorMergePolicyType = 0
    /// Property by property, changes in the store win over changes in memory.
    case mergeByPropertyStoreTrumpMergePolicyType = 1
    /// Property by property, changes in memory win over changes in the store.
    case mergeByPropertyObjectTrumpMergePolicyType = 2
    /// The objects in memory overwrite the store's rows entirely.
    case overwriteMergePolicyType = 3
    /// The conflicting objects' changes in memory are discarded.
    case rollbackMergePolicyType = 4
}

/// How a context resolves save conflicts: optimistic-locking conflicts (a row changed or deleted
/// in the store since the context read it, `NSMergeConflict`) and uniqueness-constraint
/// conflicts (`NSConstraintConflict`). A save that meets conflicts writes nothing; the policy
/// adjusts the objects in memory and the save is tried again.
///
/// ```swift
/// context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy   // "new data wins"
/// ```
///
/// Subclass and override ``resolve(optimisticLockingConflicts:)`` or
/// ``resolve(constraintConflicts:)`` for a custom policy; call `super` to apply the base type's rules.
open class NSMergePolicy: NSObject, @unchecked Sendable {
    /// The former name of ``NSMergePolicyType``.
    public typealias MergePolicyType = NSMergePolicyType

    /// The policy's kind.
    public let mergeType: NSMergePolicyType

    /// A policy of the given kind.
    public init(merge ty: NSMergePolicyType) {
        self.mergeType = ty
        super.init()
    }

    /// Fails the save with `NSManagedObjectMergeError` (the default).
    public static let error = NSMergePolicy(merge: .errorMergePolicyType)
    /// Property by property, the store's values win.
    public static let mergeByPropertyStoreTrump = NSMergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType)
    /// Property by property, the context's values win.
    public static let mergeByPropertyObjectTrump = NSMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
    /// The context's objects overwrite the store's rows.
    public static let overwrite = NSMergePolicy(merge: .overwriteMergePolicyType)
    /// The context's changes to conflicting objects are discarded.
    public static let rollback = NSMergePolicy(merge: .rollbackMergePolicyType)

    /// Resolves a mixed list of `NSMergeConflict`s and `NSConstraintConflict`s.
    open func resolve(mergeConflicts list: [Any]) throws {
        let locking = list.compactMap { $0 as? NSMergeConflict }
        let constraints = list.compactMap { $0 as? NSConstraintConflict }
        if !locking.isEmpty { try resolve(optimisticLockingConflicts: locking) }
        if !constraints.isEmpty { try resolve(constraintConflicts: constraints) }
    }

    /// Resolves optimistic-locking conflicts by the policy's type:
    /// - error: throws `NSManagedObjectMergeError` (133020) with the conflicts under `conflictList`
    ///   and, as Apple's does, under `NSPersistentStoreSaveConflictsErrorKey`;
    /// - store trump: each property the object changed takes the store's value if the store's
    ///   changed too; the others take the store's values;
    /// - object trump: the object's changed properties are kept, the others take the store's values;
    /// - overwrite: the object's whole state is written over the row;
    /// - rollback: the object's changes are discarded; it takes the store's values.
    ///
    /// A row deleted from the store takes its object out of the context under every policy but
    /// error (there is no row left to write to), its changes dropped; the objects of the context
    /// that pointed at it no longer do, as the nullify rule would (changed ones drop it from
    /// their relationships, which the save writes; unchanged ones are refreshed from the store).
    /// Apple's documentation says nothing of this case. A delete that met a changed row goes ahead under
    /// object trump and overwrite and is undone under store trump and rollback; what the delete's
    /// rules did to other objects (cascaded deletes, nullified relationships) is not undone: the
    /// policy sees the conflicting object only. Relationships a policy puts back are set through
    /// the inverse-maintaining setters, so both sides stay in step.
    ///
    /// The policy runs while the coordinator holds its other contexts' saves back (so that the
    /// retry cannot meet them): an override must not wait for another context of the same
    /// coordinator to save.
    open func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        if mergeType == .errorMergePolicyType { throw Self.lockingError(list) }
        for conflict in list {
            let object = conflict.sourceObject
            object.managedObjectContext?.resolveLockingConflict(of: object, persisted: conflict.persistedRow, type: mergeType)
        }
    }

    /// Resolves uniqueness-constraint conflicts by the policy's type:
    /// - error: throws `NSManagedObjectConstraintMergeError` (133021) with the conflicts under `conflictList`;
    /// - object trump and overwrite: the last conflicting object's values win; when a row already
    ///   holds the values, that row is kept and takes them (all of them under overwrite, the
    ///   properties the object set under object trump), and the new objects are removed;
    /// - store trump and rollback: the row already stored wins (or the first object of the save);
    ///   new conflicting objects are removed and changed ones lose their changes.
    open func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
        if mergeType == .errorMergePolicyType { throw Self.constraintError(list) }
        for conflict in list {
            conflict.conflictingObjects.first?.managedObjectContext?.resolveConstraintConflict(conflict, type: mergeType)
        }
    }

    /// `NSManagedObjectMergeError` (133020) for optimistic-locking conflicts.
    internal static func lockingError(_ conflicts: [NSMergeConflict]) -> NSError {
        CoreDataError.make(.merge,
            "Could not merge changes: \(conflicts.count) object(s) changed in the store since they were read (\(conflicts.map { $0.sourceObject.objectID.uriRepresentation().absoluteString }.joined(separator: ", "))). Nothing was saved.",
            extra: ["conflictList": conflicts, NSPersistentStoreSaveConflictsErrorKey: conflicts])
    }

    /// `NSManagedObjectConstraintMergeError` (133021) for uniqueness-constraint conflicts.
    internal static func constraintError(_ conflicts: [NSConstraintConflict]) -> NSError {
        CoreDataError.make(.constraintMerge,
            "A uniqueness constraint is violated: " + conflicts.map { conflict in
                "\(conflict.constraint.joined(separator: ", ")) = \(conflict.constraintValues.sorted { $0.key < $1.key }.map { "\($0.value)" }.joined(separator: ", "))"
            }.joined(separator: "; ") + ". Nothing was saved.",
            extra: ["conflictList": conflicts])
    }
}

/// Fails a save on conflicts (the default merge policy).
nonisolated(unsafe) public let NSErrorMergePolicy: Any = NSMergePolicy.error
/// Merges property by property; the store's values win.
nonisolated(unsafe) public let NSMergeByPropertyStoreTrumpMergePolicy: Any = NSMergePolicy.mergeByPropertyStoreTrump
/// Merges property by property; the context's values win.
nonisolated(unsafe) public let NSMergeByPropertyObjectTrumpMergePolicy: Any = NSMergePolicy.mergeByPropertyObjectTrump
/// The context's objects overwrite the store.
nonisolated(unsafe) public let NSOverwriteMergePolicy: Any = NSMergePolicy.overwrite
/// The context's conflicting changes are discarded.
nonisolated(unsafe) public let NSRollbackMergePolicy: Any = NSMergePolicy.rollback
