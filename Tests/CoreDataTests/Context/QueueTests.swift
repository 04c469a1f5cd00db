import Foundation
import Testing
@testable import CoreData

@Suite("Context queues")
struct QueueTests {
    @Test func performRunsBlocksInOrderOnThePrivateQueue() async throws {
        let stack = try TestStack()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        let log = Log()
        // In an async function `perform { }` picks the async overload (as on Apple platforms);
        // the fire-and-forget form is called from synchronous code.
        func enqueue(_ i: Int) { context.perform { log.append(i) } }
        for i in 0..<100 { enqueue(i) }
        let count = await context.perform { log.values.count }
        #expect(count == 100)
        #expect(log.values == Array(0..<100))
    }

    @Test func performAndWaitRunsOnTheCallingThreadAndIsReentrant() throws {
        let stack = try TestStack()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        let caller = Thread.current
        var ranOnCaller = false
        var nested = false
        context.performAndWait {
            ranOnCaller = Thread.current == caller
            context.performAndWait { nested = true } // reentrant: no deadlock
        }
        #expect(ranOnCaller)
        #expect(nested)
        let value = try context.performAndWait { () throws -> Int in
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("a", forKey: "name")
            try context.save()
            return try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car"))
        }
        #expect(value == 1)
    }

    @Test func performWithScheduleReturnsTheBlocksValue() async throws {
        let stack = try TestStack()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        let count = try await context.perform(schedule: .enqueued) { () throws -> Int in
            for i in 0..<10 { NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("\(i)", forKey: "name") }
            try context.save()
            return try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car"))
        }
        #expect(count == 10)
        await #expect(throws: NSError.self) {
            try await context.perform { () throws -> Int in
                try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Nope")).count
            }
        }
    }

    /// As Apple's, the value need not be `Sendable`: the objects a block fetched come back to a
    /// main-actor caller, and a generic wrapper as real apps write one compiles.
    @MainActor @Test func performReturnsValuesThatAreNotSendable() async throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let main = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        main.persistentStoreCoordinator = stack.coordinator
        let cars: [NSManagedObject] = try await main.perform { try main.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")) }
        #expect(cars.map { $0.value(forKey: "name") as? String } == ["a"])
        let car: NSManagedObject? = await main.perform { main.registeredObjects.first }
        #expect(car === cars.first)
        #expect(try await main.performAsync { try main.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) } == 1)
        let coordinator = stack.coordinator
        let stores: [NSPersistentStore] = await coordinator.perform { coordinator.persistentStores }
        #expect(stores.count == 1)
    }

    @Test func fetchRequestExecuteUsesTheCurrentContext() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        let names = try context.performAndWait {
            try NSFetchRequest<NSManagedObject>(entityName: "Car").execute().map { $0.value(forKey: "name") as? String }
        }
        #expect(names == ["a"])
        #expect(throws: NSError.self) { try NSFetchRequest<NSManagedObject>(entityName: "Car").execute() }
    }

    @Test func objectIDsCrossQueues() async throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "shared"])
        try stack.context.save()
        let id = car.objectID // Sendable
        let background = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        background.persistentStoreCoordinator = stack.coordinator
        let name = try await background.perform { () throws -> String? in
            try background.existingObject(with: id).value(forKey: "name") as? String
        }
        #expect(name == "shared")
    }

    @Test func uniquenessConstraintViolationIsAnError() throws {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        let stack = try TestStack(model: model)
        stack.insert("Tag", ["label": "red"])
        try stack.context.save()
        let other = stack.newContext()
        NSEntityDescription.insertNewObject(forEntityName: "Tag", into: other).setValue("red", forKey: "label")
        do {
            try other.save()
            Issue.record("should fail")
        } catch let error as NSError {
            #expect(error.code == NSManagedObjectConstraintMergeError)
        }
        #expect(try RawSQLite.query(stack.url.path, "SELECT count(*) FROM ZTAG").first?[0] == "1")
        let names = Set(try RawSQLite.query(stack.url.path, "SELECT name FROM sqlite_master WHERE type = 'index'").map { $0[0]! })
        #expect(names.contains("Z_Tag_UNIQUE_label"))
    }
}

/// A thread-safe log for queue tests.
final class Log: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Int] = []
    func append(_ value: Int) { lock.lock(); storage.append(value); lock.unlock() }
    var values: [Int] { lock.lock(); defer { lock.unlock() }; return storage }
}

extension NSManagedObjectContext {
    /// A wrapper as real apps write one (mastodon-ios, AltStore): generic, enqueued.
    fileprivate func performAsync<T>(_ block: @escaping @Sendable () throws -> T) async throws -> T {
        try await perform(schedule: .enqueued) { try block() }
    }
}
