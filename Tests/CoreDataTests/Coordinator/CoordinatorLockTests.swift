import Foundation
import Testing
@testable import CoreData

extension NSPersistentStoreCoordinator: DeprecatedLocking {}

/// `NSPersistentStoreCoordinator.lock()`, `unlock()`, `tryLock()` (deprecated): a recursive lock
/// that keeps other threads, their saves and the coordinator's blocks out while held.
@Suite(.timeLimit(.minutes(1))) struct CoordinatorLockTests {
    @Test func theLockKeepsOtherThreadsOutUntilItIsGivenBackAsOftenAsTaken() throws {
        let stack = try TestStack()
        let coordinator: any DeprecatedLocking = stack.coordinator
        #expect(coordinator.anotherThreadTakes)
        coordinator.lock()
        coordinator.lock() // recursive
        #expect(coordinator.tryLock()) // the holder again
        coordinator.unlock()
        #expect(!coordinator.anotherThreadTakes, "held: another thread cannot take it")
        coordinator.unlock()
        #expect(!coordinator.anotherThreadTakes, "still held once")
        coordinator.unlock()
        #expect(coordinator.anotherThreadTakes, "given back as often as taken")
    }

    @Test func anotherThreadsSaveAndBlocksWaitForTheHolderWhoMayUseTheCoordinator() throws {
        let stack = try TestStack()
        try withExtendedLifetime(stack) {
            let coordinator: any DeprecatedLocking = stack.coordinator
            let background = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            background.persistentStoreCoordinator = stack.coordinator
            coordinator.lock()
            let saved = DispatchSemaphore(value: 0)
            background.perform {
                let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: background)
                car.setValue("Waiting", forKey: "name")
                try? background.save() // checked below by reading the store
                saved.signal()
            }
            let blockRan = DispatchSemaphore(value: 0)
            let shared = stack.coordinator
            DispatchQueue.global().async { shared.performAndWait { blockRan.signal() } }
            #expect(saved.wait(timeout: .now() + 0.3) == .timedOut, "another context's save waits for the lock")
            #expect(blockRan.wait(timeout: .now() + 0.1) == .timedOut, "performAndWait waits for the lock")
            // The holder saves and fetches through the coordinator meanwhile.
            stack.insert("Car", ["name": "Holder's"])
            try stack.context.save()
            #expect(try stack.storedCarNames() == ["Holder's"])
            coordinator.unlock()
            #expect(saved.wait(timeout: .now() + 10) == .success)
            #expect(blockRan.wait(timeout: .now() + 10) == .success)
            #expect(try stack.storedCarNames() == ["Holder's", "Waiting"])
        }
    }

    @Test func tryLockFailsWhileABlockOfTheCoordinatorRuns() throws {
        let stack = try TestStack()
        let coordinator: any DeprecatedLocking = stack.coordinator
        let inside = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
        stack.coordinator.perform {
            inside.signal()
            release.wait()
            finished.signal()
        }
        inside.wait()
        #expect(!coordinator.tryLock())
        release.signal()
        finished.wait()
        stack.coordinator.performAndWait {} // after the block, in the queue's order
        #expect(coordinator.anotherThreadTakes)
        withExtendedLifetime(stack) {}
    }
}
