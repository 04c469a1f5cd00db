import Foundation

// Save conflicts: turning a store's conflict report into `NSMergeConflict`s and
// `NSConstraintConflict`s, and carrying out the merge policies' decisions on the objects.

extension NSManagedObjectContext {
    /// The context's merge policy as an `NSMergePolicy` (`NSErrorMergePolicy` for anything else).
    internal var effectiveMergePolicy: NSMergePolicy { mergePolicy as? NSMergePolicy ?? .error }

    // MARK: Optimistic locking

    /// The store's optimistic-locking conflicts as `NSMergeConflict`s of this context's objects.
    internal func mergeConflicts(for error: StoreConflictError) -> [NSMergeConflict] {
        error.conflicts.compactMap { conflict in
            guard let object = registered(conflict.id.key) else { return nil }
            let merge = NSMergeConflict(source: object, newVersion: Int(conflict.persisted?.version ?? 0),
                                        oldVersion: Int(conflict.expectedVersion),
                                        cachedSnapshot: object._snapshot.map { object.dictionary(from: $0) },
                                        persistedSnapshot: conflict.persisted.map { object.dictionary(from: $0) })
            merge.persistedRow = conflict.persisted
            merge.rowWasDeleted = conflict.persisted == nil
            return merge
        }
    }

    /// Applies a merge policy's rule to one object whose row changed (`persisted`) or was deleted
    /// (`nil`) in the store. See ``NSMergePolicy/resolve(optimisticLockingConflicts:)``.
    internal func resolveLockingConflict(of object: NSManagedObject, persisted: RowSnapshot?, type: NSMergePolicyType) {
        guard object._context === self else { return }
        if type != .errorMergePolicyType, let persisted, objectsDetectingConflicts[ObjectIdentifier(object)] != nil {
            // Resolved: a marked object is checked against the row as the policy found it.
            objectsDetectingConflicts[ObjectIdentifier(object)]?.version = persisted.version
            objectsDetectingConflicts[ObjectIdentifier(object)]?.isFixed = false
        }
        object.changingObservedValues { resolveLockingConflictUnobserved(of: object, persisted: persisted, type: type) }
        // The policies that give the object values the store had (overwrite and error keep its own).
        if persisted != nil, object._context === self, !object._isDeleted,
           type != .overwriteMergePolicyType, type != .errorMergePolicyType {
            object.awake(fromSnapshotEvents: .mergePolicy)
        }
    }

    /// ``resolveLockingConflict(of:persisted:type:)``'s work, without telling observers.
    private func resolveLockingConflictUnobserved(of object: NSManagedObject, persisted: RowSnapshot?, type: NSMergePolicyType) {
        guard let persisted else {
            forgetDeletedElsewhereAndReferences(object)
            return
        }
        let storeWins = type == .rollbackMergePolicyType || type == .mergeByPropertyStoreTrumpMergePolicyType
        if object._isDeleted {
            if storeWins {
                // The delete is undone: the object comes back with the store's values.
                deleted.remove(object)
                pendingDeletes.removeAll { $0 === object }
                object._isDeleted = false
                object.turnIntoFault(keepingSnapshot: persisted)
            } else {
                object._snapshot = persisted // delete the row as it is now
            }
            return
        }
        switch type {
        case .rollbackMergePolicyType:
            let changedRelationships = object.layout.relationshipIndexes.filter { object._changed.contains($0) }
            revertRelationships(of: object, at: changedRelationships, to: persisted)
            discardChanges(of: object, taking: persisted)
        case .mergeByPropertyStoreTrumpMergePolicyType:
            let cached = object._snapshot
            for index in object.layout.rowIndexes where object._changed.contains(index) {
                // The store's change to a property beats the object's.
                guard cached == nil || cached!.values[index] != persisted.values[index] else { continue }
                if object.layout.storageKinds[index] == .toOne {
                    revertRelationships(of: object, at: [index], to: persisted)
                } else {
                    object._values[index] = persisted.values[index]
                    object.removeChanged(index)
                }
            }
            object.merge(persisted)
            if !object.hasPersistentChangedValues { discardChanges(of: object, taking: persisted) }
        case .mergeByPropertyObjectTrumpMergePolicyType:
            object.merge(persisted)
        case .overwriteMergePolicyType:
            // The object's whole state, as it is in memory, over the row as it is now.
            object.fireFaultIfNeeded()
            guard object._isUpdated else {
                // An unchanged object marked by `detectConflicts(for:)` has nothing to write over
                // the row: it takes the row as it is now, and is checked against it.
                object.merge(persisted)
                return
            }
            object._snapshot = persisted
            for index in object.layout.rowIndexes { object.insertChanged(index) }
        case .errorMergePolicyType:
            break
        }
    }

