import CSQLite
import Foundation
import Testing
@testable import CoreData
import TestSupport

/// The notifications a coordinator posted, as they arrive (on the poster's private queue).
final class RemoteChangeRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var received: [Notification] = []
    private var observer: NSObjectProtocol?

    /// Records `.NSPersistentStoreRemoteChange` posted by `coordinator`.
    init(_ coordinator: NSPersistentStoreCoordinator) {
        observer = NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange, object: coordinator, queue: nil) {
            [weak self] note in
            guard let self else { return }
            self.lock.withLock { self.received.append(note) }
        }
    }

    deinit { if let observer { NotificationCenter.default.removeObserver(observer) } }

    var notifications: [Notification] { lock.withLock { received } }

    /// Waits (up to `seconds`) until `count` notifications have arrived; the notifications.
    @discardableResult
    func wait(for count: Int = 1, seconds: Double = 10) -> [Notification] {
        let deadline = Date().addingTimeInterval(seconds)
        while notifications.count < count && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        return notifications
    }

    /// Waits (up to `seconds`) until a notification carries `token`; that notification's token.
    /// (Another coordinator's earlier commit may be noticed late: its notification can come after
    /// the recorder was made, so the last notification is not always the one of the last save.)
    func wait(forToken token: NSPersistentHistoryToken, seconds: Double = 10) -> NSPersistentHistoryToken? {
        let deadline = Date().addingTimeInterval(seconds)
        func found() -> NSPersistentHistoryToken? {
            notifications.lazy.compactMap { $0.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken }.first { $0 == token }
        }
        while found() == nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        return found()
    }

    /// Waits until no notification has arrived for `seconds`: what arrived.
    func settle(_ seconds: Double = 0.3) -> [Notification] {
        var count = -1
        while count != notifications.count {
            count = notifications.count
            Thread.sleep(forTimeInterval: seconds)
        }
        return notifications
    }
}

/// Issue 23: `NSPersistentStoreRemoteChangeNotificationPostOptionKey` within one process.
@Suite struct RemoteChangeNotificationTests {
    static var observing: [AnyHashable: Any] {
        [NSPersistentHistoryTrackingKey: true as NSNumber, NSPersistentStoreRemoteChangeNotificationPostOptionKey: true as NSNumber]
    }

    /// A coordinator on `url` with `options`, and a context on it.
    static func open(_ url: URL, options: [AnyHashable: Any]?, model: NSManagedObjectModel = HistoryTestModel.make())
        throws -> (NSPersistentStoreCoordinator, NSManagedObjectContext) {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }

    @discardableResult
    static func insertNote(_ title: String, into context: NSManagedObjectContext) -> NSManagedObject {
        let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
        note.setValue(title, forKey: "title")
        return note
    }

    @Test func anotherCoordinatorsSaveIsPostedWithTheStoreAndTheHistoryToken() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        let (observer, _) = try Self.open(url, options: Self.observing)
        let recorder = RemoteChangeRecorder(observer)
        let (writer, context) = try Self.open(url, options: [NSPersistentHistoryTrackingKey: true as NSNumber])
        let quiet = RemoteChangeRecorder(writer)
        Self.insertNote("one", into: context)
        try context.save()

