import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// The server the PostgreSQL tests use: `COREDATA_POSTGRES_URL`, the URL of a database from
/// which they may create databases. Without it, the tests skip (``skipUnlessServer``).
enum PostgreSQLTestServer {
    static let url: URL? = ProcessInfo.processInfo.environment["COREDATA_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : URL(string: $0) }

    /// Whether a missing server fails the run instead of skipping (`.ci/run` sets
    /// `COREDATA_POSTGRES_REQUIRED=1`: in CI the PostgreSQL tests never skip).
    static let isRequired = ProcessInfo.processInfo.environment["COREDATA_POSTGRES_REQUIRED"] == "1"

    /// Enables a suite only with a server, saying how to start one otherwise.
    static let skipUnlessServer = Testing.ConditionTrait.enabled(if: url != nil, """
        No PostgreSQL server: these tests need COREDATA_POSTGRES_URL. Start a throwaway server with \
        `Scripts/postgres-test-server start` and export the variable it prints \
        (for example COREDATA_POSTGRES_URL=postgres://postgres@127.0.0.1:54329/postgres).
        """)

    /// Runs `sql` on the server's own database.
    static func run(_ sql: String) throws {
        let connection = try LibPQConnection(url: url!, password: nil)
        try connection.run(sql)
    }
}

/// A database of its own for one test, with a unique name, dropped when the value goes (so tests
/// run in parallel and leave nothing behind). Registers the PostgreSQL store.
final class TemporaryDatabase {
    let name: String
    /// The database's URL: the server's, with this database's name.
    let url: URL

    /// A new empty database; `owner` makes another role its owner (the role may then create
    /// tables in it); `encoding` another encoding than the server's (`LATIN1`, `SQL_ASCII`), with the
    /// `C` locale.
    init(owner: String? = nil, encoding: String? = nil) throws {
        NSPersistentStoreCoordinator.registerPostgreSQLStore()
        name = "cd_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try PostgreSQLTestServer.run("CREATE DATABASE \"\(name)\"" + (owner.map { " OWNER \"\($0)\"" } ?? "")
            + (encoding.map { " ENCODING '\($0)' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0" } ?? ""))
        url = Self.url(database: name)
    }

    /// The server's URL naming `database`, as `user` (with `password`) if given.
    static func url(database: String, user: String? = nil, password: String? = nil) -> URL {
        var components = URLComponents(url: PostgreSQLTestServer.url!, resolvingAgainstBaseURL: false)!
        components.path = "/" + database
        if let user { components.user = user }
        if let password { components.password = password }
        return components.url!
    }

    deinit {
        do {
            try PostgreSQLTestServer.run("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)")
        } catch {
            Issue.record("The test database \(name) could not be dropped: \(error)")
        }
    }

    /// A coordinator for `model` with this database's store added.
    func coordinator(_ model: NSManagedObjectModel, options: [AnyHashable: Any]? = nil) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url, options: options)
        return coordinator
    }

    /// Private-queue contexts of two coordinators of this database's store, as two servers have.
    func contextsOfTwoCoordinators(_ model: NSManagedObjectModel) throws -> (NSManagedObjectContext, NSManagedObjectContext) {
        let contexts = try (0..<2).map { _ in
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = try coordinator(model)
            return context
        }
        return (contexts[0], contexts[1])
    }

    /// Rows of `sql` on this database, each column as text (`nil` for NULL).
    func query(_ sql: String) throws -> [[String?]] {
        let connection = try LibPQConnection(url: url, password: nil)
        let rows = try connection.execute(sql, []) as! LibPQRows
        let columns = rows.columnCount
        return (0..<rows.count).map { row in (0..<columns).map { rows.isNull(row, $0) ? nil : rows.text(row, $0) } }
    }
}
