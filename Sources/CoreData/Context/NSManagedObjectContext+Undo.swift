import Foundation

// Undo and redo of a context's changes (Apple's `undoManager`, `undo()`, `redo()`).
//
// As Apple documents, changes are recorded with the undo manager when the context processes
// them (`processPendingChanges()`, the end of an "event"), not by each setter: a setter only
// notes that its object changed in this event, and only when the context has an undo manager
// (`noteUndoableChange`; one nil check otherwise). At the end of the event, each noted object's
// state then is compared with its state at the start of the event: the state it had at the end
// of the last event that changed it (`baseline`), or else its committed state. The properties
// that differ (all of them when the object was inserted or deleted) are what one undo
// operation, registered for the whole event, puts back (an `UndoImage`). Undoing registers the
// same properties' present state, which redo puts back. Both sides of a relationship change are
// objects changed in the event, so images restore relationships without inverse maintenance.
//
// A save starts a new "generation": an image taken before it is put back property by property
// (those that differ from now become changes to save), since the committed values moved; an
// image of the same generation is restored exactly, changed-property marks included, so that
// undoing everything since a save leaves no changes.

/// An object's state, or the part of it an undo or redo puts back.
internal struct UndoImage {
    let object: NSManagedObject
    /// Whether the object was in the context and not deleted.
    let exists: Bool
    /// The property indexes put back (for a baseline image, which is never put back: none).
    var covered: [Int] = []
    /// The object's values (those at ``covered`` are put back).
    let values: PropertyValues
    /// The relationships: for a baseline image, those loaded (the others were as committed); for
    /// an image put back, every relationship in ``covered``.
    var relations: [Int: RelationshipValue]
    /// The changed-property marks.
    let changed: PropertyMask
    /// The context's ``UndoTracking/generation`` when the image was taken.
    let generation: Int
    /// The version of the object's snapshot then: a merge or refresh since (a newer row) makes
    /// the image inexact, as a save does.
    var snapshotVersion: Int64 = 0
}

/// The images one undo (or redo) operation puts back: a class, so that the undo manager's
/// closure captures one reference.
internal final class UndoStep: @unchecked Sendable {
    let images: [UndoImage]
    init(_ images: [UndoImage]) { self.images = images }
}

/// A context's undo state, there only while it has an undo manager.
internal final class UndoTracking {
    let undoManager: UndoManager
    /// The observer of the undo manager's checkpoints.
    var observer: (any NSObjectProtocol)?
    /// Objects changed in the current event (an object may be listed more than once).
    var changed: [NSManagedObject] = []
    /// Objects changed since the last save, each as it was at the end of the last event that
    /// changed it (or as undo or redo left it).
    var baseline: [ObjectIdentifier: UndoImage] = [:]
    /// Incremented by each save (see the file's comment).
    var generation = 0
    /// Whether the context is recording an event or putting images back: changes are not noted,
    /// and checkpoints are ignored.
    var isBusy = false
    /// While above 0, processing the pending changes records them but does not end the event (the
    /// undo step): the passes of a save are one step, as a fetch leaves the step open.
    var eventHolds = 0

    init(_ undoManager: UndoManager) { self.undoManager = undoManager }

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }
}

// Every call of the undo manager, in one place: on Apple platforms Foundation's `UndoManager` is
// `@MainActor`, and a context with one is used on the main queue (as Apple's undo is); on Linux
// the package's own is not bound to an actor.
extension UndoTracking {
    #if canImport(ObjectiveC)
    var isRegistrationEnabled: Bool { MainActor.assumeIsolated { undoManager.isUndoRegistrationEnabled } }
    func register(_ step: UndoStep, for context: NSManagedObjectContext) {
        MainActor.assumeIsolated { undoManager.registerUndo(withTarget: context) { context in context.putBack(step) } }
    }
    func undo() { MainActor.assumeIsolated { undoManager.undo() } }
    func redo() { MainActor.assumeIsolated { undoManager.redo() } }
    func removeActions(of context: NSManagedObjectContext) { MainActor.assumeIsolated { undoManager.removeAllActions(withTarget: context) } }
    /// The run loop closes the event's group on Apple platforms.
    func endEvent() {}
    #else
    var isRegistrationEnabled: Bool { undoManager.isUndoRegistrationEnabled }
    /// Registers the operation that puts `step` back in `context`.
    func register(_ step: UndoStep, for context: NSManagedObjectContext) {
        undoManager.registerUndo(withTarget: context) { context in context.putBack(step) }
    }
    func undo() { undoManager.undo() }
    func redo() { undoManager.redo() }
    func removeActions(of context: NSManagedObjectContext) { undoManager.removeAllActions(withTarget: context) }
    /// Linux: the event ends here (the context's `processPendingChanges()`), not with a run loop pass.
    func endEvent() { undoManager.closeEventGroup() }
    #endif
}

