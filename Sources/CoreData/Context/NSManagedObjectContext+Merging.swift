import Foundation

// Merging another context's saved changes: `mergeChanges(fromContextDidSave:)`,
// `mergeChanges(fromRemoteContextSave:into:)` and `automaticallyMergesChangesFromParent`.

/// The object IDs a save changed: what a merge needs, and `Sendable`, so it can cross queues.
internal struct SavedObjectIDs: Sendable {
    var inserted: [NSManagedObjectID] = []
    var updated: [NSManagedObjectID] = []
    var deleted: [NSManagedObjectID] = []

    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// The IDs in a save notification's user info: the `…ObjectIDsKey` entries when present
    /// (this Core Data's did-save notifications carry them, so a merge never reads another
    /// queue's objects), else the IDs of the objects (or IDs, or URIs) under the object keys.
    init(userInfo: [AnyHashable: Any], coordinator: NSPersistentStoreCoordinator?) {
        func ids(_ idKey: String, _ objectKey: String) -> [NSManagedObjectID] {
            if let ids = userInfo[idKey] { return Self.ids(in: ids, coordinator: coordinator) }
            return Self.ids(in: userInfo[objectKey], coordinator: coordinator)
        }
        inserted = ids(NSInsertedObjectIDsKey, NSInsertedObjectsKey)
        updated = ids(NSUpdatedObjectIDsKey, NSUpdatedObjectsKey)
        deleted = ids(NSDeletedObjectIDsKey, NSDeletedObjectsKey)
    }

    init() {}

    /// The IDs in a notification's value, as the receiving coordinator's IDs (a save through
    /// another coordinator on the same file names rows by that coordinator's store).
    private static func ids(in value: Any?, coordinator: NSPersistentStoreCoordinator?) -> [NSManagedObjectID] {
        let found = rawIDs(in: value, coordinator: coordinator)
        guard let coordinator else { return found }
        return found.compactMap { coordinator.ownID(for: $0) }
    }

    private static func rawIDs(in value: Any?, coordinator: NSPersistentStoreCoordinator?) -> [NSManagedObjectID] {
        let elements: [Any]
        switch value {
        case let set as Set<NSManagedObjectID>: return Array(set)
        case let array as [NSManagedObjectID]: return array
        case let set as Set<NSManagedObject>: elements = Array(set)
        case let set as NSSet: elements = set.allObjects
        case let array as [Any]: elements = array
        case let set as Set<AnyHashable>: elements = Array(set)
        default: return []
        }
        return elements.compactMap { element in
            switch element {
            case let id as NSManagedObjectID: return id
            case let object as NSManagedObject: return object.objectID
            case let url as URL: return coordinator?.managedObjectID(forURIRepresentation: url)
            case let string as String: return URL(string: string).flatMap { coordinator?.managedObjectID(forURIRepresentation: $0) }
            default: return nil
            }
        }
    }
}

