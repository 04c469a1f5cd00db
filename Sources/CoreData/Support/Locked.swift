import Foundation
import Synchronization

/// State behind a `pthread_mutex_t`, for state read and written from several threads.
///
/// Not `Synchronization.Mutex`: that one waits on futexes directly, which ThreadSanitizer does
/// not see, so it would report the state it guards as racing. A pthread mutex is as cheap
/// uncontended (one atomic exchange in and out) and TSan understands it.
internal final class Locked<State>: @unchecked Sendable {
    private let mutex = PthreadMutex.make()
    /// Guarded by `mutex`: no dynamic exclusivity check (it would cost more than the lock).
    @exclusivity(unchecked) private var state: State

    init(_ state: State) { self.state = state }

    deinit { PthreadMutex.destroy(mutex) }

    /// Runs `body` with the state, holding the lock.
    @inline(__always)
    func withLock<T>(_ body: (inout State) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}

/// A ``Locked`` whose holder may hold it for a stretch of code that is not a `withLock` body
/// (``holding(_:)``), during which that thread's `withLock` calls run without locking again.
///
/// For a context's registry of objects: each object leaves it from its `deinit`, under the
/// lock. When a save lets go of the objects it was the last to hold (50,000 of them after a
/// bulk import), the context holds the lock once for all of them, rather than each `deinit`
/// taking and giving it back (two atomic operations and two calls per object). Another thread
/// waits meanwhile, as for any `withLock`; a `deinit` on the holding thread, and any code it
/// calls, finds the lock its own. Code run under a hold must therefore not wait for another
/// thread (which may be waiting for the lock).
///
/// `withLock` bodies must not reenter: with ``Locked`` that deadlocks; here a body the holder
/// thread reenters would change the state while the outer body has it open (checked in debug
/// builds). Only ``holding(_:)``, which does not open the state, may be reentered.
internal final class HoldableLocked<State>: @unchecked Sendable {
    private let mutex = PthreadMutex.make()
    /// The thread in ``holding(_:)`` (``CurrentThread/bits``), or 0. Written only by that thread,
    /// with the mutex held; any thread may read it, and finds its own value only while it holds.
    private let holder = Atomic<UInt>(0)
    /// Guarded by `mutex`: no dynamic exclusivity check (it would cost more than the lock).
    @exclusivity(unchecked) private var state: State
    /// How many times ``holding(_:)`` took the lock (guarded by `mutex`; for tests).
    @exclusivity(unchecked) private(set) var holds = 0
    #if DEBUG
    /// Whether a `withLock` body is running (guarded by `mutex`): reentering one is a bug.
    @exclusivity(unchecked) private var inBody = false
    #endif

    init(_ state: State) { self.state = state }

    deinit { PthreadMutex.destroy(mutex) }

    /// Whether the calling thread is in ``holding(_:)``. (No call to `pthread_self()` while
    /// nobody holds the lock, as on almost every call.)
    @inline(__always)
    var isHeldByCurrentThread: Bool {
        let bits = holder.load(ordering: .relaxed)
        return bits != 0 && bits == CurrentThread.bits
    }

    /// Runs `body` with the state, holding the lock (already held if this thread is in ``holding(_:)``).
    @inline(__always)
    func withLock<T>(_ body: (inout State) throws -> T) rethrows -> T {
        if isHeldByCurrentThread { return try run(body) }
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try run(body)
    }

    @inline(__always)
    private func run<T>(_ body: (inout State) throws -> T) rethrows -> T {
        #if DEBUG
        assert(!inBody, "CoreData: a registry lock's body was reentered")
        inBody = true
        defer { inBody = false }
        #endif
        return try body(&state)
    }

    /// Runs `body` holding the lock: this thread's `withLock` calls within it (from a `deinit`
    /// that `body` causes, say) run at once.
    func holding<T>(_ body: () throws -> T) rethrows -> T {
        if isHeldByCurrentThread { return try body() }
        pthread_mutex_lock(mutex)
        holds += 1
        holder.store(CurrentThread.bits, ordering: .relaxed)
        defer {
            holder.store(0, ordering: .relaxed)
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }
}

/// The calling thread, as bits: what a lock's holder stores to recognize itself.
internal enum CurrentThread {
    /// `pthread_self()` as an integer (`pthread_t` is an integer on glibc, a pointer elsewhere); never 0.
    @inline(__always)
    static var bits: UInt { bits(of: pthread_self()) }

    @inline(__always)
    private static func bits<Handle>(of handle: Handle) -> UInt { unsafeBitCast(handle, to: UInt.self) }
}

/// A `pthread_mutex_t` in memory of its own (a mutex must not move once used).
private enum PthreadMutex {
    static func make() -> UnsafeMutablePointer<pthread_mutex_t> {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        return mutex
    }

    static func destroy(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }
}
