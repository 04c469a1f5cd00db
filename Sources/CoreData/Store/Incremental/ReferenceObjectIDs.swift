import Foundation

// The object IDs of the stores you write (`NSIncrementalStore`, `NSAtomicStore`), made of
// reference objects (`IncrementalStoreReferences.swift`), their URIs, and the checks on the IDs
// a subclass makes for new objects.

extension NSPersistentStore {
    /// The ID of the object of `entity` known by `reference` in `references` (this store's).
    func objectID(of entity: NSEntityDescription, referenceObject reference: Any, in references: IncrementalStoreReferences) -> NSManagedObjectID {
        let root = entity.layout.rootNumber
        return NSManagedObjectID(entity: entity, store: self, key: IDKey(store: tag, root: root, value: references.key(for: reference, root: root)))
    }

    /// The reference object behind `objectID`; traps for a temporary ID or another store's.
    func reference(of objectID: NSManagedObjectID, in references: IncrementalStoreReferences) -> Any {
        guard objectID.persistentStore === self, let reference = references.reference(for: objectID.key.value, root: objectID.key.root) else {
            preconditionFailure("referenceObject(for:): \(objectID) is not an ID of this store")
        }
        return reference
    }

    /// The string or integer reference object of `objectID` in its URI form (what follows `p`;
    /// ``IncrementalStoreReferences/uriReference(for:root:)``); `nil` for a primary key or
    /// another kind of reference.
    func uriReference(of objectID: NSManagedObjectID) -> String? {
        references?.uriReference(for: objectID.key.value, root: objectID.key.root)
    }

    /// The ID a URI's string reference names (``uriReference(of:)`` read back); `nil` for the
    /// built-in stores, whose URIs name primary keys.
    func objectID(forURIReference reference: String, entity: NSEntityDescription) -> NSManagedObjectID? {
        references.map { objectID(of: entity, referenceObject: reference, in: $0) }
    }

    /// The ID a URI's integer reference names (0 or a negative one, `p%23-7`).
    func objectID(forURIReference reference: Int64, entity: NSEntityDescription) -> NSManagedObjectID? {
        references.map { objectID(of: entity, referenceObject: reference, in: $0) }
    }

    /// `ids`, which a store you write (`NSIncrementalStore`, `NSAtomicStore`) made for `objects`
    /// in `method`, checked: one per object, permanent, of this store, of the object's entity
    /// family, each another (Apple: a reference object "must be unique for an instance within
    /// its entity's inheritance hierarchy"), and none `taken` (an object the store holds already);
    /// else 134030 naming what came back. Two new objects given one ID would be saved as one
    /// row, the second's values over the first's.
    func checkedPermanentIDs(_ ids: [NSManagedObjectID], for objects: [NSManagedObject], from method: String,
                             taken: (NSManagedObjectID) -> Bool = { _ in false }) throws -> [NSManagedObjectID] {
        guard ids.count == objects.count else {
            throw CoreDataError.make(.persistentStoreSave, "\(Swift.type(of: self)).\(method) returned \(ids.count) IDs for \(objects.count) objects")
        }
        for (object, id) in zip(objects, ids) where id.persistentStore !== self || id.isTemporaryID || id.entity.layout.rootNumber != object.entity.layout.rootNumber {
            throw CoreDataError.make(.persistentStoreSave,
                "\(Swift.type(of: self)).\(method) returned \(id) for an object of \(object.entity.name ?? "?"); expected an ID of this store")
        }
        var seen = Set<IDKey>()
        for id in ids {
            let repeated = !seen.insert(id.key).inserted
            guard repeated || taken(id) else { continue }
            throw CoreDataError.make(.persistentStoreSave,
                "\(Swift.type(of: self)).\(method) returned \(id) for a new object, the ID of \(repeated ? "another new object" : "an object the store holds"); each reference object must be unique within its entity's hierarchy. Nothing was saved")
        }
        return ids
    }
}

/// The error of a method of a store you write that its subclass had to override: 134091.
func notOverridden(_ storeClass: AnyClass, _ method: String) -> NSError {
    CoreDataError.make(.unsupportedRequestType, "\(storeClass) does not override \(method)")
}
