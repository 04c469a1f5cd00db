import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// The libpq connection: values through parameters and back, and the errors of connecting,
/// as the store reports them (134080, the cause in the message, libpq's message and the
/// SQLSTATE in userInfo).
@Suite("PostgreSQL: connecting", PostgreSQLTestServer.skipUnlessServer)
struct LibPQConnectionTests {
    private func model() -> NSManagedObjectModel {
        let car = NSEntityDescription()
        car.name = "Car"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        car.properties = [name]
        let model = NSManagedObjectModel()
        model.entities = [car]
        return model
    }

    /// Adding a store at `url` fails; the error.
    private func addFailure(_ url: URL, options: [AnyHashable: Any]? = nil) throws -> NSError {
        NSPersistentStoreCoordinator.registerPostgreSQLStore()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model())
        do {
            try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url, options: options)
        } catch {
            #expect(coordinator.persistentStores.isEmpty)
            return error as NSError
        }
        Issue.record("adding the store at \(url) did not fail")
        return NSError(domain: "none", code: 0)
    }

    @Test func parametersAndRowsRoundTrip() throws {
        let connection = try LibPQConnection(url: PostgreSQLTestServer.url!, password: nil)
        let bytes = Data([0, 1, 0xff, 0x7f, 0])
        let rows = try connection.execute("SELECT $1::bigint, $2::float8, $3::float8, $4::text, $5::bytea, $6::numeric, $7::text, $8::bytea",
                                          [.int(Int64.min), .double(0.1), .double(-.infinity), .text("é 😀 'quoted' $1 ?"),
                                           .bytes(bytes), .numeric("12345678901234567890.125"), .null, .bytes(Data())])
        #expect(rows.count == 1)
        #expect(rows.int64(0, 0) == Int64.min)
        #expect(rows.double(0, 1) == 0.1)
        #expect(rows.double(0, 2) == -.infinity)
        #expect(rows.text(0, 3) == "é 😀 'quoted' $1 ?")
        #expect(rows.bytes(0, 4) == bytes)
        #expect(rows.text(0, 5) == "12345678901234567890.125")
        #expect(rows.isNull(0, 6))
        #expect(!rows.isNull(0, 7) && rows.bytes(0, 7).isEmpty)
        // The same SQL with other parameter types is prepared again, not misread.
        #expect(try connection.execute("SELECT $1::float8", [.int(3)]).double(0, 0) == 3)
        #expect(try connection.execute("SELECT $1::float8", [.double(2.5)]).double(0, 0) == 2.5)
    }

    /// Integers are read by hand in `int8out`'s form; 19-digit values and other text (a `bool`
    /// column, say) go to `strtoll`, as every value did before.
    @Test func integersReadAtEveryLength() throws {
        let connection = try LibPQConnection(url: PostgreSQLTestServer.url!, password: nil)
        let values: [Int64] = [0, -1, 7, -42, 123_456_789_012_345_678, -123_456_789_012_345_678,
                               999_999_999_999_999_999, 1_000_000_000_000_000_000, Int64.max, Int64.min, Int64.min + 1]
        let rows = try connection.execute("SELECT v FROM unnest($1::bigint[]) WITH ORDINALITY AS t(v, n) ORDER BY n",
                                          [.text("{" + values.map(String.init).joined(separator: ",") + "}")])
        #expect((0..<rows.count).map { rows.int64($0, 0) } == values)
        let text = try connection.execute("SELECT ' 12', '12x', '', '+5', 'abc'", [])
        #expect((0..<5).map { text.int64(0, $0) } == [12, 12, 0, 5, 0])
    }

    @Test func aStringWithNULIsRefusedNotCut() throws {
        let connection = try LibPQConnection(url: PostgreSQLTestServer.url!, password: nil)
        #expect(throws: PostgreSQLError.self) { try connection.execute("SELECT $1::text", [.text("a\u{0}b")]) }
        // The connection goes on.
        #expect(try connection.execute("SELECT 1", []).int64(0, 0) == 1)
    }

    @Test func aURLThatIsNotPostgresIsRefused() throws {
        for text in ["http://localhost/cars", "file:///tmp/cars.sqlite", "postgres://"] {
            let error = try addFailure(URL(string: text)!)
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == NSPersistentStoreOpenError)
            #expect(error.localizedDescription.contains("postgres://") || error.localizedDescription.contains("names no server"))
        }
    }

    @Test func aRefusedURLNeverShowsItsPassword() throws {
        for text in ["postgress://app:secret@db.example/cars", "postgres://app:secret@"] {
            let error = try addFailure(URL(string: text)!)
            #expect(error.code == NSPersistentStoreOpenError)
            #expect(!"\(error.localizedDescription) \(error.userInfo)".contains("secret"))
        }
    }

    @Test func aWrongPasswordIsRefused() throws {
        let database = try TemporaryDatabase(owner: "cd_password")
        let url = TemporaryDatabase.url(database: database.name, user: "cd_password")
        let wrong = try addFailure(url, options: [NSPostgreSQLPasswordOption: "wrong"])
        #expect(wrong.domain == NSCocoaErrorDomain)
        #expect(wrong.code == NSPersistentStoreOpenError)
        #expect(wrong.localizedDescription.contains("password authentication failed"))
        #expect(wrong.userInfo[NSPostgreSQLStateErrorKey] as? String == "28P01")
        #expect((wrong.userInfo[NSPostgreSQLMessageErrorKey] as? String)?.contains("cd_password") == true)
        let inURL = try addFailure(TemporaryDatabase.url(database: database.name, user: "cd_password", password: "wrong"))
        #expect(inURL.userInfo[NSPostgreSQLStateErrorKey] as? String == "28P01")
        // The message never shows the password.
        #expect(!inURL.localizedDescription.contains(":wrong@"))
        let none = try addFailure(url)
        #expect(none.code == NSPersistentStoreOpenError)

        // The right one, from the options or from the URL.
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model())
        try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url,
                                           options: [NSPostgreSQLPasswordOption: "secret"])
        let second = NSPersistentStoreCoordinator(managedObjectModel: model())
        try second.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil,
                                      at: TemporaryDatabase.url(database: database.name, user: "cd_password", password: "secret"))
        #expect(second.persistentStores.first?.type == NSPostgreSQLStoreType)
    }

    @Test func thePasswordOptionWinsOverTheURLs() throws {
        let database = try TemporaryDatabase(owner: "cd_password")
        // A wrong password in the URL, the right one in the options: the options' is used.
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model())
        try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil,
                                           at: TemporaryDatabase.url(database: database.name, user: "cd_password", password: "wrong"),
                                           options: [NSPostgreSQLPasswordOption: "secret"])
        #expect(coordinator.persistentStores.first?.type == NSPostgreSQLStoreType)
        // The right one in the URL, a wrong one in the options: refused.
        let refused = try addFailure(TemporaryDatabase.url(database: database.name, user: "cd_password", password: "secret"),
                                     options: [NSPostgreSQLPasswordOption: "wrong"])
        #expect(refused.code == NSPersistentStoreOpenError)
        #expect(refused.userInfo[NSPostgreSQLStateErrorKey] as? String == "28P01")
    }

    @Test func aMissingDatabaseIsRefused() throws {
        let error = try addFailure(TemporaryDatabase.url(database: "cd_no_such_database_\(UUID().uuidString.prefix(8).lowercased())"))
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == NSPersistentStoreOpenError)
        #expect(error.localizedDescription.contains("does not exist"))
        #expect(error.userInfo[NSPostgreSQLStateErrorKey] as? String == "3D000")
    }
}
