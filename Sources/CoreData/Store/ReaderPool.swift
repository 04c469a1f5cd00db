import Foundation

/// The reader connections of one SQLite store.
typealias SQLiteReaderPool = ReaderPool<SQLiteConnection>

/// The reader connections of one store (SQLite's, PostgreSQL's): opened on first need, up to
/// `maximum`, and lent to one thread at a time (a connection and its statement cache are not
/// thread-safe).
///
/// A borrower that finds every connection lent and the pool full waits for one to come back;
/// readers never wait for the store's writer (SQLite's WAL, PostgreSQL's snapshots let them read
/// the last commit while it writes). Once the pool is closed, borrowing throws and connections
/// still lent are closed when they come back.
internal final class ReaderPool<Connection>: @unchecked Sendable {
    /// The most connections the pool opens.
    let maximum: Int
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var openCount = 0
    private var highWater = 0
    private var closed = false
    /// Makes a connection; replaced by ``reconnect(using:)``, whose every call starts a new
    /// ``generation``.
    private var connect: () throws -> Connection
    /// Counts ``reconnect(using:)`` calls: a connection lent before the last one is ended when it
    /// comes back, not kept.
    private var generation = 0
    private let closedError: () -> Error
    /// Ends a connection the pool lets go (SQLite's close as they are released).
    private let end: (Connection) -> Void

    /// A pool of at most `maximum` connections made by `connect` and ended by `close`;
    /// `closedError` is thrown to borrowers once the pool is closed.
    init(maximum: Int, connect: @escaping () throws -> Connection, close: @escaping (Connection) -> Void = { _ in },
         closedError: @escaping () -> Error) {
        precondition(maximum > 0, "a reader pool needs room for one connection")
        self.maximum = maximum
        self.connect = connect
        self.end = close
        self.closedError = closedError
    }

    /// Runs `body` with a connection that no other thread uses until `body` returns. A
    /// connection whose failure `isLost` says it is unusable is ended, with the idle ones (made
    /// before the loss, they are likely unusable too), so that the next borrower connects anew.
    func withReader<T>(discardingIf isLost: (Error) -> Bool = { _ in false }, _ body: (Connection) throws -> T) throws -> T {
        let (connection, generation) = try checkOut()
        let result: T
        do {
            result = try body(connection)
        } catch {
            if isLost(error) { discard(connection) } else { checkIn(connection, generation) }
            throw error
        }
        checkIn(connection, generation)
        return result
    }

    /// A connection made as the pool's are, but not the pool's: the caller keeps it (a query
    /// generation's held read transaction), and it does not count against ``maximum``.
    func makeConnection() throws -> Connection {
        let make: () throws -> Connection = try condition.withLock {
            if closed { throw closedError() }
            return connect
        }
        return try make()
    }

    /// From now on, connections are made by `connect` (the store's file moved: ``NSPersistentStoreCoordinator/setURL(_:for:)``):
    /// the idle ones are ended now, the lent ones when they come back.
    func reconnect(using connect: @escaping () throws -> Connection) {
        endIdle {
            self.connect = connect
            generation += 1
        }
    }

    /// How many connections are open now.
    var openConnections: Int { condition.withLock { openCount } }

    /// The most connections that were ever open at once (for tests of the pool's bound).
    var peakOpenConnections: Int { condition.withLock { highWater } }

    /// Closes the idle connections and refuses further borrowing; lent ones close on return.
    func close() {
        endIdle { closed = true }
    }

    /// Runs `change` and ends the idle connections, under the lock; wakes the waiting borrowers.
    private func endIdle(after change: () -> Void) {
        // Taken out under the lock, ended after it (a SQLite connection closes in its deinit).
        let closing: [Connection] = condition.withLock {
            change()
            let closing = idle
            idle.removeAll()
            openCount -= closing.count
            condition.broadcast()
            return closing
        }
        closing.forEach(end)
    }

    /// A connection, and the ``generation`` it belongs to.
    private func checkOut() throws -> (Connection, Int) {
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw closedError()
            }
            if let connection = idle.popLast() {
                let current = generation
                condition.unlock()
                return (connection, current)
            }
            if openCount < maximum {
                openCount += 1
                highWater = max(highWater, openCount)
                let (make, current) = (connect, generation)
                condition.unlock()
                let made = Result { try make() }
                condition.lock()
                if case .success(let connection) = made, generation == current {
                    condition.unlock()
                    return (connection, current)
                }
                // Failed, or made for a location the pool has left meanwhile (`reconnect(using:)`):
                // not kept; a failure at the current location is thrown, the rest try again.
                openCount -= 1
                condition.signal()
                switch made {
                case .failure(let error) where generation == current:
                    condition.unlock()
                    throw error
                case .success(let stale):
                    condition.unlock()
                    end(stale)
                    condition.lock()
                case .failure:
                    break
                }
                continue
            }
            condition.wait()
        }
    }

    /// Takes a connection back; one of a closed pool, or of an earlier generation, is ended.
    private func checkIn(_ connection: Connection, _ lentGeneration: Int) {
        let ending = condition.withLock {
            let ending = closed || lentGeneration != generation
            if ending { openCount -= 1 } else { idle.append(connection) }
            condition.signal()
            return ending
        }
        if ending { end(connection) }
    }

    /// Ends a lost connection and the idle ones.
    private func discard(_ connection: Connection) {
        let closing: [Connection] = condition.withLock {
            let closing = idle
            idle.removeAll()
            openCount -= closing.count + 1
            condition.broadcast()
            return closing
        }
        end(connection)
        closing.forEach(end)
    }
}
