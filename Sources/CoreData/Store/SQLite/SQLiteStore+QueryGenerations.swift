import Foundation
import Synchronization

/// Query generations on the SQLite store: the held read transactions of
/// ``QueryGeneration`` (`Coordinator/QueryGeneration.swift`).
extension SQLiteStore: QueryGenerationStore {
    /// A file in WAL mode: elsewhere a held read would block every save (and Apple's contexts
    /// read such a file unpinned).
    var supportsQueryGenerations: Bool { usesWAL }

    /// A new read-only connection holding a read transaction on the file as it is now: `BEGIN`
    /// and a first read, which takes the WAL snapshot every later statement of the transaction
    /// reads. `nil` for a file not in WAL mode. (The connection's `sqlite3_close_v2`, when the
    /// generation lets it go, rolls the transaction back.)
    func beginPinnedRead() throws -> PinnedRead? {
        guard usesWAL else { return nil }
        guard let readers else {
            throw CoreDataError.make(.persistentStoreOperation, "The store at \(url?.path ?? "") has been removed from its coordinator")
        }
        // Counted before the snapshot is taken: a save committing meanwhile keeps its replaced files.
        let pinned = pinnedExternalData
        pinned.pin()
        do {
            let connection = try readers.makeConnection()
            try connection.execute("BEGIN")
            _ = try connection.scalarInt("SELECT count(*) FROM sqlite_master")
            return PinnedRead(connection: connection, end: { pinned.unpin() })
        } catch {
            pinned.unpin()
            throw error
        }
    }

    /// Whether `connection`'s file is in WAL mode (`PRAGMA journal_mode`).
    static func isInWALMode(_ connection: SQLiteConnection) throws -> Bool {
        let statement = try connection.cached("PRAGMA journal_mode")
        defer { statement.reset() }
        return try statement.step() && statement.string(0).lowercased() == "wal"
    }
}

/// The external data files a save replaced while a query generation of this process is pinned
/// on the store's file (through any coordinator: one per file path, ``forFile(_:)``): the pinned
/// snapshot still names them, so they are removed only when the last pinned read ends (removed
/// at once, they left a pinned context unable to read its old values).
internal final class PinnedExternalData: @unchecked Sendable {
    private static let byFile = Mutex<[String: PinnedExternalData]>([:])

    /// The one for the store file at `path`, symbolic links resolved (a store without a file has
    /// one of its own).
    static func forFile(_ path: String?) -> PinnedExternalData {
        guard let given = path else { return PinnedExternalData() }
        let path = URL(fileURLWithPath: given).resolvingSymlinksInPath().standardizedFileURL.path
        return byFile.withLock { files in
            if let existing = files[path] { return existing }
            let new = PinnedExternalData()
            files[path] = new
            return new
        }
    }

    private let lock = NSLock()
    private var pinned = 0
    private var deferred: [URL] = []

    func pin() { lock.withLock { pinned += 1 } }

    /// Whether a query generation of this process is pinned on the file: the clean-up of unused
    /// files at an open leaves them then (a pinned snapshot may name a file no current row does).
    var isPinned: Bool { lock.withLock { pinned > 0 } }

    func unpin() {
        let files = lock.withLock { () -> [URL] in
            pinned -= 1
            guard pinned == 0 else { return [] }
            defer { deferred = [] }
            return deferred
        }
        for file in files { try? FileManager.default.removeItem(at: file) } // one left is removed at the next open
    }

    /// Removes `files` now, or when the last pinned read ends.
    func remove(_ files: [URL]) {
        let now = lock.withLock { () -> Bool in
            guard pinned > 0 else { return true }
            deferred += files
            return false
        }
        if now { for file in files { try? FileManager.default.removeItem(at: file) } }
    }
}
