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
// together are posted once. Removing the store, or dropping it and its coordinator, stops the
// thread and closes the session.

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

/// One listening session and the thread that waits on it; ``stop()`` (or a failure of the
/// session) ends the thread, which then closes the session.
internal final class PostgreSQLChangeListener: @unchecked Sendable {
    private let connection: any PostgreSQLListeningConnection
    /// The pipe whose write end ``stop()`` writes to, to wake the thread.
    private let wakeRead: Int32, wakeWrite: Int32
    private struct State {
        var stopping = false
        /// The thread has ended and closed the pipe.
        var finished = false
    }
    private let state = Locked(State())
    private let deliver: @Sendable ([PostgreSQLNotification]) -> Void

    /// `LISTEN`s on `channel` and starts the thread, which calls `deliver` with each batch of
    /// notifications the server sends.
    init(connection: any PostgreSQLListeningConnection, channel: String,
         deliver: @escaping @Sendable ([PostgreSQLNotification]) -> Void) throws {
        try connection.run("LISTEN \(SQLiteSchema.quoted(channel))")
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else {
            throw CoreDataError.make(.persistentStoreOpen, "Can't listen for remote changes: pipe() failed (errno \(errno))")
        }
        self.connection = connection
        (wakeRead, wakeWrite) = (descriptors[0], descriptors[1])
        self.deliver = deliver
        let thread = Thread { [self] in run() }
        thread.name = "NSPersistentStoreRemoteChangeNotification"
        thread.start()
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

    private func run() {
        while !state.withLock({ $0.stopping }) {
            do {
                let notifications = try connection.waitForNotifications(orUntilReadable: wakeRead)
                if !notifications.isEmpty && !state.withLock({ $0.stopping }) { deliver(notifications) }
            } catch {
                CoreDataLog.error("Remote change notifications stopped: the listening PostgreSQL session failed: \(error.message)")
                break
            }
        }
        connection.close()
        state.withLock { state in
            state.finished = true
            close(wakeRead)
            close(wakeWrite)
        }
    }
}

extension PostgreSQLStore {
    /// Opens the listening session (``NSPersistentStoreRemoteChangeNotificationPostOptionKey``);
    /// 134080 naming the cause if it can't.
    func startListening(_ connector: PostgreSQLConnector) throws {
        guard let url else { return }
        let session: any PostgreSQLConnection
        do {
            session = try connector(url, options?[NSPostgreSQLPasswordOption] as? String)
        } catch {
            throw Self.error(error, .persistentStoreOpen, "Can't listen for remote changes to the PostgreSQL store at \(location)")
        }
        guard let listening = session as? any PostgreSQLListeningConnection else {
            session.close()
            throw CoreDataError.make(.persistentStoreOpen,
                "The PostgreSQL client can't wait for notifications: remote change notifications of the store at \(location) are not available")
        }
        do {
            let listener = try PostgreSQLChangeListener(connection: listening, channel: identifier) { [weak self] notifications in
                self?.postRemoteChange(notifications)
            }
            listenerLock.withLock { self.listener = listener }
        } catch {
            listening.close()
            throw Self.error(error, .persistentStoreOpen, "Can't listen for remote changes to the PostgreSQL store at \(location)")
        }
    }

    /// Ends the remote change notifications: the thread ends and closes its session.
    func stopListening() {
        let listener = listenerLock.withLock {
            defer { self.listener = nil }
            return self.listener
        }
        listener?.stop()
    }

    /// Sends the notification of a save, in its transaction: the server delivers it at the commit.
    func notifyCommit(transaction: Int64?, on connection: any PostgreSQLConnection) throws {
        _ = try connection.execute("SELECT pg_notify($1, $2)", [.text(identifier), .text(transaction.map(String.init) ?? "")])
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
        NotificationCenter.default.post(name: .NSPersistentStoreRemoteChange, object: coordinator, userInfo: userInfo)
    }
}
