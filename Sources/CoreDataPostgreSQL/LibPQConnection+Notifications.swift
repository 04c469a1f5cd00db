import CLibPQ
import CoreData
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension LibPQConnection: PostgreSQLListeningConnection {
    /// Sleeps in `poll` on the session's socket and on `wake` until the server sends something
    /// (read with `PQconsumeInput`, notifications taken with `PQnotifies`) or `wake` is readable.
    func waitForNotifications(orUntilReadable wake: Int32) throws(PostgreSQLError) -> [PostgreSQLNotification] {
        while true {
            var notifications: [PostgreSQLNotification] = []
            while let notification = PQnotifies(handle) {
                let fields = notification.pointee
                notifications.append(PostgreSQLNotification(channel: String(cString: fields.relname),
                                                            payload: fields.extra.map { String(cString: $0) } ?? ""))
                PQfreemem(notification)
            }
            if !notifications.isEmpty { return notifications }
            let socket = PQsocket(handle)
            guard socket >= 0 else { throw failure("The listening PostgreSQL session has no socket") }
            var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw failure("poll() failed (errno \(errno))")
            }
            if descriptors[1].revents != 0 { return [] }
            guard PQconsumeInput(handle) == 1 else { throw failure(String(cString: PQerrorMessage(handle))) }
        }
    }

    private func failure(_ message: String) -> PostgreSQLError {
        PostgreSQLError(message: message.trimmingCharacters(in: .whitespacesAndNewlines), sqlState: nil, isConnectionFailure: true)
    }
}
