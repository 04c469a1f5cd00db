import Foundation
import Synchronization

// Nested contexts: a context whose parent store is another context.
//
// Reads walk up the chain: a child's fetch asks its parent for the matching objects as the parent
// sees them (its unsaved inserts, updates and deletes, and its own parent's), and a child's fault
// takes the parent's current values. A child's save pushes its changes one level up, where they
// become the parent's unsaved changes; only a context on the coordinator writes the store.
//
// Identity: an object inserted in a child keeps its temporary ID in the parent. When the context
// at the root of the chain saves it and it gets its permanent ID, the root records the move in an
// `IDForwarding` table shared by the whole chain, so that the child's object answers to the
// permanent ID too and takes it as its own the next time its ID is read.

/// The changes a child context pushes into its parent: IDs and values, never objects.
internal struct ChildSaveChanges: @unchecked Sendable {
    struct Object {
        let id: NSManagedObjectID
        let entity: NSEntityDescription
        /// Attribute values in storage form, by property index (every attribute for an insert,
        /// the changed ones for an update).
        var attributes: [(index: Int, value: StoreValue)] = []
        /// To-one relationships: the destination's ID, or `nil`.
        var toOne: [(index: Int, id: NSManagedObjectID?)] = []
        /// To-many relationships: the destinations' IDs, in order, and those the child read (from
        /// the parent) before changing them: `nil` for a list the parent takes whole (a new
        /// object's, an ordered one's).
        var toMany: [(index: Int, ids: [NSManagedObjectID], read: [NSManagedObjectID]?)] = []
        /// The store a new object was assigned to (`assign(_:to:)`), which goes up with it.
        var assignedStore: NSPersistentStore?
    }
    var inserted: [Object] = []
    var updated: [Object] = []
    var deleted: [NSManagedObjectID] = []
    /// Objects the child marked with `detectConflicts(for:)`: the parent's save checks them.
    var locked: [(id: NSManagedObjectID, version: Int64)] = []
}

/// Temporary IDs that became permanent in a chain of contexts, both ways (thread-safe: every
/// context of the chain reads it on its own queue).
internal final class IDForwarding: Sendable {
    private struct Table {
        var permanentByTemporary: [IDKey: NSManagedObjectID] = [:]
        var temporaryByPermanent: [IDKey: NSManagedObjectID] = [:]
    }
    private let table = Locked(Table())
    private let count = Atomic<Int>(0)

    func record(temporary: NSManagedObjectID, permanent: NSManagedObjectID) {
        table.withLock {
            $0.permanentByTemporary[temporary.key] = permanent
            $0.temporaryByPermanent[permanent.key] = temporary
        }
        count.add(1, ordering: .releasing)
    }

    func permanent(for temporaryKey: IDKey) -> NSManagedObjectID? {
        table.withLock { $0.permanentByTemporary[temporaryKey] }
    }

    func temporary(for permanentKey: IDKey) -> NSManagedObjectID? {
        table.withLock { $0.temporaryByPermanent[permanentKey] }
    }

    /// Checked on every registry miss in the chain: no lock.
    var isEmpty: Bool { count.load(ordering: .acquiring) == 0 }
}

extension NSManagedObjectContext {
    /// The context at the top of the chain: the one on the coordinator.
    internal var rootContext: NSManagedObjectContext { parent?.rootContext ?? self }

    // MARK: Saving into the parent

