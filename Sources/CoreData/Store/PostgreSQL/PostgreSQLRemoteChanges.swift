import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Remote change notifications on PostgreSQL, across servers, through `LISTEN`/`NOTIFY`:
// - every save (`PostgreSQLStore+Save.swift`) sends `NOTIFY` on the channel named by the store's
//   `NSStoreUUID`, inside its transaction, with its persistent history transaction number as the
//   payload (empty without history). PostgreSQL delivers it at the commit, and never for a save
//   that rolled back;
// - a store added with `NSPersistentStoreRemoteChangeNotificationPostOptionKey` keeps a second
//   session that `LISTEN`s on that channel, and a thread that sleeps on the session's socket (and
//   on a pipe that wakes it to stop) until the server sends notifications. Its coordinator then
//   posts `.NSPersistentStoreRemoteChange`, with the store's URL, its UUID and, with history, a
//   token of the last transaction delivered.
// As the SQLite store (and Apple's framework), it posts for every commit to the store, its own
// coordinator's included: the listening session hears every session's `NOTIFY`. Commits delivered
// together are posted once. A listening session that is lost (a server restart, a terminated
// backend, a network failure) is opened again, after 0.1 s, then waits doubling up to 10 s
// between attempts; once it listens again, one notification is posted (with the store's last
// history token), so that contexts catch up through history on the commits made while it was
// away. Removing the store, or dropping it and its coordinator, stops the thread and closes the
// session.

/// A notification the server delivered to a session that `LISTEN`s: its channel and payload.
package struct PostgreSQLNotification: Sendable, Hashable {
    package var channel: String
    package var payload: String

    package init(channel: String, payload: String) {
        self.channel = channel
        self.payload = payload
    }
}

/// A connection that can wait for the notifications of the channels it `LISTEN`s to.
package protocol PostgreSQLListeningConnection: PostgreSQLConnection {
    /// Blocks, without using the CPU, until the server delivers notifications (returned, in
    /// order) or the file descriptor `wake` becomes readable (`[]`). Throws if the session fails.
    func waitForNotifications(orUntilReadable wake: Int32) throws(PostgreSQLError) -> [PostgreSQLNotification]
}

/// One listening session and the thread that waits on it; ``stop()`` ends the thread, which then
/// closes the session. A session that fails is replaced (``reconnect()``).
internal final class PostgreSQLChangeListener: @unchecked Sendable {
    /// The session; only the thread uses it once started (`nil` while reconnecting).
    private var connection: (any PostgreSQLListeningConnection)?
    private let channel: String
    /// Opens a new session (not yet listening), to replace a lost one.
    private let connect: () throws -> any PostgreSQLListeningConnection
    /// The pipe whose write end ``stop()`` writes to, to wake the thread.
    private let wakeRead: Int32, wakeWrite: Int32
    private struct State {
        var stopping = false
        /// The thread has ended and closed the pipe.
        var finished = false
        /// How many times a lost session was replaced (for tests).
        var reconnections = 0
    }
    private let state = Locked(State())
    private let deliver: @Sendable ([PostgreSQLNotification]) -> Void

    /// The first wait before connecting again, and the longest (the wait doubles between failed attempts).
    static let firstReconnectDelay: TimeInterval = 0.1, longestReconnectDelay: TimeInterval = 10

    /// `LISTEN`s on `channel` and starts the thread, which calls `deliver` with each batch of
    /// notifications the server sends; `connect` opens a session to replace a lost one.
    init(connection: any PostgreSQLListeningConnection, channel: String,
         connect: @escaping () throws -> any PostgreSQLListeningConnection,
         deliver: @escaping @Sendable ([PostgreSQLNotification]) -> Void) throws {
        try Self.listen(on: connection, to: channel)
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else {
            throw CoreDataError.make(.persistentStoreOpen, "Can't listen for remote changes: pipe() failed (errno \(errno))")
        }
        self.connection = connection
        self.channel = channel
        self.connect = connect
        (wakeRead, wakeWrite) = (descriptors[0], descriptors[1])
        self.deliver = deliver
        let thread = Thread { [self] in run() }
        thread.name = "NSPersistentStoreRemoteChangeNotification"
        thread.start()
    }

    private static func listen(on connection: any PostgreSQLConnection, to channel: String) throws {
        try connection.run("LISTEN \(SQLiteSchema.quoted(channel))")
    }

    /// Wakes the thread and makes it end (it closes the session); returns at once.
    func stop() {
        state.withLock { state in
            guard !state.stopping else { return }
            state.stopping = true
            if !state.finished {
                var byte: UInt8 = 1
                _ = write(wakeWrite, &byte, 1)
            }
        }
    }

    /// Whether the thread has ended (for tests).
    var hasFinished: Bool { state.withLock { $0.finished } }

