import Foundation

// Asking about a relationship without loading its objects: Apple's `hasFault(forRelationshipNamed:)`
// and `objectIDs(forRelationshipNamed:)`.

extension NSManagedObject {
    /// Whether reading the relationship `key` would load objects: for a to-many relationship,
    /// whether its objects have not been read yet; for a to-one, whether the object it names is
    /// still a fault (`false` when it names none). An object that is itself a fault has faults
    /// for all its relationships.
    ///
    /// ```swift
    /// if !folder.hasFault(forRelationshipNamed: "notes") { show(folder.value(forKey: "notes")) }
    /// ```
    ///
    /// Traps, as Apple's raises, when `key` is not a relationship of the entity.
    public func hasFault(forRelationshipNamed key: String) -> Bool {
        _checkQueue("hasFault(forRelationshipNamed: \(key))")
        let index = relationshipIndex(key, "hasFault(forRelationshipNamed:)")
        if _isFault { return true }
        switch _relations[index] {
        case .toMany?:
            return false
        case .toOne(let object)?:
            return object?.isFault ?? false
        case nil:
            if layout.storageKinds[index] == .toOne {
                guard case .objectID(let id) = _values[index] else { return false }
                return _context.flatMap { $0.registered($0.latestID(of: id).key) }?.isFault ?? true
            }
            return !_isInserted // a new object's to-many has nothing to read
        }
    }

    /// The IDs of the objects at the destination of the relationship `key`, read without making
    /// or firing those objects here: the IDs of the relationship's current value, unsaved changes
    /// included, as `value(forKey:)` would give its objects (in order for an ordered
    /// relationship). Fires this object's own fault if it is one. (In a child context, the
    /// parent reads the relationship of its copy of the object, as for all the child's reads.)
    ///
    /// ```swift
    /// let noteIDs = folder.objectIDs(forRelationshipNamed: "notes")
    /// ```
    ///
    /// If the store fails to read a to-many relationship, the result is empty and the context
    /// records the error, which its next save throws (as for a fault that cannot be fulfilled).
    /// Traps, as Apple's raises, when `key` is not a relationship of the entity.
    public func objectIDs(forRelationshipNamed key: String) -> [NSManagedObjectID] {
        _checkQueue("objectIDs(forRelationshipNamed: \(key))")
        let index = relationshipIndex(key, "objectIDs(forRelationshipNamed:)")
        fireFaultIfNeeded(triggeredBy: index)
        switch _relations[index] {
        case .toMany(let list)?:
            return list.objects.map(\.objectID)
        case .toOne(let object)?:
            return object.map { [$0.objectID] } ?? []
        case nil:
            if layout.storageKinds[index] == .toOne {
                guard case .objectID(let id) = _values[index] else { return [] }
                return [_context?.latestID(of: id) ?? id] // a temporary ID made permanent since it was read
            }
            guard let context = contextReadingStoredRelationships else { return [] }
            do {
                let ids = try context.relatedObjectIDs(of: self, index: index)
                if context.hasUnfulfilledFaults { context.forgetUnfulfilledFault(of: self, relationship: index) }
                return ids
            } catch {
                context.recordUnfulfilledFault(error, of: self, relationship: index)
                return []
            }
        }
    }

    /// The index of the relationship `key`; traps naming `method` for any other key.
    private func relationshipIndex(_ key: String, _ method: String) -> Int {
        guard let index = layout.nameTable.index(of: key), layout.properties[index] is NSRelationshipDescription else {
            preconditionFailure("CoreData: \(method): '\(key)' is not a relationship of \(entity.name ?? "the entity")")
        }
        return index
    }
}