    /// Pushes the validated changes into `parent` (on the parent's queue, waiting for it), then
    /// commits them here. Nothing reaches the store.
    internal func saveToParent(_ parent: NSManagedObjectContext, inserted savedInserts: [NSManagedObject],
                               updated savedUpdates: [NSManagedObject], deleted savedDeletes: [NSManagedObject]) throws {
        try throwUnfulfilledFault()
        var changes = ChildSaveChanges()
        changes.inserted = savedInserts.map { $0.childSaveChanges(all: true) }
        changes.updated = savedUpdates.compactMap { object in
            let item = object.childSaveChanges(all: false)
            return item.attributes.isEmpty && item.toOne.isEmpty && item.toMany.isEmpty ? nil : item
        }
        // (An object whose row was gone when it fired has nothing to delete.)
        changes.deleted = savedDeletes.filter { !$0._isInaccessible }.map(\.objectID)
        if !objectsDetectingConflicts.isEmpty { changes.locked = objectsToLock.map { ($0.object.objectID, $0.version) } }
        let pushed = changes
        let missing = try parent.performAndWait { try parent.absorb(pushed) }
        if !missing.isEmpty {
            throw CoreDataError.make(.merge,
                "Could not save into the parent context: \(missing.count) object(s) changed here were deleted in the parent (\(missing.map { $0.uriRepresentation().absoluteString }.joined(separator: ", "))). Nothing was saved.",
                extra: [NSAffectedObjectsErrorKey: missing])
        }

        // Committed one level up: here the objects are saved, with the values just pushed.
        for object in savedInserts {
            object._mayBeForwarded = object.objectID.isTemporaryID
            object.didCommit(values: object.persistentValues(), version: object._snapshot?.version ?? 0)
        }
        for object in savedUpdates {
            object.didCommit(values: object.persistentValues(), version: object._snapshot?.version ?? 0)
        }
        forgetSavedDeletesAndClearChanges(savedDeletes)
    }

    /// Takes a child's pushed changes as this context's own unsaved changes. Returns the IDs of
    /// objects the child changed that this context has deleted (or that no longer exist), and
    /// then takes nothing; throws, taking nothing, if the store fails to read an object the child
    /// changed or the relationships it replaced (``unfulfilledFaultError(_:for:relationship:)``).
    internal func absorb(_ changes: ChildSaveChanges) throws -> [NSManagedObjectID] {
        // First, that every object the child updated is still here (its row read once, and kept
        // for the changes below): otherwise nothing is taken.
        var updatedObjects: [NSManagedObject] = []
        var missing: [NSManagedObjectID] = []
        for item in changes.updated {
            let object = registered(item.id.key) ?? self.object(with: item.id)
            if object._isFault && !object._hasData {
                if let snapshot = try snapshotForFault(item.id) { object.adoptLoadedRow(snapshot) } else { missing.append(item.id); continue }
            }
            if object._isDeleted { missing.append(item.id) } else { updatedObjects.append(object) }
        }
        guard missing.isEmpty else { return missing }
        // The members the store holds for each to-many the child replaced decide the rows the
        // save writes: read before anything is taken.
        for (object, item) in zip(updatedObjects, changes.updated) {
            for (index, _, _) in item.toMany { _ = try object.storedToManyList(at: index) }
        }
        var touched: [(NSManagedObject, ChildSaveChanges.Object)] = []
        touched.reserveCapacity(changes.inserted.count + changes.updated.count)
        for item in changes.inserted {
            if let existing = registered(item.id.key) {
                if let store = item.assignedStore { existing.extras.assignedStore = store }
                // A fault this context made for the child's temporary ID (`object(with:)`, before
                // the child saved) becomes the new object: no row will ever fill it.
                if existing._isFault && !existing._hasData && !existing._isInserted { adoptInsertedFromChild(fault: existing) }
                touched.append((existing, item))
                continue
            }
            let object = item.entity.layout.instanceClass.init(entity: item.entity, insertInto: nil)
            object.objectID = item.id
            if let store = item.assignedStore { object.extras.assignedStore = store }
            adoptInsertedFromChild(object)
            touched.append((object, item))
        }
        for (object, item) in zip(updatedObjects, changes.updated) {
            object.fireFaultIfNeeded()
            touched.append((object, item))
        }
        for (object, item) in touched {
            for (index, value) in item.attributes { object.setStoreValue(value, at: index) }
            for (index, id) in item.toOne { object.rawSetToOne(id.map { self.object(with: $0) }, at: index) }
        }
        // The to-manys once every to-one is in: a member kept from the parent's list is checked
        // against its owner as the child left it.
        for (object, item) in touched {
            for (index, ids, read) in item.toMany {
                let current = object.toManyList(at: index)
                var members = ids.map { self.object(with: $0) }
                if let read {
                    // The child's adds and removes, on top of the parent's list as it is now: the
                    // parent's own unsaved changes and a sibling's saved ones stay (the child's
                    // whole list, read earlier, dropped them), unless the member names another owner now.
                    members = object.members(of: current, changedTo: members, from: Set(read.map { ObjectIdentifier(self.object(with: $0)) }), at: index)
                }
                object._relations[index] = .toMany(ObjectList(members, original: current.original))
                object.markChanged(index)
            }
        }
        for id in changes.deleted {
            let id = latestID(of: id) // (a temporary ID: maybe made permanent since the child read it)
            guard let object = registered(id.key) ?? (id.isTemporaryID ? nil : self.object(with: id)) else { continue }
            if object._context === self && !object._isDeleted { takeDeleteFromChild(object) }
        }
        if !changes.locked.isEmpty { detectConflicts(forChildMarked: changes.locked) }
        processPendingChanges()
        return []
    }

