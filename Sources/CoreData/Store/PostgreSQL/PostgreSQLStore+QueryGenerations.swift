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
/// limit, and succeeds again once a context moves, unpins, resets, saves or goes away. A
/// generation whose session is lost can't get its snapshot back: its reads throw 134070 until
/// its contexts move to `.current`.
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
}
