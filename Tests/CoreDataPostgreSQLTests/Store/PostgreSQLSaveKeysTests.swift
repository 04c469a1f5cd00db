import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// A save's keys are taken in a short transaction of their own, in the round trip that begins the
/// save's (`PostgreSQLConnectionPool.inTransaction(prelude:_:)`), and its notification goes with
/// its inserts: `Z_PRIMARYKEY`'s row is not held while the save runs, so other servers' saves
/// into the same table go on meanwhile, and an insert-only save that takes keys costs three round
/// trips (two when its keys come from the store's block: `PostgreSQLKeyBlockTests`). Tables with
/// uniqueness constraints keep their key row to the commit.
@Suite("PostgreSQL save keys and round trips", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLSaveKeysTests {
    /// The first server's save of "Gated" waits inside its transaction (a trigger on `ZPERSON`
    /// waits for an advisory lock the test holds); the second server's save of "Free" into the
    /// same table commits meanwhile. Keys follow the order they were taken in, not the commits:
    /// each coordinator takes a block (`PostgreSQLKeyBlockTests`), the first 1–100, the second
    /// 101–200.
    @Test func anotherServersInsertingSaveIsNotHeldByAKeyRow() throws {
        let database = try TemporaryDatabase()
        let (gated, free) = try database.contextsOfTwoCoordinators(PostgreSQLTestModel.make())
        try database.installGate(on: "ZPERSON", event: "INSERT", when: #"NEW."ZNAME" = 'Gated'"#)
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
        #expect(try database.query("SELECT \"Z_PK\", \"ZNAME\" FROM \"ZPERSON\" ORDER BY 1") == [["1", "Gated"], ["101", "Free"]])
        #expect(try database.query("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = 'Person'") == [["200"]])
    }

    /// A transaction with a prelude: its keys and `BEGIN` in one round trip; a body that fails
    /// rolls back its own work but not the prelude's; a prelude that fails is thrown, and the
    /// writer goes on.
    @Test func aTransactionWithAPreludeTakesOneRoundTripToBegin() throws {
        let database = try TemporaryDatabase()
        try database.run("CREATE TABLE counter (id integer PRIMARY KEY, value bigint); INSERT INTO counter VALUES (1, 0); CREATE TABLE item (id bigint)")
        let writer = try LibPQConnection(url: database.url, password: nil)
        let pool = database.pool(writer: writer)
        defer { pool.close() }
        let take = PostgreSQLStatement(sql: "UPDATE counter SET value = value + $1 WHERE id = $2 RETURNING value", parameters: [.int(5), .int(1)], returnsRows: true)
        func insertFive() throws -> Int64 {
            try pool.inTransaction(prelude: [take]) { connection, rows in
                #expect(rows.count == 1)
                let last = rows[0].int64(0, 0)
                try connection.executeAll((last - 4...last).map { PostgreSQLStatement(sql: "INSERT INTO item VALUES ($1)", parameters: [.int($0)]) })
                return last - 4
            }
        }
        #expect(try insertFive() == 1) // the first prepares each statement (a round trip each)
        let before = writer.roundTrips
        #expect(try insertFive() == 6)
        #expect(writer.roundTrips - before == 3) // keys and BEGIN, the inserts, COMMIT
        #expect(try database.query("SELECT count(*), min(id), max(id) FROM item") == [["10", "1", "10"]])

        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try pool.inTransaction(prelude: [take]) { connection, _ in
                try connection.executeAll([PostgreSQLStatement(sql: "INSERT INTO item VALUES ($1)", parameters: [.int(99)])])
                throw Refused()
            }
        }
        #expect(try database.query("SELECT count(*), max(id) FROM item") == [["10", "10"]])
        #expect(try database.query("SELECT value FROM counter") == [["15"]])

        let missing = PostgreSQLStatement(sql: "UPDATE no_such_table SET value = 1 RETURNING value", returnsRows: true)
        #expect(throws: PostgreSQLError.self) { try pool.inTransaction(prelude: [missing]) { _, _ in } }
        try pool.inTransaction { connection in _ = try connection.execute("INSERT INTO item VALUES ($1)", [PostgreSQLParameter.int(6)]) }
        #expect(try database.query("SELECT count(*), max(id) FROM item") == [["11", "10"]])
    }

    /// Two servers inserting crossing unique values into one table: the first save inserts "b",
    /// then waits at a gate before "a"; the second (inserting "a", then "b") waits for the first's
    /// key row, which a table with uniqueness constraints keeps to the commit, instead of taking
    /// "a" and waiting for "b" while the first would wait for its "a" (a deadlock). It then meets
    /// the first's rows as a constraint conflict (133021). The server counts no deadlock.
    @Test func crossingUniqueValuesWaitForTheKeyRowAndDoNotDeadlock() throws {
        let database = try TemporaryDatabase()
        let (first, second) = try database.contextsOfTwoCoordinators(PostgreSQLTestModel.make())
        let errors = Locked<[String: NSError]>([:])
        func save(_ context: NSManagedObjectContext, _ name: String, _ labels: [String]) -> (@escaping @Sendable () -> Void) -> Void {
            TemporaryDatabase.atGate(context, name, errors) {
                for label in labels { context.insert("Tag", ["label": label]) }
                try context.save()
            }
        }
        try database.runAtGate(on: "ZTAG", event: "INSERT", when: #"NEW."ZLABEL" = 'a' AND NEW."Z_PK" = 2"#,
                               [save(first, "first", ["b", "a"]), save(second, "second", ["a", "b"])])
        let found = errors.withLock { $0 }
        #expect(found["first"] == nil, "the first save failed: \(String(describing: found["first"]))")
        #expect(found["second"]?.code == NSManagedObjectConstraintMergeError, "\(String(describing: found["second"]))")
        #expect(try database.query("SELECT \"Z_PK\", \"ZLABEL\" FROM \"ZTAG\" ORDER BY 1") == [["1", "b"], ["2", "a"]])
        #expect(try database.deadlocksCounted(removingTheStoresOf: [first, second]) == 0)
    }

    /// A save that moves unique values ("x" → "b", then "y" → "a", held at a gate before "a")
    /// and another server's upsert of "a" and "b": the save holds `Item`'s key row from its
    /// start, so the upsert waits for it instead of inserting "a" and waiting for the save's
    /// uncommitted "b" while the save waits for its "a" (a deadlock, and an upsert is never run
    /// again: 134030). The upsert then updates the moved rows.
    @Test func aSaveMovingUniqueValuesAndAnUpsertOfThemDoNotDeadlock() throws {
        let model = PostgreSQLUpsertLockTests.model()
        let database = try TemporaryDatabase()
        let (saving, upserting) = try database.contextsOfTwoCoordinators(model)
        try saving.performAndWait {
            saving.insert("Item", ["code": "x", "value": 0])
            saving.insert("Item", ["code": "y", "value": 0])
            try saving.save()
            let items = try saving.objects("Item", sortedBy: "code")
            items[0].setValue("b", forKey: "code")
            items[1].setValue("a", forKey: "code")
        }
        let errors = Locked<[String: NSError]>([:])
        try database.runAtGate(on: "ZITEM", when: #"NEW."ZCODE" = 'a'"#, [
            TemporaryDatabase.atGate(saving, "save", errors) { try saving.save() },
            TemporaryDatabase.atGate(upserting, "upsert", errors) {
                _ = try upserting.execute(NSBatchInsertRequest(entityName: "Item", objects: [["code": "a", "value": 9], ["code": "b", "value": 9]]))
            },
        ])
        #expect(errors.withLock { $0 }.isEmpty, "\(errors.withLock { $0 })")
        #expect(try database.query("SELECT \"ZCODE\", \"ZVALUE\" FROM \"ZITEM\" ORDER BY \"Z_PK\"") == [["b", "9"], ["a", "9"]])
        #expect(try database.deadlocksCounted(removingTheStoresOf: [saving, upserting]) == 0)
    }

    /// The same through the store: an insert-only save of one object that takes its keys from
    /// the database is three round trips on the writer (the keys and `BEGIN`, the insert and the
    /// notification, `COMMIT`). With a block of one key, each save takes its key.
    @Test func anInsertOnlySaveTakingItsKeysTakesThreeRoundTrips() throws {
        let database = try TemporaryDatabase()
        let context = try database.context(options: [NSPostgreSQLKeyBlockSizeOption: 1], saving: ["Ann"])
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
