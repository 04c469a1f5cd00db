import Foundation
import Testing
@testable import CoreData

/// The deprecated locks' methods (a context's, a coordinator's), reached through a protocol
/// (calling them directly would warn).
protocol DeprecatedLocking: AnyObject, Sendable {
    func lock()
    func unlock()
    func tryLock() -> Bool
}

/// What another thread found.
private final class LockAnswer: @unchecked Sendable { var taken = false }

extension DeprecatedLocking {
    /// Whether another thread can take the lock now (given back at once if it can).
    var anotherThreadTakes: Bool {
        let answer = LockAnswer()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            answer.taken = self.tryLock()
            if answer.taken { self.unlock() }
            done.signal()
        }
        done.wait()
        return answer.taken
    }
}

extension NSManagedObjectContext: DeprecatedLocking {}

/// `NSManagedObjectContext.lock()`, `unlock()`, `tryLock()` (deprecated): a recursive lock that
/// keeps apart the threads that take it.
@Suite struct ContextLockTests {
    @Test(.timeLimit(.minutes(1)))
    func theLockKeepsOtherThreadsOutUntilItIsGivenBackAsOftenAsTaken() {
        let context: any DeprecatedLocking = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        #expect(context.anotherThreadTakes)
        context.lock()
        context.lock() // recursive
        #expect(context.tryLock()) // the holder again
        context.unlock()
        #expect(!context.anotherThreadTakes, "held: another thread cannot take it")
        context.unlock()
        #expect(!context.anotherThreadTakes, "still held once")
        context.unlock()
        #expect(context.anotherThreadTakes, "given back as often as taken")
    }
}
