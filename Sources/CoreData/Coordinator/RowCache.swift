import Foundation

/// The coordinator's row cache: snapshots of the rows its stores just saved, so that another
/// context's fault (or a merge) on one of them does not go back to disk.
///
/// Keyed by ``IDKey`` (store tag, root entity, primary key) and bounded: rows go into a
/// current generation of `capacity / 2` entries; when it is full it becomes the previous
/// generation and the one before is dropped, so the oldest rows leave first. A store fills and
/// reads the cache only under the lock that orders its commits (``StoreRowCache``); the cache
/// itself only guards its dictionaries, with an `NSLock` (a pthread mutex, which
/// ThreadSanitizer sees; it does not see `Synchronization.Mutex` on Linux).
///
/// What goes in and when a row comes out:
/// - Only rows a save wrote, recorded by the SQLite store right after its commit, still under
///   its write lock, as a reader would decode them, with their new `Z_OPT`; the save's deleted
///   rows are forgotten (`SQLiteStore.recordSaved`). Of a bulk insert only the last quarter of
///   ``capacity`` is recorded. So the cache changes in commit order.
/// - Never rows read from the store: a read racing a save could put back an older snapshot.
/// - A fault (``NSPersistentStoreCoordinator/row(for:usingCache:)``) is served from here only
///   when the store vouches for the row (`SQLiteStore.cachedRow(for:in:)`: its write lock is
///   free, and no other connection has committed since, by `PRAGMA data_version`), so a cached
///   row is never older than the file. A context whose `stalenessInterval` is 0 skips the cache.
/// - A store's rows are forgotten when it is removed from the coordinator. The in-memory store
///   uses no cache (its rows are in memory already).
internal final class RowCache: StoreRowCache, @unchecked Sendable {
    private struct Generations {
        var current: [IDKey: RowSnapshot]
        var previous: [IDKey: RowSnapshot] = [:]
    }

    /// The most rows held (both generations together).
    let capacity: Int
    private let generationSize: Int
    private let lock = NSLock()
    private var generations: Generations

    /// A cache of at most `capacity` rows (at least 2).
    init(capacity: Int = 4096) {
        self.capacity = max(capacity, 2)
        self.generationSize = self.capacity / 2
        self.generations = Generations(current: Dictionary(minimumCapacity: self.capacity / 2))
    }

    /// Runs `body` on the generations, holding the lock.
    private func withGenerations<T>(_ body: (inout Generations) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&generations)
    }

    /// How many rows are cached (a row may be counted twice, once per generation).
    var count: Int { withGenerations { $0.current.count + $0.previous.count } }

    func contains(_ key: IDKey) -> Bool {
        withGenerations { $0.current[key] != nil || $0.previous[key] != nil }
    }

    func row(for key: IDKey) -> RowSnapshot? {
        // The current generation holds the newer copy when both have one.
        withGenerations { $0.current[key] ?? $0.previous[key] }
    }

    func record(_ rows: [CachedRow], forgetting stale: [IDKey]) {
        var dropped: [[IDKey: RowSnapshot]] = []
        withGenerations { generations in
            for key in stale {
                generations.current.removeValue(forKey: key)
                generations.previous.removeValue(forKey: key)
            }
            for index in max(0, rows.count - capacity)..<rows.count {
                if generations.current.count >= generationSize {
                    dropped.append(generations.previous)
                    generations.previous = generations.current
                    generations.current = Dictionary(minimumCapacity: generationSize)
                }
                generations.current[rows[index].key] = rows[index].row
            }
        }
        withExtendedLifetime(dropped) {} // the evicted rows are freed here, outside the lock
    }

    func forgetRows(ofStore store: Int) {
        withGenerations { generations in
            generations.current = generations.current.filter { $0.key.store != store }
            generations.previous = generations.previous.filter { $0.key.store != store }
        }
    }
}
