import Foundation

extension NSManagedObjectContext {
    /// Writes the context's changes to its parent store in one transaction: all or nothing.
    ///
    /// Before writing, delete rules are applied, `willSave` is called and every changed object is
    /// validated; any failure throws (validation errors in Core Data's codes, 1560 with
    /// `NSDetailedErrorsKey` when there are several) and nothing is written. New objects get
    /// primary keys in insertion order.
    ///
    /// Conflicts — rows changed or deleted in the store since they were read (optimistic locking
    /// through `Z_OPT`), and uniqueness-constraint violations — are resolved by ``mergePolicy``:
    /// the default `NSErrorMergePolicy` throws `NSManagedObjectMergeError` (133020) or
    /// `NSManagedObjectConstraintMergeError` (133021) with the conflicts under `conflictList`;
    /// the other policies adjust the objects in memory and the save is tried again. Nothing is
    /// written by a save that throws.
    ///
    /// A fault the store could not fulfill since the last `rollback()` or `reset()` (an object's
    /// row, or a to-many relationship, that an I/O error, a removed store or an unreadable file
    /// kept from loading) makes every save throw `NSPersistentStoreOperationError` (134070,
    /// "CoreData could not fulfill a fault for '<object ID>'", the store's error under
    /// `NSUnderlyingErrorKey`) before it writes anything, until the load succeeds, the object is
    /// refreshed, or the context is rolled back or reset:
    ///
    /// ```swift
    /// do { try context.save() } catch let error as NSError where error.code == NSPersistentStoreOperationError {
    ///     context.rollback() // or refresh the objects, and try again
    /// }
    /// ```
    public func save() throws {
        checkQueue("save()")
        // With an undo manager, the save's passes over pending changes are one undo step.
        try holdingUndoEvent(endingEvent: true, saveChanges)
    }

    private func saveChanges() throws {
        defer { deliverStoreRegistrations() } // StoreRegistrations.swift
        var shortcuts = SaveShortcuts(beginning: self) // what a save may skip: SaveShortcuts.swift
        defer { shortcuts.end() }
        processPendingChangesReporting(propagatingDeletes: true) // (rules run here whatever `propagatesDeletesAtEndOfEvent` says)
        try throwUnfulfilledFault() // (again before each write: willSave, validation and conflicts load too)
        guard hasChanges else { return }
        let parent = self.parent
        guard parent != nil || persistentStoreCoordinator != nil else {
            throw CoreDataError.make(.persistentStoreSave, "The context has no persistent store coordinator; nothing was saved")
        }
        // A pinned context saves (conflicts, merge policies) against the latest state, and moves on after.
        var generation = QueryGenerationSave(suspending: self)
        defer { generation.end() }
        CoreDataMessages.post(name: .NSManagedObjectContextWillSave, object: self)
        processPendingChangesReporting(propagatingDeletes: true) // an observer may have changed objects
        repairMissingDeletePropagation() // (before willSave: the objects it changes are saved too)
        if shortcuts.callsWillSave { try callWillSave() } // (asked after the notification: its observers may insert objects)
        try validateForSave()

        var saved: SavedObjects
        if let parent {
            // A child context: the changes go one level up, not to the store.
            saved = SavedObjects(inserted: inserted.objects, updated: updated.objects, deleted: deleted.objects)
            try saveToParent(parent, inserted: saved.inserted, updated: saved.updated, deleted: saved.deleted)
        } else {
            let coordinator = persistentStoreCoordinator!
            // Conflicts are resolved and the save retried while this coordinator's other contexts
            // wait to save: a retry meets only changes made through another coordinator.
            guard let written = try coordinator.withSaveLock({ try saveResolvingConflicts(coordinator) }) else {
                objectsDetectingConflicts.removeAll() // (the policy left nothing to save: the save succeeded)
                return
            }
            saved = SavedObjects(inserted: written.inserted, updated: written.updated, deleted: written.deleted)
            generation.moveToCurrent()
        }
        objectsDetectingConflicts.removeAll()
        shortcuts.didSave(saved)
        postDidSave(inserted: saved.inserted, updated: saved.updated, deleted: saved.deleted)
        shortcuts.letGo(of: &saved)
    }

