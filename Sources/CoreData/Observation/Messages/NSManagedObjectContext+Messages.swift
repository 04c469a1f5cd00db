import Foundation

// The context's typed notification messages (Apple's iOS 27 API; `CoreDataMessages.swift`).

extension NSManagedObjectContext {
    /// Posted before a main-queue context saves (`NSManagedObjectContextWillSave`).
    ///
    /// ```swift
    /// let token = NotificationCenter.default.addObserver(of: viewContext, for: .willSave) { message in
    ///     print("saving", message.context.insertedObjects.count)
    /// }
    /// ```
    public struct WillSaveMessage: NotificationCenter.MainActorMessage {
        public typealias Subject = NSManagedObjectContext
        /// The notification the message stands for: `NSManagedObjectContextWillSave`.
        public static var name: Notification.Name { .NSManagedObjectContextWillSave }
        /// The context about to save.
        public let context: NSManagedObjectContext

        /// The message of a will-save notification, whose object is the context; `nil` if the object is
        /// not a context.
        @MainActor public static func makeMessage(_ notification: Notification) -> WillSaveMessage? {
            (notification.object as? NSManagedObjectContext).map(WillSaveMessage.init(context:))
        }

        /// The will-save notification of `message`, with the context as its object.
        @MainActor public static func makeNotification(_ message: WillSaveMessage) -> Notification {
            Notification(name: name, object: message.context)
        }
    }

    /// Posted after a main-queue context saves (`NSManagedObjectContextDidSave`), with the saved
    /// objects.
    ///
    /// ```swift
    /// let token = NotificationCenter.default.addObserver(of: viewContext, for: .didSave) { message in
    ///     print(message.inserted.count, message.updated.count, message.deleted.count)
    /// }
    /// ```
    public struct DidSaveMessage: NotificationCenter.MainActorMessage {
        public typealias Subject = NSManagedObjectContext
        /// The notification the message stands for: `NSManagedObjectContextDidSave`.
        public static var name: Notification.Name { .NSManagedObjectContextDidSave }
        /// The context that saved.
        public let context: NSManagedObjectContext
        /// Managed objects that were inserted during this save.
        public var inserted: Set<NSManagedObject> { objects.inserted }
        /// Managed objects that were updated during this save.
        public var updated: Set<NSManagedObject> { objects.updated }
        /// Managed objects that were deleted during this save.
        public var deleted: Set<NSManagedObject> { objects.deleted }
        /// The query generation after the save, if the context is pinned to one.
        public let queryGeneration: NSQueryGenerationToken?
        /// The persistent history token after the save, if the notification carries one.
        public let historyToken: NSPersistentHistoryToken?
        private let objects: (inserted: Set<NSManagedObject>, updated: Set<NSManagedObject>, deleted: Set<NSManagedObject>)

        /// The message of a did-save notification: its objects under ``NSInsertedObjectsKey``,
        /// ``NSUpdatedObjectsKey`` and ``NSDeletedObjectsKey``, and the query generation
        /// (``NSManagedObjectContextQueryGenerationKey``) and history token (under `"newChangeToken"`, as a save writes it);
        /// `nil` if the notification's object is not a context.
        @MainActor public static func makeMessage(_ notification: Notification) -> DidSaveMessage? {
            guard let context = notification.object as? NSManagedObjectContext else { return nil }
            return DidSaveMessage(context: context,
                                  queryGeneration: notification.userInfo?[NSManagedObjectContextQueryGenerationKey] as? NSQueryGenerationToken,
                                  historyToken: messageHistoryToken(notification),
                                  objects: (messageObjects(notification, NSInsertedObjectsKey), messageObjects(notification, NSUpdatedObjectsKey),
                                            messageObjects(notification, NSDeletedObjectsKey)))
        }

        /// The did-save notification of `message`: the context as its object, each non-empty set of
        /// objects under its key, and the query generation and history token when present.
        @MainActor public static func makeNotification(_ message: DidSaveMessage) -> Notification {
            var info: [AnyHashable: Any] = [:]
            if !message.inserted.isEmpty { info[NSInsertedObjectsKey] = message.inserted }
            if !message.updated.isEmpty { info[NSUpdatedObjectsKey] = message.updated }
            if !message.deleted.isEmpty { info[NSDeletedObjectsKey] = message.deleted }
            if let generation = message.queryGeneration { info[NSManagedObjectContextQueryGenerationKey] = generation }
            if let token = message.historyToken { info[NSManagedObjectContext.newChangeTokenKey] = token }
            return Notification(name: name, object: message.context, userInfo: info)
        }
    }

