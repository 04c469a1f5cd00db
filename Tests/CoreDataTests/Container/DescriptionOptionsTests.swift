import CSQLite
import Foundation
import Testing
@testable import CoreData

@Suite("NSPersistentStoreDescription: options reach the store")
struct DescriptionOptionsTests {
    typealias Support = ContainerTestSupport

    @Test func theStoreGetsTheOptions() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = Support.carContainer(in: directory)
        let description = container.persistentStoreDescriptions[0]
        description.timeout = 3
        description.setValue("NORMAL" as NSString, forPragmaNamed: "synchronous")
        #expect(Support.load(container) == [nil])
        let options = try #require(container.persistentStoreCoordinator.persistentStores.first?.options)
        #expect(options[NSMigratePersistentStoresAutomaticallyOption] as? Bool == true)
        #expect(options[NSInferMappingModelAutomaticallyOption] as? Bool == true)
        #expect(options[NSPersistentStoreTimeoutOption] as? Double == 3)
        #expect((options[NSSQLitePragmasOption] as? [String: Any])?["synchronous"] as? String == "NORMAL")
    }

    @Test func theSQLiteStoreHonoursPragmas() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = Support.carContainer(in: directory, name: "Plain")
        let tuned = Support.carContainer(in: directory, name: "Tuned")
        tuned.persistentStoreDescriptions[0].setValue("DELETE" as NSString, forPragmaNamed: "journal_mode")
        tuned.persistentStoreDescriptions[0].setValue(7 as NSNumber, forPragmaNamed: "user_version")
        #expect(Support.load(plain) == [nil])
        #expect(Support.load(tuned) == [nil])
        // journal_mode = WAL persists in the file; DELETE is SQLite's default for a new connection.
        #expect(try RawSQLite.query(directory.appendingPathComponent("Plain.sqlite").path, "PRAGMA journal_mode") == [["wal"]])
        #expect(try RawSQLite.query(directory.appendingPathComponent("Tuned.sqlite").path, "PRAGMA journal_mode") == [["delete"]])
        #expect(try RawSQLite.query(directory.appendingPathComponent("Tuned.sqlite").path, "PRAGMA user_version") == [["7"]])
    }

    @Test func readOnlyStoresRefuseSaves() async throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try Support.loadedCarContainer(in: directory)
        try await writer.performBackgroundTask { try Support.insertCars(["kept"], in: $0) }

        let reader = Support.carContainer(in: directory)
        reader.persistentStoreDescriptions[0].isReadOnly = true
        #expect(Support.load(reader) == [nil])
        #expect(reader.persistentStoreCoordinator.persistentStores.first?.isReadOnly == true)
        #expect(try await reader.performBackgroundTask { try Support.carNames(in: $0) } == ["kept"])
        await #expect(throws: NSError.self) {
            try await reader.performBackgroundTask { try Support.insertCars(["refused"], in: $0) }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func theTimeoutBoundsTheWaitForALockedDatabase() async throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = Support.carContainer(in: directory)
        container.persistentStoreDescriptions[0].timeout = 0.2
        #expect(Support.load(container) == [nil])
        // Another connection holds the write lock for the whole test: the save waits 0.2 s for it,
        // not the 240 s default (nor the 5 s the store uses without the option), then fails.
        var db: OpaquePointer?
        #expect(sqlite3_open(directory.appendingPathComponent("Car.sqlite").path, &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        #expect(sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        defer { sqlite3_exec(db, "ROLLBACK", nil, nil, nil) }
        // Timed inside the block, around the save alone: how long the task waited to be
        // scheduled (long in a full parallel run under ThreadSanitizer on 2 cores) is not the
        // store's business.
        let (failed, waited) = await container.performBackgroundTask { context -> (Bool, Duration) in
            let start = ContinuousClock.now
            do {
                try Support.insertCars(["blocked"], in: context)
                return (false, ContinuousClock.now - start)
            } catch {
                return (true, ContinuousClock.now - start)
            }
        }
        #expect(failed)
        #expect(waited < .seconds(4))
    }
}