        let notes = recorder.wait()
        try #require(notes.count >= 1)
        let note = notes[0]
        let store = observer.persistentStores[0]
        #expect(note.object as? NSPersistentStoreCoordinator === observer)
        #expect(note.name.rawValue == "NSPersistentStoreRemoteChangeNotification")
        #expect(note.userInfo?[NSStoreUUIDKey] as? String == store.identifier)
        #expect(note.userInfo?[NSPersistentStoreURLKey] as? URL == url)
        let token = try #require(note.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken)
        #expect(token == observer.currentPersistentHistoryToken(fromStores: nil))
        // The history after the token the observer had before is the other coordinator's save.
        let fetch = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
        let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        reader.persistentStoreCoordinator = observer
        let history = try #require((try reader.execute(fetch) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        #expect(history.last?.token == token)
        // The writer did not ask for notifications: it posts none.
        #expect(recorder.settle().count == 1)
        #expect(quiet.notifications.isEmpty)
        withExtendedLifetime((writer, folder)) {}
    }

    @Test func theObserversOwnSavesArePostedAsApplesAre() throws {
        let folder = try TemporaryFolder()
        let (coordinator, context) = try Self.open(folder.url.appendingPathComponent("Notes.sqlite"), options: Self.observing)
        let recorder = RemoteChangeRecorder(coordinator)
        Self.insertNote("mine", into: context)
        try context.save()
        let token = try #require(recorder.wait().first?.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken)
        #expect(token == coordinator.currentPersistentHistoryToken(fromStores: nil))
        // Noted by the store and seen by the watch: posted once.
        #expect(recorder.settle().count == 1)
        withExtendedLifetime(folder) {}
    }

    @Test func withoutHistoryTheNotificationHasNoToken() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        let (observer, _) = try Self.open(url, options: [NSPersistentStoreRemoteChangeNotificationPostOptionKey: true as NSNumber])
        let recorder = RemoteChangeRecorder(observer)
        let (_, context) = try Self.open(url, options: nil)
        Self.insertNote("one", into: context)
        try context.save()
        let note = try #require(recorder.wait().first)
        #expect(note.userInfo?[NSStoreUUIDKey] as? String == observer.persistentStores[0].identifier)
        #expect(note.userInfo?[NSPersistentHistoryTokenKey] == nil)
        withExtendedLifetime(folder) {}
    }

    @Test func batchRequestsArePosted() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        let (observer, _) = try Self.open(url, options: Self.observing)
        let recorder = RemoteChangeRecorder(observer)
        let (_, context) = try Self.open(url, options: [NSPersistentHistoryTrackingKey: true as NSNumber])
        _ = try context.execute(NSBatchInsertRequest(entityName: "Note", objects: [["title": "a"], ["title": "b"]]))
        #expect(recorder.wait().count >= 1)
        let update = NSBatchUpdateRequest(entityName: "Note")
        update.propertiesToUpdate = ["body": "x"]
        let before = recorder.settle().count
        _ = try context.execute(update)
        #expect(recorder.wait(for: before + 1).count == before + 1)
        withExtendedLifetime(folder) {}
    }

    @Test func aRemovedStoreNeitherPostsNorWatches() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        let (observer, _) = try Self.open(url, options: Self.observing)
        let store = try #require(observer.persistentStores.first as? SQLiteStore)
        let channel = try #require(store.changeChannel)
        #expect(channel.isWatching)
        let recorder = RemoteChangeRecorder(observer)
        try observer.remove(store)
        #expect(!channel.isWatching)
        let (_, context) = try Self.open(url, options: nil)
        Self.insertNote("after", into: context)
        try context.save()
        #expect(recorder.settle().isEmpty)
        withExtendedLifetime(folder) {}
    }

    /// A file event whose check finds nothing starts the recheck chain again from its shortest
    /// delay: it joined the chain under way, so a commit published late waited for that chain's
    /// next delay (up to 3 s), or for the next write once the chain had ended.
    @Test func aFileEventRestartsTheRecheckChain() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        let (observer, _) = try Self.open(url, options: Self.observing)
        let channel = try #require((observer.persistentStores.first as? SQLiteStore)?.changeChannel)
        channel.fileChanged() // nothing committed: a chain starts
        #expect(channel.pendingRecheckAttempt != nil)
        for _ in 0..<400 where (channel.pendingRecheckAttempt ?? 0) < 2 { Thread.sleep(forTimeInterval: 0.005) }
        #expect(channel.pendingRecheckAttempt == 2) // now waiting 1 s
        channel.fileChanged()
        #expect(channel.pendingRecheckAttempt == 0)
        withExtendedLifetime(folder) {}
    }

    /// An object ID keeps its store after the coordinator went away: the store's watch stops
    /// all the same, and nothing is posted for it.
    @Test func aCoordinatorGoneStopsTheWatchOfItsStore() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        var (observer, context): (NSPersistentStoreCoordinator?, NSManagedObjectContext?) = try Self.open(url, options: Self.observing)
        let note = Self.insertNote("kept", into: context!)
        try context!.save()
        let id = note.objectID
        let channel = try #require((observer?.persistentStores.first as? SQLiteStore)?.changeChannel)
        #expect(channel.isWatching)
        (observer, context) = (nil, nil)
        #expect(id.persistentStore != nil, "the ID keeps the store")
        // (A notification being posted holds the coordinator until it is delivered.)
        for _ in 0..<1_000 where channel.isWatching { Thread.sleep(forTimeInterval: 0.005) }
        #expect(!channel.isWatching)
        // Its connections are closed too: they stayed open while any ID lived.
        let store = try #require(id.persistentStore as? SQLiteStore)
        #expect(store.writer == nil)
        withExtendedLifetime(folder) {}
    }

    @Test func aSaveDoesNotWaitForTheObservers() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        let (observer, _) = try Self.open(url, options: Self.observing)
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let token = NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange, object: observer, queue: nil) { _ in
            entered.signal()
            release.wait()
        }
        defer { NotificationCenter.default.removeObserver(token) }
        let (_, context) = try Self.open(url, options: nil)
        Self.insertNote("one", into: context)
        try context.save()
        #expect(entered.wait(timeout: .now() + 10) == .success, "the observer was called")
        // The observer is blocked: saves go on.
        let start = Date()
        for i in 0..<5 {
            Self.insertNote("more \(i)", into: context)
            try context.save()
        }
        #expect(Date().timeIntervalSince(start) < 5)
        release.signal()
        for _ in 0..<5 { release.signal() }
        withExtendedLifetime(folder) {}
    }

    /// As Apple's sample code does: on the notification, the history after the last token seen
    /// is fetched and each transaction merged into the view context, whose registered objects
    /// then show the other coordinator's values (`automaticallyMergesChangesFromParent` does not
    /// merge remote changes by itself, on Apple's platforms either).
    @Test func aViewContextMergesTheHistoryOfTheNotification() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        let (observer, _) = try Self.open(url, options: Self.observing)
        let viewContext = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        viewContext.persistentStoreCoordinator = observer
        viewContext.automaticallyMergesChangesFromParent = true
        let (_, writer) = try Self.open(url, options: [NSPersistentHistoryTrackingKey: true as NSNumber])
        let note = Self.insertNote("draft", into: writer)
        try writer.save()
        // The note's ID in the view context's coordinator (as an app passes IDs between stacks).
        let id = try #require(observer.managedObjectID(forURIRepresentation: note.objectID.uriRepresentation()))
        // The view context shows the note (and keeps it: a context holds its objects weakly).
        let shown = try viewContext.performAndWait { try viewContext.existingObject(with: id) }
        #expect(viewContext.performAndWait { shown.value(forKey: "title") as? String } == "draft")
        let recorder = RemoteChangeRecorder(observer)
        let lastToken = observer.currentPersistentHistoryToken(fromStores: nil)

        note.setValue("final", forKey: "title")
        Self.insertNote("second", into: writer)
        try writer.save()
        let saved = try #require(observer.currentPersistentHistoryToken(fromStores: nil))
        let token = try #require(recorder.wait(forToken: saved), "the notification of the second save")
        let (title, count) = try RemoteChangeMerging.merge(after: lastToken, upTo: token, into: viewContext, id: id)
        #expect(title == "final")
        #expect(count == 2)
        withExtendedLifetime((folder, shown)) {}
    }
}

