import Foundation

/// The reader connections of one SQLite store: opened on first need, up to `maximum`, and lent
/// to one thread at a time (a connection and its statement cache are not thread-safe).
///
/// A borrower that finds every connection lent and the pool full waits for one to come back;
/// readers never wait for the store's writer (WAL lets them read the last commit while it
/// writes). Once the pool is closed, borrowing throws and connections still lent are closed
/// when they come back.
internal final class SQLiteReaderPool: @unchecked Sendable {
    /// The most connections the pool opens.
    let maximum: Int
    private let condition = NSCondition()
    private var idle: [SQLiteConnection] = []
    private var openCount = 0
    private var highWater = 0
    private var closed = false
    private let connect: () throws -> SQLiteConnection
    private let closedError: () -> Error

    /// A pool of at most `maximum` connections made by `connect`; `closedError` is thrown to
    /// borrowers once the pool is closed.
    init(maximum: Int, connect: @escaping () throws -> SQLiteConnection, closedError: @escaping () -> Error) {
        precondition(maximum > 0, "a reader pool needs room for one connection")
        self.maximum = maximum
        self.connect = connect
        self.closedError = closedError
    }

    /// Runs `body` with a connection that no other thread uses until `body` returns.
    func withReader<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    /// A connection made as the pool's are, but not the pool's: the caller keeps it (a query
    /// generation's held read transaction), and it does not count against ``maximum``.
    func makeConnection() throws -> SQLiteConnection {
        if condition.withLock({ closed }) { throw closedError() }
        return try connect()
    }

    /// How many connections are open now.
    var openConnections: Int { condition.withLock { openCount } }

    /// The most connections that were ever open at once (for tests of the pool's bound).
    var peakOpenConnections: Int { condition.withLock { highWater } }

    /// Closes the idle connections and refuses further borrowing; lent ones close on return.
    func close() {
        // Taken out under the lock, released (each connection closes in its deinit) after it.
        let closing: [SQLiteConnection] = condition.withLock {
            closed = true
            let closing = idle
            idle.removeAll()
            openCount -= closing.count
            condition.broadcast()
            return closing
        }
        withExtendedLifetime(closing) {}
    }

    private func checkOut() throws -> SQLiteConnection {
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw closedError()
            }
            if let connection = idle.popLast() {
                condition.unlock()
                return connection
            }
            if openCount < maximum {
                openCount += 1
                highWater = max(highWater, openCount)
                condition.unlock()
                do {
                    return try connect()
                } catch {
                    condition.withLock {
                        openCount -= 1
                        condition.signal()
                    }
                    throw error
                }
            }
            condition.wait()
        }
    }

    /// Takes a connection back; one of a closed pool is dropped, and closes when released.
    private func checkIn(_ connection: SQLiteConnection) {
        condition.withLock {
            if closed { openCount -= 1 } else { idle.append(connection) }
            condition.signal()
        }
    }
}
