import Foundation

// A store whose file moved (`NSPersistentStoreCoordinator.setURL(_:for:)`): its connections go to
// the new location, where the same store must be (its file moved or copied: the same UUID in
// `Z_METADATA`). Nothing the store knows of its tables changes, so only what names the file
// moves: the writer (swapped under the write lock, between two saves), the reader pool (its
// idle connections closed, its lent ones when they come back, new ones opened at the new
// path), the remote-change channel and the URL (read under their locks by requests on other
// threads). A query generation keeps the connection it holds until it moves.

extension SQLiteStore {
    /// Moves the store's connections to `newURL`, where the same store is; throws, changing
    /// nothing, if it is not there.
    /// `whileLocked` runs with the connections swapped, before a save or a cached row can see
    /// the new file (the coordinator drops its cached rows of the store there).
    func relocate(to newURL: URL, whileLocked: () -> Void) throws {
        guard let oldURL = url, !Self.isInMemory(oldURL) else {
            throw CoreDataError.make(.persistentStoreOperation, "An in-memory SQLite store has no file to move")
        }
        guard newURL.isFileURL, !Self.isInMemory(newURL) else {
            throw CoreDataError.make(.persistentStoreOperation, "A SQLite store can only move to a file URL, not \(newURL)")
        }
        // (Read as `metadataForPersistentStore` reads it: a missing, foreign or non-store file
        // throws, and is left as it was.)
        let metadata = try Self.readMetadata(at: newURL)
        guard let uuid = metadata[NSStoreUUIDKey] as? String, uuid == identifier else {
            throw CoreDataError.make(.persistentStoreOperation,
                "The file at \(newURL.path) is not this store (its store UUID is \((metadata[NSStoreUUIDKey] as? String) ?? "missing"), this store's \(identifier ?? "")); it was left untouched",
                extra: [NSFilePathErrorKey: newURL.path])
        }
        try checkCompatibility(metadata, model: model)
        // The writer, as `open(model:)` makes it.
        let path = Self.databaseName(for: newURL)
        let writer = try SQLiteConnection(path: path, readOnly: isReadOnly, create: false)
        try applyConnectionSettings(writer)
        try applyPragmas(writer) // (WAL only when writable)
        if !isReadOnly, let history { try history.createMissingTables(on: writer) } // a copy made before history was on
        let channel = SQLiteChangeChannel.forFile(atPath: path)
        let dataVersion = try? writer.dataVersion()
        let replaced: (RemoteChangeSubscription?, SQLiteConnection?)? = writeLock.withLock {
            guard self.writer != nil else { return nil } // removed meanwhile: stays closed
            let old = (remoteChangeSubscription, self.writer)
            self.writer = writer
            insertStatements.removeAll() // prepared on the old writer
            cacheDataVersion = dataVersion
            changeChannel = channel
            remoteChangeSubscription = postsRemoteChanges ? channel.subscribe(self) : nil
            url = newURL
            // Readers connect to the new file from now on, before anyone can read what a save
            // wrote there; the pool's lock is taken inside this one, never the other way.
            readers?.reconnect(using: readerConnector(path: path))
            whileLocked()
            return old
        }
        guard replaced != nil else {
            throw CoreDataError.make(.persistentStoreOperation, "The store at \(oldURL.path) has been removed from its coordinator")
        }
        withExtendedLifetime(replaced) {} // the old writer and subscription go here, off the lock
    }
}
