import CSQLite
import Foundation
import Synchronization
import Testing
@testable import CoreData

@Suite("The reader pool")
struct ReaderPoolTests {
    private func sqliteStore(_ stack: TestStack) throws -> SQLiteStore {
        try #require(stack.coordinator.persistentStores.first as? SQLiteStore)
    }

    @Test func readersOpenOnDemandAndNeverBeyondThePoolSize() throws {
        let stack = try TestStack(options: [NSPersistentStoreConnectionPoolMaxSizeKey: 2])
        let store = try sqliteStore(stack)
        #expect(store.readerCounts.maximum == 2)
        for i in 0..<200 { stack.insert("Car", ["name": "car \(i)"]) }
        try stack.context.save()
        #expect(store.readerCounts.open == 0, "a save needs no reader")
        _ = try stack.fetch("Car")
        #expect(store.readerCounts.open == 1)

        let log = EventLog()
        let threads = onContextThreads(6, stack.coordinator) { _, context in
            for _ in 0..<30 {
                do {
                    let cars = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
                    if cars.count != 200 { log.fail("fetched \(cars.count)") }
                } catch {
                    log.fail("\(error)")
                }
            }
        }
        for thread in threads { #expect(finished(thread)) }
        #expect(log.errors.isEmpty, "\(log.errors)")
        #expect(store.readerCounts.peak <= 2)
        #expect(store.readerCounts.open <= 2)
    }

    @Test func theDefaultPoolSize() throws {
        let store = try sqliteStore(try TestStack())
        #expect(store.readerCounts.maximum == SQLiteStore.defaultReaderCount)
    }

    @Test(arguments: [NSNumber(value: 3), "3"] as [any Sendable])
    func thePoolSizeAsANumberOrText(value: any Sendable) throws {
        let store = try sqliteStore(try TestStack(options: [NSPersistentStoreConnectionPoolMaxSizeKey: value]))
        #expect(store.readerCounts.maximum == 3)
    }

    @Test(arguments: [0, -2, "many", 2.5, Data()] as [any Sendable])
    func aBadPoolSizeIsRefused(value: any Sendable) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-pool-\(UUID().uuidString).sqlite")
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                                               options: [NSPersistentStoreConnectionPoolMaxSizeKey: value])
            Issue.record("should throw")
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == NSPersistentStoreOpenError)
            #expect(error.localizedDescription.contains(NSPersistentStoreConnectionPoolMaxSizeKey))
        }
        #expect(coordinator.persistentStores.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: url.path), "nothing was created")
    }

    @Test func readersAreReadOnlyAndHaveThePredicateFunctions() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "Ärger"])
        try stack.context.save()
        let store = try sqliteStore(stack)
        try store.withReader { reader in
            #expect(sqlite3_db_readonly(reader.handle, "main") == 1)
            #expect(throws: NSError.self) { try reader.execute("DELETE FROM ZCAR") }
        }
        // Case- and diacritic-insensitive matching runs in SQL functions registered per connection.
        let found = try stack.fetch("Car") { $0.predicate = NSPredicate(format: "name ==[cd] %@", "arger") }
        #expect(found.count == 1)
    }

    @Test func aBorrowerWaitsForAConnectionWhenThePoolIsFull() throws {
        let pool = SQLiteReaderPool(maximum: 1, connect: { try SQLiteConnection(path: ":memory:") },
                                    closedError: { NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreOperationError) })
        let log = EventLog()
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let first = onNewThread("first") {
            try? pool.withReader { _ in
                log.record("first borrowed")
                holding.signal()
                release.wait()
                log.record("first returns")
            }
        }
        #expect(finished(holding))
        let second = onNewThread("second") {
            try? pool.withReader { _ in log.record("second borrowed") }
        }
        // The second borrower cannot get a connection while the only one is lent.
        #expect(!finished(second, within: 0.3))
        release.signal()
        #expect(finished(first))
        #expect(finished(second))
        #expect(log.recorded == ["first borrowed", "first returns", "second borrowed"])
        #expect(pool.peakOpenConnections == 1)
    }

    @Test func aClosedPoolRefusesBorrowersAndClosesLentConnectionsOnReturn() throws {
        let pool = SQLiteReaderPool(maximum: 2, connect: { try SQLiteConnection(path: ":memory:") },
                                    closedError: { NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreOperationError) })
        try pool.withReader { _ in }
        #expect(pool.openConnections == 1)
        try pool.withReader { _ in
            try pool.withReader { _ in } // a second connection while the first is lent
            pool.close()
            #expect(pool.openConnections == 1, "the lent connection stays open until it comes back")
        }
        #expect(pool.openConnections == 0)
        #expect(throws: NSError.self) { try pool.withReader { _ in } }
    }
}
