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
    /// - **A PostgreSQL store** connects to the database at `url`, where the same store must
    ///   answer (another name or address of the server, a promoted replica, a rotated user or
    ///   password): its writer reconnects between two transactions, its readers as they come back,
    ///   and its remote-change session anew.
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
    /// another of its stores has, an in-memory SQLite store (`/dev/null`), or a location without
    /// the store (or with another one), which is left untouched.
    @discardableResult
    public func setURL(_ url: URL, for store: NSPersistentStore) -> Bool {
        return withSaveLock {
            // Checked under the save lock: two calls at once do not both move stores to one place.
            guard persistentStores.contains(where: { $0 === store }) else { return refuse(url, "the store is not one of this coordinator's") }
            if store.url?.standardizedFileURL == url.standardizedFileURL { return true }
            if let other = persistentStore(for: url), other !== store { return refuse(url, "another store of the coordinator is there") }
            switch store {
            case let relocatable as any RelocatableStore:
                do {
                    try relocatable.relocate(to: url) { rowCache.forgetRows(ofStore: store.tag) }
                } catch {
                    return refuse(url, error.localizedDescription)
                }
                return true
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

/// A store whose connections can move to another URL where the same store answers (SQLite's file
/// moved or copied, PostgreSQL's database at another address): ``NSPersistentStoreCoordinator/setURL(_:for:)``.
internal protocol RelocatableStore: NSPersistentStore {
    /// Moves the connections to `url`, throwing (and changing nothing) if the same store is not
    /// there; `whileLocked` runs once no save can use the old connections.
    func relocate(to url: URL, whileLocked: () -> Void) throws
}

extension SQLiteStore: RelocatableStore {}
extension PostgreSQLStore: RelocatableStore {}