    /// An object whose row another context deleted leaves the context (its changes dropped, under
    /// every policy: there is no row left to write them to), and the objects here that point at
    /// it no longer do, as the nullify rule would: the save's own objects drop it from their
    /// relationships (the retried save writes that), and the unchanged ones it held loaded are
    /// refreshed (they read what the delete left in the store). Otherwise a save's object would
    /// still point at it, out of every context, and the retried save fail with 133010.
    private func forgetDeletedElsewhereAndReferences(_ deleted: NSManagedObject) {
        var pointing = inserted.objects + updated.objects
        for index in deleted.layout.relationshipIndexes {
            switch deleted._relations[index] {
            case .toOne(let other?)?: pointing.append(other)
            case .toMany(let list)?: pointing += list.objects
            default: break
            }
        }
        forgetDeletedElsewhere(deleted)
        for other in pointing where other._context === self && other !== deleted {
            if other.hasChanges { other.dropReferences(to: deleted) } else { refresh(other, mergeChanges: false) }
        }
    }

    /// Sets the object's relationships at `indexes` back to what the store holds, through the
    /// inverse-maintaining setters, so that the objects on the other side stay in step.
    private func revertRelationships(of object: NSManagedObject, at indexes: [Int], to persisted: RowSnapshot) {
        for index in indexes {
            switch object.layout.storageKinds[index] {
            case .toOne:
                var target: NSManagedObject?
                if case .objectID(let id) = persisted.values[index] { target = self.object(with: id) }
                object.setToOne(target, at: index)
            case .toMany, .orderedToMany:
                // If the store fails, the relationship is left as it is and the error recorded:
                // the save's next attempt throws it (an empty list would take every member out).
                let ids: [NSManagedObjectID]
                do { ids = try relatedObjectIDs(of: object, index: index) } catch {
                    recordUnfulfilledFault(error, of: object, relationship: index)
                    continue
                }
                let relationship = object.layout.properties[index] as! NSRelationshipDescription
                if let inverse = relationship.inverseRelationship, !inverse.isToMany {
                    // One-to-many: each member's foreign key is the member's own, not in
                    // conflict; a member's pending change of owner stays (setting the list
                    // through the setters would write its to-one as nil). The list is the stored
                    // members that stay, and the members that now point here.
                    let pointsElsewhere = { (member: NSManagedObject) in
                        NSManagedObject.has(inverse, member) && member._changed.contains(inverse.index) && member.toOneObject(at: inverse.index) !== object
                    }
                    var members = ids.map { self.object(with: $0) }.filter { !pointsElsewhere($0) }
                    for member in object.toManyList(at: index).objects
                    where NSManagedObject.has(inverse, member) && member.toOneObject(at: inverse.index) === object
                        && !members.contains(where: { $0 === member }) {
                        members.append(member)
                    }
                    object._relations[index] = .toMany(ObjectList(members, original: ids))
                    continue
                }
                object.setToMany(ids.map { self.object(with: $0) }, at: index)
            default:
                break
            }
        }
    }

    /// The object loses its unsaved changes and takes `snapshot`'s values.
    private func discardChanges(of object: NSManagedObject, taking snapshot: RowSnapshot) {
        if object._isUpdated { updated.remove(object) }
        object._isUpdated = false
        object.turnIntoFault(keepingSnapshot: snapshot)
    }