    /// A delete the child made: its delete rules already ran in the child, and what they changed
    /// came up as the child's other changes, so they do not run again here (against relationships
    /// the child may have changed first). But objects here that the child did not see related
    /// to it (a sibling related them since) let go of it: none may save a relationship to an
    /// object gone from the context.
    private func takeDeleteFromChild(_ object: NSManagedObject) {
        object.fireFaultIfNeeded()
        DeleteRules.detach(object, in: self)
        if object._isInserted {
            willChangeInsertedSet()
            inserted.remove(object)
            object._isInserted = false
            object._isDeleted = true
            // Reported deleted (an `ObjectsDidChange` may have reported it inserted), then gone.
            pendingChangeNotice.deleted.append(object)
            leaveContext(object)
            return
        }
        if object._isUpdated { updated.remove(object) }
        object._isUpdated = false
        object._isDeleted = true
        deleted.insert(object)
        pendingChangeNotice.deleted.append(object)
    }

    // MARK: Reading through the parent

    /// The objects a child's request matches as this context sees them, as IDs and snapshots of
    /// their current (possibly unsaved) values. Runs on this context's queue.
    internal func snapshotsForChild<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription,
                                       applyLimits: Bool) throws -> [(NSManagedObjectID, RowSnapshot)] {
        // The parent's unsaved changes are the child's saved data: always included.
        let objects = try fetchObjects(request, entity: entity, applyLimits: applyLimits, includesPendingChanges: true, forChild: true)
        return objects.map { ($0.objectID, $0.currentSnapshot) }
    }

    /// Registered objects for rows that came from the parent context: existing ones are reused,
    /// new ones are faults carrying the parent's values (or, without `withValues`, data-less
    /// faults that ask the parent when they fire). With `asFaults` false every object is fired.
    internal func materialize(fromParent rows: [(NSManagedObjectID, RowSnapshot)], refresh: Bool,
                              asFaults: Bool, withValues: Bool) -> [NSManagedObject] {
        var objects: [NSManagedObject] = []
        objects.reserveCapacity(rows.count)
        for (id, snapshot) in rows {
            if let existing = registered(id.key) {
                if withValues { existing.takeRefetched(snapshot, refresh: refresh) }
                objects.append(existing)
                continue
            }
            let object = snapshot.entity.layout.instanceClass.init(entity: snapshot.entity, insertInto: nil)
            object.becomeFault(id, snapshot: withValues ? snapshot : nil, in: self)
            objects.append(object)
        }
        if !asFaults && withValues { for object in objects { object.fireFaultIfNeeded() } }
        return objects
    }

    /// The snapshot of the parent's object for `id` (its current values, unsaved ones included),
    /// or the row from the parent's own store. `nil` if the parent deleted the object.
    internal func parentSnapshot(for id: NSManagedObjectID, in parent: NSManagedObjectContext) throws -> RowSnapshot? {
        try parent.performAndWait { () throws -> RowSnapshot? in
            if let object = parent.registered(id.key), !object._isFault || object._hasData {
                if object._isDeleted { return nil }
                object.fireFaultIfNeeded()
                return object.currentSnapshot
            }
            return try parent.snapshotForFault(id)
        }
    }

    // MARK: Identity across the chain

    /// Called whenever an object of this context moves from a temporary to a permanent ID (a save,
    /// `obtainPermanentIDs(for:)`): if the context has children, which may know the object by
    /// its temporary ID (their own insert, saved into this context, or an object they read
    /// while it was new here), the move is recorded for the chain, whose contexts then find it
    /// by either ID.
    internal func recordForwarding(of object: NSManagedObject, from temporary: NSManagedObjectID, to permanent: NSManagedObjectID) {
        guard hasChildren.load(ordering: .relaxed), temporary.isTemporaryID, !permanent.isTemporaryID else { return }
        rootContext.idForwarding.record(temporary: temporary, permanent: permanent)
    }

    /// `id`, or the permanent ID the chain's root gave its object since (a temporary ID a child
    /// knew the object by).
    internal func latestID(of id: NSManagedObjectID) -> NSManagedObjectID {
        guard id.isTemporaryID else { return id }
        let forwarding = rootContext.idForwarding
        return forwarding.isEmpty ? id : forwarding.permanent(for: id.key) ?? id
    }

    /// The object registered under `key`, following the chain's temporary ⇄ permanent moves.
    internal func registeredFollowingForwarding(_ key: IDKey) -> NSManagedObject? {
        let forwarding = rootContext.idForwarding
        guard !forwarding.isEmpty else { return nil }
        if key.store == IDKey.temporaryStore {
            guard let permanent = forwarding.permanent(for: key) else { return nil }
            return registered(permanent.key, followingForwarding: false)
        }
        guard let temporary = forwarding.temporary(for: key), let object = registered(temporary.key, followingForwarding: false),
              let permanent = forwarding.permanent(for: temporary.key) else { return nil }
        reregister(object, as: permanent)
        object._mayBeForwarded = false
        return object
    }

    /// The permanent ID an object inserted here (and saved into the parent) has received since, if any.
    internal func forwardedID(for id: NSManagedObjectID) -> NSManagedObjectID? {
        let forwarding = rootContext.idForwarding
        return forwarding.isEmpty ? nil : forwarding.permanent(for: id.key)
    }
}

extension NSManagedObject {
    /// What a child's save pushes for this object: every persistent property for an insert
    /// (`all`), the changed ones for an update.
    internal func childSaveChanges(all: Bool) -> ChildSaveChanges.Object {
        fireFaultIfNeeded()
        var item = ChildSaveChanges.Object(id: objectID, entity: entity)
        if all { item.assignedStore = _extras?.assignedStore }
        for (index, property) in layout.properties.enumerated() where !property.isTransient && (all || _changed.contains(index)) {
            switch layout.storageKinds[index] {
            case .toOne:
                item.toOne.append((index, toOneObject(at: index).flatMap { $0._isDeleted ? nil : $0.objectID }))
            case .toMany, .orderedToMany:
                if all && _relations[index] == nil { continue } // never touched: nothing to push
                let list = toManyList(at: index)
                let read = all || layout.storageKinds[index] == .orderedToMany ? nil : list.original // (an order is the child's)
                item.toMany.append((index, list.objects.filter { !$0._isDeleted }.map(\.objectID), read))
            default:
                item.attributes.append((index, index < _values.count ? _values[index] : .null))
            }
        }
        return item
    }
}
