import Foundation

// The coordinator's notifications about its list of stores, with Apple's names and keys.

extension Notification.Name {
    /// Posted by a coordinator after a store was added to it or removed from it, on the thread
    /// that added or removed it. The object is the coordinator; the user info holds the stores
    /// added under ``NSAddedPersistentStoresKey`` and removed under ``NSRemovedPersistentStoresKey``.
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(forName: .NSPersistentStoreCoordinatorStoresDidChange,
    ///                                        object: coordinator, queue: nil) { notification in
    ///     let added = notification.userInfo?[NSAddedPersistentStoresKey] as? [NSPersistentStore]
    /// }
    /// ```
    public static let NSPersistentStoreCoordinatorStoresDidChange = Notification.Name("NSPersistentStoreCoordinatorStoresDidChangeNotification")

    /// Apple's notification before a change of the stores that iCloud made. Linux note: declared
    /// so that code written for Apple platforms compiles; never posted (there is no iCloud).
    public static let NSPersistentStoreCoordinatorStoresWillChange = Notification.Name("NSPersistentStoreCoordinatorStoresWillChangeNotification")

    /// Posted by a coordinator before it removes a store, on the thread that removes it; the
    /// object is the coordinator, with no user info (as Apple documents it).
    public static let NSPersistentStoreCoordinatorWillRemoveStore = Notification.Name("NSPersistentStoreCoordinatorWillRemoveStoreNotification")
}

/// In ``Foundation/NSNotification/Name/NSPersistentStoreCoordinatorStoresDidChange``: the stores added.
public let NSAddedPersistentStoresKey = "added"
/// In ``Foundation/NSNotification/Name/NSPersistentStoreCoordinatorStoresDidChange``: the stores removed.
public let NSRemovedPersistentStoresKey = "removed"
/// In ``Foundation/NSNotification/Name/NSPersistentStoreCoordinatorStoresDidChange`` after
/// `migratePersistentStore`, when the new store's identifier differs from the old one's (a move
/// to or from another type than SQLite): the old store and the new one.
public let NSUUIDChangedPersistentStoresKey = "changedUUID"

extension NSPersistentStoreCoordinator {
    /// Posts ``Foundation/NSNotification/Name/NSPersistentStoreCoordinatorWillRemoveStore``
    /// (nothing if the coordinator posts no store notifications).
    internal func postWillRemoveStore() {
        guard postsStoreNotifications else { return }
        NotificationCenter.default.post(name: .NSPersistentStoreCoordinatorWillRemoveStore, object: self)
    }

    /// Posts ``Foundation/NSNotification/Name/NSPersistentStoreCoordinatorStoresDidChange`` for
    /// `added` and `removed` stores (nothing if the coordinator posts no store notifications).
    internal func postStoresDidChange(added: [NSPersistentStore] = [], removed: [NSPersistentStore] = [],
                                      uuidChanged: [NSPersistentStore]? = nil) {
        guard postsStoreNotifications else { return }
        var info: [AnyHashable: Any] = [:]
        if !added.isEmpty { info[NSAddedPersistentStoresKey] = added }
        if !removed.isEmpty { info[NSRemovedPersistentStoresKey] = removed }
        if let uuidChanged { info[NSUUIDChangedPersistentStoresKey] = uuidChanged }
        CoreDataMessages.post(name: .NSPersistentStoreCoordinatorStoresDidChange, object: self, userInfo: info)
    }
}