extension NSManagedObjectContext {
    /// Replaces the undo manager (``undoManager``'s setter). Changes made before it was set are
    /// not undoable: the objects changed so far are its starting point.
    internal func setUndoManager(_ manager: UndoManager?) {
        if let current = undoTracking, current.undoManager === manager { return }
        guard let manager else { undoTracking = nil; return }
        let tracking = UndoTracking(manager)
        for object in inserted.objects + updated.objects + deleted.objects {
            tracking.baseline[ObjectIdentifier(object)] = baselineImage(of: object, generation: 0)
        }
        // As on Apple platforms, the undo manager's checkpoints (posted before it opens or closes
        // a group, undoes or redoes) make the context process its pending changes first.
        tracking.observer = NotificationCenter.default.addObserver(forName: .NSUndoManagerCheckpoint, object: manager, queue: nil) { [weak self] _ in
            self?.undoCheckpoint()
        }
        undoTracking = tracking
    }

    /// Sends ``undoManager`` an `undo()`: the changes of the last group (the last event, after
    /// the pending changes are processed, or an explicit group) are reversed. Nothing happens
    /// without an undo manager.
    ///
    /// ```swift
    /// context.undoManager = UndoManager()
    /// car.name = "Model A"
    /// context.undo()   // car.name is back
    /// context.redo()   // "Model A" again
    /// ```
    public func undo() {
        checkQueue("undo()")
        undoTracking?.undo()
    }

    /// Sends ``undoManager`` a `redo()`: the changes the last undo reversed are made again.
    ///
    /// ```swift
    /// context.redo()
    /// ```
    public func redo() {
        checkQueue("redo()")
        undoTracking?.redo()
    }

    /// Notes that `object` changed in the current event (called only with an undo manager).
    @inline(never)
    internal func noteUndoableChange(_ object: NSManagedObject) {
        guard let tracking = undoTracking, !tracking.isBusy else { return }
        tracking.changed.append(object)
    }

    /// The undo manager posted a checkpoint: pending changes are recorded now.
    private func undoCheckpoint() {
        guard let tracking = undoTracking, !tracking.isBusy else { return }
        processPendingChangesReporting()
    }

    /// The end of an event (``processPendingChangesReporting()``): registers one undo operation
    /// that puts back the state the objects changed in the event had before it, and closes the
    /// undo manager's group for the event.
    internal func recordUndoEvent(_ tracking: UndoTracking) {
        guard !tracking.isBusy else { return }
        tracking.isBusy = true
        defer { tracking.isBusy = false }
        if !tracking.changed.isEmpty {
            var seen = Set<ObjectIdentifier>()
            var before: [UndoImage] = []
            for object in tracking.changed where seen.insert(ObjectIdentifier(object)).inserted {
                let id = ObjectIdentifier(object)
                let start: UndoImage
                if let image = tracking.baseline[id] {
                    start = image
                } else if object._context === self && !object._isInserted {
                    start = committedImage(of: object, generation: tracking.generation)
                } else {
                    start = UndoImage(absent: object, generation: tracking.generation) // new in this event
                }
                let end = baselineImage(of: object, generation: tracking.generation)
                if let image = differences(from: start, to: end) { before.append(image) }
                tracking.baseline[id] = end
            }
            tracking.changed.removeAll()
            if !before.isEmpty && tracking.isRegistrationEnabled { tracking.register(UndoStep(before), for: self) }
        }
        if tracking.eventHolds == 0 { tracking.endEvent() }
    }

