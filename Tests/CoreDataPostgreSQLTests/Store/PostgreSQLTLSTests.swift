import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

extension PostgreSQLTestServer {
    /// Enables a suite only on a server with TLS on, saying how to get one otherwise; where a
    /// server is required (`isRequired`), the suite runs (and its tests fail without TLS).
    static let skipUnlessTLS = Testing.ConditionTrait.enabled("""
        The PostgreSQL server has TLS off (SHOW ssl): these tests need one with TLS. \
        `Scripts/postgres-test-server start` starts one (with openssl installed) and prints the \
        COREDATA_POSTGRES_URL to export.
        """) {
        // Without a server, skipUnlessServer skips.
        try url == nil || isRequired || tls() == "on"
    }

    /// The server's `ssl` setting (`on`, `off`), read on a connection to its own database.
    static func tls() throws -> String {
        let connection = try LibPQConnection(url: url!, password: nil)
        defer { connection.close() }
        return try connection.execute("SHOW ssl", []).text(0, 0)
    }
}

/// TLS: the store hands its whole URL to libpq, so `?sslmode=…` and `sslrootcert=…` reach it.
/// Needs a server with TLS on (`SHOW ssl`): `Scripts/postgres-test-server start` makes one when
/// `openssl` is installed. Skips on a server without TLS, but fails where a server is required
/// (`COREDATA_POSTGRES_REQUIRED=1`, CI).
@Suite("PostgreSQL TLS", PostgreSQLTestServer.skipUnlessServer, PostgreSQLTestServer.skipUnlessTLS)
struct PostgreSQLTLSTests {
    /// Fails unless the server has TLS on (runs where a server is required, whatever its TLS).
    private func requireTLS() throws {
        try #require(try PostgreSQLTestServer.tls() == "on", """
            COREDATA_POSTGRES_REQUIRED=1 but the server has TLS off: start it with \
            `Scripts/postgres-test-server start` with openssl installed
            """)
    }

    /// `database`'s URL with `query` added (and `password`, if given).
    private func url(_ database: TemporaryDatabase, password: String? = nil, _ query: [String: String]) -> URL {
        var components = URLComponents(url: TemporaryDatabase.url(database: database.name, password: password),
                                       resolvingAgainstBaseURL: false)!
        components.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        return components.url!
    }

    /// Whether each session on `database` is encrypted (`pg_stat_ssl.ssl`), read from a session
    /// of the server's own database.
    private func sessionsEncrypted(_ database: TemporaryDatabase) throws -> [Bool] {
        let connection = try LibPQConnection(url: PostgreSQLTestServer.url!, password: nil)
        defer { connection.close() }
        let rows = try connection.execute("""
            SELECT s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s ON s.pid = a.pid WHERE a.datname = $1
            """, [.text(database.name)])
        return (0..<rows.count).map { rows.text($0, 0) == "t" }
    }

    /// A store at `?sslmode=require` saves and fetches, and every session it opens (writer,
    /// reader, remote-change listener) is encrypted; at `?sslmode=disable`, none is: the URL's
    /// mode is the one libpq uses.
    @Test(arguments: [("require", true), ("disable", false)])
    func aStoresSessionsFollowItsURLsSSLMode(_ mode: String, _ encrypted: Bool) throws {
        try requireTLS()
        let database = try TemporaryDatabase()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PostgreSQLTestModel.make())
        try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url(database, ["sslmode": mode]),
                                           options: [NSPersistentStoreRemoteChangeNotificationPostOptionKey: true as NSNumber])
        let writer = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        writer.persistentStoreCoordinator = coordinator
        try writer.performAndWait {
            writer.insert("Person", ["name": "Ada"])
            writer.insert("Person", ["name": "Grace"])
            try writer.save()
        }
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = coordinator
        let names = try reader.performAndWait { try reader.objects("Person", sortedBy: "name").map { $0.value(forKey: "name") as? String } }
        #expect(names == ["Ada", "Grace"])

        let sessions = try sessionsEncrypted(database)
        #expect(!sessions.isEmpty, "the store has no session on its database")
        #expect(sessions.allSatisfy { $0 == encrypted }, "sessions encrypted at sslmode=\(mode): \(sessions)")
    }

    /// `sslmode=verify-full` with a root certificate that does not exist: adding fails with
    /// 134080 naming the certificate, the URL's password nowhere in the error, and no store added.
    @Test func aMissingRootCertificateFailsToOpenNamingIt() throws {
        try requireTLS()
        let database = try TemporaryDatabase()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PostgreSQLTestModel.make())
        let password = "tls-test-password"
        let error = #expect(throws: NSError.self) {
            try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil,
                                               at: url(database, password: password, ["sslmode": "verify-full", "sslrootcert": "/nonexistent/root.crt"]))
        }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSPersistentStoreOpenError)
        let message = error?.localizedDescription ?? ""
        #expect(message.contains("root certificate") && message.contains("/nonexistent/root.crt"), "\(message)")
        let shown = "\(message) \(error?.userInfo ?? [:])"
        #expect(!shown.contains(password), "\(shown)")
        #expect(coordinator.persistentStores.isEmpty)
    }

    /// `sslmode=verify-full` with the server's own certificate as the root (the script's is
    /// self-signed, for 127.0.0.1 and localhost): the store opens, and its session is encrypted.
    @Test func theServersCertificateAsRootVerifiesFully() throws {
        try requireTLS()
        let connection = try LibPQConnection(url: PostgreSQLTestServer.url!, password: nil)
        let certificate = try connection.execute("SHOW ssl_cert_file", []).text(0, 0)
        connection.close()
        if !FileManager.default.isReadableFile(atPath: certificate) && !PostgreSQLTestServer.isRequired {
            try Test.cancel("The server's certificate (\(certificate)) can't be read here: a server of Scripts/postgres-test-server's has one this test can read")
        }
        let database = try TemporaryDatabase()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PostgreSQLTestModel.make())
        try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil,
                                           at: url(database, ["sslmode": "verify-full", "sslrootcert": certificate]))
        let sessions = try sessionsEncrypted(database)
        #expect(!sessions.isEmpty && sessions.allSatisfy { $0 }, "\(sessions)")
    }
}
