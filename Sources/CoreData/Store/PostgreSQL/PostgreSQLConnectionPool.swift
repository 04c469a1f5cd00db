import Foundation

/// The connections of one PostgreSQL store: a writer for saves and everything else that runs in
/// a transaction, and readers (``ReaderPool``) opened on first need, up to `maximumReaders`,
/// each lent to one thread at a time (a connection and its prepared statements are not
/// thread-safe). The issue asks for a pool per coordinator; a store is what owns connections in
/// our layering, so each store of a coordinator has its own.
///
/// Reads never wait for a save: a save holds the writer, and a read borrows a reader (it sees
/// what was committed when its statement began). A borrower that finds every reader lent and the
/// pool full waits for one to come back.
///
/// A connection whose session is gone (``PostgreSQLError/isSessionLost``) is closed, never lent
/// again, and the next request connects anew. A read that lost its session is run once more, on
/// a new connection (the idle readers are dropped with it: a server restart or a terminated
/// session of the store rarely comes alone). A transaction is never run twice: only a round trip
/// that carried nothing of it (a lone `BEGIN`, or a prelude) is sent again, on a new writer, when
/// it found its session gone; losing the session once the transaction's statements were sent is
/// the caller's error, and losing it after `COMMIT` was sent is ``PostgreSQLCommitOutcomeUnknown``.
/// A writer in steady use sends its `BEGIN` with the transaction's first statements
/// (``PostgreSQLPendingBegin``), after checking that the server did not end its session while it
/// sat idle; one idle for longer than ``quietInterval`` (whose network may have gone without a
/// word) sends a lone `BEGIN` first.
internal final class PostgreSQLConnectionPool: @unchecked Sendable {
    /// The readers: at most their pool's maximum, the writer being one more.
    let readers: ReaderPool<any PostgreSQLConnection>
    /// Orders the transactions on ``writer``. Not recursive: no transaction of a store begins
    /// inside another of the same store (a save's `beforeCommitting` writes the *other* stores of
    /// a save, each in its own pool), and a nested `BEGIN` would only have committed the outer
    /// transaction early.
    private let writeLock = NSLock()
    /// The writer, under ``writeLock``; `nil` once its session was lost (until the next
    /// transaction connects again) or the pool closed.
    private var writer: (any PostgreSQLConnection)?
    /// Set by ``close()``, under ``writeLock``.
    private var isClosed = false
    /// Whether ``writer``'s session has the timeouts set (``PostgreSQLTimeouts/sessionStatement``);
    /// under ``writeLock``.
    private var writerHasTimeouts = false
    /// When the last transaction on the writer ended, or its session last answered; under
    /// ``writeLock``.
    private var lastWrite: ContinuousClock.Instant?
    /// How long the writer may sit idle before a transaction checks its session with a lone
    /// `BEGIN` (a round trip that is sent again on a new session if it finds this one gone); read
    /// under ``writeLock`` (tests shorten it between transactions).
    var quietInterval = Duration.seconds(10)
    private let connect: () throws -> any PostgreSQLConnection
    private let closedError: () -> Error
    /// The timeouts the writer's session sets (``PostgreSQLTimeouts``).
    private let timeouts: PostgreSQLTimeouts
    /// The statement that ends every write transaction, in `COMMIT`'s round trip, and fails when
    /// the store was migrated since it opened (``PostgreSQLStoreGeneration``).
    private let commitCheck: PostgreSQLStatement?

    /// A pool whose writer is `writer` (the store's opening connection), with at most
    /// `maximumReaders` readers; `connect` makes new connections, `closedError` is thrown to
    /// borrowers once the pool is closed.
    init(writer: any PostgreSQLConnection, maximumReaders: Int, timeouts: PostgreSQLTimeouts, commitCheck: PostgreSQLStatement? = nil,
         connect: @escaping () throws -> any PostgreSQLConnection, closedError: @escaping () -> Error) {
        self.writer = writer
        self.timeouts = timeouts
        self.commitCheck = commitCheck
        readers = ReaderPool(maximum: maximumReaders, connect: connect, close: { $0.close() }, closedError: closedError)
        self.connect = connect
        self.closedError = closedError
    }

