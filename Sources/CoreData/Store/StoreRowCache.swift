import Foundation

/// A row for the cache: its key and its snapshot.
internal struct CachedRow: Sendable {
    var key: IDKey
    var row: RowSnapshot
}

/// A cache of snapshots of a store's rows, kept above the store (the coordinator's row cache,
/// `Coordinator/RowCache.swift`), as the store sees it.
///
/// The store decides what the cache may hold and when it may be read: it records the rows a
/// save wrote, and checks that the file has not changed underneath before a cached row is
/// served. Both happen under the lock that orders the store's commits, so the cache changes in
/// commit order and a served row is the store's latest.
internal protocol StoreRowCache: AnyObject, Sendable {
    /// The most rows the cache holds: a save records at most this many.
    var capacity: Int { get }
    /// Whether the cache holds a row for `key` (a hint, taken without the store's lock).
    func contains(_ key: IDKey) -> Bool
    /// The cached row for `key`, if any.
    func row(for key: IDKey) -> RowSnapshot?
    /// After a commit: caches `rows` (newer than anything cached for them), forgets `stale`.
    func record(_ rows: [CachedRow], forgetting stale: [IDKey])
    /// Forgets every row of the store whose ``NSPersistentStore/tag`` is `store`.
    func forgetRows(ofStore store: Int)
}
