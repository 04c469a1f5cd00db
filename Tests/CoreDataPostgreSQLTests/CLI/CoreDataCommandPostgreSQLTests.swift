import CoreDataExamples
import Foundation
import Testing
import TestSupport
@testable import CoreData

/// `coredata inspect postgres://…` and `coredata migrate postgres://… --model …`: the executable,
/// built beside the tests (`swift build --build-tests`, which `swift test` runs), reads its own
/// `STORE` argument as a PostgreSQL URL (`StoreArgument`).
@Suite("coredata with a postgres:// URL", PostgreSQLTestServer.skipUnlessServer)
struct CoreDataCommandPostgreSQLTests {
    /// Runs `coredata` with `arguments`; its exit status and what it wrote (standard output and error).
    private func coredata(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let executable = builtProduct("coredata")
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "coredata is built beside the tests (swift build --build-tests)")
        return try runToEnd(executable, arguments)
    }

    @Test func inspectAndMigrateReadTheStoreAtItsURL() throws {
        let database = try TemporaryDatabase()
        let model = CoreDataManager.bundledModelURL
        do {
            let manager = try CoreDataManager(modelURL: model, storeType: NSPostgreSQLStoreType, storeURL: database.url)
            try manager.insertDatas(["a", "b", "c"])
        }
        let url = database.url.absoluteString

        let inspect = try coredata(["inspect", url])
        #expect(inspect.status == 0, "\(inspect.output)")
        #expect(inspect.output.contains("Type: PostgreSQL"), "\(inspect.output)")
        let car = inspect.output.split(separator: "\n").first { $0.hasPrefix("1 ") }
        #expect(car?.split(separator: " ").prefix(3) == ["1", "Car", "3"], "the entity and its row count: \(inspect.output)")

        let migrate = try coredata(["migrate", url, "--model", model.path, "--dry-run"])
        #expect(migrate.status == 0, "\(migrate.output)")
        #expect(migrate.output.contains("Written by version: Car"), "\(migrate.output)")
        #expect(migrate.output.contains("Nothing to migrate: the store is at that version."), "\(migrate.output)")
    }

    @Test func aMissingDatabaseEndsWithAFailureNamingIt() throws {
        let name = "cd_no_such_database_\(UUID().uuidString.prefix(8).lowercased())"
        let url = TemporaryDatabase.url(database: name).absoluteString
        for arguments in [["inspect", url], ["migrate", url, "--model", CoreDataManager.bundledModelURL.path, "--dry-run"]] {
            let run = try coredata(arguments)
            #expect(run.status != 0, "\(arguments[0]): \(run.output)")
            #expect(run.output.contains("database \"\(name)\" does not exist"), "\(arguments[0]): \(run.output)")
        }
    }
}
