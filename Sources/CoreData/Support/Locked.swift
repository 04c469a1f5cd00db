import Foundation

/// State behind a `pthread_mutex_t`, for state read and written from several threads.
///
/// Not `Synchronization.Mutex`: that one waits on futexes directly, which ThreadSanitizer does
/// not see, so it would report the state it guards as racing. A pthread mutex is as cheap
/// uncontended (one atomic exchange in and out) and TSan understands it.
internal final class Locked<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Guarded by `mutex`: no dynamic exclusivity check (it would cost more than the lock).
    @exclusivity(unchecked) private var state: State

    init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the state, holding the lock.
    @inline(__always)
    func withLock<T>(_ body: (inout State) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
