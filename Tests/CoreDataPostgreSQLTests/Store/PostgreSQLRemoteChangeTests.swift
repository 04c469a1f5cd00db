import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// The `.NSPersistentStoreRemoteChange` notifications a coordinator posts, as they arrive (on
/// the store's listening thread).
final class PostgreSQLRemoteChangeRecorder: @unchecked Sendable {
    private let received = Locked<[Notification]>([])
    private var observer: NSObjectProtocol?

    init(_ coordinator: NSPersistentStoreCoordinator) {
        observer = NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange, object: coordinator, queue: nil) {
            [received] note in received.withLock { $0.append(note) }
        }
    }

    deinit { if let observer { NotificationCenter.default.removeObserver(observer) } }

    var notifications: [Notification] { received.withLock { $0 } }

    /// Waits (up to 10 s) until a notification carries `token`; whether one did.
    func wait(forToken token: NSPersistentHistoryToken) -> Bool {
        eventually { self.notifications.contains { $0.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken == token } }
    }
}

/// Waits (up to 10 s) until `condition` holds; whether it did.
func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(10)
    while try !condition() {
        guard Date() < deadline else { return false }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return true
}

/// Remote change notifications across coordinators (as across servers) through `LISTEN`/`NOTIFY`.
@Suite("PostgreSQL remote changes", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLRemoteChangeTests {
    static var observing: [AnyHashable: Any] {
        [NSPersistentHistoryTrackingKey: true as NSNumber, NSPersistentStoreRemoteChangeNotificationPostOptionKey: true as NSNumber]
    }

    @Test func anotherCoordinatorsSaveIsPostedAndItsHistoryCatchesAViewContextUp() throws {
        let database = try TemporaryDatabase()
        let model = PostgreSQLTestModel.make()
        let writer = try PostgreSQLHistoryTests.context(database, model: model)
        let ann = try writer.performAndWait {
            let ann = writer.insert("Person", ["name": "Ann"])
            try writer.save()
            return ann.objectID
        }
        let observer = try database.coordinator(model, options: Self.observing)
        let recorder = PostgreSQLRemoteChangeRecorder(observer)
        let view = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        view.persistentStoreCoordinator = observer
        let seen = try view.performAndWait { try view.existingObject(with: ann).value(forKey: "name") as? String }
        #expect(seen == "Ann")
        let lastToken = try #require(observer.currentPersistentHistoryToken(fromStores: nil))

        try writer.performAndWait {
            try writer.existingObject(with: ann).setValue("Anna", forKey: "name")
            writer.insert("Person", ["name": "Bob"])
            try writer.save()
        }
        let token = try #require(observer.currentPersistentHistoryToken(fromStores: nil))
        #expect(token != lastToken)
        #expect(recorder.wait(forToken: token))
        let note = try #require(recorder.notifications.last)
        let store = observer.persistentStores[0]
        #expect(note.object as? NSPersistentStoreCoordinator === observer)
        #expect(note.userInfo?[NSStoreUUIDKey] as? String == store.identifier)
        #expect(note.userInfo?[NSPersistentStoreURLKey] as? URL == database.url)

        // What Apple's sample code does with it: the history after the last token, merged.
        let background = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        background.persistentStoreCoordinator = observer
        let transactions = try PostgreSQLHistoryTests.transactions(.fetchHistory(after: lastToken), in: background)
        #expect(transactions.map(\.token) == [token])
        let (name, names) = try view.performAndWait {
            for transaction in transactions { view.mergeChanges(fromContextDidSave: transaction.objectIDNotification()) }
            return (try view.existingObject(with: ann).value(forKey: "name") as? String,
                    try view.objects("Person", sortedBy: "name").map { $0.value(forKey: "name") as? String })
        }
        #expect(name == "Anna")
        #expect(names == ["Anna", "Bob"])
        withExtendedLifetime(recorder) {}
    }

    /// The other server is a real process: an exit test, which Swift Testing runs in a child
    /// process started from this test binary (it exits with success only if its save worked).
    @Test func anotherProcesssSaveIsPostedWithItsToken() async throws {
        let database = try TemporaryDatabase()
        let observer = try database.coordinator(PostgreSQLTestModel.make(), options: Self.observing)
        let recorder = PostgreSQLRemoteChangeRecorder(observer)
        await #expect(processExitsWith: .success) { [url = database.url.absoluteString as String] in
            NSPersistentStoreCoordinator.registerPostgreSQLStore()
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PostgreSQLTestModel.make())
            try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: URL(string: url)!,
                                               options: [NSPersistentHistoryTrackingKey: true as NSNumber])
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                context.insert("Person", ["name": "from another process"])
                try context.save()
            }
        }
        let token = try #require(observer.currentPersistentHistoryToken(fromStores: nil))
        #expect(recorder.wait(forToken: token))
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = observer
        let transactions = try PostgreSQLHistoryTests.transactions(.fetchHistory(after: nil as NSPersistentHistoryToken?), in: reader)
        #expect(transactions.map(\.token) == [token])
        #expect(transactions.first?.processID != nil)
    }

    @Test func theObserversOwnSavesArePostedAsTheSQLiteStoresAre() throws {
        let database = try TemporaryDatabase()
        let context = try PostgreSQLHistoryTests.context(database, options: Self.observing)
        let coordinator = try #require(context.persistentStoreCoordinator)
        let recorder = PostgreSQLRemoteChangeRecorder(coordinator)
        try context.performAndWait {
            context.insert("Person", ["name": "Mine"])
            try context.save()
        }
        #expect(recorder.wait(forToken: try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))))
    }

    @Test func withoutHistoryTheNotificationHasNoToken() throws {
        let database = try TemporaryDatabase()
        let observer = try database.coordinator(PostgreSQLTestModel.make(), options: [NSPersistentStoreRemoteChangeNotificationPostOptionKey: true])
        let recorder = PostgreSQLRemoteChangeRecorder(observer)
        let writer = try PostgreSQLHistoryTests.context(database, options: nil)
        try writer.performAndWait {
            writer.insert("Person", ["name": "Ann"])
            try writer.save()
        }
        #expect(eventually { !recorder.notifications.isEmpty })
        #expect(recorder.notifications.first?.userInfo?[NSPersistentHistoryTokenKey] == nil)
        #expect(recorder.notifications.first?.userInfo?[NSStoreUUIDKey] as? String == observer.persistentStores[0].identifier)
    }

    @Test func removingTheStoreOrDroppingItsCoordinatorEndsTheListeningSession() throws {
        let database = try TemporaryDatabase()
        func listening() throws -> Int {
            Int(try database.query("SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database.name)' AND query LIKE 'LISTEN %'")[0][0] ?? "") ?? -1
        }
        let coordinator = try database.coordinator(PostgreSQLTestModel.make(), options: Self.observing)
        #expect(try listening() == 1)
        let store = try #require(coordinator.persistentStores.first as? PostgreSQLStore)
        let listener = try #require(store.listener)
        try coordinator.remove(store)
        #expect(eventually { listener.hasFinished })
        #expect(try eventually { try listening() == 0 })

        var dropped: NSPersistentStoreCoordinator? = try database.coordinator(PostgreSQLTestModel.make(), options: Self.observing)
        let second = try #require((dropped?.persistentStores.first as? PostgreSQLStore)?.listener)
        #expect(try listening() == 1)
        dropped = nil
        #expect(eventually { second.hasFinished })
        #expect(try eventually { try listening() == 0 })
    }
}
