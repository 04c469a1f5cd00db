import Foundation

/// A store whose reads a query generation (``QueryGeneration``) can pin: it can open a
/// connection of its own holding a read transaction that sees the store as it is now, and runs
/// a pinned context's reads on it (its `withReader` asks ``QueryGeneration/current``).
internal protocol QueryGenerationStore: NSPersistentStore {
    /// Whether `setQueryGenerationFrom(.current)` pins a context to this store's data (a
    /// SQLite store in WAL mode, a PostgreSQL store); a coordinator with no such store leaves its
    /// contexts unpinned.
    var supportsQueryGenerations: Bool { get }

    /// A new connection holding a read transaction begun now, for a generation to keep until it
    /// ends; `nil` when the store can't hold one (it is read unpinned).
    func beginPinnedRead() throws -> PinnedRead?
}

/// A read transaction a query generation holds on one store: its connection (of the store's
/// connection type), and what ends it (rolls back and closes, or gives back a slot).
internal struct PinnedRead {
    let connection: AnyObject
    let end: () -> Void
}
