import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// The PostgreSQL store's connections: reads that do not wait for a save, the pool's bound,
/// sessions lost and replaced, and saves whose session is lost before or after `COMMIT`.
///
/// Sessions are ended as a server ends them: `pg_terminate_backend`, from another connection,
/// or from a trigger of the save's own transaction (an immediate trigger ends it before
/// `COMMIT`, a deferred one while the server runs `COMMIT`: the client has sent `COMMIT` and
/// never hears back). No test hook is needed in the store or the client.
@Suite("PostgreSQL connection pool", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLConnectionPoolTests {
    @Test func aFetchCompletesWhileAnotherContextsSaveIsHeldInItsTransaction() throws {
        let database = try TemporaryDatabase()
        let coordinator = try database.coordinator(PostgreSQLTestModel.make())
        let saving = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        saving.persistentStoreCoordinator = coordinator
        let reading = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reading.persistentStoreCoordinator = coordinator
        try saving.performAndWait {
            saving.insert("Person", ["name": "Ann"])
            try saving.save()
        }
        // An insert into ZPERSON waits, inside the save's transaction, for an advisory lock the test holds.
        try Self.run(database, """
            CREATE FUNCTION cd_wait() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock(7); RETURN NULL; END $$;
            CREATE TRIGGER cd_wait AFTER INSERT ON "ZPERSON" FOR EACH ROW EXECUTE FUNCTION cd_wait();
            """)
        let holder = try LibPQConnection(url: database.url, password: nil)
        try holder.run("SELECT pg_advisory_lock(7)")
        let saved = DispatchSemaphore(value: 0)
        let saveError = Locked<Error?>(nil)
        saving.perform {
            saving.insert("Person", ["name": "Bob"])
            do { try saving.save() } catch { saveError.withLock { $0 = error } }
            saved.signal()
        }
        try Self.waitUntil(database, "SELECT count(*) > 0 FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'advisory'")

        let fetched = DispatchSemaphore(value: 0)
        let names = Locked<[String]?>(nil)
        reading.perform {
            let result = try? reading.objects("Person", sortedBy: "name").map { $0.value(forKey: "name") as? String ?? "" }
            names.withLock { $0 = result }
            fetched.signal()
        }
        let fetchedInTime = fetched.wait(timeout: .now() + 10) == .success
        #expect(fetchedInTime, "the fetch waited for the save")
        #expect(saved.wait(timeout: .now()) == .timedOut, "the save was not held")

        try holder.run("SELECT pg_advisory_unlock(7)")
        holder.close()
        if !fetchedInTime { fetched.wait() }
        saved.wait()
        #expect(names.withLock { $0 } == ["Ann"])
        #expect(saveError.withLock { $0 } == nil)
        #expect(try database.query("SELECT \"ZNAME\" FROM \"ZPERSON\" ORDER BY 1") == [["Ann"], ["Bob"]])
    }

    @Test func readersAreOpenedOnDemandUpToThePoolsMaximum() async throws {
        let database = try TemporaryDatabase()
        let coordinator = try database.coordinator(PostgreSQLTestModel.make(), options: [NSPersistentStoreConnectionPoolMaxSizeKey: 2])
        let store = try #require(coordinator.persistentStores.first as? PostgreSQLStore)
        #expect(store.pool?.readers.maximum == 2)
        #expect(store.pool?.readers.peakOpenConnections == 0)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                    context.persistentStoreCoordinator = coordinator
                    return try context.performAndWait {
                        try (0..<10).reduce(0) { total, _ in total + (try context.objects("Person").count) }
                    }
                }
            }
            for try await count in group { #expect(count == 0) }
        }
        #expect((1...2).contains(store.pool?.readers.peakOpenConnections ?? 0))
        #expect(try database.query("SELECT count(*) <= 3 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()") == [["t"]])
    }

    @Test func aPoolSizeThatIsNotAPositiveIntegerIsRefused() throws {
        let database = try TemporaryDatabase()
        #expect {
            _ = try database.coordinator(PostgreSQLTestModel.make(), options: [NSPersistentStoreConnectionPoolMaxSizeKey: 0])
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreOpenError
                && error.localizedDescription.contains(NSPersistentStoreConnectionPoolMaxSizeKey)
        }
    }

    @Test func fetchesAndSavesGoOnAfterTheServerEndsTheStoresSessions() throws {
        let database = try TemporaryDatabase()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = try database.coordinator(PostgreSQLTestModel.make())
        try context.performAndWait {
            context.insert("Person", ["name": "Ann"])
            try context.save()
            #expect(try context.objects("Person").count == 1) // a reader is open too
        }
        #expect(try Self.terminateOtherSessions(database) == 2)

        try context.performAndWait {
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 1)
            context.insert("Person", ["name": "Bob"])
            try context.save()
        }
        #expect(try Self.terminateOtherSessions(database) == 2)
        try context.performAndWait {
            context.insert("Person", ["name": "Cy"])
            try context.save()
            #expect(try context.objects("Person", sortedBy: "name").map { $0.value(forKey: "name") as? String } == ["Ann", "Bob", "Cy"])
        }
    }

    @Test func aSaveWhoseSessionEndsBeforeCommitFailsAndWritesNothing() throws {
        let database = try TemporaryDatabase()
        let context = try Self.contextOfNewStore(database, endingSessionsOnInsert: "")
        let error = try #require(Self.failingSave(context))
        #expect(error.userInfo[NSPostgreSQLCommitOutcomeUnknownKey] == nil)
        #expect(error.localizedDescription.contains("nothing was saved"))
        #expect(try database.query("SELECT count(*) FROM \"ZPERSON\"") == [["0"]])

        try Self.run(database, "DROP TRIGGER cd_end_session ON \"ZPERSON\"")
        try context.performAndWait { try context.save() }
        #expect(try database.query("SELECT \"ZNAME\" FROM \"ZPERSON\"") == [["Ann"]])
    }

    /// A save whose keys come from the store's block sends its `BEGIN` with its inserts
    /// (`PostgreSQLPendingBegin`). When one of them ends the session, that round trip is not sent
    /// again on a new session: the insert ran once, and the save fails, writing nothing.
    @Test func aSaveWhoseFirstRoundTripEndsTheSessionIsNotSentAgain() throws {
        let database = try TemporaryDatabase()
        let context = try database.context(saving: ["Zed"]) // its store now holds a block of keys
        try Self.run(database, """
            CREATE SEQUENCE cd_attempts;
            CREATE FUNCTION cd_end_session() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM nextval('cd_attempts'); PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$;
            CREATE TRIGGER cd_end_session AFTER INSERT ON "ZPERSON" FOR EACH ROW EXECUTE FUNCTION cd_end_session();
            """)
        let error = try #require(Self.failingSave(context))
        #expect(error.userInfo[NSPostgreSQLCommitOutcomeUnknownKey] == nil)
        #expect(try database.query("SELECT last_value, is_called FROM cd_attempts") == [["1", "t"]])
        #expect(try database.query("SELECT \"ZNAME\" FROM \"ZPERSON\"") == [["Zed"]])

        try Self.run(database, "DROP TRIGGER cd_end_session ON \"ZPERSON\"")
        try context.performAndWait { try context.save() } // on a new session
        #expect(try database.query("SELECT \"ZNAME\" FROM \"ZPERSON\" ORDER BY \"Z_PK\"") == [["Zed"], ["Ann"]])
    }

    @Test func aSaveWhoseSessionEndsAfterCommitWasSentSaysItsOutcomeIsUnknownAndIsNotRunAgain() throws {
        let database = try TemporaryDatabase()
        // A deferred trigger runs inside COMMIT: the session ends after the client sent it.
        let context = try Self.contextOfNewStore(database, endingSessionsOnInsert: "CONSTRAINT", "DEFERRABLE INITIALLY DEFERRED")
        try Self.run(database, """
            CREATE SEQUENCE cd_attempts;
            CREATE FUNCTION cd_count_attempt() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM nextval('cd_attempts'); RETURN NULL; END $$;
            CREATE TRIGGER cd_count_attempt AFTER INSERT ON "ZPERSON" FOR EACH ROW EXECUTE FUNCTION cd_count_attempt();
            """)
        let error = try #require(Self.failingSave(context))
        #expect(error.userInfo[NSPostgreSQLCommitOutcomeUnknownKey] as? Bool == true)
        #expect(error.localizedDescription.contains("unknown"))
        // Sent once (a sequence counts attempts, rolled back or not); here the server rolled it back.
        #expect(try database.query("SELECT last_value FROM cd_attempts") == [["1"]])
        #expect(try database.query("SELECT count(*) FROM \"ZPERSON\"") == [["0"]])

        try Self.run(database, "DROP TRIGGER cd_end_session ON \"ZPERSON\"")
        try context.performAndWait {
            try context.save() // the store connects anew
            #expect(try context.objects("Person").count == 1)
        }
        #expect(try database.query("SELECT last_value FROM cd_attempts") == [["2"]])
    }

    // MARK: Helpers

    /// Ends every session of the database but the caller's, waiting for each to end; how many.
    private static func terminateOtherSessions(_ database: TemporaryDatabase) throws -> Int {
        let ended = try database.query("""
            WITH others AS MATERIALIZED (SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid())
            SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM others
            """)
        return Int(ended.first?.first.flatMap { $0 } ?? "") ?? -1
    }

    /// A context of a new store in `database`, where the server ends the session that inserts
    /// a person, from a trigger (`CREATE <kind> TRIGGER … <timing>`).
    private static func contextOfNewStore(_ database: TemporaryDatabase, endingSessionsOnInsert kind: String,
                                          _ timing: String = "") throws -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = try database.coordinator(PostgreSQLTestModel.make())
        try run(database, """
            CREATE FUNCTION cd_end_session() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$;
            CREATE \(kind) TRIGGER cd_end_session AFTER INSERT ON "ZPERSON" \(timing) FOR EACH ROW EXECUTE FUNCTION cd_end_session();
            """)
        return context
    }

    /// The error of saving a new person in `context`, a save error in `NSCocoaErrorDomain`
    /// that leaves the context's changes; `nil` (and an issue) if the save does not fail so.
    private static func failingSave(_ context: NSManagedObjectContext) -> NSError? {
        context.performAndWait {
            context.insert("Person", ["name": "Ann"])
            do {
                try context.save()
                Issue.record("the save succeeded")
                return nil
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreSaveError)
                #expect(context.hasChanges)
                return error
            }
        }
    }

    /// Runs `sql` (statements without results) on `database`.
    private static func run(_ database: TemporaryDatabase, _ sql: String) throws {
        let connection = try LibPQConnection(url: database.url, password: nil)
        defer { connection.close() }
        try connection.run(sql)
    }

    /// Waits (up to 10 s) until `sql` on `database` answers true.
    private static func waitUntil(_ database: TemporaryDatabase, _ sql: String) throws {
        let deadline = Date().addingTimeInterval(10)
        while try database.query(sql) != [["t"]] {
            guard Date() < deadline else {
                Issue.record("timed out waiting for: \(sql)")
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}
