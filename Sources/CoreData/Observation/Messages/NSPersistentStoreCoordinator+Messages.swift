import Foundation

// The coordinator's typed notification messages (Apple's iOS 27 API; `CoreDataMessages.swift`).

extension NSPersistentStoreCoordinator {
    /// Posted on the main thread when stores are added to or removed from the coordinator
    /// (`NSPersistentStoreCoordinatorStoresDidChange`).
    ///
    /// ```swift
    /// let token = NotificationCenter.default.addObserver(of: coordinator, for: .storesDidChange) { message in
    ///     print(message.addedStores.count, message.removedStores.count)
    /// }
    /// ```
    public struct StoresDidChangeMessage: NotificationCenter.MainActorMessage {
        public typealias Subject = NSPersistentStoreCoordinator
        /// The notification the message stands for: `NSPersistentStoreCoordinatorStoresDidChange`.
        public static var name: Notification.Name { .NSPersistentStoreCoordinatorStoresDidChange }
        /// The coordinator whose stores changed (the notification's object).
        public let persistentStoreCoordinator: NSPersistentStoreCoordinator
        /// The stores added.
        public var addedStores: [NSPersistentStore]
        /// The stores removed.
        public var removedStores: [NSPersistentStore]
        /// The store whose identifier a migration changed: the old one and the new one.
        public var uuidChangedStores: (oldValue: NSPersistentStore, newValue: NSPersistentStore)? { changes.uuidChanged }
        private let changes: StoreSetChanges

        /// The message of a stores-did-change notification: the stores under ``NSAddedPersistentStoresKey``
        /// and ``NSRemovedPersistentStoresKey`` (empty when absent), and the old and new store under
        /// ``NSUUIDChangedPersistentStoresKey``; `nil` if the notification's object is not a coordinator.
        @MainActor public static func makeMessage(_ notification: Notification) -> StoresDidChangeMessage? {
            StoreSetChanges(notification).map {
                StoresDidChangeMessage(persistentStoreCoordinator: $0.coordinator, addedStores: $0.added, removedStores: $0.removed, changes: $0)
            }
        }

        /// The stores-did-change notification of `message`: the coordinator as its object, and each
        /// change that is not empty under its key.
        @MainActor public static func makeNotification(_ message: StoresDidChangeMessage) -> Notification {
            StoreSetChanges(message.persistentStoreCoordinator, message.addedStores, message.removedStores, message.uuidChangedStores).notification
        }
    }

    /// Posted when stores are added to or removed from the coordinator
    /// (`NSPersistentStoreCoordinatorStoresDidChange`), to asynchronous observers.
    ///
    /// ```swift
    /// let token = NotificationCenter.default.addObserver(of: coordinator, for: .storesDidChangeAsync) { message in
    ///     await log(message.addedStores)
    /// }
    /// ```
    public struct StoresDidChangeAsyncMessage: NotificationCenter.AsyncMessage, Sendable {
        public typealias Subject = NSPersistentStoreCoordinator
        /// The notification the message stands for: `NSPersistentStoreCoordinatorStoresDidChange`.
        public static var name: Notification.Name { .NSPersistentStoreCoordinatorStoresDidChange }
        /// The coordinator whose stores changed (the notification's object).
        public let persistentStoreCoordinator: NSPersistentStoreCoordinator
        /// The stores added (``NSAddedPersistentStoresKey``).
        public var addedStores: [NSPersistentStore]
        /// The stores removed (``NSRemovedPersistentStoresKey``).
        public var removedStores: [NSPersistentStore]
        /// The store whose identifier a migration changed: the old one and the new one
        /// (``NSUUIDChangedPersistentStoresKey``).
        public var uuidChangedStores: (oldValue: NSPersistentStore, newValue: NSPersistentStore)? { changes.uuidChanged }
        private let changes: StoreSetChanges

        /// The message of a stores-did-change notification: the stores under ``NSAddedPersistentStoresKey``
        /// and ``NSRemovedPersistentStoresKey`` (empty when absent), and the old and new store under
        /// ``NSUUIDChangedPersistentStoresKey``; `nil` if the notification's object is not a coordinator.
        public static func makeMessage(_ notification: Notification) -> StoresDidChangeAsyncMessage? {
            StoreSetChanges(notification).map {
                StoresDidChangeAsyncMessage(persistentStoreCoordinator: $0.coordinator, addedStores: $0.added, removedStores: $0.removed, changes: $0)
            }
        }

