import Foundation

/// Query generations on the PostgreSQL store (``QueryGeneration``, `Coordinator/QueryGeneration.swift`):
/// a generation holds a `REPEATABLE READ` transaction on a session of its own, whose snapshot
/// is the database as it was at the generation's first read. The pinned contexts' fetches,
/// counts and faults run in it; contexts sharing a generation share the session, their reads
/// taking turns. A read the server fails (an overflow, a cancel) rolls the session back to the
/// savepoint it keeps (``PostgreSQLConnectionPool/withPinnedReader(_:_:)``): the next reads still
/// see the snapshot. The session is closed (its transaction rolled back) when the generation ends.
///
/// Bounded: at most ``NSPersistentStoreConnectionPoolMaxSizeKey`` generations (4 by default)
/// hold a session of one store at once. Those sessions are not the pool's readers, so unpinned
/// reads never wait for a generation; the read that would pin one more throws 134070 naming the
/// limit, and succeeds again once a context moves, unpins, resets, saves or goes away.
///
/// A generation whose session is lost (ended by the server: an administrator's
/// `pg_terminate_backend`, a server-side timeout, a restart, the network) can't get its snapshot
/// back, and the store never reads the current data in its place: every read of its contexts
/// throws 134070 saying so (``readPinned(_:_:)``) until they move to `.current` (or another
/// token, or unpin); the lost session's place is freed when the last of them moves.
extension PostgreSQLStore: QueryGenerationStore {
    var supportsQueryGenerations: Bool { pool != nil }

    func beginPinnedRead() throws -> PinnedRead? {
        guard let pool else { throw removedError }
        let session: (any PostgreSQLConnection)?
        do {
            session = try pool.beginPinnedReader()
        } catch let error as PostgreSQLError {
            throw Self.error(error, .persistentStoreOperation, "Can't pin a query generation of the PostgreSQL store at \(location)")
        }
        guard let session else {
            throw CoreDataError.make(.persistentStoreOperation, """
                Can't pin a query generation of the PostgreSQL store at \(location): \(pool.readers.maximum) generations \
                (NSPersistentStoreConnectionPoolMaxSizeKey) already hold one of its sessions; move or unpin another context first
                """)
        }
        return PinnedRead(connection: session, end: { pool.endPinnedReader(session) })
    }

    /// Runs `body` (a pinned context's read) on `session`, its generation's session
    /// (``PostgreSQLConnectionPool/withPinnedReader(_:_:)``); a lost session throws 134070 naming
    /// the lost generation and what to do, the server's message and SQLSTATE in userInfo.
    func readPinned<T>(_ session: any PostgreSQLConnection, _ body: (any PostgreSQLConnection) throws -> T) throws -> T {
        do {
            return try PostgreSQLConnectionPool.withPinnedReader(session, body)
        } catch let error as PostgreSQLError where error.isSessionLost {
            throw Self.error(error, .persistentStoreOperation, """
                The query generation's session of the PostgreSQL store at \(location) was lost, and its snapshot with it; \
                move the context to the current generation (setQueryGenerationFrom(.current)) to read again
                """)
        }
    }
}