    /// Posted after a main-queue context saves, with the saved objects' IDs
    /// (``didSaveObjectIDsNotification``). A private-queue context's observers use
    /// ``DidSaveObjectIDsAsyncMessage``.
    ///
    /// ```swift
    /// let token = NotificationCenter.default.addObserver(of: viewContext, for: .didSaveObjectIDs) { message in
    ///     print(message.insertedIDs)
    /// }
    /// ```
    public struct DidSaveObjectIDsMessage: NotificationCenter.MainActorMessage {
        public typealias Subject = NSManagedObjectContext
        /// The notification the message stands for: ``didSaveObjectIDsNotification``.
        public static var name: Notification.Name { NSManagedObjectContext.didSaveObjectIDsNotification }
        /// The context that saved.
        public let context: NSManagedObjectContext
        /// Object IDs of objects that were inserted during this save.
        public let insertedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were updated during this save.
        public let updatedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were deleted during this save.
        public let deletedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were refreshed during this save.
        public let refreshedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were invalidated during this save.
        public let invalidatedIDs: Set<NSManagedObjectID>
        /// The query generation after the save, if the context is pinned to one.
        public let queryGeneration: NSQueryGenerationToken?
        /// The persistent history token representing the state after the save.
        public let historyToken: NSPersistentHistoryToken?

        /// The message of a ``didSaveObjectIDsNotification``: the ID sets under
        /// ``NSInsertedObjectIDsKey`` and the other `…ObjectIDsKey` keys (empty when absent), the
        /// query generation and the history token; `nil` if the notification's object is not a context.
        @MainActor public static func makeMessage(_ notification: Notification) -> DidSaveObjectIDsMessage? {
            MessageIDSets(notification).map(DidSaveObjectIDsMessage.init)
        }

        /// The notification of `message`: the context as its object, each non-empty ID set under its
        /// key, and the query generation and history token when present.
        @MainActor public static func makeNotification(_ message: DidSaveObjectIDsMessage) -> Notification {
            message.sets.notification(named: name)
        }
    }

    /// Posted after a private-queue context saves, with the saved objects' IDs
    /// (``didSaveObjectIDsNotification``); delivered to asynchronous observers.
    ///
    /// ```swift
    /// let token = NotificationCenter.default.addObserver(of: background, for: .didSaveObjectIDsAsync) { message in
    ///     await index(message.insertedIDs)
    /// }
    /// ```
    public struct DidSaveObjectIDsAsyncMessage: NotificationCenter.AsyncMessage, Sendable {
        public typealias Subject = NSManagedObjectContext
        /// The notification the message stands for: ``didSaveObjectIDsNotification``.
        public static var name: Notification.Name { NSManagedObjectContext.didSaveObjectIDsNotification }
        /// The context that saved.
        public let context: NSManagedObjectContext
        /// Object IDs of objects that were inserted during this save (``NSInsertedObjectIDsKey``).
        public let insertedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were updated during this save (``NSUpdatedObjectIDsKey``).
        public let updatedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were deleted during this save (``NSDeletedObjectIDsKey``).
        public let deletedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were refreshed during this save (``NSRefreshedObjectIDsKey``).
        public let refreshedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were invalidated during this save (``NSInvalidatedObjectIDsKey``).
        public let invalidatedIDs: Set<NSManagedObjectID>
        /// The query generation after the save, if pinned (``NSManagedObjectContextQueryGenerationKey``).
        public let queryGeneration: NSQueryGenerationToken?
        /// The persistent history token representing the state after the save (under `"newChangeToken"` in the notification).
        public let historyToken: NSPersistentHistoryToken?

        /// The message of a ``didSaveObjectIDsNotification``: the ID sets under
        /// ``NSInsertedObjectIDsKey`` and the other `…ObjectIDsKey` keys (empty when absent), the
        /// query generation and the history token; `nil` if the notification's object is not a context.
        public static func makeMessage(_ notification: Notification) -> DidSaveObjectIDsAsyncMessage? {
            MessageIDSets(notification).map(DidSaveObjectIDsAsyncMessage.init)
        }

