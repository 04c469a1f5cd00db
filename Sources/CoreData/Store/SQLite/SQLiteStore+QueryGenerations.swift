import Foundation

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
        let connection = try readers.makeConnection()
        try connection.execute("BEGIN")
        _ = try connection.scalarInt("SELECT count(*) FROM sqlite_master")
        return PinnedRead(connection: connection, end: {})
    }

    /// Whether `connection`'s file is in WAL mode (`PRAGMA journal_mode`).
    static func isInWALMode(_ connection: SQLiteConnection) throws -> Bool {
        let statement = try connection.cached("PRAGMA journal_mode")
        defer { statement.reset() }
        return try statement.step() && statement.string(0).lowercased() == "wal"
    }
}