    // MARK: Uniqueness constraints

    /// The uniqueness-constraint conflicts of the changes about to be saved: objects of the save
    /// that share constrained values with each other, or with a row already stored.
    internal func constraintConflicts() throws -> [NSConstraintConflict] {
        let candidates = (inserted.objects + updated.objects).filter { !$0._isDeleted }
        var conflicts: [NSConstraintConflict] = []
        var checked: [ObjectIdentifier] = []
        for object in candidates {
            var entity: NSEntityDescription? = object.entity
            while let current = entity {
                entity = current.superentity
                guard !current.uniquenessConstraints.isEmpty, !checked.contains(ObjectIdentifier(current)) else { continue }
                checked.append(ObjectIdentifier(current))
                for constraint in current.uniquenessConstraints {
                    let names = current.names(ofConstraint: constraint)
                    conflicts += try self.conflicts(of: current, constraint: names, among: candidates.filter { $0.entity.isKindOf(entity: current) })
                }
            }
        }
        return conflicts
    }

    private func conflicts(of entity: NSEntityDescription, constraint names: [String],
                           among objects: [NSManagedObject]) throws -> [NSConstraintConflict] {
        let indexes = names.compactMap { entity.layout.nameTable.index(of: $0) }
        guard indexes.count == names.count, !indexes.isEmpty else { return [] }
        var groups: [[StoreValue]: [NSManagedObject]] = [:]
        var order: [[StoreValue]] = []
        for object in objects {
            let key = object.constrainedValues(at: indexes)
            if key.contains(where: \.isNull) { continue }
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(object)
        }
        var result: [NSConstraintConflict] = []
        for key in order {
            var group = groups[key]!
            // A row already stored with these values (not one of the group's own rows).
            let request = NSFetchRequest<NSManagedObject>(entityName: entity.name ?? "")
            request.includesPendingChanges = false
            var format: [String] = []
            var arguments: [Any] = []
            for (name, value) in zip(names, key) {
                format.append("%K == %@")
                arguments += [name, value.objectValue ?? NSNull()]
            }
            request.predicate = NSPredicate(format: format.joined(separator: " AND "), argumentArray: arguments)
            // A stored row whose object here has since changed the values (a rename in this
            // same save) no longer holds them. One that still holds them, changed in other
            // properties only, is in the group but is the stored row, not a duplicate.
            var stored: [NSManagedObject] = []
            for candidate in try fetch(request) where !candidate._isDeleted {
                if let position = group.firstIndex(where: { $0 === candidate }) {
                    stored.append(group.remove(at: position))
                } else if !candidate.hasChanges || candidate.constrainedValues(at: indexes) == key {
                    stored.append(candidate)
                }
            }
            guard group.count > 1 || (!stored.isEmpty && !group.isEmpty) else { continue }
            let database = stored.first
            result.append(NSConstraintConflict(
                constraint: names, database: database,
                databaseSnapshot: database.map { $0.committedValues(forKeys: nil) },
                conflicting: group, conflictingSnapshots: group.map { $0.isInserted ? [String: Any]() : $0.committedValues(forKeys: nil) }))
        }
        return result
    }