    /// Calls `willSave` on every changed object; then, as Apple's context does, again on the
    /// objects that changed meanwhile (through their own `willSave` or another's: a counter kept
    /// on a related object), pass after pass until a pass changes nothing. After 100 passes that
    /// still changed objects the save fails (Apple raises "the context is still dirty after 100
    /// attempts"), with nothing written.
    private func callWillSave() throws {
        var objects = (inserted: inserted.objects, updated: updated.objects, deleted: deleted.objects)
        insertsChangedInWillSave = []
        defer { insertsChangedInWillSave = nil }
        let passes = 100
        for pass in 1...passes {
            for list in [objects.inserted, objects.updated, objects.deleted] {
                list.forEachUnretainedPrefetching { $1.willSave() }
            }
            let changed = processPendingChangesReporting(propagatingDeletes: true)
            var seen = Set<ObjectIdentifier>()
            let changedInserts = (changed.inserted + insertsChangedInWillSave!).filter { seen.insert(ObjectIdentifier($0)).inserted }
            insertsChangedInWillSave = []
            // Objects still to save: an object may be listed as changed and then deleted, or
            // have been inserted and deleted again (and left the context).
            objects = (changedInserts.filter { $0._isInserted && $0._context === self },
                       changed.updated.filter { $0._isUpdated && $0._context === self },
                       changed.deleted.filter { $0._isDeleted && $0._context === self })
            if objects.inserted.isEmpty && objects.updated.isEmpty && objects.deleted.isEmpty { return }
            if pass == passes { break }
        }
        throw CoreDataError.make(.coreData,
            "Could not save: objects were still changing after \(passes) passes of willSave() (a willSave(), validation method or notification observer keeps changing objects: \((objects.inserted + objects.updated + objects.deleted).prefix(3).map { $0.objectID.uriRepresentation().absoluteString }.joined(separator: ", "))). Nothing was saved.")
    }

