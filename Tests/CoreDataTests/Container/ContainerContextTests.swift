import Foundation
import Testing
@testable import CoreData

@Suite("NSPersistentContainer: contexts and background tasks")
struct ContainerContextTests {
    typealias Support = ContainerTestSupport

    @Test(.timeLimit(.minutes(1)))
    func viewContextIsAMainQueueContextOnTheCoordinator() async throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try Support.loadedCarContainer(in: directory)
        let view = container.viewContext
        #expect(view.concurrencyType == .mainQueueConcurrencyType)
        #expect(view.persistentStoreCoordinator === container.persistentStoreCoordinator)
        #expect(view.parent == nil)
        #expect(container.viewContext === view)
        // Used through `perform`, it runs on the main queue (on Linux Swift Testing drains the main
        // queue off the main thread, so ask the context rather than `Thread.isMainThread`).
        let (onQueue, names) = try await view.perform { () throws -> (Bool, [String]) in
            try Support.insertCars(["view"], in: view)
            return (view.isOnQueue, try Support.carNames(in: view))
        }
        #expect(onQueue)
        #expect(names == ["view"])
    }

    @Test func viewContextIsMadeOnceUnderConcurrentFirstUse() throws {
        let container = NSPersistentContainer(name: "Car", modelDirectory: Support.carModelDirectory)
        let seen = Locked<Set<ObjectIdentifier>>([])
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            let id = ObjectIdentifier(container.viewContext)
            seen.value = seen.value.union([id]) // read-modify-write is fine: all ids must be equal anyway
        }
        #expect(seen.value == [ObjectIdentifier(container.viewContext)])
    }

    @Test func newBackgroundContextIsANewPrivateQueueContext() {
        let container = NSPersistentContainer(name: "Car", modelDirectory: Support.carModelDirectory)
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        #expect(first.concurrencyType == .privateQueueConcurrencyType)
        #expect(first.persistentStoreCoordinator === container.persistentStoreCoordinator)
        #expect(first !== second)
        #expect(first !== container.viewContext)
    }

    @Test(.timeLimit(.minutes(1)))
    func performBackgroundTaskRunsOffTheCallingThreadAndCanSave() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try Support.loadedCarContainer(in: directory)
        struct Report: Sendable { var offCaller = false, privateQueue = false, onQueue = false, saveError: String? }
        let report = Locked(Report())
        let done = DispatchSemaphore(value: 0)
        let caller = pthread_self()
        container.performBackgroundTask { context in
            var result = Report()
            result.offCaller = pthread_equal(pthread_self(), caller) == 0
            result.privateQueue = context.concurrencyType == .privateQueueConcurrencyType
            result.onQueue = context.isOnQueue
            do { try Support.insertCars(["background"], in: context) } catch { result.saveError = "\(error)" }
            report.value = result
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(report.value.offCaller)
        #expect(report.value.privateQueue)
        #expect(report.value.onQueue)
        #expect(report.value.saveError == nil)
        let check = container.newBackgroundContext()
        #expect(try check.performAndWait { try Support.carNames(in: check) } == ["background"])
    }

    @Test(.timeLimit(.minutes(1)))
    func asyncPerformBackgroundTaskReturnsTheValueAndRethrows() async throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try Support.loadedCarContainer(in: directory)
        // A block that cannot throw needs no `try`.
        let (onQueue, kind, isMain) = await container.performBackgroundTask { context in
            (context.isOnQueue, context.concurrencyType, Thread.isMainThread)
        }
        #expect(onQueue)
        #expect(kind == .privateQueueConcurrencyType)
        #expect(!isMain)
        await #expect(throws: NSError.self) {
            try await container.performBackgroundTask { context in
                try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "NoSuchEntity"))
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    @MainActor
    func asyncPerformBackgroundTaskFromTheMainActorTakesASendableBlock() async throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try Support.loadedCarContainer(in: directory)
        let (onQueue, names) = try await container.performBackgroundTask { @Sendable context in
            try Support.insertCars(["from main"], in: context)
            return (context.isOnQueue, try Support.carNames(in: context))
        }
        #expect(onQueue)
        #expect(names == ["from main"])
    }

    @Test(.timeLimit(.minutes(1)))
    func aBackgroundSaveIsSeenByAnotherBackgroundContext() async throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try Support.loadedCarContainer(in: directory)
        let id = try await container.performBackgroundTask { context -> NSManagedObjectID in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            car.setValue("Model T", forKey: "name")
            try context.save()
            return car.objectID
        }
        #expect(!id.isTemporaryID)
        let other = container.newBackgroundContext()
        let (names, name) = try await other.perform { () throws -> ([String], String?) in
            (try Support.carNames(in: other), try other.existingObject(with: id).value(forKey: "name") as? String)
        }
        #expect(names == ["Model T"])
        #expect(name == "Model T")

        // And a second container on the same file (another process) reads it too.
        let reopened = Support.carContainer(in: directory)
        #expect(Support.load(reopened) == [nil])
        #expect(try await reopened.performBackgroundTask { try Support.carNames(in: $0) } == ["Model T"])
    }
}