    /// Applies a merge policy's rule to one constraint conflict. See
    /// ``NSMergePolicy/resolve(constraintConflicts:)``.
    internal func resolveConstraintConflict(_ conflict: NSConstraintConflict, type: NSMergePolicyType) {
        let objects = conflict.conflictingObjects.filter { $0._context === self && !$0._isDeleted }
        guard !objects.isEmpty else { return }
        let objectWins = type == .mergeByPropertyObjectTrumpMergePolicyType || type == .overwriteMergePolicyType
        // An object that goes hands its to-many members to the one that stays first, as Apple's
        // policies merge to-many relationships: its delete rules (a cascade) then find them gone.
        func lose(_ object: NSManagedObject, to survivor: NSManagedObject) {
            if object._isInserted {
                survivor.takeToManyMembers(of: object)
                delete(object)
            } else {
                refresh(object, mergeChanges: false)
            }
        }
        if let database = conflict.databaseObject, database._context === self, !database._isDeleted {
            guard objectWins else {
                objects.forEach { lose($0, to: database) }
                return
            }
            let winner = objects.last!
            if !winner._isInserted {
                // A changed row took the values: it wins and the stored holder goes.
                winner.takeToManyMembers(of: database)
                delete(database)
                objects.dropLast().forEach { lose($0, to: winner) }
                return
            }
            database.take(from: winner, everything: type == .overwriteMergePolicyType)
            objects.forEach { lose($0, to: database) }
        } else {
            let winner = objectWins ? objects.last! : objects.first!
            objects.filter { $0 !== winner }.forEach { lose($0, to: winner) }
        }
    }
}

extension NSManagedObject {
    /// Takes `target` out of this object's relationships, on this side only (`target` has left
    /// the context), marking them changed.
    fileprivate func dropReferences(to target: NSManagedObject) {
        for index in layout.relationshipIndexes {
            switch _relations[index] {
            case .toOne(let other)?: if other === target { rawSetToOne(nil, at: index) }
            case .toMany(let list)?: if list.contains(target) { rawRemove(target, fromManyAt: index) }
            case nil: if case .objectID(let id) = _values[index], id == target.objectID { rawSetToOne(nil, at: index) }
            }
        }
    }

    /// The object's current values at `indexes` (to-one relationships as IDs), read once.
    fileprivate func constrainedValues(at indexes: [Int]) -> [StoreValue] {
        let values = persistentValues()
        return indexes.map { values[$0] }
    }

    /// Takes `other`'s values: every persistent property (`everything`), or those `other` set.
    /// To-one relationships move over with inverse maintenance; to-many members are added to
    /// this object's (``takeToManyMembers(of:)``), not put in place of them.
    internal func take(from other: NSManagedObject, everything: Bool) {
        fireFaultIfNeeded()
        other.fireFaultIfNeeded()
        // (A composite moves over as its leaves.)
        for (sourceIndex, property) in other.layout.properties.enumerated() where !property.isTransient && !(property is NSCompositeAttributeDescription) {
            guard everything || other._changed.contains(sourceIndex), let index = layout.nameTable.index(of: property.name) else { continue }
            switch other.layout.storageKinds[sourceIndex] {
            case .toOne: setToOne(other.toOneObject(at: sourceIndex), at: index)
            case .toMany, .orderedToMany: break
            default: setStoreValue(other._values[sourceIndex], at: index)
            }
        }
        takeToManyMembers(of: other)
    }

    /// Moves the members of `other`'s to-many relationships to this object's of the same name
    /// (after its own, in order), with inverse maintenance, and empties `other`'s: a member of a
    /// many-to-many, or of one without inverse, stays no member of `other` (whose delete rule
    /// would take it). Deleted members are left where they are.
    internal func takeToManyMembers(of other: NSManagedObject) {
        guard other !== self else { return }
        fireFaultIfNeeded()
        other.fireFaultIfNeeded()
        for (sourceIndex, property) in other.layout.properties.enumerated() where !property.isTransient {
            switch other.layout.storageKinds[sourceIndex] {
            case .toMany, .orderedToMany:
                guard let index = layout.nameTable.index(of: property.name),
                      layout.storageKinds[index] == other.layout.storageKinds[sourceIndex] else { continue }
                let incoming = other.toManyList(at: sourceIndex).objects.filter { !$0._isDeleted }
                guard !incoming.isEmpty else { continue }
                let mine = toManyList(at: index).objects
                let added = incoming.filter { member in !mine.contains { $0 === member } }
                if !added.isEmpty { setToMany(mine + added, at: index) }
                other.setToMany(other.toManyList(at: sourceIndex).objects.filter { member in !incoming.contains { $0 === member } }, at: sourceIndex)
            default:
                continue
            }
        }
    }
}
