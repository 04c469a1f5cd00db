import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// A fetch on PostgreSQL makes its objects from the rows as they arrive (libpq's single-row
/// mode), while the server still sends the next ones: what happens when the fetch stops early
/// (the context stops it, or the session ends), and that the session is ready afterwards.
///
/// The table holds 20,000 people with 1,000-byte names (20 MB of rows, more than the sockets'
/// buffers hold), so that when the first object is made the server is still sending.
@Suite("PostgreSQL rows as they arrive", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLRowsAsTheyArriveTests {
    static let people = 20_000

    /// A context of a store with ``people`` people, written by the server, read through at most
    /// one reader session.
    static func contextOfManyPeople(_ database: TemporaryDatabase) throws -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = try database.coordinator(PostgreSQLTestModel.make(),
                                                                      options: [NSPersistentStoreConnectionPoolMaxSizeKey: 1])
        try database.run("""
            INSERT INTO "ZPERSON" ("Z_PK", "Z_ENT", "Z_OPT", "ZNAME")
            SELECT g, (SELECT "Z_ENT" FROM "Z_PRIMARYKEY" WHERE "Z_NAME" = 'Person'), 1, lpad(g::text, 1000, '-')
            FROM generate_series(1, \(people)) g;
            UPDATE "Z_PRIMARYKEY" SET "Z_MAX" = \(people) WHERE "Z_NAME" = 'Person'
            """)
        return context
    }

    /// `SELECT what FROM pg_stat_activity` of the session running the fetch.
    static func fetchingSession(_ what: String) -> String {
        """
        SELECT \(what) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'SELECT %"ZPERSON"%'
        """
    }

    /// The state of the session running the fetch (`active` while the server sends rows).
    static func fetchingSessionState(_ database: TemporaryDatabase) throws -> String? {
        try database.query(fetchingSession("state")).first?.first ?? nil
    }

    @Test func theFirstObjectIsMadeWhileTheServerStillSendsRows() throws {
        let database = try TemporaryDatabase()
        let context = try Self.contextOfManyPeople(database)
        let state = Locked<String?>(nil)
        let (keys, lastName) = try context.performAndWait {
            context._fetchRowObserver = { made in
                if made == 1 { state.withLock { $0 = try? Self.fetchingSessionState(database) } }
            }
            defer { context._fetchRowObserver = nil }
            let objects = try context.objects("Person")
            return (objects.map { $0.objectID.primaryKey ?? 0 }, objects.last?.value(forKey: "name") as? String)
        }
        #expect(state.withLock { $0 } == "active", "the rows were all read before the first object was made")
        #expect(keys == Array(1...Int64(Self.people)), "in key order, each once")
        #expect(lastName == String(repeating: "-", count: 995) + "20000")
    }

    @Test func aFetchStoppedByTheContextLeavesTheSessionReady() throws {
        let database = try TemporaryDatabase()
        let context = try Self.contextOfManyPeople(database)
        struct Stop: Error {}
        let (stopped, count, counted) = try context.performAndWait {
            context._fetchRowObserver = { made in if made == 100 { throw Stop() } }
            let stopped = Result { try context.objects("Person") }
            context._fetchRowObserver = nil
            // The one reader read the rest of the first fetch's rows and dropped them.
            return (stopped, try context.objects("Person").count, try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")))
        }
        #expect(throws: Stop.self) { _ = try stopped.get() }
        #expect(count == Self.people)
        #expect(counted == Self.people)
    }

    @Test func aSessionEndedDuringAFetchFailsItAndIsNotReadAgain() throws {
        let database = try TemporaryDatabase()
        let context = try Self.contextOfManyPeople(database)
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first as? PostgreSQLStore)
        let made = Locked(0)
        let (failed, openAfterFailure, count) = try context.performAndWait {
            context._fetchRowObserver = { count in
                made.withLock { $0 = count }
                guard count == 100 else { return }
                // The server ends the session while it sends the rows.
                try database.run(Self.fetchingSession("pg_terminate_backend(pid, 5000)"))
            }
            let failed = Result { try context.objects("Person") }
            context._fetchRowObserver = nil
            let open = store.pool?.readers.openConnections
            // The next read connects anew.
            return (failed, open, try context.objects("Person").count)
        }
        // Some rows were made into objects: the fetch can't run again on a new session (its
        // objects would be made twice); it fails, naming the store's read.
        let error = try #require(throws: NSError.self) { _ = try failed.get() }
        #expect(error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreOperationError)
        #expect(made.withLock { $0 } < Self.people)
        #expect(openAfterFailure == 0, "the lost session went back to the pool")
        #expect(count == Self.people)
    }

    @Test func aGenerationsFetchTheServerFailsMidwayLeavesItsSnapshotReadable() throws {
        let database = try TemporaryDatabase()
        let context = try Self.contextOfManyPeople(database)
        let (failed, counted) = try context.performAndWait {
            try context.setQueryGenerationFrom(.current)
            context._fetchRowObserver = { made in
                guard made == 100 else { return }
                // The server cancels the statement while it sends the rows (as a statement
                // timeout would): the generation's transaction is aborted.
                _ = try database.query(Self.fetchingSession("pg_cancel_backend(pid)"))
            }
            let failed = Result { try context.objects("Person") }
            context._fetchRowObserver = nil
            // The generation's session was rolled back to its savepoint: its snapshot reads on.
            try database.run("DELETE FROM \"ZPERSON\" WHERE \"Z_PK\" <= 10")
            return (failed, try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")))
        }
        let error = try #require(throws: NSError.self) { _ = try failed.get() }
        #expect(error.userInfo[NSPostgreSQLStateErrorKey] as? String == "57014")
        #expect(counted == Self.people, "the snapshot is the generation's, before the delete")
    }
}
