import CLibPQ
import CoreData
import Foundation

/// A session with a PostgreSQL server over libpq: the store's ``PostgreSQLConnection``.
///
/// Parameters go in binary (typed, with lengths: no value is ever written into the SQL text, and
/// a string is never cut at a NUL); results come back as text, parsed here. Each statement is
/// prepared once per connection, per SQL and parameter types, and kept (`cd1`, `cd2`, …), at
/// most ``preparedStatementLimit`` of them: preparing one more first deallocates the one used
/// least recently.
final class LibPQConnection: PostgreSQLConnection {
    let handle: OpaquePointer
    /// Prepared statements' names and last uses by SQL and parameter types.
    private var prepared: [PreparedKey: (name: String, lastUse: Int)] = [:]
    /// Counts statements run (the clock of `lastUse`) and names prepared ones.
    private var uses = 0
    private var statementsPrepared = 0
    /// How many times this connection waited for the server's answer (tests read it).
    internal var roundTrips = 0
    /// The most statements a connection keeps prepared on the server.
    static let preparedStatementLimit = 200

    private struct PreparedKey: Hashable {
        var sql: String
        var types: [Oid]
    }

    /// Connects to the database `url` names (`postgres://user:password@host:port/database?sslmode=…`),
    /// with `password` if given (it replaces one in the URL).
    init(url: URL, password: String?) throws(PostgreSQLError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw PostgreSQLError(message: "A PostgreSQL store needs a postgres:// URL (postgres://user@host:port/database), not '\(Self.masked(url))'",
                                  sqlState: nil, isConnectionFailure: true)
        }
        guard url.host != nil || url.path.count > 1 else {
            throw PostgreSQLError(message: "The URL '\(Self.masked(url))' names no server or database", sqlState: nil, isConnectionFailure: true)
        }
        // libpq reads the URL itself (expand_dbname); later keywords override it. The
        // application name is a fallback: the URL's `application_name` wins.
        var keywords = ["dbname", "client_encoding", "fallback_application_name"]
        // (libpq reads a URL only with its scheme in lower case: `POSTGRES://…` would be taken
        // for a database's name, on the default server.)
        var values = [scheme + url.absoluteString.dropFirst(scheme.count), "UTF8", "swift-coredata"]
        if let password {
            keywords.append("password")
            values.append(password)
        }
        let connection = Self.withCStrings(keywords) { keys in
            Self.withCStrings(values) { values in PQconnectdbParams(keys, values, 1) }
        }
        guard let connection else {
            throw PostgreSQLError(message: "libpq could not allocate a connection", sqlState: nil, isConnectionFailure: true)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(connection)
            throw PostgreSQLError(message: message, sqlState: Self.startupState(message), isConnectionFailure: true)
        }
        handle = connection
        // Values are read as text in these forms (`bytes(_:_:)`, `double(_:_:)`): a database or
        // role configured otherwise must not change what the store reads.
        try run("SET bytea_output = 'hex'; SET extra_float_digits = 3")
    }

    /// `url` as a message may show it: its password masked.
    private static func masked(_ url: URL) -> String { PostgreSQLURL.masked(url) }

    /// Set by ``close()``: the session has ended.
    private var isClosed = false

    deinit { close() }

    /// Reads what the server sent while the session was idle (`PQconsumeInput` does not wait): a
    /// session the server ended has sent its error and closed. The first read takes the error,
    /// the second meets the end of the stream, and libpq marks the session bad.
    func wasEndedWhileIdle() -> Bool {
        PQconsumeInput(handle) == 0 || PQconsumeInput(handle) == 0 || PQstatus(handle) != CONNECTION_OK
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        prepared.removeAll()
        PQfinish(handle)
    }

    /// libpq reports a failed connection's cause in text only: the SQLSTATE of the server's
    /// commonest refusals, told from the server's message (English servers).
    private static func startupState(_ message: String) -> String? {
        if message.contains("password authentication failed") || message.contains("no password supplied") { return "28P01" }
        if message.contains("database \"") && message.contains("\" does not exist") { return "3D000" }
        if message.contains("role \"") && message.contains("\" does not exist") { return "28000" }
        return nil
    }

    private static func withCStrings<T>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        return body(copies.map { UnsafePointer($0) } + [nil])
    }

    func run(_ sql: String) throws(PostgreSQLError) {
        roundTrips += 1
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result, sql: sql)
    }

    func execute(_ sql: String, _ parameters: [PostgreSQLParameter]) throws(PostgreSQLError) -> any PostgreSQLRows {
        let result = try withPrepared(sql, parameters) { name, count, values, lengths, formats in
            PQexecPrepared(handle, name, count, values, lengths, formats, 0)
        }
        do {
            try check(result, sql: sql)
        } catch {
            PQclear(result)
            throw error
        }
        return LibPQRows(result!)
    }

    /// Calls `body` with the name of the statement prepared for `sql` and the types of
    /// `parameters` (prepared now if new), and the parameters as libpq takes them (their count,
    /// values, lengths and formats): `body` sends it (one round trip, counted here).
    func withPrepared<T>(_ sql: String, _ parameters: [PostgreSQLParameter],
                         _ body: (String, Int32, [UnsafePointer<CChar>?], [Int32], [Int32]) -> T) throws(PostgreSQLError) -> T {
        var encoded = LibPQParameters()
        encoded.encode(parameters)
        let name = try statementName(sql, types: encoded.types)
        roundTrips += 1
        return encoded.withValues { values, lengths, formats in body(name, Int32(parameters.count), values, lengths, formats) }
    }

    /// The name of the statement prepared for `sql` with parameters of `types`, prepared now if new.
    func statementName(_ sql: String, types: [Oid]) throws(PostgreSQLError) -> String {
        let key = PreparedKey(sql: sql, types: types)
        uses += 1
        if let entry = prepared[key] {
            prepared[key] = (entry.name, uses)
            return entry.name
        }
        if prepared.count >= Self.preparedStatementLimit, let (oldest, entry) = prepared.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            // Prepared statements are the session's, not the transaction's: this holds whatever
            // the transaction then does.
            try run("DEALLOCATE \"\(entry.name)\"")
            prepared[oldest] = nil
        }
        statementsPrepared += 1
        let name = "cd\(statementsPrepared)"
        roundTrips += 1
        let result = PQprepare(handle, name, sql, Int32(types.count), types)
        defer { PQclear(result) }
        try check(result, sql: sql)
        prepared[key] = (name, uses)
        return name
    }

    /// Throws the error a result reports, with its SQLSTATE.
    func check(_ result: OpaquePointer?, sql: String) throws(PostgreSQLError) {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK else { return }
        let state = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
        let message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
        throw PostgreSQLError(message: "\(message) (running \(sql.prefix(200)))", sqlState: state,
                              isConnectionFailure: PQstatus(handle) != CONNECTION_OK)
    }
}

