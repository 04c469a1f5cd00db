import CSQLite
import Foundation
import Synchronization
import Testing
@testable import CoreData

/// Reads run on the store's reader connections and never wait for a save. Every check is by the
/// order in which threads report, with generous timeouts that only a stuck thread reaches.
@Suite("Reads never wait for a write")
struct ReadersAndWriterTests {
    /// A stack with `count` saved cars named "car 0", "car 1", …
    private func stack(cars count: Int) throws -> TestStack {
        let stack = try TestStack()
        for i in 0..<count { stack.insert("Car", ["name": "car \(i)", "year": 1950]) }
        try stack.context.save()
        return stack
    }

    /// A fault, a fetch and a count on a new context of `stack`, reported to `log` as
    /// "read <fault's name> <fetched> <counted>".
    private func read(_ stack: TestStack, fault id: NSManagedObjectID, log: EventLog) -> DispatchSemaphore {
        let reader = privateContext(stack.coordinator)
        return onNewThread("reader") {
            reader.performAndWait {
                do {
                    let name = try reader.existingObject(with: id).value(forKey: "name") as? String
                    let fetched = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).count
                    let counted = try reader.countOf("Car")
                    log.record("read \(name ?? "nil") \(fetched) \(counted)")
                } catch {
                    log.fail("read: \(error)")
                }
            }
        }
    }

    /// Saves one new car from a new context of `stack` on another thread, reporting "saved".
    private func saveOneCar(_ stack: TestStack, log: EventLog) -> DispatchSemaphore {
        let saver = privateContext(stack.coordinator)
        return onNewThread("saver") {
            saver.performAndWait {
                NSEntityDescription.insertNewObject(forEntityName: "Car", into: saver).setValue("new", forKey: "name")
                do {
                    try saver.save()
                    log.record("saved")
                } catch {
                    log.fail("save: \(error)")
                }
            }
        }
    }

    @Test func faultFetchAndCountFinishWhileASaveIsInsideItsTransaction() throws {
        let stack = try stack(cars: 10)
        let id = try stack.fetch("Car")[0].objectID
        let store = try #require(stack.coordinator.persistentStores.first as? SQLiteStore)
        let inTransaction = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        store.beforeCommit = {
            inTransaction.signal()
            release.wait()
        }
        let log = EventLog()
        let saved = saveOneCar(stack, log: log)
        #expect(finished(inTransaction), "the save reached its transaction")

        // The saving thread holds the store's writer, inside BEGIN IMMEDIATE … COMMIT.
        let readDone = finished(read(stack, fault: id, log: log), within: 30)
        log.record("released")
        release.signal()
        #expect(readDone, "the read finished while the save held the writer")
        #expect(finished(saved))
        store.beforeCommit = nil

        #expect(log.errors.isEmpty, "\(log.errors)")
        // The read saw the last commit, not the save under way.
        #expect(log.recorded == ["read car 0 10 10", "released", "saved"])
        #expect(try stack.newContext().countOf("Car") == 11)
    }

    @Test func readsFinishWhileAnotherConnectionHoldsTheFileWriteLock() throws {
        let stack = try stack(cars: 10)
        let id = try stack.fetch("Car")[0].objectID
        let store = try #require(stack.coordinator.persistentStores.first as? SQLiteStore)
        var raw: OpaquePointer?
        try #require(sqlite3_open(stack.url.path, &raw) == SQLITE_OK)
        defer { sqlite3_close(raw) }
        try #require(sqlite3_exec(raw, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)

        let log = EventLog()
        let saved = saveOneCar(stack, log: log)
        // The save takes the store's writer and then waits (busy handler, up to 5 s) for the
        // other connection's write lock. Wait until the writer is taken.
        var saving = false
        for _ in 0..<2_000 where !saving {
            if store.writeLock.try() {
                store.writeLock.unlock()
                Thread.sleep(forTimeInterval: 0.002)
            } else {
                saving = true
            }
        }
        #expect(saving, "the save took the writer")

        let readDone = finished(read(stack, fault: id, log: log), within: 4)
        log.record("released")
        #expect(sqlite3_exec(raw, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
        #expect(readDone, "the read finished while the file's write lock was held")
        #expect(finished(saved))

        #expect(log.errors.isEmpty, "\(log.errors)")
        #expect(log.recorded == ["read car 0 10 10", "released", "saved"])
    }

    @Test(arguments: [false, true])
    func concurrentReadsWhileAnotherContextSavesRepeatedly(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        for i in 0..<20 { stack.insert("Car", ["name": "seed \(i)", "year": 1950]) }
        try stack.context.save()
        let saves = 40, carsPerSave = 5
        let log = EventLog()
        let writing = Flag(true)

        let writer = privateContext(stack.coordinator)
        let wrote = onNewThread("writer") {
            writer.performAndWait {
                for save in 0..<saves {
                    for i in 0..<carsPerSave {
                        NSEntityDescription.insertNewObject(forEntityName: "Car", into: writer).setValue("\(save)-\(i)", forKey: "name")
                    }
                    do { try writer.save() } catch { log.fail("save \(save): \(error)") }
                }
            }
            writing.clear()
        }
        let readers = onContextThreads(4, stack.coordinator) { reader, context in
            var last = 0
            var rounds = 0
            while writing.isSet || rounds < 3 {
                rounds += 1
                do {
                    // Saves only add rows: every count is at least the one before.
                    let before = try context.countOf("Car")
                    let cars = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
                    let after = try context.countOf("Car")
                    if !(last <= before && before <= cars.count && cars.count <= after) {
                        log.fail("reader \(reader): counts \(last), \(before), \(cars.count), \(after)")
                    }
                    last = after
                    // A fault on the newest car, read back from the store.
                    if let car = cars.last {
                        context.refresh(car, mergeChanges: false)
                        if car.value(forKey: "name") == nil { log.fail("reader \(reader): a fault came back empty") }
                    }
                } catch {
                    log.fail("reader \(reader): \(error)")
                }
            }
        }
        #expect(finished(wrote))
        for reader in readers { #expect(finished(reader)) }
        #expect(log.errors.isEmpty, "\(log.errors)")
        #expect(try stack.newContext().countOf("Car") == 20 + saves * carsPerSave)
    }

    @Test func removingTheStoreWhileContextsReadAndSaveGivesErrorsNotCrashes() throws {
        let stack = try stack(cars: 30)
        let ids = try stack.fetch("Car").map(\.objectID)
        let store = try #require(stack.coordinator.persistentStores.first)
        let log = EventLog()
        let removed = Flag(false)
        let threads = onContextThreads(3, stack.coordinator) { thread, context in
            // Until 20 rounds after the removal.
            var roundsAfter = 0
            while roundsAfter < 20 {
                if removed.isSet { roundsAfter += 1 }
                do {
                    _ = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).count
                    _ = try context.countOf("Car")
                    _ = context.object(with: ids[thread]).value(forKey: "name")
                    context.reset()
                    if thread == 0 {
                        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("x", forKey: "name")
                        try context.save()
                    }
                } catch let error as NSError {
                    if !removed.isSet { log.fail("before the removal began: \(error)") }
                    if error.domain != NSCocoaErrorDomain { log.fail("not Core Data's error: \(error)") }
                    context.rollback()
                }
                log.tick()
            }
        }
        // Remove the store once every thread is well under way.
        for _ in 0..<6_000 where log.ticks < 30 { Thread.sleep(forTimeInterval: 0.005) }
        removed.set() // first: a thread may fail as soon as the removal starts
        try stack.coordinator.remove(store)
        for thread in threads { #expect(finished(thread)) }
        #expect(log.errors.isEmpty, "\(log.errors)")
        #expect(throws: NSError.self) { try stack.context.countOf("Car") }
        // The file is intact and opens again.
        #expect(try stack.reopen().context.countOf("Car") >= 30)
    }
}