        /// The stores-did-change notification of `message`: the coordinator as its object, and each
        /// change that is not empty under its key.
        public static func makeNotification(_ message: StoresDidChangeAsyncMessage) -> Notification {
            StoreSetChanges(message.persistentStoreCoordinator, message.addedStores, message.removedStores, message.uuidChangedStores).notification
        }
    }

    /// Posted when another coordinator or process changed a store of the coordinator
    /// (`NSPersistentStoreRemoteChange`, with `NSPersistentStoreRemoteChangeNotificationPostOptionKey`).
    ///
    /// ```swift
    /// let token = NotificationCenter.default.addObserver(of: coordinator, for: .remoteChange) { message in
    ///     await importHistory(after: message.historyToken)
    /// }
    /// ```
    public struct RemoteChangeMessage: NotificationCenter.AsyncMessage, Sendable {
        public typealias Subject = NSPersistentStoreCoordinator
        /// The notification the message stands for: `NSPersistentStoreRemoteChange`.
        public static var name: Notification.Name { .NSPersistentStoreRemoteChange }
        /// The coordinator whose store changed (the notification's object).
        public let persistentStoreCoordinator: NSPersistentStoreCoordinator
        /// The URL of the store that changed.
        public let storeURL: URL
        /// The UUID of the store that changed.
        public let storeUUID: String
        /// The store's last history token, when it records persistent history.
        public let historyToken: NSPersistentHistoryToken?

        /// The message of a remote-change notification: the store's URL (``NSPersistentStoreURLKey``),
        /// UUID (``NSStoreUUIDKey``) and history token (``NSPersistentHistoryTokenKey``); `nil` if the
        /// notification's object is not a coordinator or the URL or UUID is missing.
        public static func makeMessage(_ notification: Notification) -> RemoteChangeMessage? {
            guard let coordinator = notification.object as? NSPersistentStoreCoordinator,
                  let url = notification.userInfo?[NSPersistentStoreURLKey] as? URL,
                  let uuid = notification.userInfo?[NSStoreUUIDKey] as? String else { return nil }
            return RemoteChangeMessage(persistentStoreCoordinator: coordinator, storeURL: url, storeUUID: uuid,
                                       historyToken: notification.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken)
        }

        /// The remote-change notification of `message`: the coordinator as its object, and the store's
        /// URL, UUID and history token (when present) under their keys.
        public static func makeNotification(_ message: RemoteChangeMessage) -> Notification {
            var info: [AnyHashable: Any] = [NSPersistentStoreURLKey: message.storeURL, NSStoreUUIDKey: message.storeUUID]
            if let token = message.historyToken { info[NSPersistentHistoryTokenKey] = token }
            return Notification(name: name, object: message.persistentStoreCoordinator, userInfo: info)
        }
    }
}

/// The stores of a stores-did-change notification, and back.
internal struct StoreSetChanges: Sendable {
    let coordinator: NSPersistentStoreCoordinator
    let added: [NSPersistentStore]
    let removed: [NSPersistentStore]
    let uuidChanged: (oldValue: NSPersistentStore, newValue: NSPersistentStore)?

    init(_ coordinator: NSPersistentStoreCoordinator, _ added: [NSPersistentStore], _ removed: [NSPersistentStore],
         _ uuidChanged: (oldValue: NSPersistentStore, newValue: NSPersistentStore)?) {
        (self.coordinator, self.added, self.removed, self.uuidChanged) = (coordinator, added, removed, uuidChanged)
    }

    init?(_ notification: Notification) {
        guard let coordinator = notification.object as? NSPersistentStoreCoordinator else { return nil }
        let changed = notification.userInfo?[NSUUIDChangedPersistentStoresKey] as? [Any]
        let pair = (changed?.count ?? 0) >= 2 ? (changed![0] as? NSPersistentStore).flatMap { old in (changed![1] as? NSPersistentStore).map { (old, $0) } } : nil
        self.init(coordinator, notification.userInfo?[NSAddedPersistentStoresKey] as? [NSPersistentStore] ?? [],
                  notification.userInfo?[NSRemovedPersistentStoresKey] as? [NSPersistentStore] ?? [],
                  pair.map { (oldValue: $0.0, newValue: $0.1) })
    }

    var notification: Notification {
        var info: [AnyHashable: Any] = [:]
        if !added.isEmpty { info[NSAddedPersistentStoresKey] = added }
        if !removed.isEmpty { info[NSRemovedPersistentStoresKey] = removed }
        if let uuidChanged { info[NSUUIDChangedPersistentStoresKey] = [uuidChanged.oldValue, uuidChanged.newValue] }
        return Notification(name: .NSPersistentStoreCoordinatorStoresDidChange, object: coordinator, userInfo: info)
    }
}
