import CLibPQ
import CoreData
import CoreDataPostgreSQL
import Foundation

// `coredata bench --store postgres://…`: the workloads on a PostgreSQL server, swift-coredata's
// PostgreSQL store against libpq's C API doing the same work (BenchPostgreSQLRaw.swift). The
// swift-coredata engine is the SQLite run's own code (BenchCoreData.swift,
// BenchPredicatesCoreData.swift): every store it opens is a database the server made for it
// (`BenchFolder.freshStore(_:)`), where a SQLite run makes a file. This file must not import GRDB.

/// What a PostgreSQL run measures.
enum PostgreSQLBench {
    /// The workloads that run on PostgreSQL: (a)–(c) and the predicate workloads.
    static let workloads: [BenchWorkload] = [
        .carsSavedOneByOne, .carsSavedOnce, .insertItems, .fetchItems, .insertItemsBoxed, .fetchItemsBoxed,
        .equalityFetch, .prefixSearch, .lookupByID, .groupedAggregates,
    ]

    /// Issue 26's target for swift-coredata's time over libpq's: 1.5× on every workload.
    static let target = 1.5

    /// The libpq the process links (`90000 + minor` → "16.4", say).
    static var libpqVersion: String {
        let version = Int(PQlibVersion())
        return version >= 100_000 ? "\(version / 10_000).\(version % 10_000)" : "\(version / 10_000).\(version / 100 % 100)"
    }
}

/// The server of a PostgreSQL run: makes a new database for each store the run asks for, on the
/// server and as the user of the URL given, and drops them all at the end.
final class BenchPostgreSQLServer {
    /// The URL given (`--store`): its database is only where the run connects to make the others.
    let url: URL
    private let admin: RawPQConnection
    /// Names the run's databases (`coredata_bench_<run>_<stem>`): several runs may share a server.
    private let run = String(UUID().uuidString.prefix(8)).lowercased()
    private var made: [String] = []

    init(url: URL) throws {
        self.url = url
        admin = try RawPQConnection(url: url)
        NSPersistentStoreCoordinator.registerPostgreSQLStore()
    }

    /// The URL, its password masked, for the report.
    var maskedURL: String { PostgreSQLURL.masked(url) }

    /// The server's version, for the report.
    var version: String { (try? admin.scalarText("SHOW server_version")) ?? "unknown" }

    /// A new, empty database; its URL is the given one with the database's name as its path.
    func freshDatabase(_ stem: String) throws -> URL {
        let name = "coredata_bench_\(run)_\(stem.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }.map(String.init).joined())"
        try admin.execute("CREATE DATABASE \"\(name)\"")
        made.append(name)
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { throw BenchFailure("bad URL \(url)") }
        components.path = "/" + name
        guard let fresh = components.url else { throw BenchFailure("bad URL \(url)") }
        return fresh
    }

    /// Drops a database this run made (its sessions ended first: a store may still be open).
    func drop(_ database: URL) {
        let name = String(database.path.dropFirst())
        guard let index = made.firstIndex(of: name) else { return }
        made.remove(at: index)
        try? admin.execute("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)")
    }

    /// Drops every database the run made.
    func dropAll() {
        for name in made { try? admin.execute("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)") }
        made.removeAll()
    }
}

/// A libpq session, as a hand-written client uses one: statements prepared once by name,
/// parameters bound in binary (`int8`, `text`), results read as text.
final class RawPQConnection {
    let handle: OpaquePointer

    init(url: URL) throws {
        guard let connection = PQconnectdb(url.absoluteString) else { throw BenchFailure("libpq: could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(connection)
            throw BenchFailure("libpq: can't connect: \(message)")
        }
        handle = connection
    }

    deinit { PQfinish(handle) }

    /// Throws unless `result` succeeded; clears it when it throws.
    @inline(__always)
    func check(_ result: OpaquePointer?, _ what: String) throws {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            PQclear(result)
            throw BenchFailure("libpq: \(what): \(String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    /// Runs SQL without parameters (one or more statements).
    func execute(_ sql: String) throws {
        let result = PQexec(handle, sql)
        try check(result, sql)
        PQclear(result)
    }

    /// Prepares `sql` as the statement `name`, its parameters of the types `types` (OIDs).
    func prepare(_ name: String, _ sql: String, types: [Oid]) throws {
        let result = PQprepare(handle, name, sql, Int32(types.count), types)
        try check(result, "prepare \(sql)")
        PQclear(result)
    }

    /// Runs the prepared statement `name` with the binary parameters `values` (`lengths` bytes
    /// each); the result, which the caller clears.
    @inline(__always)
    func run(_ name: String, _ values: [UnsafePointer<CChar>?], _ lengths: [Int32], _ formats: [Int32]) throws -> OpaquePointer {
        let result = PQexecPrepared(handle, name, Int32(values.count), values, lengths, formats, 0)
        try check(result, "execute \(name)")
        return result!
    }

    /// Runs a statement that returns nothing, clearing its result.
    @inline(__always)
    func runClearing(_ name: String, _ values: [UnsafePointer<CChar>?], _ lengths: [Int32], _ formats: [Int32]) throws {
        PQclear(try run(name, values, lengths, formats))
    }

    /// The text of the first column of the first row of `sql`.
    func scalarText(_ sql: String) throws -> String {
        let result = PQexec(handle, sql)
        try check(result, sql)
        defer { PQclear(result) }
        guard PQntuples(result) > 0 else { throw BenchFailure("libpq: \(sql) returned no row") }
        return String(cString: PQgetvalue(result, 0, 0))
    }

    func scalar(_ sql: String) throws -> Int { Int(try scalarText(sql)) ?? -1 }

    /// The OIDs of the parameter types the raw engine binds.
    static let int8: Oid = 20
    static let text: Oid = 25
}

/// Reading a text result as a client does.
enum PQValue {
    @inline(__always)
    static func int(_ result: OpaquePointer, _ row: Int32, _ column: Int32) -> Int64 { strtoll(PQgetvalue(result, row, column), nil, 10) }

    @inline(__always)
    static func double(_ result: OpaquePointer, _ row: Int32, _ column: Int32) -> Double { strtod(PQgetvalue(result, row, column), nil) }

    @inline(__always)
    static func text(_ result: OpaquePointer, _ row: Int32, _ column: Int32) -> String {
        let length = Int(PQgetlength(result, row, column))
        return PQgetvalue(result, row, column).withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }
}
