import Foundation
import Testing
@testable import CoreData

/// The lock behind a context's registry: a thread holding it (`holding`) may take it again.
@Suite("HoldableLocked")
struct HoldableLockedTests {
    @Test func theHolderTakesTheLockAgainWithoutWaiting() {
        let lock = HoldableLocked([Int]())
        #expect(!lock.isHeldByCurrentThread)
        lock.holding {
            #expect(lock.isHeldByCurrentThread)
            lock.withLock { $0.append(1) }
            lock.holding { lock.withLock { $0.append(2) } } // nested: no second lock
            lock.withLock { $0.append(3) }
        }
        #expect(!lock.isHeldByCurrentThread)
        #expect(lock.withLock { $0 } == [1, 2, 3])
        #expect(lock.holds == 1)
    }

    @Test func aThrowingHoldLetsGo() {
        struct Failure: Error {}
        let lock = HoldableLocked(0)
        #expect(throws: Failure.self) { try lock.holding { throw Failure() } }
        #expect(!lock.isHeldByCurrentThread)
        #expect(lock.withLock { $0 += 1; return $0 } == 1)
    }

    @Test func anotherThreadWaitsForTheHold() async {
        let lock = HoldableLocked([String]())
        let entered = DispatchSemaphore(value: 0)
        let other = Task.detached {
            entered.wait()
            lock.withLock { $0.append("other") } // waits until the hold ends
        }
        lock.holding {
            lock.withLock { $0.append("holder, first") }
            entered.signal()
            Thread.sleep(forTimeInterval: 0.05) // the other thread is now waiting for the lock
            lock.withLock { $0.append("holder, last") }
        }
        await other.value
        #expect(lock.withLock { $0 } == ["holder, first", "holder, last", "other"])
    }
}