    /// Writes, resolving conflicts by the merge policy and trying again; the saved objects, or
    /// `nil` if the policy left nothing to save.
    private func saveResolvingConflicts(_ coordinator: NSPersistentStoreCoordinator)
        throws -> (inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject])? {
        var attempts = 0
        while true {
            do {
                return try saveToStore(coordinator)
            } catch let conflict as StoreConflictError {
                // Through `resolve(mergeConflicts:)`, the method subclasses override, as Apple's save calls it.
                let conflicts = mergeConflicts(for: conflict)
                try effectiveMergePolicy.resolve(mergeConflicts: conflicts)
            } catch let error where error.asNSError.map({ $0.code == NSManagedObjectConstraintMergeError && $0.userInfo["conflictList"] == nil }) ?? false {
                let conflicts = try constraintConflicts()
                guard !conflicts.isEmpty else { throw error }
                try effectiveMergePolicy.resolve(mergeConflicts: conflicts)
            }
            // The policy changed objects in memory: write again (a few rounds at most: each round
            // takes the store's current versions, so only a concurrent writer can cause another).
            attempts += 1
            guard attempts < 8 else {
                throw CoreDataError.make(.merge, "The save kept meeting new conflicts after \(attempts) attempts; nothing was saved")
            }
            processPendingChangesReporting(propagatingDeletes: true)
            guard hasChanges else { return nil }
            repairMissingDeletePropagation() // (a policy may have put back a relationship to an object deleted here)
            try validateForSave()
        }
    }

    /// One attempt to write the context's changes to the store(s); throws `StoreConflictError`
    /// or a constraint error with nothing written.
    private func saveToStore(_ coordinator: NSPersistentStoreCoordinator)
        throws -> (inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject]) {
        let derived = coordinator.managedObjectModel.derivedAttributes
        if !derived.isEmpty { try computeDerivedAttributes(derived) }
        try throwUnfulfilledFault() // (after the derivations, which load related objects)
        if coordinator.hasIncrementalStores { try obtainPermanentIDsForIncrementalStores(coordinator) }
        // Group the changes by store (one store in almost every stack), built in place. (Passed
        // to the local functions that use it, not captured by them: a variable a local function
        // captures is checked for exclusive access at run time, at every change. The non-escaping
        // closures below that capture it are checked when compiling.)
        var groups = StoreGroups(insertCount: inserted.count)
        var updatedRows: [PropertyValues] = []
        updatedRows.reserveCapacity(updated.count)
        var storeByEntity: [ObjectIdentifier: NSPersistentStore] = [:]
        var lastEntity: NSEntityDescription?
        var lastStore: NSPersistentStore?
        func store(for object: NSManagedObject) throws -> NSPersistentStore {
            if object.permanentIDStore != nil, let store = try coordinator.ownStore(of: object.objectID) { return store }
            if object._extras?.assignedStore != nil { return try self.store(forNew: object, in: coordinator) }
            if object.entity === lastEntity, let lastStore { return lastStore }
            let store: NSPersistentStore
            if let known = storeByEntity[ObjectIdentifier(object.entity)] {
                store = known
            } else {
                store = try coordinator.store(forNew: object.entity)
                storeByEntity[ObjectIdentifier(object.entity)] = store
            }
            lastEntity = object.entity
            lastStore = store
            return store
        }
        // Relationship rows: join tables, hidden keys, order columns. Join rows go to the store of
        // the object whose relationship it is (a stack of several stores, one per configuration,
        // has one per store); its members must be in that store too: a relationship across
        // stores is refused with 133010, as Apple allows none (checked only with several stores).
        var joinRows: [(store: NSPersistentStore, inserts: Set<SaveChanges.JoinRow>, deletes: Set<SaveChanges.JoinRow>)] = []
        let severalStores = coordinator.hasSeveralStores
        func memberStore(_ member: NSManagedObject) throws -> NSPersistentStore { try store(for: member) }
        func addRelationshipRows(of object: NSManagedObject, into groups: inout StoreGroups) throws {
            guard object._changed.intersects(object.layout.relationshipMask) else { return }
            let store = try store(for: object)
            for index in object.layout.relationshipIndexes where object._changed.contains(index) {
                if severalStores, let relationship = object.layout.properties[index] as? NSRelationshipDescription, !relationship.isTransient {
                    // Apple allows no relationship across stores, of any kind: the row of one end
                    // could not name the other.
                    let members: [NSManagedObject]
                    switch object._relations[index] {
                    case .toOne(let target?)?: members = [target]
                    case .toMany(let list)?: members = list.objects
                    default: members = []
                    }
                    for member in members where !member._isDeleted {
                        if try memberStore(member) === store { continue }
                        throw CoreDataError.make(.externalRelationship,
                            "The relationship '\(relationship.name)' of \(object.objectID) links it to \(member.objectID), an object of another store; relationships across stores are not supported. Nothing was saved")
                    }
                }
                guard case .toMany(let list)? = object._relations[index],
                      let relationship = object.layout.properties[index] as? NSRelationshipDescription, !relationship.isTransient else { continue }
                let current = list.objects.filter { !$0._isDeleted }.map(\.objectID)
                let before = Set(list.original.map(\.key))
                let after = Set(current.map(\.key))
                if let join = relationship.joinTable, let inverse = relationship.inverseRelationship {
                    func row(_ member: NSManagedObjectID) -> SaveChanges.JoinRow {
                        join.isOwner
                            ? .init(relationship: relationship, first: object.objectID, second: member)
                            : .init(relationship: inverse, first: member, second: object.objectID)
                    }
                    let slot: Int
                    if let found = joinRows.firstIndex(where: { $0.store === store }) {
                        slot = found
                    } else {
                        joinRows.append((store, [], []))
                        slot = joinRows.count - 1
                    }
                    for member in current where !before.contains(member.key) { joinRows[slot].inserts.insert(row(member)) }
                    for member in list.original where !after.contains(member.key) { joinRows[slot].deletes.insert(row(member)) }
                } else if relationship.hiddenForeignKeyColumn != nil {
                    groups.withChanges(for: store) { changes in
                        for member in current where !before.contains(member.key) {
                            changes.foreignKeyUpdates.append(.init(relationship: relationship, member: member, owner: object.objectID))
                        }
                        for member in list.original where !after.contains(member.key) {
                            changes.foreignKeyUpdates.append(.init(relationship: relationship, member: member, owner: nil))
                        }
                    }
                }
                if relationship.isOrdered {
                    groups.withChanges(for: store) { changes in
                        for (position, member) in current.enumerated() {
                            changes.orderUpdates.append(.init(relationship: relationship, owner: object.objectID, member: member, position: Int64(position + 1)))
                        }
                    }
                }
            }
        }
        let savedInserts = inserted.objects
        let savedUpdates = updated.objects
        let savedDeletes = deleted.objects
        var lastGroup = -1
        // The group of the last new object with a temporary ID (and no assigned store), and its
        // entity: the next one of that entity goes to the same group (its store depends on the
        // entity only), found without a store returned (retained and released) per object.
        var lastTemporaryGroup = -1
        var lastTemporaryEntity: ObjectIdentifier?
        try savedInserts.forEachUnretainedPrefetching { offset, object in
            let storeIsEntitys = object.permanentIDStore == nil && object._extras?.assignedStore == nil
            if storeIsEntitys && ObjectIdentifier(object.entity) == lastTemporaryEntity {
                lastGroup = lastTemporaryGroup
            } else {
                let store = try store(for: object)
                if lastGroup < 0 || groups.all[lastGroup].store !== store { lastGroup = groups.index(of: store) }
                if storeIsEntitys {
                    lastTemporaryGroup = lastGroup
                    lastTemporaryEntity = ObjectIdentifier(object.entity)
                }
            }
            let values = try object.valuesForStore()
            // Moved into the row (without `consume`, Swift retains it for the row and releases
            // the local: two atomic operations more per object).
            groups.all[lastGroup].changes.inserts.append(.init(entity: object.entity, key: object.idKey, values: consume values))
            groups.all[lastGroup].insertOffsets.append(offset)
            // Here, not in a pass of its own: the object is in the cache now.
            if object._changed.intersects(object.layout.relationshipMask) { try addRelationshipRows(of: object, into: &groups) }
        }
        for object in savedUpdates {
            let values = try object.valuesForStore()
            updatedRows.append(values)
            guard let store = try coordinator.ownStore(of: object.objectID) else { continue }
            let changed = object._changed.filter { !object.layout.properties[$0].isTransient }
            guard !changed.isEmpty else { continue }
            groups.withChanges(for: store) {
                $0.updates.append(.init(id: object.objectID, values: values, changedIndexes: changed,
                                        expectedVersion: object._snapshot?.version ?? 0))
            }
        }
        for object in savedDeletes {
            // A fault whose row was gone when it fired: no row to delete.
            if object._isInaccessible { continue }
            guard let store = try coordinator.ownStore(of: object.objectID) else { continue }
            // A fault deleted without being read has no version: its row is deleted as it is.
            let expectedVersion = object._snapshotValues == nil ? nil : object._snapshotVersion
            groups.withChanges(for: store) { $0.deletes.append(.init(id: object.objectID, expectedVersion: expectedVersion)) }
        }
        if !objectsDetectingConflicts.isEmpty {
            for (object, version) in objectsToLock {
                // (A read-only store is not written: there is no transaction to check it in.)
                guard let store = try coordinator.ownStore(of: object.objectID), !store.isReadOnly else { continue }
                groups.withChanges(for: store) { $0.locks.append(.init(id: object.objectID, expectedVersion: version)) }
            }
        }
        try savedUpdates.forEachUnretained { try addRelationshipRows(of: $1, into: &groups) }
        // A member moved between two owners of a to-many without an inverse is taken from the
        // old one (its key cleared) and given to the new one: the clearings are written first,
        // whichever owner the save met first, or the member would end with neither.
        for index in groups.all.indices where groups.all[index].changes.foreignKeyUpdates.contains(where: { $0.owner == nil }) {
            let updates = groups.all[index].changes.foreignKeyUpdates
            groups.all[index].changes.foreignKeyUpdates = updates.filter { $0.owner == nil } + updates.filter { $0.owner != nil }
        }
        for rows in joinRows {
            groups.withChanges(for: rows.store) { changes in
                changes.joinInserts = rows.inserts.sorted { $0.first.key.value < $1.first.key.value }
                changes.joinDeletes = Array(rows.deletes)
            }
        }

        // Write, to every store or none. (The list of writes is let go before the values move
        // out of `groups` below: held, its lists would be copied.)
        var results: [SaveResult]
        do {
            for index in groups.all.indices {
                groups.all[index].changes.transactionAuthor = transactionAuthor
                groups.all[index].changes.contextName = name
                groups.all[index].changes.context = self
            }
            let writes = groups.all.map { StoreWrite(changes: $0.changes, store: $0.store) }
            results = try coordinator.save(writes)
        }
        // The history the save wrote, store by store: its did-save notification's "newChangeToken".
        var historyTransactions: [String: Int64] = [:]
        for (group, result) in zip(groups.all, results) {
            if let transaction = result.historyTransaction { historyTransactions[group.store.identifier] = transaction }
        }
        savedHistoryToken = historyTransactions.isEmpty ? nil : NSPersistentHistoryToken(storeTokens: historyTransactions)

        // Commit in memory: the new objects take their permanent keys (their IDs are made when asked for).
        // (The lists are let go before the values move out of `groups` below: held, they would be copied.)
        do {
            let saved = zip(groups.all, results).map {
                SavedInserts(store: $0.store, inserts: $0.changes.inserts, offsets: $0.insertOffsets, keys: $1.insertedKeys)
            }
            results = []
            reregister(saved, of: savedInserts)
        }
        var permanent: [IDKey: NSManagedObjectID]? // built only if a saved value refers to a new object
        // (`groups` is passed, not captured (see above); `inout`, only read: by address, never copied.)
        func resolveTemporaryIDs(of object: NSManagedObject, in values: inout PropertyValues, groups: inout StoreGroups) {
            for index in object.layout.idValueIndexes {
                guard case .objectID(let id) = values[index], id.isTemporaryID else { continue }
                if permanent == nil {
                    var table: [IDKey: NSManagedObjectID] = [:]
                    table.reserveCapacity(savedInserts.count) // at most one entry per new object: no regrowth
                    for group in groups.all {
                        group.changes.inserts.forEachTemporary(offsets: group.insertOffsets) { key, offset in
                            table[key] = savedInserts[offset].objectID
                        }
                    }
                    permanent = table
                }
                if let resolved = permanent![id.key] { values[index] = .objectID(resolved) }
            }
        }
        func commit(_ object: NSManagedObject, _ values: consuming PropertyValues, groups: inout StoreGroups) {
            // Only entities with to-one relationships or object-ID attributes may hold IDs.
            if !object.layout.idValueIndexes.isEmpty { resolveTemporaryIDs(of: object, in: &values, groups: &groups) }
            let read = object._snapshot?.version ?? 0
            let version = object._isInserted ? 1 : object._changed.contains { !object.layout.properties[$0].isTransient } ? RowVersion.next(after: read) : read
            object.didCommit(values: consume values, version: version)
        }
        for storeIndex in groups.all.indices {
            let offsets = groups.all[storeIndex].insertOffsets
            savedInserts.forEachUnretainedPrefetching(positions: offsets.count, offset: { offsets[$0] }) { position, object in
                // The written values move into the object's snapshot (a temporary ID among them
                // is resolved by the rows' keys, which stay).
                var values = PropertyValues()
                swap(&values, &groups.all[storeIndex].changes.inserts[position].values)
                commit(object, consume values, groups: &groups)
            }
        }
        for (object, values) in zip(savedUpdates, updatedRows) { commit(object, values, groups: &groups) }
        forgetSavedDeletesAndClearChanges(savedDeletes)
        return (savedInserts, savedUpdates, savedDeletes)
    }

    /// After a save: deleted objects leave the context; nothing is inserted, updated or deleted
    /// any more. (Objects whose rows were gone when they fired stay registered, deleted, as a
    /// merged delete does: objects that still refer to them keep referring to an object of
    /// their context.)
    internal func forgetSavedDeletesAndClearChanges(_ savedDeletes: [NSManagedObject]) {
        for object in savedDeletes where !object._isInaccessible {
            object._isDeleted = false
            leaveContext(object)
        }
        willChangeInsertedSet()
        inserted.removeAll()
        updated.removeAll()
        deleted.removeAll()
        insertedSetWasEmptied()
        if let undoTracking { undoSaved(undoTracking) }
    }

    /// `NSManagedObjectContextDidSave` with Apple's keys (the objects), and
    /// `didSaveObjectIDsNotification` with their IDs; as Apple's, only non-empty sets are present.
    /// Linux addition: the did-save notification carries the IDs too, under the `…ObjectIDsKey`
    /// keys, so that a merge on another queue never reads this context's objects.
    private func postDidSave(inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject]) {
        var ids = ChangeInfo()
        // The saved objects' IDs made under one lock per set, not one each (`objectID`).
        ids.add(NSInsertedObjectIDsKey, idSet(of: inserted))
        ids.add(NSUpdatedObjectIDsKey, idSet(of: updated))
        ids.add(NSDeletedObjectIDsKey, idSet(of: deleted))
        // A pinned context's generation after the save (it moved to the latest), under Apple's key.
        if let queryGeneration { ids.add(NSManagedObjectContextQueryGenerationKey, NSQueryGenerationToken(generation: queryGeneration)) }
        // The persistent history the save wrote, under Apple's (undocumented) key.
        if let token = savedHistoryToken {
            ids.add(NSManagedObjectContext.newChangeTokenKey, token)
            savedHistoryToken = nil
        }
        var objects = ids
        objects.memo = saveSetMemo
        saveSetMemo = nil
        objects.add(NSInsertedObjectsKey, inserted)
        objects.add(NSUpdatedObjectsKey, updated)
        objects.add(NSDeletedObjectsKey, deleted)
        CoreDataMessages.post(name: .NSManagedObjectContextDidSave, object: self, userInfo: objects.userInfo)
        CoreDataMessages.post(name: NSManagedObjectContext.didSaveObjectIDsNotification, object: self, userInfo: ids.userInfo)
    }

    /// Apple's "repairing missing delete propagation" (``DeleteRules/repairMissingPropagation(of:)``)
    /// for the inserted and updated objects, before `willSave()` and validation: their loaded
    /// relationships let go of objects deleted in this context. Nothing to do for a model without
    /// relationships.
    internal func repairMissingDeletePropagation() {
        guard !withModel({ $0?.objectsHoldOnlyValues ?? false }) else { return }
        var repaired = false
        for object in inserted.objects + updated.objects where !object._isDeleted {
            if DeleteRules.repairMissingPropagation(of: object) { repaired = true }
        }
        if repaired { processPendingChangesReporting(propagatingDeletes: true) }
    }

    /// Validates every changed object; throws one error, or 1560 with all of them.
    ///
    /// Plain objects of a model with no rules to check (``NSManagedObjectModel/objectsHaveNoValidationRules``)
    /// are valid unless one holds a value of the wrong type: when none of the context's objects
    /// has taken one since its last save, the inserted and updated objects are not walked (for
    /// 50,000 new objects, a pass over objects long out of the cache).
    private func validateForSave() throws {
        guard !savesWithoutValidation else { return }
        // Errors of any type: an override may throw an app's own `Error`, thrown as it is.
        var errors: [any Error] = []
        func collect(_ body: () throws -> Void) {
            do { try body() } catch {
                if let error = error.asNSError, error.domain == NSCocoaErrorDomain, error.code == NSValidationMultipleErrorsError,
                   let details = error.userInfo[NSDetailedErrorsKey] as? [NSError] {
                    errors.append(contentsOf: details)
                } else {
                    errors.append(error)
                }
            }
        }
        // Each list is a copy held for its loop: validation methods, which apps override, cannot
        // release its objects.
        if !changedObjectsAreValid {
            inserted.objects.forEachUnretainedPrefetching { _, object in
                collect { try object.validateForInsert() }
                collect { try object.validateRelationshipContexts() }
            }
            updated.objects.forEachUnretainedPrefetching { _, object in
                collect { try object.validateForUpdate() }
                collect { try object.validateRelationshipContexts() }
            }
        }
        // (An object whose row was gone when it fired is exempt, as Apple's.)
        deleted.objects.forEachUnretained { _, object in if !object._isInaccessible { collect { try object.validateForDelete() } } }
        try CoreDataError.throwValidationErrors(errors)
    }
}

