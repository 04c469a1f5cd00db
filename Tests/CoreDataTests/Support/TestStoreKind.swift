import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// The store a scenario's ``TestStack`` keeps: a SQLite file, or a PostgreSQL database when
/// `COREDATA_POSTGRES_URL` names a server (docs/POSTGRESQL.md). The seeds' concurrency
/// scenarios run on each available kind (`@Test(arguments: TestStoreKind.available)`).
enum TestStoreKind: String, Sendable, CustomTestStringConvertible {
    case sqlite = "SQLite", postgreSQL = "PostgreSQL"

    var testDescription: String { rawValue }

    /// SQLite, and PostgreSQL with a server.
    static var available: [TestStoreKind] { PostgreSQLTestDatabase.server == nil ? [.sqlite] : [.sqlite, .postgreSQL] }
}

/// A database of its own on the `COREDATA_POSTGRES_URL` server, with a unique name, dropped when
/// the value goes. Registers the PostgreSQL store.
final class PostgreSQLTestDatabase: Sendable {
    /// The server the tests may create databases on, if any.
    static let server: URL? = ProcessInfo.processInfo.environment["COREDATA_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : URL(string: $0) }

    /// Enables a test only with a server; without one it is skipped with a note saying what
    /// does not run (`what`) and how to start a server.
    static func skipUnlessServer(_ what: String = "these tests need COREDATA_POSTGRES_URL") -> ConditionTrait {
        .enabled(if: server != nil, Comment(rawValue: """
            No PostgreSQL server: \(what). Start a throwaway server with `Scripts/postgres-test-server start` \
            and export the COREDATA_POSTGRES_URL it prints.
            """))
    }

    let name: String
    /// The database's URL: the server's, with this database's name.
    let url: URL

    /// A new empty database; `options` follow `CREATE DATABASE name` (a template, a collation).
    init(options: String = "") throws {
        guard let server = Self.server else { throw CocoaError(.featureUnsupported) }
        NSPersistentStoreCoordinator.registerPostgreSQLStore()
        name = "cd_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try LibPQConnection(url: server, password: nil).run("CREATE DATABASE \"\(name)\" \(options)")
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false)!
        components.path = "/" + name
        url = components.url!
    }

    deinit {
        do {
            try LibPQConnection(url: Self.server!, password: nil).run("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)")
        } catch {
            Issue.record("The test database \(name) could not be dropped: \(error)")
        }
    }

    /// Rows of `sql` on this database, each column as text (`nil` for NULL), read outside Core Data.
    func query(_ sql: String) throws -> [[String?]] {
        let connection = try LibPQConnection(url: url, password: nil)
        defer { connection.close() }
        let rows = try connection.execute(sql, [])
        return (0..<rows.count).map { row in (0..<rows.columnCount).map { rows.isNull(row, $0) ? nil : rows.text(row, $0) } }
    }
}
