import CoreDataExamples
import Foundation
import Testing
@testable import CoreData

/// `coredata inspect postgres://…` (`StoreInspector` on a PostgreSQL store): the same report as
/// for a SQLite file, read from the database's own tables, with no password shown.
@Suite("Inspecting a PostgreSQL store", PostgreSQLTestServer.skipUnlessServer)
struct StoreInspectorPostgreSQLTests {
    @Test func theReportGivesTheMetadataEntitiesAndRowCounts() throws {
        let database = try TemporaryDatabase()
        let manager = try CoreDataManager(modelURL: CoreDataManager.bundledModelURL, storeType: NSPostgreSQLStoreType, storeURL: database.url)
        try manager.insertDatas((0..<25).map { String($0) })

        let report = try StoreInspector(url: database.url).report()
        #expect(report.contains("Type: PostgreSQL"))
        let car = try #require(report.split(separator: "\n").first { $0.hasPrefix("1 ") })
        #expect(car.split(separator: " ", omittingEmptySubsequences: true).prefix(3) == ["1", "Car", "25"])
        #expect(!report.contains("Journal mode"))
    }

    @Test func aPasswordIsNeverShown() {
        #expect(StoreInspector.displayName(of: "postgres://cd_password:secret@127.0.0.1:5432/db") == "postgres://cd_password:***@127.0.0.1:5432/db")
        #expect(StoreInspector.displayName(of: "/tmp/Store.sqlite") == "/tmp/Store.sqlite")
        // Not a URL Foundation reads (a `#` in the password): masked all the same.
        #expect(StoreInspector.displayName(of: "postgres://bob:pa#ss@127.0.0.1:1/db") == "postgres://bob:***@127.0.0.1:1/db")
        #expect(StoreInspector.displayName(of: "postgres://bob:p/a@ss@db.example.com/cars") == "postgres://bob:***@db.example.com/cars")
    }

    /// libpq reads a URL only with its scheme in lower case; `POSTGRES://…` was taken for a
    /// database's name on the default server.
    @Test func aSchemeInUpperCaseConnectsToTheServerItNames() throws {
        let database = try TemporaryDatabase()
        let manager = try CoreDataManager(modelURL: CoreDataManager.bundledModelURL, storeType: NSPostgreSQLStoreType, storeURL: database.url)
        try manager.insertDatas(["a"])
        let shouted = try #require(URL(string: "POSTGRES" + database.url.absoluteString.drop { $0 != ":" }))
        let report = try StoreInspector(url: shouted).report()
        #expect(report.contains("Type: PostgreSQL"), "\(report)")
    }

    /// The tables are read in the schema that holds the store (the search path's), not
    /// `current_schema()`: a schema named after the user, made later, hid every table.
    @Test func theTablesAreThoseOfTheStoresSchema() throws {
        let database = try TemporaryDatabase()
        let manager = try CoreDataManager(modelURL: CoreDataManager.bundledModelURL, storeType: NSPostgreSQLStoreType, storeURL: database.url)
        try manager.insertDatas(["a", "b"])
        var components = try #require(URLComponents(url: database.url, resolvingAgainstBaseURL: false))
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "options", value: "-c search_path=empty_first,public")]
        let url = try #require(components.url)
        _ = try database.query("CREATE SCHEMA empty_first")
        let report = try StoreInspector(url: url).report()
        let car = try #require(report.split(separator: "\n").first { $0.hasPrefix("1 ") })
        #expect(car.split(separator: " ", omittingEmptySubsequences: true).prefix(3) == ["1", "Car", "2"], "\(report)")
    }

    @Test func aDatabaseWithoutAStoreIsAnError() throws {
        let database = try TemporaryDatabase()
        #expect(throws: NSError.self) { try StoreInspector(url: database.url).report() }
    }
}
