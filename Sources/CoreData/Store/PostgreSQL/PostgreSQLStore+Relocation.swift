import Foundation

// A store whose database is reached at another URL (`NSPersistentStoreCoordinator.setURL(_:for:)`):
// another host name or address of the same server, a replica promoted after a failover, a
// rotated user or password in the URL. The same store must answer there (the same `NSStoreUUID`
// in `Z_METADATA`), so nothing the store knows of its tables changes: only its connections move.
// The writer is dropped between two transactions and the next one connects anew, the readers
// reconnect by generation (`ReaderPool.reconnect(using:)`), and the listening session for
// remote changes is opened again. A query generation keeps the session it holds until it moves.

extension PostgreSQLStore {
    /// Moves the store's connections to `newURL`, where the same store is; throws, changing
    /// nothing, if it is not there. `whileLocked` runs once no transaction can use the old writer.
    func relocate(to newURL: URL, whileLocked: () -> Void) throws {
        guard let connector = PostgreSQLStoreRegistry.connector else {
            throw CoreDataError.make(.persistentStoreInvalidType, "The PostgreSQL store is not registered")
        }
        let metadata = try Self.readMetadata(at: newURL, options: options)
        guard let uuid = metadata[NSStoreUUIDKey] as? String, uuid == identifier else {
            throw CoreDataError.make(.persistentStoreOperation,
                "The database at \(Self.location(of: newURL)) holds another store (its store UUID is \((metadata[NSStoreUUIDKey] as? String) ?? "missing"), this store's \(identifier ?? ""))")
        }
        try SQLiteStore.checkCompatibility(metadata, model: model, type: NSPostgreSQLStoreType, location: Self.location(of: newURL),
                                           ignoringVersions: flag(NSIgnorePersistentStoreVersioningOption))
        guard let pool else { throw removedError }
        pool.reconnect(using: connectionMaker(connector, newURL)) {
            url = newURL
            whileLocked()
        }
        if listenerLock.withLock({ listener != nil }) {
            stopListening()
            try startListening(connector) // (its failure is the caller's: the store works, without remote changes)
        }
    }
}
