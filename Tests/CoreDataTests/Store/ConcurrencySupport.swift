import Foundation
import Synchronization
@testable import CoreData

/// Events in the order threads report them, and the errors they met. (`NSLock`, not
/// `Mutex`: ThreadSanitizer sees pthread mutexes, not `Synchronization.Mutex` on Linux.)
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [String] = []
    private var failures: [String] = []
    private var count = 0

    func record(_ event: String) { lock.withLock { events.append(event) } }
    func fail(_ failure: String) { lock.withLock { failures.append(failure) } }
    /// Counts one more round of some loop.
    func tick() { lock.withLock { count += 1 } }
    var recorded: [String] { lock.withLock { events } }
    var errors: [String] { lock.withLock { failures } }
    var ticks: Int { lock.withLock { count } }
}

/// A flag threads read while another sets or clears it.
final class Flag: Sendable {
    private let value: Atomic<Bool>
    init(_ value: Bool) { self.value = Atomic(value) }
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
    func clear() { value.store(false, ordering: .releasing) }
}

/// Runs `body` on a new thread; the returned semaphore is signalled when it returns.
@discardableResult
func onNewThread(_ name: String, _ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.name = name
    thread.start()
    return done
}

/// Runs `body` on `count` new threads, each inside `performAndWait` of its own private-queue
/// context on `coordinator`; body gets the thread's number and context. Returns the threads'
/// semaphores (see ``onNewThread(_:_:)``).
func onContextThreads(_ count: Int, _ coordinator: NSPersistentStoreCoordinator,
                      _ body: @escaping @Sendable (Int, NSManagedObjectContext) -> Void) -> [DispatchSemaphore] {
    (0..<count).map { index in
        let context = privateContext(coordinator)
        return onNewThread("thread \(index)") { context.performAndWait { body(index, context) } }
    }
}

/// Waits for `semaphore`, `seconds` at the most (generous: a timeout means a thread is stuck).
func finished(_ semaphore: DispatchSemaphore, within seconds: Double = 60) -> Bool {
    semaphore.wait(timeout: .now() + seconds) == .success
}

/// A private-queue context on `coordinator`.
func privateContext(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
    let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    return context
}

extension NSManagedObjectContext {
    /// The number of objects of `entity` in the store (and the context).
    func countOf(_ entity: String) throws -> Int {
        try count(for: NSFetchRequest<NSManagedObject>(entityName: entity))
    }
}