    // MARK: The writer

    /// Runs `body` in one transaction on the writer: committed if it returns, rolled back if it
    /// throws. Throws ``PostgreSQLCommitOutcomeUnknown`` when the session was lost after `COMMIT`
    /// was sent.
    func inTransaction<T>(_ body: (any PostgreSQLConnection) throws -> T) throws -> T {
        try inTransaction(prelude: []) { connection, _ in try body(connection) }
    }

    /// ``inTransaction(_:)`` with `prelude` run first, in a short transaction of its own that
    /// commits before this one begins, in the round trip of its `BEGIN` (a save's new keys:
    /// `Z_PRIMARYKEY`'s rows are then locked for one statement, not until the save commits);
    /// `body` gets the rows of its statements marked `returnsRows`.
    func inTransaction<T>(prelude: [PostgreSQLStatement], _ body: (any PostgreSQLConnection, [any PostgreSQLRows]) throws -> T) throws -> T {
        writeLock.lock()
        defer {
            lastWrite = .now
            writeLock.unlock()
        }
        let (connection, preludeRows) = try begunWriter(prelude: prelude)
        let result: T
        do {
            result = try body(connection, preludeRows)
        } catch {
            rollBack(connection, after: error)
            throw error
        }
        if Self.sentNothing(connection) { return result }
        guard let commitCheck else {
            do {
                try connection.run("COMMIT")
            } catch where error.isSessionLost {
                dropWriter()
                throw PostgreSQLCommitOutcomeUnknown(cause: error)
            }
            return result
        }
        do {
            try connection.executeAll([commitCheck, PostgreSQLStatement(sql: "COMMIT")])
        } catch where error.isSessionLost {
            dropWriter()
            throw PostgreSQLCommitOutcomeUnknown(cause: error)
        } catch {
            // The check failed (its `COMMIT` was not run) or `COMMIT` did: nothing was written.
            rollBack(connection, after: error)
            throw error.sqlState == PostgreSQLStoreGeneration.failureState ? PostgreSQLStoreGeneration.migratedError(error) : error
        }
        return result
    }

    /// Whether a transaction sent nothing (its `BEGIN` still pending): it has nothing to commit
    /// or roll back.
    private static func sentNothing(_ connection: any PostgreSQLConnection) -> Bool {
        (connection as? PostgreSQLPendingBegin)?.hasBegun == false
    }

    /// Ends a failed transaction. The error that ended it is the one to report; a writer that
    /// cannot roll back is in no state to be used again.
    private func rollBack(_ connection: any PostgreSQLConnection, after error: Error) {
        if Self.sentNothing(connection) { return }
        if Self.isSessionLost(error) {
            dropWriter()
        } else {
            do { try connection.run("ROLLBACK") } catch { dropWriter() }
        }
    }

    /// The writer with a transaction begun (or its `BEGIN` pending, without a prelude), and the
    /// rows of `prelude`: on a new session if the prelude's round trip found the last one gone
    /// (nothing of the transaction has run, so beginning again is safe; a prelude that ran and
    /// committed then runs again: a save's keys, of which the first are then never used). Under
    /// ``writeLock``.
    private func begunWriter(prelude: [PostgreSQLStatement]) throws -> (any PostgreSQLConnection, [any PostgreSQLRows]) {
        do {
            return try beginOnWriter(prelude: prelude)
        } catch let error as PostgreSQLError where error.isSessionLost {
            return try beginOnWriter(prelude: prelude)
        }
    }

