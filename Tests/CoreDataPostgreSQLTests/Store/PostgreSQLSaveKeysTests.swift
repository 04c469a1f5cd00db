import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// A save's keys are taken in a short transaction of their own, in the round trip that begins the
/// save's (`PostgreSQLConnectionPool.inTransaction(prelude:_:)`), and its notification goes with
/// its `COMMIT`: `Z_PRIMARYKEY`'s row is not held while the save runs, so other servers' saves
/// into the same table go on meanwhile, and an insert-only save costs three round trips.
@Suite("PostgreSQL save keys and round trips", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLSaveKeysTests {
    /// The first server's save of "Gated" waits inside its transaction (a trigger on `ZPERSON`
    /// waits for an advisory lock the test holds); the second server's save of "Free" into the
    /// same table commits meanwhile. Keys follow the order they were taken in, not the commits.
    @Test func anotherServersInsertingSaveIsNotHeldByAKeyRow() throws {
        let database = try TemporaryDatabase()
        let (gated, free) = try database.contextsOfTwoCoordinators(PostgreSQLTestModel.make())
        try database.run("""
            CREATE FUNCTION cd_gate() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW."ZNAME" = 'Gated' THEN PERFORM pg_advisory_xact_lock_shared(11); END IF; RETURN NEW; END $$;
            CREATE TRIGGER cd_gate BEFORE INSERT ON "ZPERSON" FOR EACH ROW EXECUTE FUNCTION cd_gate();
            """)
        let gate = try LibPQConnection(url: database.url, password: nil)
        try gate.run("SELECT pg_advisory_lock(11)")
        let errors = Locked<[NSError]>([])
        let gatedDone = DispatchSemaphore(value: 0)
        gated.perform {
            gated.insert("Person", ["name": "Gated"])
            do { try gated.save() } catch { errors.withLock { $0.append(error as NSError) } }
            gatedDone.signal()
        }
        try database.waitForSessionsWaitingOnLocks(1)
        let freeDone = DispatchSemaphore(value: 0)
        free.perform {
            free.insert("Person", ["name": "Free"])
            do { try free.save() } catch { errors.withLock { $0.append(error as NSError) } }
            freeDone.signal()
        }
        let freeInTime = freeDone.wait(timeout: .now() + 15) == .success
        #expect(freeInTime, "the second server's save waited for the first's key row")
        #expect(try database.query("SELECT \"ZNAME\" FROM \"ZPERSON\"") == (freeInTime ? [["Free"]] : []))
        try gate.run("SELECT pg_advisory_unlock(11)")
        gate.close()
        #expect(gatedDone.wait(timeout: .now() + 60) == .success, "the first save did not end")
        if !freeInTime { freeDone.wait() }
        #expect(errors.withLock { $0 }.isEmpty)
        #expect(try database.query("SELECT \"Z_PK\", \"ZNAME\" FROM \"ZPERSON\" ORDER BY 1") == [["1", "Gated"], ["2", "Free"]])
        #expect(try database.query("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = 'Person'") == [["2"]])
    }

    /// An insert-only save: its keys and `BEGIN` in one round trip, its inserts in one, its
    /// notification and `COMMIT` in one. A save whose keys come back from no row fails and
    /// leaves the writer usable.
    @Test func aTransactionWithAPreludeTakesThreeRoundTrips() throws {
        let database = try TemporaryDatabase()
        try database.run("CREATE TABLE counter (id integer PRIMARY KEY, value bigint); INSERT INTO counter VALUES (1, 0); CREATE TABLE item (id bigint)")
        let writer = try LibPQConnection(url: database.url, password: nil)
        let pool = PostgreSQLConnectionPool(writer: writer, maximumReaders: 1, timeouts: PostgreSQLTimeouts(options: nil),
                                            connect: { try LibPQConnection(url: database.url, password: nil) },
                                            closedError: { NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreSaveError) })
        defer { pool.close() }
        let take = PostgreSQLStatement(sql: "UPDATE counter SET value = value + $1 WHERE id = $2 RETURNING value", parameters: [.int(5), .int(1)], returnsRows: true)
        func insertFive() throws -> Int64 {
            try pool.inTransaction(prelude: [take]) { connection, rows in
                #expect(rows.count == 1)
                let last = rows[0].int64(0, 0)
                try connection.executeAll((last - 4...last).map { PostgreSQLStatement(sql: "INSERT INTO item VALUES ($1)", parameters: [.int($0)]) })
                return (last - 4, [PostgreSQLStatement(sql: "SELECT pg_notify($1, $2)", parameters: [.text("cd_test"), .text("1")])])
            }
        }
        #expect(try insertFive() == 1) // the first prepares each statement (a round trip each)
        let before = writer.roundTrips
        #expect(try insertFive() == 6)
        #expect(writer.roundTrips - before == 3)
        #expect(try database.query("SELECT count(*), min(id), max(id) FROM item") == [["10", "1", "10"]])

        // A statement sent with COMMIT that fails: nothing of the transaction is committed; the
        // prelude's transaction was.
        #expect(throws: PostgreSQLError.self) {
            try pool.inTransaction(prelude: [take]) { connection, _ in
                try connection.executeAll([PostgreSQLStatement(sql: "INSERT INTO item VALUES ($1)", parameters: [.int(99)])])
                return ((), [PostgreSQLStatement(sql: "SELECT 1 / $1", parameters: [.int(0)])])
            }
        }
        #expect(try database.query("SELECT count(*), max(id) FROM item") == [["10", "10"]])
        #expect(try database.query("SELECT value FROM counter") == [["15"]])

        // A prelude that fails: the error is thrown, and the writer goes on.
        let missing = PostgreSQLStatement(sql: "UPDATE no_such_table SET value = 1 RETURNING value", returnsRows: true)
        #expect(throws: PostgreSQLError.self) { try pool.inTransaction(prelude: [missing]) { _, _ in ((), []) } }
        try pool.inTransaction { connection in _ = try connection.execute("INSERT INTO item VALUES ($1)", [PostgreSQLParameter.int(6)]) }
        #expect(try database.query("SELECT count(*), max(id) FROM item") == [["11", "10"]])
    }

    /// The same through the store: an insert-only save of one object is three round trips on
    /// the writer (the keys and `BEGIN`, the insert, the notification and `COMMIT`).
    @Test func anInsertOnlySaveTakesThreeRoundTrips() throws {
        let database = try TemporaryDatabase()
        let context = try database.context(saving: ["Ann"])
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first as? PostgreSQLStore)
        let writer = try #require(store.pool?.writerForTests as? LibPQConnection)
        let before = writer.roundTrips
        try context.performAndWait {
            context.insert("Person", ["name": "Bob"])
            try context.save()
        }
        #expect(writer.roundTrips - before == 3)
        #expect(try database.query("SELECT \"Z_PK\", \"ZNAME\" FROM \"ZPERSON\" ORDER BY 1") == [["1", "Ann"], ["2", "Bob"]])
    }
}
