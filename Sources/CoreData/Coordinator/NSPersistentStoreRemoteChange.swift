import Foundation

// The remote change notification: what a coordinator posts when a store it opened with
// `NSPersistentStoreRemoteChangeNotificationPostOptionKey` is written to, by any coordinator of
// any process (`Store/SQLite/SQLiteRemoteChanges.swift` notices a file's writes, and
// `Store/PostgreSQL/PostgreSQLRemoteChanges.swift` a database's, through `LISTEN`). Names and user-info
// keys are Apple's.

/// The name of the remote change notification, as a string (Apple's
/// `NSPersistentStoreRemoteChangeNotification`); Swift code uses
/// `Notification.Name.NSPersistentStoreRemoteChange`.
///
/// ```swift
/// let name = Notification.Name(NSPersistentStoreRemoteChangeNotification)
/// ```
public let NSPersistentStoreRemoteChangeNotification = "NSPersistentStoreRemoteChangeNotification"

/// The user-info key of a remote change notification whose value is the store's URL.
///
/// ```swift
/// let url = notification.userInfo?[NSPersistentStoreURLKey] as? URL
/// ```
public let NSPersistentStoreURLKey = "storeURL"

/// The user-info key of a remote change notification whose value is the store's current
/// ``NSPersistentHistoryToken`` (present when the store records persistent history and has at
/// least one transaction).
///
/// ```swift
/// let token = notification.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken
/// ```
public let NSPersistentHistoryTokenKey = "historyToken"

extension Notification.Name {
    /// Posted by a coordinator, on a private queue, after a store it added with
    /// ``NSPersistentStoreRemoteChangeNotificationPostOptionKey`` was written to: by another
    /// coordinator, another process, or this coordinator's own contexts, as Apple's framework
    /// posts it. The object is the coordinator; the user info has the store's URL
    /// (``NSPersistentStoreURLKey``), its UUID (`NSStoreUUIDKey`) and, with persistent history,
    /// the current history token (``NSPersistentHistoryTokenKey``). Several commits close
    /// together may come as one notification.
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange,
    ///                                        object: coordinator, queue: nil) { note in
    ///     let token = note.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken
    ///     // fetch the history after the last token seen, and merge it
    /// }
    /// ```
    public static let NSPersistentStoreRemoteChange = Notification.Name(NSPersistentStoreRemoteChangeNotification)
}