extension NSManagedObjectContext {
    /// Merges the changes another context saved, as described by its
    /// `NSManagedObjectContextDidSave` notification: objects this context holds that were updated
    /// are refreshed (its own unsaved changes to them are kept), deleted ones are marked deleted
    /// (they stay registered with their last values, their unsaved changes dropped), and
    /// inserted ones are faulted in. Call it on this context's queue:
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: worker, queue: nil) { note in
    ///     mainContext.perform { mainContext.mergeChanges(fromContextDidSave: note) }
    /// }
    /// ```
    ///
    /// Posts `NSManagedObjectContextObjectsDidChange` (inserted, refreshed and deleted objects)
    /// and `didMergeChangesObjectIDsNotification`.
    public func mergeChanges(fromContextDidSave notification: Notification) {
        checkQueue("mergeChanges(fromContextDidSave:)")
        merge(SavedObjectIDs(userInfo: notification.userInfo ?? [:], coordinator: persistentStoreCoordinator))
    }

    /// Merges changes saved elsewhere — another coordinator, another process — into `contexts`,
    /// each on its own queue. The dictionary has `NSInsertedObjectsKey`, `NSUpdatedObjectsKey`
    /// and `NSDeletedObjectsKey` (or the `…ObjectIDsKey` forms) with object IDs or their URIs:
    ///
    /// ```swift
    /// NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: [id]], into: [viewContext])
    /// ```
    public class func mergeChanges(fromRemoteContextSave changeNotificationData: [AnyHashable: Any], into contexts: [NSManagedObjectContext]) {
        for context in contexts {
            context.performAndWait {
                context.merge(SavedObjectIDs(userInfo: changeNotificationData, coordinator: context.persistentStoreCoordinator))
            }
        }
    }

    /// Posted (internal to the package) by a merge whose only news is rows updated elsewhere
    /// that no object of the context stands for: no `ObjectsDidChange` is posted then, but the
    /// context's fetched results controllers look at them (``mergedUnregisteredUpdates``).
    internal static let didMergeUnregisteredUpdatesNotification = Notification.Name("_CoreDataDidMergeUnregisteredUpdates")

    /// Merges saved changes given by ID. Runs on this context's queue.
    internal func merge(_ ids: SavedObjectIDs) {
        moveQueryGenerationToCurrent() // as Apple's: a merge moves a pinned context to the latest generation
        guard !ids.isEmpty else { return }
        processPendingChanges()
        let updatedIDs = Set(ids.updated)
        var insertedObjects: [NSManagedObject] = []
        var refreshedObjects: [NSManagedObject] = []
        var deletedObjects: [NSManagedObject] = []
        for id in ids.inserted {
            // Another chain's temporary ID (a save of a child of another context) names no row
            // and no object here: its object would be a fault nothing fulfils, reported inserted,
            // and the row arrives later under its permanent ID.
            if id.isTemporaryID && parent == nil && registered(id.key) == nil { continue }
            let object = object(with: id)
            if object._context === self && !object._isInserted { insertedObjects.append(object) }
        }
        var unregisteredUpdates: [NSManagedObjectID] = []
        for id in ids.updated {
            guard let object = registered(id.key) else { unregisteredUpdates.append(id); continue }
            guard !object._isInserted else { continue }
            // A fault without data has nothing stale: it reads the new row when it fires. It is
            // reported refreshed all the same: a fetched results controller that does not hold it
            // must look at it, as the new row may match its request now (Apple's has since iOS 10).
            if !(object._isFault && !object._hasData && !object.hasChanges) {
                _ = refreshWithoutNotice(object, mergeChanges: true) // (the merge posts its own notification)
            }
            refreshedObjects.append(object)
        }
        for id in ids.deleted {
            guard let object = registered(id.key) else { continue }
            takeDeleteSavedElsewhere(object)
            deletedObjects.append(object)
        }
        // Objects a deferred delete's rules deleted here meanwhile (`markDeletedElsewhere`) are
        // deleted by this event too.
        for object in pendingChangeNotice.deleted where !deletedObjects.contains(where: { $0 === object }) {
            deletedObjects.append(object)
        }
        clearPendingChangeNotice()
        var objects = ChangeInfo(), ids = ChangeInfo()
        objects.add(NSInsertedObjectsKey, insertedObjects)
        objects.add(NSRefreshedObjectsKey, refreshedObjects)
        objects.add(NSDeletedObjectsKey, deletedObjects)
        ids.add(NSInsertedObjectIDsKey, Set(insertedObjects.map(\.objectID)))
        ids.add(NSRefreshedObjectIDsKey, Set(refreshedObjects.map(\.objectID)))
        ids.add(NSDeletedObjectIDsKey, Set(deletedObjects.map(\.objectID)))
        // Apple's did-merge user info has the updated rows' IDs too (registered here or not), and
        // the generation a pinned context moved to.
        ids.add(NSUpdatedObjectIDsKey, updatedIDs)
        var didMergeInfo = ids.userInfo
        if let generation = queryGenerationToken { didMergeInfo[NSManagedObjectContextQueryGenerationKey] = generation }
        // For fetched results controllers: rows updated elsewhere that no object here stands for
        // may match their requests now (`FetchedResultsCore`), read while the notification is
        // delivered. Only Apple's keys are in the notification, and an empty one is not posted.
        mergedUnregisteredUpdates = unregisteredUpdates
        if !objects.userInfo.isEmpty {
            CoreDataMessages.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: objects.userInfo)
        } else if !unregisteredUpdates.isEmpty {
            NotificationCenter.default.post(name: Self.didMergeUnregisteredUpdatesNotification, object: self)
        }
        mergedUnregisteredUpdates = []
        CoreDataMessages.post(name: NSManagedObjectContext.didMergeChangesObjectIDsNotification, object: self, userInfo: didMergeInfo)
    }

    /// A merged delete, as Apple's: the object stays registered (an app may still hold it),
    /// marked deleted, with its last values (a fault with values is fired) and nothing to save.
    private func takeDeleteSavedElsewhere(_ object: NSManagedObject) {
        markDeletedElsewhere(object)
        if object._isFault && object._hasData { object.fireFault() }
    }

    /// An object whose row another context deleted: it leaves this context, whatever its unsaved changes.
    internal func forgetDeletedElsewhere(_ object: NSManagedObject) {
        markDeletedElsewhere(object)
        leaveContext(object)
    }

    /// Marks an object whose row another context deleted as deleted, with nothing to save: out
    /// of the change sets, its unsaved changes dropped.
    private func markDeletedElsewhere(_ object: NSManagedObject) {
        if object._isInserted { willChangeInsertedSet(); inserted.remove(object) }
        if object._isUpdated { updated.remove(object) }
        if deleted.contains(object) { deleted.remove(object) }
        if let index = pendingDeletes.firstIndex(where: { $0 === object }) {
            // Deleted here too, its rules not yet run (`propagatesDeletesAtEndOfEvent` off): they
            // run now, on the objects here still related to it (a new object it cascades to goes
            // too), as the save would have run them. Faults whose rows the other save deleted
            // read as deleted without asking (`isPropagatingDeletes`).
            pendingDeletes.remove(at: index)
            applyDeleteRules(of: object)
        }
        object._isUpdated = false
        object._isInserted = false
        object._isDeleted = true
    }

    // MARK: Merging automatically

    /// Starts or stops merging, on this context's queue, the changes saved to its parent context
    /// (by the parent, or by a sibling child of it) or, for a context on a coordinator, the
    /// changes other contexts on the same coordinator save to the store.
    internal func updateAutomaticMerging() {
        if let observer = autoMergeObserver {
            NotificationCenter.default.removeObserver(observer)
            autoMergeObserver = nil
        }
        guard automaticallyMergesChangesFromParent else { return }
        autoMergeObserver = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: nil, queue: nil) {
            [weak self] notification in
            guard let self, let sender = notification.object as? NSManagedObjectContext, sender !== self,
                  self.mergesSaves(of: sender) else { return }
            let ids = SavedObjectIDs(userInfo: notification.userInfo ?? [:], coordinator: self.persistentStoreCoordinator)
            guard !ids.isEmpty else { return }
            self.perform { [weak self] in self?.merge(ids) }
        }
    }

    /// Whether a save by `sender` is one this context merges automatically.
    private func mergesSaves(of sender: NSManagedObjectContext) -> Bool {
        if let parent {
            return sender === parent || sender.parent === parent
        }
        guard let coordinator = persistentStoreCoordinator else { return false }
        return sender.parent == nil && sender.persistentStoreCoordinator === coordinator
    }
}
