import Foundation

extension NSPersistentStoreCoordinator {
    /// Points `store` at another location; `false`, changing nothing, if it cannot.
    ///
    /// By the kind of store, as Apple's:
    /// - **An atomic store** (an ``NSAtomicStore`` subclass) and an in-memory store take the URL:
    ///   the next save writes the file there.
    /// - **A SQLite store** lets go of its connections and opens new ones at `url`, where the
    ///   store must already be (none is created): its file moved or copied there, with its `-wal`
    ///   and `-shm` files (and its `.<name>_SUPPORT` folder, for external binary data). Linux
    ///   difference: it must be the same store (the same `NSStoreUUID`); Apple's also takes
    ///   another store of the model. The coordinator's cached rows of the store are dropped.
    ///   Saves wait meanwhile; reads on other threads finish on the connection they hold, and
    ///   a context pinned to a query generation reads it until the generation moves.
    /// - **A store you write** (an ``NSIncrementalStore`` subclass) takes the URL and loads its
    ///   metadata again (``NSIncrementalStore/loadMetadata()``); if that throws, it gets its old
    ///   URL and metadata back.
    ///
    /// ```swift
    /// try FileManager.default.moveItem(at: oldURL, to: newURL) // and its -wal and -shm files
    /// coordinator.setURL(newURL, for: store)
    /// ```
    ///
    /// Returns `false` (logging why) for a store that is not one of the coordinator's, a URL
    /// another of its stores has, a PostgreSQL store (its URL names a server: remove the store
    /// and add it again), an in-memory SQLite store (`/dev/null`), or a location without the
    /// store, which is left untouched.
    @discardableResult
    public func setURL(_ url: URL, for store: NSPersistentStore) -> Bool {
        return withSaveLock {
            // Checked under the save lock: two calls at once do not both move stores to one place.
            guard persistentStores.contains(where: { $0 === store }) else { return refuse(url, "the store is not one of this coordinator's") }
            if store.url?.standardizedFileURL == url.standardizedFileURL { return true }
            if persistentStores.contains(where: { $0 !== store && $0.isAt(url) }) {
                return refuse(url, "another store of the coordinator is there")
            }
            switch store {
            case let sqlite as SQLiteStore:
                do {
                    try sqlite.relocate(to: url) { rowCache.forgetRows(ofStore: store.tag) }
                } catch {
                    return refuse(url, error.localizedDescription)
                }
                return true
            case is PostgreSQLStore:
                return refuse(url, "a PostgreSQL store's URL names its server; remove the store and add it at the new URL")
            case let incremental as NSIncrementalStore:
                let (oldURL, oldMetadata, oldIdentifier) = (incremental.url, incremental.metadata, incremental.identifier)
                incremental.url = url
                do {
                    try incremental.loadMetadata()
                    return true
                } catch {
                    (incremental.url, incremental.metadata, incremental.identifier) = (oldURL, oldMetadata, oldIdentifier)
                    return refuse(url, error.localizedDescription)
                }
            default:
                store.url = url // an atomic or in-memory store: the next save writes there
                return true
            }
        }
    }

    /// `false`, logged: ``setURL(_:for:)`` refused `url`.
    private func refuse(_ url: URL, _ why: String) -> Bool {
        CoreDataLog.error("setURL(_:for:) refused \(url): \(why)")
        return false
    }
}
