import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

extension TemporaryDatabase {
    /// A private-queue context of a new coordinator of this database's store (the test model),
    /// with a person of each of `names` saved.
    func context(options: [AnyHashable: Any]? = nil, saving names: [String]) throws -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = try coordinator(PostgreSQLTestModel.make(), options: options)
        try context.performAndWait {
            for name in names { context.insert("Person", ["name": name]) }
            try context.save()
        }
        return context
    }

    /// A connection pool of this database with one reader and the default timeouts, whose writer
    /// is `writer` and whose new sessions `connect` makes (libpq's, by default), as a store's is.
    func pool(writer: any PostgreSQLConnection,
              connect: (() throws -> any PostgreSQLConnection)? = nil) -> PostgreSQLConnectionPool {
        let url = url
        return PostgreSQLConnectionPool(writer: writer, maximumReaders: 1, timeouts: PostgreSQLTimeouts(options: nil),
                                        connect: connect ?? { try LibPQConnection(url: url, password: nil) },
                                        closedError: { NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreSaveError) })
    }

    /// Runs `sql` (statements without results) on this database, on a session of its own.
    func run(_ sql: String) throws {
        let connection = try LibPQConnection(url: url, password: nil)
        defer { connection.close() }
        try connection.run(sql)
    }

    /// Waits (up to 20 s) until `sql` on this database answers true.
    func waitUntil(_ sql: String) throws {
        let deadline = Date().addingTimeInterval(20)
        while try query(sql) != [["t"]] {
            guard Date() < deadline else {
                Issue.record("timed out waiting for: \(sql)")
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Waits until `count` sessions of this database wait for a lock (a row's, or an advisory one).
    func waitForSessionsWaitingOnLocks(_ count: Int) throws {
        try waitUntil("SELECT count(*) >= \(count) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
    }

    /// The deadlocks the server counted in this database, once the stores of `contexts`'
    /// coordinators are removed and every session of the database has ended (the server counts
    /// what a session met when it ends).
    func deadlocksCounted(removingTheStoresOf contexts: [NSManagedObjectContext]) throws -> Int? {
        for context in contexts {
            let coordinator = context.persistentStoreCoordinator!
            for store in coordinator.persistentStores { try coordinator.remove(store) }
        }
        try waitUntil("SELECT count(*) = 0 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        Thread.sleep(forTimeInterval: 0.5)
        let count = try query("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()").first?.first ?? nil
        return count.flatMap { Int($0) }
    }

    /// The gate of ``runAtGate(on:event:when:_:)``: a trigger on `table` that holds each update of
    /// its rows (its row locked), or each insert with `event` "INSERT", whose new row meets
    /// `condition` (SQL on `NEW`; every row without one), until advisory lock 11, which the test
    /// holds, is let go.
    func installGate(on table: String, event: String = "UPDATE", when condition: String? = nil) throws {
        let wait = "PERFORM pg_advisory_xact_lock_shared(11);"
        try run("""
            CREATE FUNCTION cd_gate() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN \(condition.map { "IF \($0) THEN \(wait) END IF;" } ?? wait) RETURN NEW; END $$;
            CREATE TRIGGER cd_gate BEFORE \(event) ON "\(table)" FOR EACH ROW EXECUTE FUNCTION cd_gate();
            """)
    }

    /// Runs `bodies` at once, with a gate (``installGate(on:event:when:)``) that holds them
    /// until every body waits for a lock. Each body starts its work on a queue of its own and
    /// calls the closure it is given when done; the next body starts once the ones before wait
    /// (the first at the gate, the next ones for a row or at the gate). Returns once all are done
    /// (records an issue after 60 s).
    func runAtGate(on table: String, event: String = "UPDATE", when condition: String? = nil,
                   _ bodies: [(@escaping @Sendable () -> Void) -> Void]) throws {
        try installGate(on: table, event: event, when: condition)
        let gate = try LibPQConnection(url: url, password: nil)
        defer { gate.close() }
        try gate.run("SELECT pg_advisory_lock(11)")
        let done = DispatchGroup()
        for (number, body) in bodies.enumerated() {
            done.enter()
            body { done.leave() }
            try waitForSessionsWaitingOnLocks(number + 1)
        }
        try gate.run("SELECT pg_advisory_unlock(11)")
        #expect(done.wait(timeout: .now() + 60) == .success, "the transactions at the gate did not end")
    }

    /// A body for ``runAtGate(on:event:_:)``: runs `work` on `context`'s queue, and notes what it
    /// throws in `errors` under `name`.
    static func atGate(_ context: NSManagedObjectContext, _ name: String, _ errors: Locked<[String: NSError]>,
                       _ work: @escaping @Sendable () throws -> Void) -> (@escaping @Sendable () -> Void) -> Void {
        { done in
            context.perform {
                do { try work() } catch { errors.withLock { $0[name] = error as NSError } }
                done()
            }
        }
    }

    /// The merge policy a test argument names: "error", "objectTrump", "storeTrump", "overwrite", "rollback".
    static func mergePolicy(named name: String) -> Any {
        switch name {
        case "objectTrump": NSMergeByPropertyObjectTrumpMergePolicy
        case "storeTrump": NSMergeByPropertyStoreTrumpMergePolicy
        case "overwrite": NSOverwriteMergePolicy
        case "rollback": NSRollbackMergePolicy
        default: NSErrorMergePolicy
        }
    }
}
