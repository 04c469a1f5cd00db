import Foundation
import Synchronization

// Apple's typed notification messages (iOS 27): `NotificationCenter.default.addObserver(of:
// context, for: .didSave) { message in … }`.
//
// Linux difference: swift-corelibs-foundation delivers a message only to message observers and
// a notification only to notification observers (Apple's Foundation turns one into the other by
// name). So Core Data posts both: each notification, then the messages made from it
// (`makeMessage(_:)`) that may have observers. Which may is known cheaply: an observer names its
// message by one of the `NotificationCenter.MessageIdentifier` members (`.didSave`), whose first
// use sets a bit here; until then a post costs one atomic load. (An observer that names the
// message by its type, `for: DidSaveMessage.self`, gets messages only once the identifier has
// been used somewhere: PORTING.md.) So an app that observes no message posts none: Foundation on
// Linux stops the process when a message is posted while an observer of every notification
// (`addObserver(forName: nil, …)`) is registered (it casts the message to `Notification`), which
// a message the app posts itself does too (PORTING.md).
//
// Main-actor messages are posted only from the main queue (a main-queue context's, as Apple's
// rule says; on Linux the main queue, where the main actor runs, is not always drained by the
// main thread); the asynchronous ones from any thread.

/// Posts Core Data's notifications and the typed messages made from them.
internal enum CoreDataMessages {
    /// The messages Core Data posts, one bit each in ``observed``.
    enum Kind: Int {
        case willSave, didSave, didSaveObjectIDs, didSaveObjectIDsAsync, didMergeChanges, didMergeChangesAsync,
             objectsDidChange, storesDidChange, storesDidChangeAsync, remoteChange
    }

    /// The kinds whose identifier was used (an observer may be waiting for them).
    private static let observed = Atomic<Int>(0)

    /// Notes that `kind`'s identifier was used: its messages are posted from now on.
    static func noteObserved(_ kind: Kind) {
        observed.bitwiseOr(1 << kind.rawValue, ordering: .relaxed)
    }

    /// Posts the notification, then the messages made from it that may have observers.
    static func post(name: Notification.Name, object: AnyObject, userInfo: [AnyHashable: Any]? = nil) {
        NotificationCenter.default.post(name: name, object: object, userInfo: userInfo)
        let bits = observed.load(ordering: .relaxed)
        guard bits != 0 else { return }
        func wanted(_ kind: Kind) -> Bool { bits & (1 << kind.rawValue) != 0 }
        let notification = Notification(name: name, object: object, userInfo: userInfo)
        switch name {
        case .NSManagedObjectContextWillSave:
            if wanted(.willSave) { postOnMain(NSManagedObjectContext.WillSaveMessage.self, notification) }
        case .NSManagedObjectContextDidSave:
            if wanted(.didSave) { postOnMain(NSManagedObjectContext.DidSaveMessage.self, notification) }
        case NSManagedObjectContext.didSaveObjectIDsNotification:
            if wanted(.didSaveObjectIDs) { postOnMain(NSManagedObjectContext.DidSaveObjectIDsMessage.self, notification) }
            if wanted(.didSaveObjectIDsAsync) { postAsync(NSManagedObjectContext.DidSaveObjectIDsAsyncMessage.self, notification) }
        case NSManagedObjectContext.didMergeChangesObjectIDsNotification:
            if wanted(.didMergeChanges) { postOnMain(NSManagedObjectContext.DidMergeChangesMessage.self, notification) }
            if wanted(.didMergeChangesAsync) { postAsync(NSManagedObjectContext.DidMergeChangesAsyncMessage.self, notification) }
        case .NSManagedObjectContextObjectsDidChange:
            if wanted(.objectsDidChange) { postOnMain(NSManagedObjectContext.ObjectsDidChangeMessage.self, notification) }
        case .NSPersistentStoreCoordinatorStoresDidChange:
            if wanted(.storesDidChange) { postOnMain(NSPersistentStoreCoordinator.StoresDidChangeMessage.self, notification) }
            if wanted(.storesDidChangeAsync) { postAsync(NSPersistentStoreCoordinator.StoresDidChangeAsyncMessage.self, notification) }
        case .NSPersistentStoreRemoteChange:
            if wanted(.remoteChange) { postAsync(NSPersistentStoreCoordinator.RemoteChangeMessage.self, notification) }
        default:
            break
        }
    }

