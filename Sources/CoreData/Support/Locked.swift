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
/// calls, finds the lock its own.
///
/// `withLock` bodies must not reenter (as with ``Locked``, where they would deadlock): only
/// ``holding(_:)``, which has no access to the state open, may be reentered.
internal final class HoldableLocked<State>: @unchecked Sendable {
    private let mutex = PthreadMutex.make()
    /// The thread in ``holding(_:)`` (its `pthread_self()`, as bits), or 0. Written by that
    /// thread only, with the mutex held; read by any thread: a thread finds its own value only
    /// while it holds the lock.
    private let holder = Atomic<UInt>(0)
    /// Guarded by `mutex`: no dynamic exclusivity check (it would cost more than the lock).
    @exclusivity(unchecked) private var state: State

    init(_ state: State) { self.state = state }

    deinit { PthreadMutex.destroy(mutex) }

    /// The calling thread, as bits.
    @inline(__always)
    private static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    /// Runs `body` with the state, holding the lock (already held if this thread is in ``holding(_:)``).
    @inline(__always)
    func withLock<T>(_ body: (inout State) throws -> T) rethrows -> T {
        if holder.load(ordering: .relaxed) == Self.currentThread { return try body(&state) }
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Whether the calling thread is in ``holding(_:)``.
    var isHeldByCurrentThread: Bool { holder.load(ordering: .relaxed) == Self.currentThread }

    /// Runs `body` holding the lock: this thread's `withLock` calls within it (from a `deinit`
    /// that `body` causes, say) run at once.
    func holding<T>(_ body: () throws -> T) rethrows -> T {
        let thread = Self.currentThread
        if holder.load(ordering: .relaxed) == thread { return try body() }
        pthread_mutex_lock(mutex)
        holder.store(thread, ordering: .relaxed)
        defer {
            holder.store(0, ordering: .relaxed)
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }
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
