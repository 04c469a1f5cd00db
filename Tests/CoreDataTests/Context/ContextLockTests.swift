import Foundation
import Testing
@testable import CoreData

/// The deprecated lock's methods, reached through a protocol (calling them directly would warn).
protocol DeprecatedContextLocking: AnyObject, Sendable {
    func lock()
    func unlock()
    func tryLock() -> Bool
}

extension NSManagedObjectContext: DeprecatedContextLocking {}

/// `NSManagedObjectContext.lock()`, `unlock()`, `tryLock()` (deprecated): a recursive lock that
/// keeps apart the threads that take it.
@Suite struct ContextLockTests {
    /// Whether another thread can take `context`'s lock now (given back at once if it can).
    private static func anotherThreadTakes(_ context: any DeprecatedContextLocking) -> Bool {
        final class Answer: @unchecked Sendable { var taken = false }
        let answer = Answer()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            answer.taken = context.tryLock()
            if answer.taken { context.unlock() }
            done.signal()
        }
        done.wait()
        return answer.taken
    }

    @Test(.timeLimit(.minutes(1)))
    func theLockKeepsOtherThreadsOutUntilItIsGivenBackAsOftenAsTaken() {
        let context: any DeprecatedContextLocking = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        #expect(Self.anotherThreadTakes(context))
        context.lock()
        context.lock() // recursive
        #expect(context.tryLock()) // the holder again
        context.unlock()
        #expect(!Self.anotherThreadTakes(context), "held: another thread cannot take it")
        context.unlock()
        #expect(!Self.anotherThreadTakes(context), "still held once")
        context.unlock()
        #expect(Self.anotherThreadTakes(context), "given back as often as taken")
    }
}
