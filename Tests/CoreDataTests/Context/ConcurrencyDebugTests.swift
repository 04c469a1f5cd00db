import Foundation
import Testing
@testable import CoreData
import TestSupport

/// The run-time concurrency checker (`COREDATA_CONCURRENCY_DEBUG=1`). Each violation runs in a
/// child process (an exit test) that turns the checker on itself, so these tests do not depend
/// on the environment the suite runs in.
@Suite("Concurrency checker")
struct ConcurrencyDebugTests {
    /// Reads `object` from the calling thread, named `threadName` first.
    private static func touchOffQueue(_ object: NSManagedObject, threadName: String) {
        Thread.current.name = threadName
        _ = object.value(forKey: "name")
    }

    @Test func theSuiteRunsWithTheCheckerOn() {
        // README's and CI's test command sets COREDATA_CONCURRENCY_DEBUG=1.
        #expect(ProcessInfo.processInfo.environment["COREDATA_CONCURRENCY_DEBUG"] == "1"
                || ProcessInfo.processInfo.environment["CI"] == nil,
                "CI must run the suite with COREDATA_CONCURRENCY_DEBUG=1")
    }

    @Test func readingAnObjectOffItsContextsQueueStopsWithANamingMessage() async throws {
        let folder = try TemporaryFolder()
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = folder.path as String] in
            setenv("COREDATA_CONCURRENCY_DEBUG", "1", 1)
            let stack = try TestStack(directory: URL(fileURLWithPath: path))
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.name = "importer"
            context.persistentStoreCoordinator = stack.coordinator
            let car = context.performAndWait { () -> NSManagedObject in
                let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
                car.setValue("in the queue", forKey: "name")
                return car
            }
            Self.touchOffQueue(car, threadName: "offender")
        }
        withExtendedLifetime(folder) {} // removed once the child has exited, not before
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("concurrency violation"))
        #expect(message.contains("'importer'"), "names the context")
        #expect(message.contains("<Car "), "names the object")
        #expect(message.contains("'name'"), "names the property")
        #expect(message.contains("offender"), "names the thread")
    }

    @Test func fetchingOffTheQueueStops() async throws {
        let folder = try TemporaryFolder()
        await #expect(processExitsWith: .failure) { [path = folder.path as String] in
            setenv("COREDATA_CONCURRENCY_DEBUG", "1", 1)
            let stack = try TestStack(directory: URL(fileURLWithPath: path))
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = stack.coordinator
            _ = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
        }
        withExtendedLifetime(folder) {} // removed once the child has exited, not before
    }

    @Test func typedAccessorsAreCheckedToo() async throws {
        let folder = try TemporaryFolder()
        await #expect(processExitsWith: .failure) { [path = folder.path as String] in
            setenv("COREDATA_CONCURRENCY_DEBUG", "1", 1)
            let stack = try TestStack(directory: URL(fileURLWithPath: path))
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = stack.coordinator
            let car = context.performAndWait { NSEntityDescription.insertNewObject(forEntityName: "Car", into: context) }
            car.setValue("off", forKey: "name")
        }
        withExtendedLifetime(folder) {} // removed once the child has exited, not before
    }

    @Test func theRightWayPassesUnderTheChecker() async throws {
        let folder = try TemporaryFolder()
        await #expect(processExitsWith: .success) { [path = folder.path as String] in
            setenv("COREDATA_CONCURRENCY_DEBUG", "1", 1)
            let stack = try TestStack(directory: URL(fileURLWithPath: path))
            let main = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            main.persistentStoreCoordinator = stack.coordinator
            let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            child.parent = main
            let id = try child.performAndWait { () throws -> NSManagedObjectID in
                let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
                car.setValue("ok", forKey: "name")
                try child.save()
                return car.objectID // IDs cross queues
            }
            try main.performAndWait {
                _ = main.object(with: id).value(forKey: "name")
                try main.save()
            }
            _ = main.hasChanges // allowed off the queue (seeds 001 and 002 do it)
        }
        withExtendedLifetime(folder) {} // removed once the child has exited, not before
    }
}
