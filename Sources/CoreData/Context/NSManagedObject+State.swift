import Foundation

// Moving an object between states: fault, loaded, reverted, merged, saved.
extension NSManagedObject {
    /// Makes a freshly created object a registered fault of `context` for `id`, with the row's
    /// values cached (`snapshot`) or to be loaded when it fires.
    internal func becomeFault(_ id: NSManagedObjectID, snapshot: RowSnapshot?, in context: NSManagedObjectContext) {
        _objectID = id
        // A child's object for a new object of its parent: the chain's root may save it.
        if id.isTemporaryID && context._parent != nil { _mayBeForwarded = true }
        _context = context
        _isFault = true
        load(snapshot)
        context.register(self)
    }

    /// Gives a data-less fault its row.
    internal func adopt(_ snapshot: RowSnapshot) { load(snapshot) }

    /// Gives a data-less fault the row one load read for it (its firing, `existingObject(with:)`,
    /// a child's save). After a load that failed, the fault may have taken values meanwhile (it
    /// read nil or 0): they stay on top of the row, and the failure's record goes.
    internal func adoptLoadedRow(_ snapshot: RowSnapshot) {
        if _changedBits == 0 && _extras?.changedOverflow == nil {
            load(snapshot)
        } else {
            let kept = _values
            load(snapshot)
            for index in _changed where index < kept.count { _values[index] = kept[index] }
        }
        if let context = _context, context.hasUnfulfilledFaults { context.forgetUnfulfilledFault(of: self, relationship: nil) }
    }

    /// A registered object met again by a fetch: a fault takes the row (one that held an older
    /// row, never read, would show it when fired); with `refresh` (`shouldRefreshRefetchedObjects`),
    /// a loaded object takes it too — its unsaved changes, if any, stay on top of the refreshed
    /// values, as Apple's do.
    internal func takeRefetched(_ snapshot: RowSnapshot, refresh: Bool) {
        if _isFault && (!_hasData || !hasChanges) {
            // Relationships loaded into the fault from an older row (prefetched) go with it.
            let isNewer = _snapshot?.version != snapshot.version
            adopt(snapshot)
            if isNewer && !_relations.isEmpty && !hasChanges { _relations.removeAll() }
        } else if refresh {
            if hasChanges {
                merge(snapshot)
            } else {
                changingObservedValues {
                    adopt(snapshot)
                    _relations.removeAll()
                }
            }
        }
    }

    /// Takes a row's values as the object's data, or forgets the data (`nil`).
    internal func load(_ snapshot: RowSnapshot?) {
        if let snapshot {
            _values = snapshot.values
            _snapshot = snapshot
            _hasData = true
        } else {
            _values = []
            _snapshot = nil
            _hasData = false
        }
    }

    /// The values as a save would write them: to-one relationships as object IDs, transformable
    /// values still in memory form.
    internal func persistentValues() -> PropertyValues {
        fireFaultIfNeeded()
        var values = _values
        guard !_relations.isEmpty else { return values }
        for (index, relation) in _relations {
            if case .toOne(let object) = relation {
                values[index] = object.map { .objectID($0.objectID) } ?? .null
            }
        }
        return values
    }

    /// The object's current values, unsaved ones included, as a row at its last saved version:
    /// what a parent context hands its children.
    internal var currentSnapshot: RowSnapshot {
        RowSnapshot(entity: entity, values: persistentValues(), version: _snapshot?.version ?? 0)
    }

    /// Discards unsaved changes, going back to the last saved values.
    internal func revertToSnapshot() {
        changingObservedValues {
            _relations.removeAll()
            clearChanged()
            _isUpdated = false
            if let snapshot = _snapshot {
                _values = snapshot.values
            } else if !_hasData {
                _values = []
            }
        }
    }

    /// Whether a transient attribute of the loaded object holds a value.
    internal var holdsTransientValues: Bool {
        guard !_isFault, !layout.transientIndexes.isEmpty else { return false }
        return layout.transientIndexes.contains { $0 < _values.count && !_values[$0].isNull }
    }

