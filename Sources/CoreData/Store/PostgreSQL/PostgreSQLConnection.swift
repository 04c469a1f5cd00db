import Foundation

// What the PostgreSQL store needs of a client library: a connection that runs SQL with bound
// parameters and hands back rows. `CoreData` depends on no client: the `CoreDataPostgreSQL`
// module implements these over libpq and registers a connector (``PostgreSQLStore/connector``),
// so that a change of client stays inside that module. `package`: the store API behind them is
// internal, and these are no promise to users.

/// A value bound to a `$n` parameter: typed, so the server never guesses a parameter's type
/// from its text.
package enum PostgreSQLParameter: Sendable, Hashable {
    case null
    /// `bigint`.
    case int(Int64)
    /// `double precision`.
    case double(Double)
    /// `text` (UTF-8; the server refuses a NUL character).
    case text(String)
    /// `bytea`.
    case bytes(Data)
    /// `numeric`, as its decimal text (`"12.5"`, `"NaN"`).
    case numeric(String)
}

/// One statement and the values of its `$1…$n`, as ``PostgreSQLConnection/executeAll(_:)`` takes them.
package struct PostgreSQLStatement {
    package var sql: String
    package var parameters: [PostgreSQLParameter]
    /// Whether ``PostgreSQLConnection/executeAllKeepingRows(_:)`` keeps its rows.
    package var returnsRows: Bool

    package init(sql: String, parameters: [PostgreSQLParameter] = [], returnsRows: Bool = false) {
        self.sql = sql
        self.parameters = parameters
        self.returnsRows = returnsRows
    }
}

/// The rows of one statement, read by row and column (both from 0). Values are read in the form
/// of their column's type; a NULL reads as 0, `""` or empty data (ask ``isNull(_:_:)`` first).
package protocol PostgreSQLRows: AnyObject {
    /// How many rows the statement returned.
    var count: Int { get }
    /// How many rows an `INSERT`, `UPDATE` or `DELETE` changed (0 for other statements).
    var affectedRows: Int { get }
    /// How many columns each row has.
    var columnCount: Int { get }
    func isNull(_ row: Int, _ column: Int) -> Bool
    func int64(_ row: Int, _ column: Int) -> Int64
    func double(_ row: Int, _ column: Int) -> Double
    func text(_ row: Int, _ column: Int) -> String
    func bytes(_ row: Int, _ column: Int) -> Data
}

/// One session with a server. Not thread-safe: the store uses each connection on one thread at a time.
package protocol PostgreSQLConnection: AnyObject {
    /// Runs one statement whose values are bound to `$1…$n` (`parameters`, in order). The
    /// connection may prepare it once and keep it for the same SQL with the same parameter types.
    func execute(_ sql: String, _ parameters: [PostgreSQLParameter]) throws(PostgreSQLError) -> any PostgreSQLRows
    /// ``execute(_:_:)``, handing the rows to `body` as they arrive, not once the last has: a
    /// few at a time (one, over libpq), so that the caller decodes rows while the server still
    /// sends the next ones. Each `rows` is valid only during its call. If `body` throws, the
    /// rows left are read and dropped, and its error is thrown; a failure of the statement is
    /// thrown as ``execute(_:_:)`` throws it, after the rows that came before it were handed
    /// over (and rather than `body`'s error when it comes while the rows left are dropped: it
    /// says what state the session is in).
    func execute(_ sql: String, _ parameters: [PostgreSQLParameter], rowsAsTheyArrive body: (any PostgreSQLRows) throws -> Void) throws
    /// Runs statements without parameters or results (DDL, `BEGIN`, `COMMIT`, `ROLLBACK`).
    func run(_ sql: String) throws(PostgreSQLError)
    /// Runs `statements` in order as ``execute(_:_:)`` would, their results unread, and throws
    /// the first one's error that fails (those after it do not run). The connection may send many
    /// of them before it reads their results (one round trip, not one each). Only inside a
    /// transaction: a failure leaves it to be rolled back.
    func executeAll(_ statements: [PostgreSQLStatement]) throws(PostgreSQLError)
    /// ``executeAll(_:)``, returning the rows of the statements marked
    /// ``PostgreSQLStatement/returnsRows``, in order. Transaction control (`BEGIN`, `COMMIT`,
    /// `SET LOCAL`) may be among the statements, one to a statement.
    func executeAllKeepingRows(_ statements: [PostgreSQLStatement]) throws(PostgreSQLError) -> [any PostgreSQLRows]
    /// Whether the session is known to be gone before anything is sent on it: the server ended it
    /// while it sat idle (a restart, `pg_terminate_backend`), which reading what the server sent
    /// meanwhile tells without a round trip. `false` when nothing says so (a session whose network
    /// broke silently is found lost only by the next statement).
    func wasEndedWhileIdle() -> Bool
    /// Ends the session; the connection is not used afterwards.
    func close()
}

/// A failure reported by the server or the client library.
package struct PostgreSQLError: Error, Sendable {
    /// The client's or the server's message.
    package var message: String
    /// The server's SQLSTATE (`23505`, `28P01`, …), when the server sent one.
    package var sqlState: String?
    /// What failed: connecting, or running a statement.
    package var isConnectionFailure: Bool

    package init(message: String, sqlState: String?, isConnectionFailure: Bool) {
        self.message = message
        self.sqlState = sqlState
        self.isConnectionFailure = isConnectionFailure
    }
}

/// Opens a connection to the database a `postgres://` URL names, with a password given apart
/// from the URL (``NSPostgreSQLPasswordOption`` in the store's options) or `nil`.
package typealias PostgreSQLConnector = @Sendable (_ url: URL, _ password: String?) throws(PostgreSQLError) -> any PostgreSQLConnection