        /// The notification of `message`: the context as its object, each non-empty ID set under its
        /// key, and the query generation and history token when present.
        public static func makeNotification(_ message: DidSaveObjectIDsAsyncMessage) -> Notification {
            message.sets.notification(named: name)
        }
    }

    /// Posted after a main-queue context merged changes (``didMergeChangesObjectIDsNotification``),
    /// with the merged objects' IDs. A private-queue context's observers use
    /// ``DidMergeChangesAsyncMessage``.
    ///
    /// ```swift
    /// let token = NotificationCenter.default.addObserver(of: viewContext, for: .didMergeChanges) { message in
    ///     print(message.updatedIDs.count)
    /// }
    /// ```
    public struct DidMergeChangesMessage: NotificationCenter.MainActorMessage {
        public typealias Subject = NSManagedObjectContext
        /// The notification the message stands for: ``didMergeChangesObjectIDsNotification``.
        public static var name: Notification.Name { NSManagedObjectContext.didMergeChangesObjectIDsNotification }
        /// The context that merged the changes.
        public let context: NSManagedObjectContext
        /// Object IDs of objects that were inserted by this merge (``NSInsertedObjectIDsKey``).
        public let insertedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were updated by this merge (``NSUpdatedObjectIDsKey``).
        public let updatedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were deleted by this merge (``NSDeletedObjectIDsKey``).
        public let deletedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were refreshed by this merge (``NSRefreshedObjectIDsKey``).
        public let refreshedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were invalidated by this merge (``NSInvalidatedObjectIDsKey``).
        public let invalidatedIDs: Set<NSManagedObjectID>
        /// The query generation after the merge, if any (``NSManagedObjectContextQueryGenerationKey``).
        public let queryGeneration: NSQueryGenerationToken?
        /// The persistent history token of the merged changes, if any (``NSPersistentHistoryTokenKey``).
        public let historyToken: NSPersistentHistoryToken?

        /// The message of a ``didMergeChangesObjectIDsNotification``: the ID sets under
        /// ``NSInsertedObjectIDsKey`` and the other `…ObjectIDsKey` keys (empty when absent), the
        /// query generation and the history token; `nil` if the notification's object is not a context.
        @MainActor public static func makeMessage(_ notification: Notification) -> DidMergeChangesMessage? {
            MessageIDSets(notification).map(DidMergeChangesMessage.init)
        }

        /// The notification of `message`: the context as its object, each non-empty ID set under its
        /// key, and the query generation and history token when present.
        @MainActor public static func makeNotification(_ message: DidMergeChangesMessage) -> Notification {
            message.sets.notification(named: name)
        }
    }

    /// Posted after a private-queue context merged changes
    /// (``didMergeChangesObjectIDsNotification``); delivered to asynchronous observers.
    ///
    /// ```swift
    /// let token = NotificationCenter.default.addObserver(of: background, for: .didMergeChangesAsync) { message in
    ///     await refresh(message.updatedIDs)
    /// }
    /// ```
    public struct DidMergeChangesAsyncMessage: NotificationCenter.AsyncMessage, Sendable {
        public typealias Subject = NSManagedObjectContext
        /// The notification the message stands for: ``didMergeChangesObjectIDsNotification``.
        public static var name: Notification.Name { NSManagedObjectContext.didMergeChangesObjectIDsNotification }
        /// The context that merged the changes.
        public let context: NSManagedObjectContext
        /// Object IDs of objects that were inserted by this merge (``NSInsertedObjectIDsKey``).
        public let insertedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were updated by this merge (``NSUpdatedObjectIDsKey``).
        public let updatedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were deleted by this merge (``NSDeletedObjectIDsKey``).
        public let deletedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were refreshed by this merge (``NSRefreshedObjectIDsKey``).
        public let refreshedIDs: Set<NSManagedObjectID>
        /// Object IDs of objects that were invalidated by this merge (``NSInvalidatedObjectIDsKey``).
        public let invalidatedIDs: Set<NSManagedObjectID>
        /// The query generation after the merge, if any (``NSManagedObjectContextQueryGenerationKey``).
        public let queryGeneration: NSQueryGenerationToken?
        /// The persistent history token of the merged changes, if any (``NSPersistentHistoryTokenKey``).
        public let historyToken: NSPersistentHistoryToken?

