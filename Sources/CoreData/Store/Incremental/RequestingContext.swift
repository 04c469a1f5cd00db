import Foundation
import Synchronization

/// The context a store request comes from, for the stores you write.
///
/// Apple hands an `NSIncrementalStore` the context whose fetch, fault or save it is. Here the
/// store layer is called by the coordinator with plans, rows and IDs, not by contexts; so a
/// context names itself on its thread around each of its store requests
/// (`NSManagedObjectContext.readingAtGeneration`, which every fetch, fault and relationship
/// load goes through), and `NSIncrementalStore` reads it (`withRequestContext`). A child
/// context's requests reach the coordinator through its parent chain: the root context is the
/// one named, as the one that reaches the coordinator. Only once a process has added such a
/// store (``begin()``, which also counts one in `QueryGeneration.live`, so that the requests of
/// a process without one keep their fast path unchanged).
internal enum RequestingContext {
    /// Whether an `NSIncrementalStore` was ever opened in the process.
    static let inUse = Atomic<Bool>(false)

    /// Called when an `NSIncrementalStore` opens: from then on, contexts name themselves.
    static func begin() {
        if inUse.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            QueryGeneration.live.add(1, ordering: .relaxed)
        }
    }

    /// Runs `body` (a store request of `context`) with `context` as ``current`` on this thread.
    static func naming<T>(_ context: NSManagedObjectContext, _ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(currentKey)
        pthread_setspecific(currentKey, Unmanaged.passUnretained(context).toOpaque())
        defer { pthread_setspecific(currentKey, previous) }
        return try withExtendedLifetime(context) { try body() }
    }

    /// The context whose store request runs on this thread, if one named itself.
    static var current: NSManagedObjectContext? {
        guard inUse.load(ordering: .relaxed), let pointer = pthread_getspecific(currentKey) else { return nil }
        return Unmanaged<NSManagedObjectContext>.fromOpaque(pointer).takeUnretainedValue()
    }
}

/// The thread-specific slot of ``RequestingContext/current``.
private let currentKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()