    /// The writer, connected now if there is none or the server ended its session while it was
    /// idle, with its timeouts set, `prelude` run and committed and `BEGIN` run; without a
    /// prelude, a writer in steady use with `BEGIN` pending (``PostgreSQLPendingBegin``: its first
    /// round trip carries the transaction's first statements, which are never sent twice).
    /// Dropped if its session is lost.
    private func beginOnWriter(prelude: [PostgreSQLStatement]) throws -> (any PostgreSQLConnection, [any PostgreSQLRows]) {
        if isClosed { throw closedError() }
        if let writer, writer.wasEndedWhileIdle() { dropWriter() }
        let connection = try writer ?? connect()
        writer = connection
        do {
            if !writerHasTimeouts {
                try connection.run(timeouts.sessionStatement)
                writerHasTimeouts = true
                lastWrite = .now // the session answered: no lone `BEGIN` needed to check it
            }
            // READ COMMITTED whatever the database's default: optimistic locking (an update of 0
            // rows is a conflict), `Z_PRIMARYKEY`'s row locks and history numbers rely on it.
            let begin = PostgreSQLStatement(sql: "BEGIN ISOLATION LEVEL READ COMMITTED")
            if prelude.isEmpty {
                if let lastWrite, ContinuousClock.now - lastWrite < quietInterval {
                    return (PostgreSQLPendingBegin(connection, begin: begin), [])
                }
                try connection.run(begin.sql)
                return (connection, [])
            }
            // The prelude's commit need not wait for its WAL to reach the disk: the transaction
            // that uses its keys commits after it, and a commit that waits flushes the WAL up to
            // its own record, this one's included (a prelude whose keys outlive the transaction
            // sets it back: `PostgreSQLKeyBlocks.durableCommit`).
            let statements = [begin, PostgreSQLStatement(sql: PostgreSQLTimeouts.keyTransactionStatement)] + prelude
                + (commitCheck.map { [$0] } ?? []) + [PostgreSQLStatement(sql: "COMMIT"), begin]
            let rows: [any PostgreSQLRows]
            do {
                rows = try connection.executeAllKeepingRows(statements)
            } catch {
                // A statement failed: the transaction it was in is open, aborted; end it.
                if !Self.isSessionLost(error) { rollBack(connection, after: error) }
                throw error.sqlState == PostgreSQLStoreGeneration.failureState && commitCheck != nil
                    ? PostgreSQLStoreGeneration.migratedError(error) : error
            }
            return (connection, rows)
        } catch {
            if Self.isSessionLost(error) { dropWriter() }
            throw error
        }
    }

    /// The writer, for tests that count its round trips.
    var writerForTests: (any PostgreSQLConnection)? { writeLock.withLock { writer } }

    /// Closes the writer and forgets it; the next transaction connects again. Under ``writeLock``.
    private func dropWriter() {
        writer?.close()
        writer = nil
        writerHasTimeouts = false
    }

    // MARK: Readers

    /// Runs `body` with a reader no other thread uses until `body` returns; once more, on a new
    /// connection, if the session was lost and `canRunAgain` says so (a fetch that has lent
    /// rows can't: its objects would be made twice). A lost session is never lent again.
    func withReader<T>(runningAgainIf canRunAgain: () -> Bool = { true }, _ body: (any PostgreSQLConnection) throws -> T) throws -> T {
        do {
            return try readers.withReader(discardingIf: Self.isSessionLost, body)
        } catch let error as PostgreSQLError where error.isSessionLost && canRunAgain() {
            return try readers.withReader(discardingIf: Self.isSessionLost, body)
        }
    }

    // MARK: Query generations

    /// How many query generations hold a session of the pool now.
    private let pinnedCount = Locked(0)

    /// A new session in a read-only `REPEATABLE READ` transaction whose snapshot is taken now (a
    /// first statement takes it), for a query generation to read from until it ends
    /// (``endPinnedReader(_:)``), with ``pinnedSavepoint`` set; `nil` when ``ReaderPool/maximum``
    /// generations already hold one. Such sessions are the pool's but not its readers', so
    /// unpinned reads never wait for a generation to end.
    func beginPinnedReader() throws -> (any PostgreSQLConnection)? {
        let reserved = pinnedCount.withLock { count in
            guard count < readers.maximum else { return false }
            count += 1
            return true
        }
        guard reserved else { return nil }
        do {
            let connection = try readers.makeConnection()
            do {
                // One round trip; `SELECT 1` takes the snapshot.
                try connection.run("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; SELECT 1; SAVEPOINT \(Self.pinnedSavepoint)")
            } catch {
                connection.close()
                throw error
            }
            return connection
        } catch {
            pinnedCount.withLock { $0 -= 1 }
            throw error
        }
    }