/// One store's share of a written save, as the context's registry takes it
/// (``NSManagedObjectContext/reregister(_:of:)``): the rows it inserted, the positions of their
/// objects in the save's inserted objects, and the primary keys it gave them. Views of the
/// save's own lists, not a list of its own (for a bulk save, a list of 48-byte entries was 2.4 MB
/// of fresh memory for 50,000 objects).
internal struct SavedInserts {
    let store: NSPersistentStore
    /// The rows, in order; a temporary row's key is the one its object leaves.
    let inserts: [SaveChanges.Insert]
    /// The position of each row's object in the save's inserted objects.
    let offsets: [Int]
    /// The primary key each row got (`SaveResult.insertedKeys`).
    let keys: [Int64]
}

extension Array where Element == SaveChanges.Insert {
    /// Calls `body` with the temporary key and the object's position (`offsets[position]`) of
    /// each row with a temporary ID: the objects a save gives their first permanent keys.
    @inline(__always)
    func forEachTemporary(offsets: [Int], _ body: (_ key: IDKey, _ offset: Int) -> Void) {
        for position in indices where self[position].isTemporary { body(self[position].key, offsets[position]) }
    }
}

/// One store's share of a save: its changes, and the positions of its inserted objects in the
/// save's inserted objects, in the order of `changes.inserts`.
private struct StoreChanges {
    let store: NSPersistentStore
    var changes = SaveChanges()
    var insertOffsets: [Int] = []
}

