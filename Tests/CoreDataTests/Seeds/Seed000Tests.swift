import CoreData
import CoreDataExamples
import Foundation
import Testing

/// Seed 000: the CoreDataManager singleton doing CRUD on `Car(name)`, translated to Swift, run
/// against a real SQLite file (and a PostgreSQL database, with a server) with the model loaded
/// from the Xcode model file the demo ships.
@Suite("Seed 000: CoreDataManager")
struct Seed000Tests {
    private func manager(_ directory: URL) throws -> CoreDataManager {
        try CoreDataManager(modelURL: CoreDataManager.bundledModelURL, storeURL: directory.appendingPathComponent("myCoreData.sqlite"))
    }

    private func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("seed000-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// On each store kind (``TestStoreKind``): a SQLite file, and a PostgreSQL database with a server.
    @Test(arguments: TestStoreKind.available)
    func crudScenario(_ kind: TestStoreKind) throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = kind == .postgreSQL ? try PostgreSQLTestDatabase() : nil
        func open() throws -> CoreDataManager {
            guard let database else { return try self.manager(folder) }
            return try CoreDataManager(modelURL: CoreDataManager.bundledModelURL, storeType: NSPostgreSQLStoreType, storeURL: database.url)
        }
        let manager = try open()
        let names = (0..<1_000).map { String($0) }

        for name in names.prefix(200) { try manager.insertData(name) }
        #expect(try manager.count() == 200)
        #expect(try manager.deleteData() == 200)
        #expect(try manager.count() == 0)

        try manager.insertDatas(names)
        // The seed's complaint: the fast way scrambled insertion order. Not here.
        #expect(try manager.queryData() == names)

        #expect(try manager.queryData("500") == ["500"])
        #expect(try manager.updateData("500") == 1)
        #expect(try manager.queryData("500").isEmpty)
        #expect(try manager.queryData("test") == ["test"])
        #expect(try manager.deleteData("test") == 1)
        #expect(try manager.count() == 999)

        let reopened = try open()
        #expect(try reopened.count() == 999)
        #expect(try reopened.queryData().first == "0")
        #expect(try reopened.queryData().contains("500") == false)
        if let database {
            // Keys went on from the 200 deleted ones.
            #expect(try database.query("SELECT min(\"Z_PK\"), max(\"Z_PK\") FROM \"ZCAR\"") == [["201", "1200"]])
        }
    }

    @Test func storeHasCoreDataLayout() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let manager = try manager(folder)
        try manager.insertDatas(["a", "b"])
        let url = folder.appendingPathComponent("myCoreData.sqlite")
        let rows = try RawSQLite.query(url.path, "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME FROM ZCAR ORDER BY Z_PK")
        #expect(rows == [["1", "1", "1", "a"], ["2", "1", "1", "b"]])
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect((metadata[NSStoreModelVersionHashesKey] as? [String: Any])?.keys.sorted() == ["Car"])
    }
}