    /// Runs `body` (a save, a fetch) with the undo step left open by its processing of pending
    /// changes; a save (`endingEvent`) ends it at the end, so that its passes (the changes, what
    /// `willSave()` and the will-save observers change) are undone together, as one run loop
    /// event groups them on Apple platforms.
    internal func holdingUndoEvent<T>(endingEvent: Bool, _ body: () throws -> T) rethrows -> T {
        guard let tracking = undoTracking else { return try body() }
        tracking.eventHolds += 1
        defer {
            tracking.eventHolds -= 1
            if endingEvent && tracking.eventHolds == 0 { tracking.endEvent() }
        }
        return try body()
    }

    /// Undo or redo: puts the objects back as `step` has them, registering their present state
    /// (redo's, or undo's again), and reports the change (`ObjectsDidChange`).
    internal func putBack(_ step: UndoStep) {
        guard let tracking = undoTracking else { return }
        // An object whose row another context deleted (a merged delete, still registered and
        // marked deleted, but not deleted here) stays deleted: this context's undo can't bring
        // back a row it did not delete (it would be an object with no row, whose saves fail).
        let step = UndoStep(step.images.filter { !isGoneFromStore($0.object) })
        tracking.isBusy = true
        let present = step.images.map { presentImage(of: $0.object, covering: $0, generation: tracking.generation) }
        // `awake(fromSnapshotEvents:)`: an object whose insertion is taken back hears it while it
        // can still read its values; the others once the whole step is put back.
        for image in step.images where !image.exists && image.object._context === self && !image.object._isDeleted {
            image.object.awake(fromSnapshotEvents: .undoInsertion)
        }
        let awakened = step.images.filter(\.exists).map { image in
            (image.object, image.object._context == nil || image.object._isDeleted ? NSSnapshotEventType.undoDeletion : .undoUpdate)
        }
        for image in step.images { apply(image, generation: tracking.generation) }
        for (object, event) in awakened { object.awake(fromSnapshotEvents: event) }
        for image in step.images {
            tracking.baseline[ObjectIdentifier(image.object)] = baselineImage(of: image.object, generation: tracking.generation)
        }
        tracking.isBusy = false
        tracking.register(UndoStep(present), for: self)
        processPendingChangesReporting()
    }

    /// After ``rollback()`` or ``reset()``: the context's operations leave the undo manager
    /// (Apple: "removes everything from the undo stack"; only this context's, so that an undo
    /// manager shared with the rest of an app keeps the app's own).
    internal func forgetUndo() {
        guard let tracking = undoTracking else { return }
        tracking.changed.removeAll()
        tracking.baseline.removeAll()
        tracking.generation += 1
        tracking.removeActions(of: self)
    }

    /// After a save: the objects' committed state is their state now, so the images taken
    /// before are put back property by property from now on (the undo stack stays: Apple's
    /// save does not clear it).
    internal func undoSaved(_ tracking: UndoTracking) {
        tracking.baseline.removeAll()
        tracking.generation += 1
    }

    /// After a refresh: what the refresh changed is not undoable; the object's next change is
    /// undone back to its state after the refresh.
    internal func undoRefreshed(_ object: NSManagedObject, _ tracking: UndoTracking) {
        let id = ObjectIdentifier(object)
        guard tracking.baseline[id] != nil else { return }
        tracking.baseline[id] = object._isFault ? nil : baselineImage(of: object, generation: tracking.generation)
    }

    // MARK: Images

    /// `object`'s state now, its relationships as loaded. A fault is loaded first: its image of
    /// no values, restored later, read past the end of them (undo or redo after a refresh, or
    /// of a delete by ID, stopped the process).
    private func baselineImage(of object: NSManagedObject, generation: Int) -> UndoImage {
        if object._context === self && !object._isDeleted { object.fireFaultIfNeeded() }
        guard object._context === self && !object._isDeleted else { return UndoImage(absent: object, generation: generation) }
        return UndoImage(object: object, exists: true, values: object._values, relations: object._relations,
                         changed: object._changed, generation: generation, snapshotVersion: object._snapshotVersion)
    }