/// A save's changes by store, in the order the stores were first met.
private struct StoreGroups {
    var all: [StoreChanges] = []
    /// How many objects the save inserts: the first store's lists get room for all of them
    /// (the only store, in almost every stack).
    let insertCount: Int

    /// The position in ``all`` of `store`'s changes, added if new.
    mutating func index(of store: NSPersistentStore) -> Int {
        if let index = all.firstIndex(where: { $0.store === store }) { return index }
        var changes = StoreChanges(store: store)
        if all.isEmpty {
            changes.changes.inserts.reserveCapacity(insertCount)
            changes.insertOffsets.reserveCapacity(insertCount)
        }
        all.append(changes)
        return all.count - 1
    }

    /// Calls `body` with `store`'s changes, to change them in place.
    mutating func withChanges(for store: NSPersistentStore, _ body: (inout SaveChanges) -> Void) {
        let index = index(of: store)
        body(&all[index].changes)
    }
}

extension NSManagedObject {
    /// The values to write: to-one relationships as IDs, transformable values encoded.
    internal func valuesForStore() throws -> PropertyValues {
        var values = persistentValues()
        // Checked before iterating: iterating an empty list still retains and releases it.
        if !layout.objectAttributeIndexes.isEmpty {
            for index in layout.objectAttributeIndexes {
                guard case .object(let box) = values[index], let attribute = layout.properties[index] as? NSAttributeDescription,
                      !attribute.isTransient else { continue }
                values[index] = .data(try TransformableCoding.encode(box.value, for: attribute))
            }
        }
        if !layout.transientIndexes.isEmpty {
            for index in layout.transientIndexes { values[index] = .null }
        }
        return values
    }

    /// A snapshot as a `[String: Any]` of persistent values (for conflicts and notifications).
    internal func dictionary(from snapshot: RowSnapshot) -> [String: Any] {
        var result: [String: Any] = [:]
        for index in layout.rowIndexes where !(layout.properties[index] is CompositeLeafAttribute) {
            result[layout.properties[index].name] = snapshot.values[index].objectValue ?? NSNull()
        }
        // A composite as its dictionary (`NSNull` when it has no value).
        for index in layout.compositeIndexes where !layout.properties[index].isTransient { result[layout.properties[index].name] = NSNull() }
        CompositeValues.addComposites(of: layout, to: &result) { snapshot.values[$0].objectValue }
        return result
    }
}
