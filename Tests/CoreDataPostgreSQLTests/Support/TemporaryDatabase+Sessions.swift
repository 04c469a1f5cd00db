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
}
