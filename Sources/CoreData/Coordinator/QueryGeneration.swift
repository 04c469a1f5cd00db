import Foundation
import Synchronization

/// One query generation: the state of a coordinator's SQLite stores at one moment, which the
/// contexts pinned to it read until they move on (`NSManagedObjectContext+QueryGenerations.swift`).
///
/// A generation is a held WAL read transaction: at the first read of a context pinned to it
/// (not when it is made, as Apple's contexts pin "when they first load data"), it opens one
/// read-only connection per SQLite store of the coordinator in WAL mode, runs `BEGIN` and a
/// first read on each, and keeps them. Every later fetch and fault of its contexts runs on those
/// connections (``SQLiteStore/withReader(_:)`` asks ``current``), so they see the stores as
/// they were at that moment, whatever is saved meanwhile; writers are never blocked (WAL), and
/// a reader never sees half a save. A store added to the coordinator afterwards, or one that is
/// not in WAL mode, is read unpinned, as Apple's contexts "gracefully revert to unpinned
/// behaviour". Contexts pinned from the same token share the generation, and with it the
/// connections (the system's SQLite has no `sqlite3_snapshot_open`): their reads take turns
/// under its lock.
///
/// The generation ends, its transactions rolled back and connections closed, when the last
/// context that uses it moves, unpins, resets, saves or goes away (tokens refer to it weakly).
/// While it lasts, checkpoints cannot copy the frames saved after it into the database: the
/// `-wal` file grows with every save; the first checkpoint after it ends (SQLite's automatic
/// one, at the next commit past 1,000 pages) copies them all and the log starts over.
internal final class QueryGeneration: @unchecked Sendable {
    /// The coordinator whose contexts may use the generation.
    weak var coordinator: NSPersistentStoreCoordinator?
    /// Orders the reads of the contexts sharing the generation (recursive: a read may start
    /// another while its statement is stepping, an object's `awakeFromFetch` firing a fault).
    private let lock = NSRecursiveLock()
    /// The stores' pinned connections, made at the first read (under ``lock``).
    private var pinned: [(store: SQLiteStore, connection: SQLiteConnection)]?

    /// How many generations exist: while none does, a read does not look for one (an unpinned
    /// context pays one atomic load per request for the feature). Once a store you write is
    /// opened in the process it counts one more, for good: a context's requests then take the
    /// slower path too, where they name the context for that store (`RequestingContext.swift`),
    /// and the fast path keeps its one load.
    static let live = Atomic<Int>(0)

    init(coordinator: NSPersistentStoreCoordinator) {
        self.coordinator = coordinator
        Self.live.add(1, ordering: .relaxed)
    }

    deinit {
        // Each connection's `sqlite3_close_v2` rolls its read transaction back.
        Self.live.subtract(1, ordering: .relaxed)
    }

    /// Whether the generation holds its read transactions yet (for tests).
    var isOpen: Bool { lock.withLock { pinned != nil } }

    /// Runs `body` on the generation's connection to `store`, pinning every store of the
    /// coordinator at the first read; `nil` (and `body` not run) when the generation holds no
    /// transaction on `store`: it is read unpinned.
    func withConnection<T>(to store: SQLiteStore, _ body: (SQLiteConnection) throws -> T) throws -> T? {
        lock.lock()
        defer { lock.unlock() }
        if pinned == nil {
            var connections: [(store: SQLiteStore, connection: SQLiteConnection)] = []
            for candidate in store.persistentStoreCoordinator?.persistentStores ?? [] {
                guard let candidate = candidate as? SQLiteStore, let connection = try candidate.beginPinnedRead() else { continue }
                connections.append((candidate, connection))
            }
            pinned = connections
        }
        guard let connection = pinned!.first(where: { $0.store === store })?.connection else { return nil }
        return try body(connection)
    }

    // MARK: The generation of the running read

    /// Runs `body` (a context's store request) with `generation` as ``current`` on this thread;
    /// `nil` for an unpinned context's request made inside a pinned one's.
    static func reading<T>(_ generation: QueryGeneration?, _ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(currentKey)
        pthread_setspecific(currentKey, generation.map { Unmanaged.passUnretained($0).toOpaque() })
        defer { pthread_setspecific(currentKey, previous) }
        return try withExtendedLifetime(generation) { try body() }
    }

    /// The generation of the request running on this thread, if it is a pinned context's.
    static var current: QueryGeneration? {
        guard live.load(ordering: .relaxed) > 0, let pointer = pthread_getspecific(currentKey) else { return nil }
        return Unmanaged<QueryGeneration>.fromOpaque(pointer).takeUnretainedValue()
    }
}

/// The thread-specific slot of ``QueryGeneration/current``.
private let currentKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()