extension PostgreSQLConnection {
    /// Nothing known: for connections that can't read without a statement.
    package func wasEndedWhileIdle() -> Bool { false }

    /// All the rows at once, for connections that can't hand them over as they arrive.
    package func execute(_ sql: String, _ parameters: [PostgreSQLParameter], rowsAsTheyArrive body: (any PostgreSQLRows) throws -> Void) throws {
        try body(try execute(sql, parameters))
    }

    /// One statement after the other, a round trip each: for connections that send no pipeline.
    package func executeAll(_ statements: [PostgreSQLStatement]) throws(PostgreSQLError) {
        _ = try executeAllKeepingRows(statements)
    }

    /// One statement after the other, a round trip each: for connections that send no pipeline.
    package func executeAllKeepingRows(_ statements: [PostgreSQLStatement]) throws(PostgreSQLError) -> [any PostgreSQLRows] {
        var kept: [any PostgreSQLRows] = []
        for statement in statements {
            let rows = try execute(statement.sql, statement.parameters)
            if statement.returnsRows { kept.append(rows) }
        }
        return kept
    }

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws. A
    /// session that can't roll back is still inside the transaction (its snapshot, its locks):
    /// it throws an error that says the session is lost (``PostgreSQLError/isSessionLost``), so
    /// that a pool never lends it again.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try run("BEGIN")
        let result: T
        do {
            result = try body()
        } catch {
            do {
                try run("ROLLBACK")
            } catch let failure {
                throw PostgreSQLError(message: "\(failure.message) (rolling back after: \(error))", sqlState: failure.sqlState,
                                      isConnectionFailure: true)
            }
            throw error // the error that ended the transaction is the one to report
        }
        try run("COMMIT")
        return result
    }
}

/// The userInfo keys of errors that carry a PostgreSQL failure: the client's or server's message,
/// and the server's SQLSTATE when it sent one.
///
/// ```swift
/// let state = (error as NSError).userInfo[NSPostgreSQLStateErrorKey] as? String // "28P01"
/// ```
public let NSPostgreSQLStateErrorKey = "NSPostgreSQLState"
/// The userInfo key of the PostgreSQL client's or server's own message in an error of the
/// PostgreSQL store.
///
/// ```swift
/// let message = (error as NSError).userInfo[NSPostgreSQLMessageErrorKey] as? String
/// ```
public let NSPostgreSQLMessageErrorKey = "NSPostgreSQLMessage"
/// The option key of the password a PostgreSQL store connects with; it wins over a password in the URL.
///
/// ```swift
/// try coordinator.addPersistentStore(ofType: "PostgreSQL", configurationName: nil,
///     at: URL(string: "postgres://app@db.example.com:5432/cars")!,
///     options: [NSPostgreSQLPasswordOption: password])
/// ```
public let NSPostgreSQLPasswordOption = "NSPostgreSQLPasswordOption"
/// The type string of the PostgreSQL store (`"PostgreSQL"`); adding a store of this type needs
/// `import CoreDataPostgreSQL` and `NSPersistentStoreCoordinator.registerPostgreSQLStore()`.
///
/// ```swift
/// try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil,
///     at: URL(string: "postgres://app@localhost/cars")!)
/// ```
public let NSPostgreSQLStoreType = "PostgreSQL"

extension NSPersistentStore.StoreType {
    /// The PostgreSQL store (`import CoreDataPostgreSQL`; see ``NSPostgreSQLStoreType``).
    ///
    /// ```swift
    /// let description = NSPersistentStoreDescription(url: URL(string: "postgres://app@localhost/cars")!)
    /// description.type = NSPersistentStore.StoreType.postgreSQL.rawValue
    /// ```
    public static let postgreSQL = NSPersistentStore.StoreType(rawValue: NSPostgreSQLStoreType)
}

/// PostgreSQL URLs as messages may show them.
package enum PostgreSQLURL {
    /// `url` with its passwords masked (`postgres://app:***@host/cars`, and libpq's `password`
    /// and `sslpassword` parameters), for every message and report that names a store.
    package static func masked(_ url: URL) -> String { masked(url.absoluteString) }

    /// `string`, a URL as someone typed it, with its passwords masked. Read as text, not as URL
    /// components: a password with a `#`, `?` or `/` not percent-encoded makes Foundation read
    /// another host and no password (`app:2024#Secret@db` as host `app`, port 2024), where libpq
    /// reads user and password up to the last `@`. So what stands between `://` and the last `@`
    /// is the user and password, and the `password` and `sslpassword` parameters' values are
    /// masked wherever they are.
    package static func masked(_ string: String) -> String {
        var text = string
        if let scheme = text.range(of: "://") {
            let rest = text[scheme.upperBound...]
            if let at = rest.lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
                text = String(text[..<colon]) + ":***" + String(rest[at...])
            }
        }
        for name in ["password=", "sslpassword="] {
            var searchFrom = text.startIndex
            while let found = text.range(of: name, options: .caseInsensitive, range: searchFrom..<text.endIndex) {
                // A parameter's name follows `?` or `&` (`sslpassword=` is not `password=`).
                guard found.lowerBound > text.startIndex, "?&".contains(text[text.index(before: found.lowerBound)]) else {
                    searchFrom = found.upperBound
                    continue
                }
                let end = text[found.upperBound...].firstIndex(of: "&") ?? text.endIndex
                text.replaceSubrange(found.upperBound..<end, with: "***")
                searchFrom = text.index(found.upperBound, offsetBy: 3)
            }
        }
        return text
    }
}
