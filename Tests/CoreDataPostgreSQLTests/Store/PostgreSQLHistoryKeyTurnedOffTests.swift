import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// A PostgreSQL store that recorded history, opened without `NSPersistentHistoryTrackingKey`:
/// read-only, as Apple's store and the SQLite store (`HistoryKeyTurnedOffTests`).
@Suite("PostgreSQL store opened without the history key", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLHistoryKeyTurnedOffTests {
    @Test func aStoreWithHistoryOpensReadOnlyWithoutTheKeyUntilItsHistoryIsPurged() throws {
        let database = try TemporaryDatabase()
        let tracked = try PostgreSQLHistoryTests.context(database)
        try tracked.performAndWait {
            tracked.insert("Person", ["name": "tracked"])
            try tracked.save()
        }

        let plain = try PostgreSQLHistoryTests.context(database, options: nil)
        #expect(plain.persistentStoreCoordinator?.persistentStores.first?.isReadOnly == true)
        #expect(try plain.performAndWait { try plain.objects("Person").count } == 1, "it reads")
        let error = plain.performAndWait {
            plain.insert("Person", ["name": "lost"])
            return #expect(throws: NSError.self) { try plain.save() }
        }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSPersistentStoreSaveError)
        #expect(error?.localizedDescription.contains("read-only") == true)
        #expect(try database.query("SELECT count(*) FROM \"ZPERSON\"") == [["1"]])
        #expect(!(tracked.persistentStoreCoordinator?.persistentStores.first?.isReadOnly ?? true), "with the key it is read-write")

        // Purged (with the key), the store opens read-write without it.
        _ = try tracked.performAndWait { try tracked.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: Date.distantFuture)) }
        let afterPurge = try PostgreSQLHistoryTests.context(database, options: nil)
        #expect(afterPurge.persistentStoreCoordinator?.persistentStores.first?.isReadOnly == false)
        try afterPurge.performAndWait {
            afterPurge.insert("Person", ["name": "untracked"])
            try afterPurge.save()
        }
        #expect(try database.query("SELECT count(*) FROM \"ATRANSACTION\"") == [["0"]])
    }

    @Test func aStoreThatNeverRecordedHistoryOpensReadWriteWithoutTheKey() throws {
        let database = try TemporaryDatabase()
        _ = try PostgreSQLHistoryTests.context(database) // the tables, no rows
        let plain = try PostgreSQLHistoryTests.context(database, options: nil)
        #expect(plain.persistentStoreCoordinator?.persistentStores.first?.isReadOnly == false)
    }
}
