import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// A store takes keys from `Z_PRIMARYKEY` in blocks (``NSPostgreSQLKeyBlockSizeOption``, 100 by
/// default) and gives the rest of a block to its next saves, whose `BEGIN` then goes with their
/// statements: two round trips for an insert-only save.
@Suite("PostgreSQL key blocks", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLKeyBlockTests {
    /// One coordinator's saves follow each other in key order from one block; another
    /// coordinator's take the next block; `Z_MAX` says what was taken.
    @Test func savesTakeTheirKeysFromTheStoresBlock() throws {
        let database = try TemporaryDatabase()
        let (first, second) = try database.contextsOfTwoCoordinators(PostgreSQLTestModel.make())
        try Self.save(first, ["a1", "a2"])
        try Self.save(first, ["a3"])
        try Self.save(second, ["b1"])
        try Self.save(first, ["a4"])
        #expect(try Self.people(database) == [["1", "a1"], ["2", "a2"], ["3", "a3"], ["4", "a4"], ["101", "b1"]])
        #expect(try Self.max(database, "Person") == "200")
        // The rows read back alike through either coordinator.
        let names = try second.performAndWait { try second.objects("Person", sortedBy: "name").map { $0.value(forKey: "name") as? String } }
        #expect(names == ["a1", "a2", "a3", "a4", "b1"])
    }

    /// A save that needs more keys than its block holds takes a new block of what it needs (at
    /// least the block size); the keys left in the old block are never used.
    @Test func aSaveLargerThanItsBlockTakesANewOne() throws {
        let database = try TemporaryDatabase()
        let context = try database.context(options: [NSPostgreSQLKeyBlockSizeOption: 10], saving: ["p1"])
        try Self.save(context, (2...13).map { "p\($0)" })  // 12 keys: 11–22, the 9 left of 1–10 unused
        try Self.save(context, ["p14"])                    // a new block: 23–32
        try Self.save(context, ["p15"])                    // from it
        #expect(try Self.people(database).map { $0[0] } == ["1"] + (11...22).map(String.init) + ["23", "24"])
        #expect(try Self.max(database, "Person") == "32")
    }

    /// A batch insert numbers its rows from `Z_MAX`, above the store's block: the store's next
    /// save takes a new block, so its rows come after the batch's in key order.
    @Test func aSaveAfterABatchInsertComesAfterItsRows() throws {
        let database = try TemporaryDatabase()
        let context = try database.context(saving: ["first"])
        try context.performAndWait {
            _ = try context.execute(NSBatchInsertRequest(entityName: "Person", objects: [["name": "batch1"], ["name": "batch2"]]))
        }
        try Self.save(context, ["last"])
        #expect(try Self.people(database) == [["1", "first"], ["101", "batch1"], ["102", "batch2"], ["103", "last"]])
        #expect(try Self.max(database, "Person") == "202")
    }

    /// `obtainPermanentIDs(for:)` takes from the block too.
    @Test func permanentIDsComeFromTheBlock() throws {
        let database = try TemporaryDatabase()
        let context = try database.context(saving: ["Ann"])
        /// The key `obtainPermanentIDs(for:)` gives a new person named `name` (saved afterwards).
        func permanentKey(_ context: NSManagedObjectContext, _ name: String) throws -> Int64? {
            try context.performAndWait {
                let person = context.insert("Person", ["name": name])
                try context.obtainPermanentIDs(for: [person])
                let key = person.objectID.primaryKey
                try context.save()
                return key
            }
        }
        #expect(try permanentKey(context, "Bob") == 2)
        try Self.save(context, ["Cy"])
        #expect(try Self.people(database) == [["1", "Ann"], ["2", "Bob"], ["3", "Cy"]])
        #expect(try Self.max(database, "Person") == "100")
        // A coordinator whose first keys are permanent IDs takes a block for them.
        let other = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        other.persistentStoreCoordinator = try database.coordinator(PostgreSQLTestModel.make())
        #expect(try permanentKey(other, "Dee") == 101)
        try Self.save(other, ["Eve"])
        #expect(try Self.people(database).suffix(2) == [["101", "Dee"], ["102", "Eve"]])
        #expect(try Self.max(database, "Person") == "200")
    }

    /// A block size of 1 takes exactly what each save needs, as before blocks: keys follow the
    /// order in which saves began on every coordinator.
    @Test func aBlockOfOneTakesExactlyWhatEachSaveNeeds() throws {
        let database = try TemporaryDatabase()
        let options: [AnyHashable: Any] = [NSPostgreSQLKeyBlockSizeOption: NSNumber(value: 1)] // as a description's setOption gives it
        let first = try database.context(options: options, saving: ["a1", "a2"])
        _ = try database.context(options: options, saving: ["b1"])
        try Self.save(first, ["a3"])
        #expect(try Self.people(database) == [["1", "a1"], ["2", "a2"], ["3", "b1"], ["4", "a3"]])
        #expect(try Self.max(database, "Person") == "4")
    }

    /// A block size that is not a positive integer is refused when the store is added (134080),
    /// and nothing is created.
    @Test(arguments: [0, -5, "ten", 2.5, true, 2_000_000] as [any Sendable])
    func aBlockSizeThatIsNotAPositiveIntegerIsRefused(_ size: any Sendable) throws {
        let database = try TemporaryDatabase()
        let error = #expect(throws: NSError.self) {
            _ = try database.coordinator(PostgreSQLTestModel.make(), options: [NSPostgreSQLKeyBlockSizeOption: size])
        }
        #expect(error?.code == NSPersistentStoreOpenError)
        #expect(error?.localizedDescription.contains(NSPostgreSQLKeyBlockSizeOption) == true)
        #expect(try database.query("SELECT to_regclass('\"Z_METADATA\"') IS NULL") == [["t"]])
    }

    /// An insert-only save whose keys come from the block is two round trips on the writer
    /// (`BEGIN` with the insert and the notification, `COMMIT`); one that takes a block, three.
    @Test func anInsertOnlySaveFromTheBlockTakesTwoRoundTrips() throws {
        let database = try TemporaryDatabase()
        let context = try database.context(options: [NSPostgreSQLKeyBlockSizeOption: 2], saving: ["Ann"])
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first as? PostgreSQLStore)
        let writer = try #require(store.pool?.writerForTests as? LibPQConnection)
        var before = writer.roundTrips
        try Self.save(context, ["Bob"])   // key 2, from the block 1–2
        #expect(writer.roundTrips - before == 2)
        before = writer.roundTrips
        try Self.save(context, ["Cy"])    // a new block, 3–4
        #expect(writer.roundTrips - before == 3)
        #expect(try Self.people(database) == [["1", "Ann"], ["2", "Bob"], ["3", "Cy"]])
    }

    /// A transaction that sends nothing sends neither `BEGIN` nor `COMMIT`; one that does sends
    /// its `BEGIN` with its first statements, on a session with the store's timeouts; one whose
    /// first statement fails is rolled back, and the writer goes on.
    @Test func aTransactionSendsItsBeginWithItsFirstStatements() throws {
        let database = try TemporaryDatabase()
        try database.run("CREATE TABLE item (id bigint PRIMARY KEY)")
        let writer = try LibPQConnection(url: database.url, password: nil)
        let pool = database.pool(writer: writer)
        defer { pool.close() }
        let insert = "INSERT INTO item VALUES ($1)"
        // The first sets the session's timeouts and prepares BEGIN and the insert.
        try pool.inTransaction { connection in _ = try connection.execute(insert, [.int(1)]) }
        var before = writer.roundTrips
        try pool.inTransaction { connection in _ = try connection.execute(insert, [.int(2)]) }
        #expect(writer.roundTrips - before == 2) // BEGIN with the insert; COMMIT
        before = writer.roundTrips
        try pool.inTransaction { _ in }
        #expect(writer.roundTrips == before)
        let settings = "SELECT current_setting('transaction_isolation'), current_setting('lock_timeout'), current_setting('idle_in_transaction_session_timeout')"
        try pool.inTransaction { connection in _ = try connection.execute(settings, []) } // prepares it
        before = writer.roundTrips
        try pool.inTransaction { connection in
            _ = try connection.execute(insert, [.int(3)])
            let rows = try connection.execute(settings, [])
            #expect([rows.text(0, 0), rows.text(0, 1), rows.text(0, 2)] == ["read committed", "30s", "1min"])
        }
        #expect(writer.roundTrips - before == 3) // BEGIN with the insert; the select; COMMIT
        #expect(throws: PostgreSQLError.self) {
            try pool.inTransaction { connection in try connection.executeAll([PostgreSQLStatement(sql: insert, parameters: [.int(1)])]) }
        }
        try pool.inTransaction { connection in try connection.executeAll([PostgreSQLStatement(sql: insert, parameters: [.int(4)])]) }
        #expect(try database.query("SELECT id FROM item ORDER BY 1") == [["1"], ["2"], ["3"], ["4"]])
    }

    /// The server ends the writer's session while it is idle, and the client is not told (a
    /// network that went without a word: here a connection that can't read ahead). A writer in
    /// steady use sends its `BEGIN` with its statements, and that round trip, which may have run
    /// them, is not sent again: the transaction fails, and the next connects anew. A writer idle
    /// for longer than the pool's quiet interval sends a lone `BEGIN` first, which finds the
    /// session gone and is sent again on a new one: the transaction succeeds.
    @Test func aWriterIdleForLongChecksItsSessionWithALoneBegin() throws {
        let database = try TemporaryDatabase()
        try database.run("CREATE TABLE item (id bigint PRIMARY KEY)")
        let connect = { () throws -> any PostgreSQLConnection in Unwarned(try LibPQConnection(url: database.url, password: nil)) }
        let pool = database.pool(writer: try connect(), connect: connect)
        defer { pool.close() }
        func insert(_ id: Int64) throws {
            try pool.inTransaction { connection in _ = try connection.execute("INSERT INTO item VALUES ($1)", [.int(id)]) }
        }
        func endTheWritersSession() throws {
            #expect(try database.query("""
                SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
                """) == [["t"]])
        }
        try insert(1)
        try endTheWritersSession()
        #expect(throws: PostgreSQLError.self) { try insert(2) }   // in steady use: not sent again
        try insert(3)                                              // a new session
        pool.quietInterval = .milliseconds(100)
        try endTheWritersSession()
        Thread.sleep(forTimeInterval: 0.2)
        try insert(4)                                              // idle: a lone BEGIN, sent again
        #expect(try database.query("SELECT id FROM item ORDER BY 1") == [["1"], ["3"], ["4"]])
        // The new session has the timeouts too.
        let settings = try pool.inTransaction { connection in
            let rows = try connection.execute("SELECT current_setting('lock_timeout'), current_setting('idle_in_transaction_session_timeout')", [])
            return [rows.text(0, 0), rows.text(0, 1)]
        }
        #expect(settings == ["30s", "1min"])
    }

    /// The writer's session is ended by the server while idle: the pool reads what the server
    /// sent meanwhile, finds it so, and begins the transaction on a new session.
    @Test func aSaveFromTheBlockGoesOnAfterTheServerEndsTheWritersSession() throws {
        let database = try TemporaryDatabase()
        let context = try database.context(saving: ["Ann"])
        try database.query("""
            SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
            """).forEach { #expect($0 == ["t"]) }
        try Self.save(context, ["Bob"])
        #expect(try Self.people(database) == [["1", "Ann"], ["2", "Bob"]])
    }

    // MARK: Helpers

    /// A LibPQ connection that can't tell a session ended while idle
    /// (``PostgreSQLConnection/wasEndedWhileIdle()``'s default), as one whose network broke.
    private final class Unwarned: PostgreSQLConnection {
        let base: LibPQConnection
        init(_ base: LibPQConnection) { self.base = base }
        func execute(_ sql: String, _ parameters: [PostgreSQLParameter]) throws(PostgreSQLError) -> any PostgreSQLRows {
            try base.execute(sql, parameters)
        }
        func run(_ sql: String) throws(PostgreSQLError) { try base.run(sql) }
        func executeAllKeepingRows(_ statements: [PostgreSQLStatement]) throws(PostgreSQLError) -> [any PostgreSQLRows] {
            try base.executeAllKeepingRows(statements)
        }
        func close() { base.close() }
    }

    private static func save(_ context: NSManagedObjectContext, _ names: [String]) throws {
        try context.performAndWait {
            for name in names { context.insert("Person", ["name": name]) }
            try context.save()
        }
    }

    private static func people(_ database: TemporaryDatabase) throws -> [[String?]] {
        try database.query("SELECT \"Z_PK\", \"ZNAME\" FROM \"ZPERSON\" ORDER BY 1")
    }

    private static func max(_ database: TemporaryDatabase, _ entity: String) throws -> String? {
        try database.query("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = '\(entity)'").first?.first ?? nil
    }
}