    /// The savepoint a generation's session keeps set after its snapshot is taken. A statement
    /// that fails (an invalid regular expression, an overflow, a cancel) aborts the transaction
    /// down to it; ``withPinnedReader(_:_:)`` rolls back to it, which keeps the snapshot (it is the
    /// transaction's) and the savepoint, so the generation's next reads run as before. Nothing
    /// is written in the read-only transaction, so the savepoint is never released between reads.
    static let pinnedSavepoint = "\"query_generation\""

    /// Runs `body` (a pinned context's read) on `connection`, a generation's session: if the
    /// server fails a statement of it, the session is rolled back to ``pinnedSavepoint`` (one
    /// round trip, only then) and the error thrown, so that one failed read does not fail every
    /// later read of the contexts sharing the generation (SQLSTATE `25P02`). A lost session is
    /// left as it is: the generation can't get its snapshot back.
    static func withPinnedReader<T>(_ connection: any PostgreSQLConnection, _ body: (any PostgreSQLConnection) throws -> T) throws -> T {
        do {
            return try body(connection)
        } catch let error as PostgreSQLError where !error.isSessionLost {
            do {
                try connection.run("ROLLBACK TO SAVEPOINT \(pinnedSavepoint)")
            } catch let failure {
                throw PostgreSQLError(message: "\(error.message) (and rolling back to the query generation's savepoint failed: \(failure.message))",
                                      sqlState: error.sqlState, isConnectionFailure: error.isConnectionFailure)
            }
            throw error
        }
    }

    /// Ends a generation's session (closing it rolls its transaction back) and frees its place.
    func endPinnedReader(_ connection: any PostgreSQLConnection) {
        connection.close()
        pinnedCount.withLock { $0 -= 1 }
    }

    /// How many query generations hold a session now (for tests).
    var pinnedReaders: Int { pinnedCount.withLock { $0 } }

    private static func isSessionLost(_ error: Error) -> Bool { (error as? PostgreSQLError)?.isSessionLost == true }

    /// Closes the writer once a transaction under way has ended, and the idle readers at once;
    /// lent readers close when they come back. Requests then throw.
    func close() {
        readers.close()
        writeLock.withLock {
            isClosed = true
            dropWriter()
        }
    }
}

/// The session was lost after `COMMIT` was sent and before its answer came: the transaction may
/// or may not have been committed, and running it again could apply it twice.
struct PostgreSQLCommitOutcomeUnknown: Error {
    /// How the session was lost.
    var cause: PostgreSQLError
}

extension PostgreSQLError {
    /// Whether the session is gone: libpq's connection is bad (`CONNECTION_BAD`), or the server
    /// reported a connection exception (SQLSTATE class `08`) or its shutdown of the session
    /// (`57P01`, as `pg_terminate_backend` and a server stopping do).
    var isSessionLost: Bool {
        isConnectionFailure || sqlState?.hasPrefix("08") == true || sqlState == "57P01"
    }
}

/// The userInfo key, in the error of a PostgreSQL store's save (134030), that says the connection
/// was lost after `COMMIT` was sent: the save may or may not have been committed (`true`). The
/// store never runs such a save again; the context keeps its changes, and the store connects
/// anew on its next request. Check the database before saving again.
///
/// ```swift
/// do {
///     try context.save()
/// } catch let error as NSError where error.userInfo[NSPostgreSQLCommitOutcomeUnknownKey] as? Bool == true {
///     // Find out whether the changes are in the database before saving them again.
/// }
/// ```
public let NSPostgreSQLCommitOutcomeUnknownKey = "NSPostgreSQLCommitOutcomeUnknown"

extension PostgreSQLStore {
    /// The save error (134030) of a save whose commit outcome is unknown, flagged with
    /// ``NSPostgreSQLCommitOutcomeUnknownKey``.
    func commitOutcomeUnknownError(_ failure: PostgreSQLCommitOutcomeUnknown) -> NSError {
        let error = Self.error(failure.cause, .persistentStoreSave,
            "The connection to the PostgreSQL store at \(location) was lost after COMMIT was sent: whether the save was committed is unknown, and it was not run again")
        var info = error.userInfo
        info[NSPostgreSQLCommitOutcomeUnknownKey] = true
        return NSError(domain: error.domain, code: error.code, userInfo: info)
    }
}