        /// The message of a ``didMergeChangesObjectIDsNotification``: the ID sets under
        /// ``NSInsertedObjectIDsKey`` and the other `…ObjectIDsKey` keys (empty when absent), the
        /// query generation and the history token; `nil` if the notification's object is not a context.
        public static func makeMessage(_ notification: Notification) -> DidMergeChangesAsyncMessage? {
            MessageIDSets(notification).map(DidMergeChangesAsyncMessage.init)
        }

        /// The notification of `message`: the context as its object, each non-empty ID set under its
        /// key, and the query generation and history token when present.
        public static func makeNotification(_ message: DidMergeChangesAsyncMessage) -> Notification {
            message.sets.notification(named: name)
        }
    }

    /// Posted when objects in a main-queue context change (`NSManagedObjectContextObjectsDidChange`):
    /// inserted, updated, deleted, refreshed or invalidated.
    ///
    /// ```swift
    /// let token = NotificationCenter.default.addObserver(of: viewContext, for: .objectsDidChange) { message in
    ///     if message.invalidatedAll == true { reloadEverything() }
    /// }
    /// ```
    public struct ObjectsDidChangeMessage: NotificationCenter.MainActorMessage {
        public typealias Subject = NSManagedObjectContext
        /// The notification the message stands for: `NSManagedObjectContextObjectsDidChange`.
        public static var name: Notification.Name { .NSManagedObjectContextObjectsDidChange }
        /// The context whose objects changed.
        public let context: NSManagedObjectContext
        /// Objects that were inserted.
        public var inserted: Set<NSManagedObject> { objects[0] }
        /// Objects that were updated.
        public var updated: Set<NSManagedObject> { objects[1] }
        /// Objects that were deleted.
        public var deleted: Set<NSManagedObject> { objects[2] }
        /// Objects that were refreshed.
        public var refreshed: Set<NSManagedObject> { objects[3] }
        /// Objects that were invalidated.
        public var invalidated: Set<NSManagedObject> { objects[4] }
        /// True if all objects in the context were invalidated (`reset()`).
        public let invalidatedAll: Bool?
        private let objects: [Set<NSManagedObject>]
        private static let keys = [NSInsertedObjectsKey, NSUpdatedObjectsKey, NSDeletedObjectsKey, NSRefreshedObjectsKey, NSInvalidatedObjectsKey]

        /// The message of an objects-did-change notification: its objects under ``NSInsertedObjectsKey``,
        /// ``NSUpdatedObjectsKey``, ``NSDeletedObjectsKey``, ``NSRefreshedObjectsKey`` and
        /// ``NSInvalidatedObjectsKey``, and ``invalidatedAll`` `true` when ``NSInvalidatedAllObjectsKey`` is
        /// present; `nil` if the notification's object is not a context.
        @MainActor public static func makeMessage(_ notification: Notification) -> ObjectsDidChangeMessage? {
            guard let context = notification.object as? NSManagedObjectContext else { return nil }
            return ObjectsDidChangeMessage(context: context, invalidatedAll: notification.userInfo?[NSInvalidatedAllObjectsKey] != nil ? true : nil,
                                           objects: keys.map { messageObjects(notification, $0) })
        }

        /// The objects-did-change notification of `message`: the context as its object, each non-empty
        /// set of objects under its key, and ``NSInvalidatedAllObjectsKey`` when ``invalidatedAll`` is `true`.
        @MainActor public static func makeNotification(_ message: ObjectsDidChangeMessage) -> Notification {
            var info: [AnyHashable: Any] = [:]
            for (key, objects) in zip(keys, message.objects) where !objects.isEmpty { info[key] = objects }
            if message.invalidatedAll == true { info[NSInvalidatedAllObjectsKey] = [NSManagedObjectID]() }
            return Notification(name: name, object: message.context, userInfo: info)
        }
    }
}