    /// The state of a saved object that had no changes before this event: its committed values
    /// (its relationships are as committed, not loaded).
    private func committedImage(of object: NSManagedObject, generation: Int) -> UndoImage {
        object.fireFaultIfNeeded() // (as in ``baselineImage(of:generation:)``)
        return UndoImage(object: object, exists: true, values: object._snapshotValues ?? object._values, relations: [:],
                  changed: PropertyMask(), generation: generation, snapshotVersion: object._snapshotVersion)
    }

    /// `start`, limited to the properties that differ in `end` (every one if the object came or
    /// went), with those relationships as objects; `nil` if nothing differs.
    private func differences(from start: UndoImage, to end: UndoImage) -> UndoImage? {
        let object = start.object
        let all = Array(0..<object.layout.properties.count)
        var image = start
        if start.exists != end.exists {
            image.covered = start.exists ? all : []
        } else if start.exists {
            image.covered = all.filter { index in
                guard object.layout.relationshipMask.contains(index) else {
                    return start.values.count <= index || end.values.count <= index || start.values[index] != end.values[index]
                }
                if start.relations[index] == nil && end.relations[index] == nil { return false } // both as committed
                return !Self.sameRelationship(relationship(at: index, in: start), relationship(at: index, in: end))
            }
            if image.covered.isEmpty { return nil }
        } else {
            return nil
        }
        for index in image.covered where object.layout.relationshipMask.contains(index) {
            image.relations[index] = relationship(at: index, in: start)
        }
        return image
    }

    /// The relationship at `index` in `image`, as objects: as loaded then, or else as the
    /// object's committed state has it (images without it are of this generation).
    private func relationship(at index: Int, in image: UndoImage) -> RelationshipValue {
        if let relation = image.relations[index] { return relation }
        let object = image.object
        if object.layout.storageKinds[index] == .toOne {
            guard index < image.values.count, case .objectID(let id) = image.values[index] else { return .toOne(nil) }
            return .toOne(self.object(with: id))
        }
        let original: [NSManagedObjectID]
        if case .toMany(let list)? = object._relations[index] {
            original = list.original
        } else if object._context === self, !object._isInserted {
            original = object.toManyList(at: index).original
        } else {
            original = []
        }
        return .toMany(ObjectList(original.map { self.object(with: $0) }, original: original))
    }

    private static func sameRelationship(_ a: RelationshipValue, _ b: RelationshipValue) -> Bool {
        switch (a, b) {
        case (.toOne(let x), .toOne(let y)): return x === y
        case (.toMany(let x), .toMany(let y)): return x.objects.elementsEqual(y.objects, by: ===)
        default: return false
        }
    }

    /// What undoing or redoing `image` replaces: the same properties of `object` now (all of
    /// them if the object comes or goes).
    private func presentImage(of object: NSManagedObject, covering image: UndoImage, generation: Int) -> UndoImage {
        var present = baselineImage(of: object, generation: generation)
        guard present.exists else { return present }
        present.covered = image.exists ? image.covered : Array(0..<object.layout.properties.count)
        for index in present.covered where object.layout.relationshipMask.contains(index) {
            present.relations[index] = object.layout.storageKinds[index] == .toOne ? .toOne(object.toOneObject(at: index))
                                                                                    : .toMany(object.toManyList(at: index))
        }
        return present
    }

    /// Puts `object` back as `image` has it.
    private func apply(_ image: UndoImage, generation: Int) {
        let object = image.object
        guard image.exists else { return removeForUndo(object) }
        // A saved object whose delete is undone is reported inserted (``undelete(_:)``), not updated.
        let wasDeleted = object._isDeleted && !object._isInserted && object._context === self
        restoreForUndo(object)
        object.fireFaultIfNeeded()
        object.changingObservedValues { restore(image, generation: generation) }
        guard !object._isInserted else {
            // A new object an `ObjectsDidChange` reported inserted: the next one reports it updated,
            // as for a change by its setters (a fetched results controller places it again).
            if inserted.isBeforeMark(object) { insertedObjectDidChangeAgain(object) }
            return
        }
        if object._changed.isEmpty {
            if object._isUpdated { updated.remove(object); object._isUpdated = false }
        } else if !object._isUpdated {
            object._isUpdated = true
            updated.insert(object)
        }
        if !wasDeleted { pendingChangeNotice.updated.append(object) }
    }

