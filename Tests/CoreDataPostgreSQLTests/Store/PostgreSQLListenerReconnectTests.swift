import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// The listening session of remote change notifications comes back when it is lost, and posts
/// once so that contexts catch up on what was saved while it was away.
@Suite("PostgreSQL listener reconnects", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLListenerReconnectTests {
    /// The backend process ids of `database`'s listening sessions.
    private func listeningBackends(_ database: TemporaryDatabase) throws -> [String] {
        try database.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()")
            .compactMap { $0[0] }
    }

    @Test func aTerminatedListeningSessionComesBackAndPostsTheSavesMadeMeanwhile() throws {
        let database = try TemporaryDatabase()
        let observer = try database.coordinator(PostgreSQLTestModel.make(), options: PostgreSQLRemoteChangeTests.observing)
        let recorder = PostgreSQLRemoteChangeRecorder(observer)
        let listener = try #require((observer.persistentStores.first as? PostgreSQLStore)?.listener)
        let backend = try #require(try listeningBackends(database).first)

        // The session is ended by the server (as an administrator or a failover would), and
        // another server saves at once, likely before the listener is back.
        #expect(try database.query("SELECT pg_terminate_backend(\(backend))") == [["t"]])
        let writer = try PostgreSQLHistoryTests.context(database)
        try writer.performAndWait {
            writer.insert("Person", ["name": "saved while the listener was away"])
            try writer.save()
        }
        let token = try #require(observer.currentPersistentHistoryToken(fromStores: nil))
        #expect(recorder.wait(forToken: token))
        #expect(eventually { listener.reconnections == 1 })
        #expect(try eventually { try listeningBackends(database).count == 1 && listeningBackends(database) != [backend] })

        // And the new session hears the next save.
        try writer.performAndWait {
            writer.insert("Person", ["name": "after"])
            try writer.save()
        }
        #expect(recorder.wait(forToken: try #require(observer.currentPersistentHistoryToken(fromStores: nil))))
        withExtendedLifetime(observer) {}
    }

    @Test func removingTheStoreWhileTheListenerWaitsToReconnectEndsIt() throws {
        let database = try TemporaryDatabase()
        let observer = try database.coordinator(PostgreSQLTestModel.make(), options: PostgreSQLRemoteChangeTests.observing)
        let store = try #require(observer.persistentStores.first as? PostgreSQLStore)
        let listener = try #require(store.listener)
        // The database refuses new connections, so the listener keeps waiting to reconnect.
        let backend = try #require(try listeningBackends(database).first)
        try PostgreSQLTestServer.run("ALTER DATABASE \"\(database.name)\" ALLOW_CONNECTIONS false")
        try PostgreSQLTestServer.run("SELECT pg_terminate_backend(\(backend))")
        Thread.sleep(forTimeInterval: 0.5) // a few attempts
        try observer.remove(store)
        #expect(eventually { listener.hasFinished })
        #expect(listener.reconnections == 0)
    }
}