/// The did-save and did-merge messages, made from and turned into their notifications' ID sets.
internal protocol IDSetMessage {
    init(context: NSManagedObjectContext, insertedIDs: Set<NSManagedObjectID>, updatedIDs: Set<NSManagedObjectID>,
         deletedIDs: Set<NSManagedObjectID>, refreshedIDs: Set<NSManagedObjectID>, invalidatedIDs: Set<NSManagedObjectID>,
         queryGeneration: NSQueryGenerationToken?, historyToken: NSPersistentHistoryToken?)
    var context: NSManagedObjectContext { get }
    var insertedIDs: Set<NSManagedObjectID> { get }
    var updatedIDs: Set<NSManagedObjectID> { get }
    var deletedIDs: Set<NSManagedObjectID> { get }
    var refreshedIDs: Set<NSManagedObjectID> { get }
    var invalidatedIDs: Set<NSManagedObjectID> { get }
    var queryGeneration: NSQueryGenerationToken? { get }
    var historyToken: NSPersistentHistoryToken? { get }
}

extension IDSetMessage {
    init(_ sets: MessageIDSets) {
        self.init(context: sets.context, insertedIDs: sets.inserted, updatedIDs: sets.updated, deletedIDs: sets.deleted,
                  refreshedIDs: sets.refreshed, invalidatedIDs: sets.invalidated, queryGeneration: sets.queryGeneration,
                  historyToken: sets.historyToken)
    }

    var sets: MessageIDSets {
        MessageIDSets(context, insertedIDs, updatedIDs, deletedIDs, refreshedIDs, invalidatedIDs, queryGeneration, historyToken)
    }
}

extension NSManagedObjectContext.DidSaveObjectIDsMessage: IDSetMessage {}
extension NSManagedObjectContext.DidSaveObjectIDsAsyncMessage: IDSetMessage {}
extension NSManagedObjectContext.DidMergeChangesMessage: IDSetMessage {}
extension NSManagedObjectContext.DidMergeChangesAsyncMessage: IDSetMessage {}

/// The ID sets of a did-save or did-merge notification, and back.
internal struct MessageIDSets: Sendable {
    let context: NSManagedObjectContext
    let inserted, updated, deleted, refreshed, invalidated: Set<NSManagedObjectID>
    let queryGeneration: NSQueryGenerationToken?
    let historyToken: NSPersistentHistoryToken?

    init(_ context: NSManagedObjectContext, _ inserted: Set<NSManagedObjectID>, _ updated: Set<NSManagedObjectID>, _ deleted: Set<NSManagedObjectID>,
         _ refreshed: Set<NSManagedObjectID>, _ invalidated: Set<NSManagedObjectID>, _ queryGeneration: NSQueryGenerationToken?,
         _ historyToken: NSPersistentHistoryToken?) {
        (self.context, self.inserted, self.updated, self.deleted, self.refreshed, self.invalidated) = (context, inserted, updated, deleted, refreshed, invalidated)
        (self.queryGeneration, self.historyToken) = (queryGeneration, historyToken)
    }

    init?(_ notification: Notification) {
        guard let context = notification.object as? NSManagedObjectContext else { return nil }
        self.init(context, messageIDs(notification, NSInsertedObjectIDsKey), messageIDs(notification, NSUpdatedObjectIDsKey),
                  messageIDs(notification, NSDeletedObjectIDsKey), messageIDs(notification, NSRefreshedObjectIDsKey),
                  messageIDs(notification, NSInvalidatedObjectIDsKey),
                  notification.userInfo?[NSManagedObjectContextQueryGenerationKey] as? NSQueryGenerationToken,
                  messageHistoryToken(notification))
    }

    func notification(named name: Notification.Name) -> Notification {
        var info: [AnyHashable: Any] = [:]
        for (key, ids) in [(NSInsertedObjectIDsKey, inserted), (NSUpdatedObjectIDsKey, updated), (NSDeletedObjectIDsKey, deleted),
                           (NSRefreshedObjectIDsKey, refreshed), (NSInvalidatedObjectIDsKey, invalidated)] where !ids.isEmpty {
            info[key] = ids
        }
        if let queryGeneration { info[NSManagedObjectContextQueryGenerationKey] = queryGeneration }
        if let historyToken { info[NSManagedObjectContext.newChangeTokenKey] = historyToken }
        return Notification(name: name, object: context, userInfo: info)
    }
}
