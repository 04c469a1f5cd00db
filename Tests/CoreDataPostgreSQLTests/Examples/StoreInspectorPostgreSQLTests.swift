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
    }

    @Test func aDatabaseWithoutAStoreIsAnError() throws {
        let database = try TemporaryDatabase()
        #expect(throws: NSError.self) { try StoreInspector(url: database.url).report() }
    }
}