    /// Takes the store's new values for the properties this object has not changed, and the
    /// store's version, keeping unsaved changes on top. A to-many relationship changed here takes
    /// the store's members with this context's adds and removes applied to them, as Apple merges
    /// to-many relationships (keeping the whole list lost the members others added or removed; an
    /// ordered one keeps its list, whose order is this context's).
    internal func merge(_ fresh: RowSnapshot?) {
        guard let fresh else { return }
        fireFaultIfNeeded()
        changingObservedValues {
            for index in layout.rowIndexes where !_changed.contains(index) {
                _values[index] = fresh.values[index]
                _relations[index] = nil
            }
            for index in layout.relationshipIndexes where !_changed.contains(index) {
                _relations[index] = nil
            }
            for index in layout.relationshipIndexes where _changed.contains(index) && layout.storageKinds[index] == .toMany {
                mergeChangedToMany(at: index)
            }
        }
        _snapshot = fresh
    }

    /// The stored members of the changed to-many at `index`, read again, with this context's
    /// adds and removes (its list against the members it read) applied; the list is kept as it
    /// is if the members can't be read.
    private func mergeChangedToMany(at index: Int) {
        guard case .toMany(let local)? = _relations[index], let context = contextReadingStoredRelationships else { return }
        // By object, not ID: an ID read while temporary is permanent now (the object follows).
        let read = Set(local.original.map { ObjectIdentifier(context.object(with: $0)) })
        _relations[index] = nil
        let stored: ObjectList
        do {
            stored = try storedToManyList(at: index)
        } catch {
            CoreDataLog.warning("A merge kept \(objectID)'s unsaved '\(layout.properties[index].name)' as it was: its stored members could not be read: \(error.localizedDescription)")
            _relations[index] = .toMany(local) // (as before the merge: nothing of this context's lost)
            return
        }
        _relations[index] = .toMany(ObjectList(members(of: stored, changedTo: local.objects, from: read, at: index), original: stored.original))
    }

    /// The members of the to-many at `index` a three-way merge gives: `base` (the members as they
    /// are now), with the adds and removes of a list that was `read` and is `changed` now. A
    /// member of `base` that the list never read stays, unless it names another owner in the
    /// inverse to-one, changed in its context: the list would disagree with it (and a cascade
    /// from this object would delete another owner's object). Used by a merge
    /// (``merge(_:)``) and by a parent taking its child's save.
    internal func members(of base: ObjectList, changedTo changed: [NSManagedObject], from read: Set<ObjectIdentifier>,
                          at index: Int) -> [NSManagedObject] {
        let now = Set(changed.map(ObjectIdentifier.init))
        let inverse = (layout.properties[index] as? NSRelationshipDescription)?.inverseRelationship
        func hasOtherOwner(_ member: NSManagedObject) -> Bool {
            guard let inverse, !inverse.isToMany, Self.has(inverse, member), member._changed.contains(inverse.index) else { return false }
            return member.toOneObject(at: inverse.index) !== self
        }
        return base.objects.filter { now.contains(ObjectIdentifier($0)) || !read.contains(ObjectIdentifier($0)) && !hasOtherOwner($0) }
            + changed.filter { !read.contains(ObjectIdentifier($0)) && !base.contains($0) }
    }

    /// After a successful save: the saved values become the snapshot.
    internal func didCommit(values: consuming PropertyValues, version: Int64) {
        // `_snapshot` set directly, without a `RowSnapshot` (and its entity's retain) in between.
        _snapshotValues = consume values
        _snapshotVersion = version
        clearChanged()
        _hasMistypedValue = false
        _isInserted = false
        _isUpdated = false
        guard !_relations.isEmpty else { return }
        for (index, relation) in _relations {
            if case .toMany(var list) = relation {
                list.original = list.objects.map(\.objectID)
                _relations[index] = .toMany(list)
            }
        }
    }
}
