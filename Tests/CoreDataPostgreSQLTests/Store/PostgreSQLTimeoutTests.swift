import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// No save waits forever for rows another server holds, and a request that can't reconnect
/// reports its own failure.
@Suite("PostgreSQL timeouts and failures", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLTimeoutTests {
    /// A server that hangs holding Ann's row: a save of Ann gives up after the store's timeout
    /// (``NSPersistentStoreTimeoutOption``, 1 s) with 134030 and SQLSTATE 55P03, saving nothing.
    /// The holder lets go after 5 s, so a save that waited for it would succeed, late.
    @Test func aSaveWaitingForARowLockGivesUpAfterTheTimeout() throws {
        let database = try TemporaryDatabase()
        let context = try database.context(options: [NSPersistentStoreTimeoutOption: 1], saving: ["Ann"])
        let held = DispatchSemaphore(value: 0), released = DispatchSemaphore(value: 0)
        let url = database.url
        Thread.detachNewThread {
            let holder = try? LibPQConnection(url: url, password: nil)
            try? holder?.run("BEGIN; SELECT 1 FROM \"ZPERSON\" FOR UPDATE")
            held.signal()
            Thread.sleep(forTimeInterval: 5)
            holder?.close()
            released.signal()
        }
        held.wait()
        defer { released.wait() }
        let started = Date()
        let error = context.performAndWait { () -> NSError? in
            do {
                try context.objects("Person")[0].setValue("Anna", forKey: "name")
                try context.save()
                return nil
            } catch {
                return error as NSError
            }
        }
        #expect(Date().timeIntervalSince(started) < 4, "the save waited for the row")
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSPersistentStoreSaveError)
        #expect(error?.userInfo[NSPostgreSQLStateErrorKey] as? String == "55P03")
        #expect(error?.localizedDescription.contains("NSPersistentStoreTimeoutOption") == true)
        #expect(try database.query("SELECT \"ZNAME\" FROM \"ZPERSON\"") == [["Ann"]])
    }

    /// The writer's transactions carry the timeouts: a lock wait of the store's timeout, and the
    /// server ends a transaction of this store left idle (its server hung mid-save) somewhat later.
    @Test func theWritersTransactionsCarryTheTimeouts() throws {
        let database = try TemporaryDatabase()
        let options: [AnyHashable: Any] = [NSPersistentStoreTimeoutOption: 2]
        // (Each coordinator kept while its store is used.)
        let coordinator = try database.coordinator(PostgreSQLTestModel.make(), options: options)
        let store = try #require(coordinator.persistentStores.first as? PostgreSQLStore)
        let settings = try store.inTransaction { connection in
            let rows = try connection.execute("SELECT current_setting('lock_timeout'), current_setting('idle_in_transaction_session_timeout')", [])
            return [rows.text(0, 0), rows.text(0, 1)]
        }
        #expect(settings == ["2s", "32s"])
        let defaultCoordinator = try database.coordinator(PostgreSQLTestModel.make())
        let defaults = try #require(defaultCoordinator.persistentStores.first as? PostgreSQLStore)
        let defaultSettings = try defaults.inTransaction { connection in
            try connection.execute("SELECT current_setting('lock_timeout')", []).text(0, 0)
        }
        #expect(defaultSettings == "30s")
        withExtendedLifetime((coordinator, defaultCoordinator)) {}
    }

    /// An answer of another shape than expected (no rows) reads as NULL, never past the result.
    @Test func aRowTheResultDoesNotHaveReadsAsNull() throws {
        let connection = try LibPQConnection(url: PostgreSQLTestServer.url!, password: nil)
        defer { connection.close() }
        let rows = try connection.execute("SELECT 1::bigint, 'a'::text WHERE false", [])
        #expect(rows.count == 0)
        #expect(rows.isNull(0, 0) && rows.int64(0, 0) == 0 && rows.double(0, 0) == 0 && rows.text(0, 1) == "" && rows.bytes(0, 1).isEmpty)
        let one = try connection.execute("SELECT 7::bigint", [])
        #expect(one.int64(0, 0) == 7 && one.int64(0, 1) == 0 && one.isNull(1, 0))
    }

    /// The server refuses new sessions and ends the store's: a save and a fetch fail with their
    /// own errors (134030, 134070) naming the cause, not opening's 134080.
    @Test func aReconnectFailureIsTheRequestsOwnError() throws {
        let database = try TemporaryDatabase()
        let context = try database.context(saving: ["Ann"])
        try PostgreSQLTestServer.run("""
            ALTER DATABASE "\(database.name)" ALLOW_CONNECTIONS false;
            SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = '\(database.name)'
            """)
        defer { try? PostgreSQLTestServer.run("ALTER DATABASE \"\(database.name)\" ALLOW_CONNECTIONS true") }
        let (saveError, fetchError) = context.performAndWait { () -> (NSError?, NSError?) in
            context.insert("Person", ["name": "Bob"])
            var errors: (NSError?, NSError?) = (nil, nil)
            do { try context.save() } catch { errors.0 = error as NSError }
            do { _ = try context.objects("Person") } catch { errors.1 = error as NSError }
            return errors
        }
        #expect(saveError?.code == NSPersistentStoreSaveError)
        #expect(fetchError?.code == NSPersistentStoreOperationError)
        for error in [saveError, fetchError] {
            #expect(error?.localizedDescription.contains("not currently accepting connections") == true, "\(String(describing: error))")
        }
    }
}

/// A session that can't roll back is never lent again.
@Suite("PostgreSQL transactions")
struct PostgreSQLTransactionTests {
    /// A connection whose `ROLLBACK` fails (for a reason other than a lost session).
    private final class RefusingRollback: PostgreSQLConnection {
        var statements: [String] = []
        func execute(_ sql: String, _ parameters: [PostgreSQLParameter]) throws(PostgreSQLError) -> any PostgreSQLRows {
            throw PostgreSQLError(message: "unused", sqlState: nil, isConnectionFailure: false)
        }
        func run(_ sql: String) throws(PostgreSQLError) {
            statements.append(sql)
            if sql == "ROLLBACK" { throw PostgreSQLError(message: "out of memory", sqlState: "53200", isConnectionFailure: false) }
        }
        func close() {}
    }

    private struct Refused: Error {}

    @Test func aReaderThatCannotRollBackIsDiscarded() throws {
        let connection = RefusingRollback()
        let pool = ReaderPool<any PostgreSQLConnection>(maximum: 1, connect: { connection }, close: { $0.close() },
                                                         closedError: { Refused() })
        #expect(throws: PostgreSQLError.self) {
            try pool.withReader(discardingIf: { ($0 as? PostgreSQLError)?.isSessionLost == true }) { reader in
                try reader.transaction { throw Refused() }
            }
        }
        #expect(connection.statements == ["BEGIN", "ROLLBACK"])
        #expect(pool.openConnections == 0, "the reader went back to the pool inside its transaction")
    }
}