/// The rows of one result, in text form, parsed as they are read. A row or column the result
/// doesn't have (an answer of another shape than the statement's caller expects) reads as NULL
/// does, never past the result (libpq has no value there).
final class LibPQRows: PostgreSQLRows {
    private var result: OpaquePointer
    private(set) var count: Int
    /// How many columns each row has.
    private(set) var columnCount: Int

    init(_ result: OpaquePointer) {
        self.result = result
        count = Int(PQntuples(result))
        columnCount = Int(PQnfields(result))
    }

    deinit { PQclear(result) }

    var affectedRows: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    /// Holds `next` instead of the result it held, which is cleared: one object for all the
    /// one-row results of a statement read a row at a time (`execute(_:_:rowsAsTheyArrive:)`).
    func replace(with next: OpaquePointer) {
        PQclear(result)
        result = next
        count = Int(PQntuples(next))
        columnCount = Int(PQnfields(next))
    }

    /// Whether the result has a value at `row`, `column`.
    private func has(_ row: Int, _ column: Int) -> Bool { row >= 0 && row < count && column >= 0 && column < columnCount }

    func isNull(_ row: Int, _ column: Int) -> Bool { !has(row, column) || PQgetisnull(result, Int32(row), Int32(column)) != 0 }

    /// Read by hand in `int8out`'s form (an optional `-`, then digits): a quarter of
    /// `strtoll`'s instructions; anything else (and 19-digit values) goes to `strtoll`.
    func int64(_ row: Int, _ column: Int) -> Int64 {
        guard has(row, column), let text = PQgetvalue(result, Int32(row), Int32(column)) else { return 0 }
        let bytes = UnsafeRawPointer(text)
        let start = bytes.load(as: UInt8.self) == UInt8(ascii: "-") ? 1 : 0
        var end = start
        var magnitude: Int64 = 0
        while end - start < 18, case let digit = bytes.load(fromByteOffset: end, as: UInt8.self) &- UInt8(ascii: "0"), digit < 10 {
            magnitude = magnitude &* 10 &+ Int64(digit)
            end += 1
        }
        guard end > start, bytes.load(fromByteOffset: end, as: UInt8.self) == 0 else { return strtoll(text, nil, 10) }
        return start == 1 ? -magnitude : magnitude
    }

    /// `Infinity`, `-Infinity` and `NaN` as Swift reads them; finite values in the server's
    /// shortest exact form (PostgreSQL 12 and later). Read in the C locale, whatever the process's
    /// (`strtod` follows `setlocale`'s `LC_NUMERIC`: under `de_DE` it stops at the `.`).
    func double(_ row: Int, _ column: Int) -> Double {
        guard has(row, column) else { return 0 }
        return Double(String(cString: PQgetvalue(result, Int32(row), Int32(column)))) ?? .nan
    }

    func text(_ row: Int, _ column: Int) -> String {
        guard has(row, column) else { return "" }
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        return PQgetvalue(result, Int32(row), Int32(column)).withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// `bytea` in the server's hex output (`\x0a1b…`).
    func bytes(_ row: Int, _ column: Int) -> Data {
        guard has(row, column) else { return Data() }
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        guard length >= 2 else { return Data() }
        return PQgetvalue(result, Int32(row), Int32(column)).withMemoryRebound(to: UInt8.self, capacity: length) { text in
            func nibble(_ c: UInt8) -> UInt8 {
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
                default: return c &- UInt8(ascii: "A") &+ 10
                }
            }
            var data = Data(count: (length - 2) / 2)
            data.withUnsafeMutableBytes { out in
                for index in 0..<out.count {
                    out[index] = nibble(text[2 + 2 * index]) << 4 | nibble(text[3 + 2 * index])
                }
            }
            return data
        }
    }
}
