import Foundation
import Synchronization

/// One query generation: the state of a coordinator's stores at one moment, which the contexts
/// pinned to it read until they move on (`NSManagedObjectContext+QueryGenerations.swift`).
///
/// A generation is a held read transaction per store (``QueryGenerationStore``): at the first
/// read of a context pinned to it (not when it is made, as Apple's contexts pin "when they first
/// load data"), it asks every store of the coordinator that can for a connection of its own
/// holding a read transaction begun now, and keeps them. A SQLite store in WAL mode holds a WAL
/// read transaction (`SQLiteStore+QueryGenerations.swift`); a PostgreSQL store a `REPEATABLE
/// READ` snapshot (`PostgreSQLStore+QueryGenerations.swift`). Every later fetch and fault of its
/// contexts runs on those connections (the stores' `withReader` asks ``current``), so they see
/// the stores as they were at that moment, whatever is saved meanwhile; writers are never
/// blocked, and a reader never sees half a save. A store added to the coordinator afterwards, or
/// one that can't hold a read (a SQLite store not in WAL mode), is read unpinned, as Apple's
/// contexts "gracefully revert to unpinned behaviour". Contexts pinned from the same token share
/// the generation, and with it the connections: their reads take turns under its lock.
///
/// The generation ends, its transactions rolled back and connections closed, when the last
/// context that uses it moves, unpins, resets, saves or goes away (tokens refer to it weakly).
/// While it lasts, SQLite's checkpoints cannot copy the frames saved after it into the database:
/// the `-wal` file grows with every save; the first checkpoint after it ends (SQLite's automatic
/// one, at the next commit past 1,000 pages) copies them all and the log starts over.
/// PostgreSQL's vacuum likewise keeps the row versions the snapshot may still read.
internal final class QueryGeneration: @unchecked Sendable {
    /// The coordinator whose contexts may use the generation.
    weak var coordinator: NSPersistentStoreCoordinator?
    /// Orders the reads of the contexts sharing the generation (recursive: a read may start
    /// another while its statement is stepping, an object's `awakeFromFetch` firing a fault).
    private let lock = NSRecursiveLock()
    /// The stores' pinned connections, made at the first read (under ``lock``).
    private var pinned: [(store: NSPersistentStore, read: PinnedRead)]?

    /// How many generations exist: while none does, a read does not look for one (an unpinned
    /// context pays one atomic load per request for the feature). Once a store you write is
    /// opened in the process it counts one more, for good: a context's requests then take the
    /// slower path too, where they name the context for that store (`RequestingContext.swift`),
    /// and the fast path keeps its one load.
    static let live = Atomic<Int>(0)

    /// The generation's number in this process, never reused (a token names it by this, so a
    /// token of an expired generation never equals a later one's).
    let serial: UInt64

    private static let nextSerial = Atomic<UInt64>(1)
    /// The live generations by serial, for a token unarchived in this process
    /// (``NSQueryGenerationToken/init(coder:)``).
    private static let bySerial = Locked<[UInt64: Weak]>([:])
    private struct Weak { weak var generation: QueryGeneration? }

    init(coordinator: NSPersistentStoreCoordinator) {
        self.coordinator = coordinator
        serial = Self.nextSerial.add(1, ordering: .relaxed).oldValue
        Self.live.add(1, ordering: .relaxed)
        Self.bySerial.withLock { $0[serial] = Weak(generation: self) }
    }

    deinit {
        pinned?.forEach { $0.read.end() }
        Self.live.subtract(1, ordering: .relaxed)
        Self.bySerial.withLock { _ = $0.removeValue(forKey: serial) }
    }

    /// The live generation `serial` of this process, if any.
    static func named(serial: UInt64) -> QueryGeneration? {
        bySerial.withLock { $0[serial]?.generation }
    }

    /// Whether the generation holds its read transactions yet (for tests).
    var isOpen: Bool { lock.withLock { pinned != nil } }

    /// Runs `body` on the generation's connection to `store`, pinning every store of the
    /// coordinator at the first read; `nil` (and `body` not run) when the generation holds no
    /// transaction on `store`: it is read unpinned. If a store can't pin, the reads already
    /// begun are ended and the error thrown; the next read tries again.
    func withConnection<Connection, T>(to store: NSPersistentStore, _ body: (Connection) throws -> T) throws -> T? {
        lock.lock()
        defer { lock.unlock() }
        if pinned == nil {
            var reads: [(store: NSPersistentStore, read: PinnedRead)] = []
            do {
                for candidate in store.persistentStoreCoordinator?.persistentStores ?? [] {
                    guard let candidate = candidate as? any QueryGenerationStore, let read = try candidate.beginPinnedRead() else { continue }
                    reads.append((candidate, read))
                }
            } catch {
                reads.forEach { $0.read.end() }
                throw error
            }
            pinned = reads
        }
        guard let read = pinned!.first(where: { $0.store === store })?.read else { return nil }
        // The store asking is the one that made the connection, of the type it reads with.
        return try body(read.connection as! Connection)
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