/// Apple's sample code's handling of `.NSPersistentStoreRemoteChange`, shared by the tests.
enum RemoteChangeMerging {
    /// Fetches the history after `lastToken` in a background context of `viewContext`'s
    /// coordinator, merges each transaction into `viewContext`, and returns what `viewContext`
    /// then shows: the title of the note `id` (without refetching it) and how many notes a
    /// fetch finds. Checks that the history reaches `token`.
    static func merge(after lastToken: NSPersistentHistoryToken?, upTo token: NSPersistentHistoryToken,
                      into viewContext: NSManagedObjectContext, id: NSManagedObjectID) throws -> (String?, Int) {
        let background = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        background.persistentStoreCoordinator = viewContext.persistentStoreCoordinator
        let transactions = try background.performAndWait {
            let result = try background.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: lastToken)) as? NSPersistentHistoryResult
            return try #require(result?.result as? [NSPersistentHistoryTransaction])
        }
        #expect(transactions.last?.token == token)
        let notifications = transactions.map { $0.objectIDNotification() }
        return try viewContext.performAndWait {
            for notification in notifications { viewContext.mergeChanges(fromContextDidSave: notification) }
            let title = viewContext.registeredObject(for: id)?.value(forKey: "title") as? String
            return (title, try viewContext.count(for: NSFetchRequest<NSManagedObject>(entityName: "Note")))
        }
    }
}
