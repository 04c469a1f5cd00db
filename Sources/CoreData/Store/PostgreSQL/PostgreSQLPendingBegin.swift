import Foundation

/// The writer in a transaction whose `BEGIN` has not been sent yet: it goes out with the first
/// statements the transaction runs, in their round trip. A save whose keys
/// the store already holds (`PostgreSQLKeyBlocks.swift`) then costs two round trips, its
/// statements and `COMMIT`, not three.
///
/// That first round trip is never sent twice: its statements run on the server, and one of them
/// may be what ended the session. A session the server ended while it sat idle is found before
/// (``PostgreSQLConnection/wasEndedWhileIdle()``, by ``PostgreSQLConnectionPool``), and the
/// transaction begins on a new one; a writer idle for longer than the pool's
/// ``PostgreSQLConnectionPool/quietInterval`` sends a lone `BEGIN` instead. A transaction that
/// sent nothing has nothing to commit or roll back (``hasBegun``).
internal final class PostgreSQLPendingBegin: PostgreSQLConnection {
    /// The session the transaction runs on.
    let connection: any PostgreSQLConnection
    /// The transaction's `BEGIN` (without parameters).
    private let begin: PostgreSQLStatement
    /// Whether ``begin`` was sent (the transaction is open on the server, or was until a failure).
    private(set) var hasBegun = false

    init(_ connection: any PostgreSQLConnection, begin: PostgreSQLStatement) {
        self.connection = connection
        self.begin = begin
    }

    /// `send` on the session, given the statements that begin the transaction if they are still
    /// to be sent (empty otherwise).
    private func sending<T>(_ send: (any PostgreSQLConnection, [PostgreSQLStatement]) throws(PostgreSQLError) -> T) throws(PostgreSQLError) -> T {
        guard !hasBegun else { return try send(connection, []) }
        hasBegun = true
        return try send(connection, [begin])
    }

    func execute(_ sql: String, _ parameters: [PostgreSQLParameter]) throws(PostgreSQLError) -> any PostgreSQLRows {
        try sending { (connection, begin) throws(PostgreSQLError) in
            guard !begin.isEmpty else { return try connection.execute(sql, parameters) }
            let statement = PostgreSQLStatement(sql: sql, parameters: parameters, returnsRows: true)
            return try connection.executeAllKeepingRows(begin + [statement])[0]
        }
    }

    /// Rows handed over as they arrive come after a round trip of their own for `BEGIN`, if it
    /// is still to be sent (a write transaction seldom starts with a fetch).
    func execute(_ sql: String, _ parameters: [PostgreSQLParameter], rowsAsTheyArrive body: (any PostgreSQLRows) throws -> Void) throws {
        try sending { (connection, begin) throws(PostgreSQLError) in if !begin.isEmpty { try connection.executeAll(begin) } }
        try connection.execute(sql, parameters, rowsAsTheyArrive: body)
    }

    func run(_ sql: String) throws(PostgreSQLError) {
        try sending { (connection, begin) throws(PostgreSQLError) in
            try connection.run((begin.map(\.sql) + [sql]).joined(separator: "; "))
        }
    }

    func executeAll(_ statements: [PostgreSQLStatement]) throws(PostgreSQLError) {
        try sending { (connection, begin) throws(PostgreSQLError) in try connection.executeAll(begin + statements) }
    }

    func executeAllKeepingRows(_ statements: [PostgreSQLStatement]) throws(PostgreSQLError) -> [any PostgreSQLRows] {
        try sending { (connection, begin) throws(PostgreSQLError) in try connection.executeAllKeepingRows(begin + statements) }
    }

    func wasEndedWhileIdle() -> Bool { connection.wasEndedWhileIdle() }

    func close() { connection.close() }
}