    /// How many times a lost session was replaced (for tests).
    var reconnections: Int { state.withLock { $0.reconnections } }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    private func run() {
        while let connection, !isStopping {
            do {
                let notifications = try connection.waitForNotifications(orUntilReadable: wakeRead)
                if !notifications.isEmpty && !isStopping { deliver(notifications) }
            } catch {
                connection.close()
                self.connection = nil
                if isStopping { break }
                CoreDataLog.error("The listening PostgreSQL session failed (\(error.message)): connecting again")
                guard reconnect() else { break }
                // Commits made while no session listened were not delivered: one notification
                // (with the store's last history token) lets contexts catch up through history.
                if !isStopping { deliver([PostgreSQLNotification(channel: channel, payload: "")]) }
            }
        }
        connection?.close()
        connection = nil
        state.withLock { state in
            state.finished = true
            close(wakeRead)
            close(wakeWrite)
        }
    }

    /// Opens a listening session again, waiting before each attempt (0.1 s, then twice as long
    /// as the last time, up to 10 s); `false` if ``stop()`` was called meanwhile.
    private func reconnect() -> Bool {
        var delay = Self.firstReconnectDelay
        while waitForStop(delay) == false {
            do {
                let session = try connect()
                do {
                    try Self.listen(on: session, to: channel)
                } catch {
                    session.close()
                    throw error
                }
                connection = session
                state.withLock { $0.reconnections += 1 }
                return true
            } catch {
                delay = min(delay * 2, Self.longestReconnectDelay)
                CoreDataLog.error("The listening PostgreSQL session could not connect again (\(error.localizedDescription)): trying again in \(delay) s")
            }
        }
        return false
    }

    /// Sleeps `seconds`, or less if ``stop()`` wakes the thread; whether it did.
    private func waitForStop(_ seconds: TimeInterval) -> Bool {
        var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(seconds * 1000))
        return ready > 0 || isStopping
    }
}

extension PostgreSQLStore {
    /// Opens the listening session (``NSPersistentStoreRemoteChangeNotificationPostOptionKey``);
    /// 134080 naming the cause if it can't.
    func startListening(_ connector: @escaping PostgreSQLConnector) throws {
        guard let url else { return }
        let (password, location) = (options?[NSPostgreSQLPasswordOption] as? String, location)
        let connect = { try Self.listeningSession(connector, url, password: password, location: location) }
        let listening = try connect()
        do {
            let listener = try PostgreSQLChangeListener(connection: listening, channel: identifier, connect: connect) { [weak self] notifications in
                self?.postRemoteChange(notifications)
            }
            listenerLock.withLock { self.listener = listener }
        } catch {
            listening.close()
            throw Self.error(error, .persistentStoreOpen, "Can't listen for remote changes to the PostgreSQL store at \(location)")
        }
    }

    /// A new session of the store's database that can wait for notifications; 134080 naming
    /// the cause if it can't.
    private static func listeningSession(_ connector: PostgreSQLConnector, _ url: URL, password: String?,
                                         location: String) throws -> any PostgreSQLListeningConnection {
        let session: any PostgreSQLConnection
        do {
            session = try connector(url, password)
        } catch {
            throw Self.error(error, .persistentStoreOpen, "Can't listen for remote changes to the PostgreSQL store at \(location)")
        }
        guard let listening = session as? any PostgreSQLListeningConnection else {
            session.close()
            throw CoreDataError.make(.persistentStoreOpen,
                "The PostgreSQL client can't wait for notifications: remote change notifications of the store at \(location) are not available")
        }
        return listening
    }

    /// Ends the remote change notifications: the thread ends and closes its session.
    func stopListening() {
        let listener = listenerLock.withLock {
            defer { self.listener = nil }
            return self.listener
        }
        listener?.stop()
    }

    /// Sends the notification of a write, in its transaction: the server delivers it at the commit.
    func notifyCommit(transaction: Int64?, on connection: any PostgreSQLConnection) throws {
        let notification = commitNotification(transaction: transaction)
        _ = try connection.execute(notification.sql, notification.parameters)
    }

    /// The statement that sends the notification of a write (a save without history sends it with its inserts).
    func commitNotification(transaction: Int64?) -> PostgreSQLStatement {
        PostgreSQLStatement(sql: "SELECT pg_notify($1, $2)", parameters: [.text(identifier), .text(transaction.map(String.init) ?? "")])
    }

    /// Posts `.NSPersistentStoreRemoteChange` from the store's coordinator (on the listening
    /// thread) for commits the server delivered; with history, the token of the last of them.
    private func postRemoteChange(_ notifications: [PostgreSQLNotification]) {
        guard let coordinator = persistentStoreCoordinator, let identifier else { return }
        var userInfo: [AnyHashable: Any] = [NSStoreUUIDKey: identifier]
        if let url { userInfo[NSPersistentStoreURLKey] = url }
        if history != nil {
            var last = notifications.compactMap { Int64($0.payload) }.max()
            if last == nil {
                // A save by a coordinator that records no history: the token is the store's last.
                do {
                    last = try lastHistoryTransaction()
                } catch {
                    CoreDataLog.error("No remote change notification for the PostgreSQL store at \(location): \(error.localizedDescription)")
                    return
                }
            }
            if let last, last > 0 { userInfo[NSPersistentHistoryTokenKey] = NSPersistentHistoryToken(storeTokens: [identifier: last]) }
        }
        CoreDataMessages.post(name: .NSPersistentStoreRemoteChange, object: coordinator, userInfo: userInfo)
    }
}