    /// Whether `object`'s row is gone from the store without this context deleting it: a delete
    /// merged from another context, or a fault whose row was missing. Undo brings neither back,
    /// nor puts it back in another object's relationship (a save would write a key of no row).
    private func isGoneFromStore(_ object: NSManagedObject) -> Bool {
        guard object._context === self, !object._isInserted else { return false }
        if object._isInaccessible { return true }
        return object._isDeleted && !deleted.contains(object) && !pendingDeletes.contains { $0 === object }
    }

    /// `relation` without the objects whose rows are gone from the store (``isGoneFromStore(_:)``).
    private func withoutGone(_ relation: RelationshipValue?) -> RelationshipValue? {
        switch relation {
        case .toOne(let target?)? where isGoneFromStore(target): return .toOne(nil)
        case .toMany(let list)? where list.objects.contains(where: isGoneFromStore):
            return .toMany(ObjectList(list.objects.filter { !isGoneFromStore($0) }, original: list.original))
        default: return relation
        }
    }

    /// ``apply(_:generation:)``'s change of the object's values to the image's (the object fired).
    private func restore(_ image: UndoImage, generation: Int) {
        let object = image.object
        // Exact only if nothing was saved since, here or elsewhere (a merge or refresh took a
        // newer row): otherwise the values put back are changes to save.
        let exact = image.generation == generation && image.snapshotVersion == object._snapshotVersion
        for index in image.covered {
            let isRelationship = object.layout.relationshipMask.contains(index)
            if exact {
                // Nothing was saved since: exactly as it was, changed-property marks included.
                if isRelationship { object._relations[index] = withoutGone(image.relations[index]) } else { object._values[index] = image.values[index] }
                if image.changed.contains(index) { object.insertChanged(index) } else { object.removeChanged(index) }
                continue
            }
            // Saved since: what differs from now becomes a change to save.
            if !isRelationship {
                if object._values[index] != image.values[index] { object._values[index] = image.values[index]; object.insertChanged(index) }
                continue
            }
            switch withoutGone(image.relations[index]) {
            case .toOne(let target)?:
                if object.toOneObject(at: index) !== target { object._relations[index] = .toOne(target); object.insertChanged(index) }
            case .toMany(let list)?:
                let current = object.toManyList(at: index)
                if !current.objects.elementsEqual(list.objects, by: ===) {
                    object._relations[index] = .toMany(ObjectList(list.objects, original: current.original))
                    object.insertChanged(index)
                }
            case nil:
                break
            }
        }
    }

    /// Undo of an insert, or redo of a delete: a new object leaves the context, a saved one is
    /// deleted (without its delete rules: the other objects' images hold what they did).
    private func removeForUndo(_ object: NSManagedObject) {
        guard object._context === self, !object._isDeleted else { return }
        if object._isInserted {
            willChangeInsertedSet()
            inserted.remove(object)
            object._isInserted = false
            leaveContext(object)
        } else {
            if object._isUpdated { updated.remove(object); object._isUpdated = false }
            object._isDeleted = true
            deleted.insert(object)
        }
        pendingChangeNotice.deleted.append(object)
    }

    /// Undo of a delete, or redo of an insert: the object is in the context again. One whose
    /// deletion was saved comes back as a new object, with its former ID.
    private func restoreForUndo(_ object: NSManagedObject) {
        if object._context == nil {
            object._snapshot = nil
            object._isDeleted = false
            enter(object)
        } else if object._isDeleted {
            undelete(object)
            if object._isInserted { pendingChangeNotice.inserted.append(object) }
        }
    }
}

extension UndoImage {
    /// The image of an object that is not in the context (new and not inserted yet, or deleted).
    init(absent object: NSManagedObject, generation: Int) {
        self.init(object: object, exists: false, values: PropertyValues(), relations: [:], changed: PropertyMask(), generation: generation)
    }
}