    /// A main-actor message, when posted on the main queue by a main-queue context (or a
    /// coordinator).
    private static func postOnMain<Message: MainActorMessageFromNotification>(_ type: Message.Type, _ notification: Notification) {
        guard NSManagedObjectContext.isOnMainQueue, let object = notification.object as? Message.Subject else { return }
        // (A private-queue context used from the main thread posts none: its objects are not the main actor's.)
        if let context = object as? NSManagedObjectContext, context.concurrencyType != .mainQueueConcurrencyType { return }
        nonisolated(unsafe) let (notification, subject) = (notification, object)
        MainActor.assumeIsolated {
            if let message = Message.makeMessage(notification) { NotificationCenter.default.post(message, subject: subject) }
        }
    }

    /// An asynchronous message, from any thread.
    private static func postAsync<Message: AsyncMessageFromNotification>(_ type: Message.Type, _ notification: Notification) {
        guard let subject = notification.object as? Message.Subject, let message = Message.makeMessage(notification) else { return }
        NotificationCenter.default.post(message, subject: subject)
    }
}

/// A main-actor message Core Data makes from its notification.
internal protocol MainActorMessageFromNotification: NotificationCenter.MainActorMessage where Subject: AnyObject {
    @MainActor static func makeMessage(_ notification: Notification) -> Self?
}

/// An asynchronous message Core Data makes from its notification.
internal protocol AsyncMessageFromNotification: NotificationCenter.AsyncMessage where Subject: AnyObject {
    static func makeMessage(_ notification: Notification) -> Self?
}

extension NSManagedObjectContext.WillSaveMessage: MainActorMessageFromNotification {}
extension NSManagedObjectContext.DidSaveMessage: MainActorMessageFromNotification {}
extension NSManagedObjectContext.DidSaveObjectIDsMessage: MainActorMessageFromNotification {}
extension NSManagedObjectContext.DidMergeChangesMessage: MainActorMessageFromNotification {}
extension NSManagedObjectContext.ObjectsDidChangeMessage: MainActorMessageFromNotification {}
extension NSPersistentStoreCoordinator.StoresDidChangeMessage: MainActorMessageFromNotification {}
extension NSManagedObjectContext.DidSaveObjectIDsAsyncMessage: AsyncMessageFromNotification {}
extension NSManagedObjectContext.DidMergeChangesAsyncMessage: AsyncMessageFromNotification {}
extension NSPersistentStoreCoordinator.StoresDidChangeAsyncMessage: AsyncMessageFromNotification {}
extension NSPersistentStoreCoordinator.RemoteChangeMessage: AsyncMessageFromNotification {}

/// The objects under `key`, as the notification carries them (a set of objects).
internal func messageObjects(_ notification: Notification, _ key: String) -> Set<NSManagedObject> {
    notification.userInfo?[key] as? Set<NSManagedObject> ?? []
}

/// The IDs under `key`, as the notification carries them (a set of IDs).
internal func messageIDs(_ notification: Notification, _ key: String) -> Set<NSManagedObjectID> {
    notification.userInfo?[key] as? Set<NSManagedObjectID> ?? []
}

/// The persistent history token a did-save notification carries: under `"newChangeToken"`, the
/// key a save writes as Apple's does (``NSPersistentHistoryTokenKey`` is read too).
internal func messageHistoryToken(_ notification: Notification) -> NSPersistentHistoryToken? {
    (notification.userInfo?[NSManagedObjectContext.newChangeTokenKey] ?? notification.userInfo?[NSPersistentHistoryTokenKey]) as? NSPersistentHistoryToken
}
