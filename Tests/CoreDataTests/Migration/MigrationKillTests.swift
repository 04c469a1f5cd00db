import CSQLite
import Foundation
import Testing
@testable import CoreData

/// Issue 22: a process killed at any moment of a migration leaves the store wholly original or
/// wholly migrated, and a rerun then succeeds. Each run kills a child process (`SIGKILL`, no
/// clean-up of any kind) a given time after it began migrating a fresh copy of one store.
@Suite("Migration: a process killed while migrating")
struct MigrationKillTests {
    static let rows = 100_000

    /// A versioned model in Xcode's format: version 1 has `Item` (`name`, optional `n`); version 2
    /// renames `n` to `count` (renaming identifier `n`), makes it non-optional with the default 0,
    /// and adds an optional `flag`.
    static func writeBundle(in folder: URL) throws -> URL {
        let name = #"<attribute name="name" optional="YES" attributeType="String"/>"#
        return try XcodeModelFiles.writeBundle("Kill", in: folder, versions: [
            ("Kill 1", XcodeModelFiles.entity("Item", [name, #"<attribute name="n" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>"#])),
            ("Kill 2", XcodeModelFiles.entity("Item", [name,
                #"<attribute name="count" attributeType="Integer 64" defaultValueString="0" renamingIdentifier="n" usesScalarValueType="YES"/>"#,
                #"<attribute name="flag" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>"#])),
        ])
    }

    static func model(_ version: Int, in folder: String) throws -> NSManagedObjectModel {
        let url = URL(fileURLWithPath: folder).appendingPathComponent("Kill.xcdatamodeld/Kill \(version).xcdatamodel")
        return try #require(NSManagedObjectModel(contentsOf: url))
    }

    static var options: [AnyHashable: Any] { [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true] }

    /// The sum of `n` over the rows: every tenth row has none.
    static var expectedSum: Int { (1...rows).reduce(0) { $1 % 10 == 0 ? $0 : $0 + $1 } }

    /// A version-1 store of ``rows`` items, its WAL folded into the file.
    static func writeSource(_ url: URL, folder: String) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: try model(1, in: folder))
        let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        try coordinator.remove(store)
        let entity = try #require(RawSQLite.query(url.path, #"SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'"#).first?.first ?? nil)
        try RawSQLite.execute(url.path, """
            BEGIN;
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < \(rows))
            INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZN) SELECT x, \(entity), 1, 'item ' || x, CASE WHEN x % 10 = 0 THEN NULL ELSE x END FROM c;
            UPDATE Z_PRIMARYKEY SET Z_MAX = \(rows) WHERE Z_ENT = \(entity);
            COMMIT;
            PRAGMA wal_checkpoint(TRUNCATE);
            """)
    }

    /// Whether the file is wholly the original (its column `ZN`, every row as written, version 1's
    /// hashes) or wholly migrated (`ZCOUNT` with the NULLs filled, version 2's hashes).
    enum State: Equatable { case original, migrated }

    static func state(of url: URL, folder: String) throws -> State {
        let columns = try RawSQLite.query(url.path, "SELECT name FROM pragma_table_info('ZITEM')").compactMap { $0.first ?? nil }
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url, options: nil)
        if columns.contains("ZN") {
            #expect(!columns.contains("ZCOUNT") && !columns.contains("ZFLAG"), "half-migrated columns: \(columns)")
            #expect(try model(1, in: folder).isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata), "original columns, other metadata")
            #expect(try RawSQLite.query(url.path, "SELECT count(*), sum(ZN), count(ZN) FROM ZITEM").first == ["\(rows)", "\(expectedSum)", "\(rows - rows / 10)"])
            return .original
        }
        #expect(columns.contains("ZCOUNT") && columns.contains("ZFLAG"), "half-migrated columns: \(columns)")
        #expect(try model(2, in: folder).isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata), "migrated columns, other metadata")
        #expect(try RawSQLite.query(url.path, "SELECT count(*), sum(ZCOUNT), count(ZCOUNT) FROM ZITEM").first == ["\(rows)", "\(expectedSum)", "\(rows)"])
        return .migrated
    }

    @Test("killed at any moment, the store is wholly original or wholly migrated, and a rerun succeeds",
          arguments: [0, 3, 10, 30, 60, 100, 130, 160, 200, 250, 300, 500, 100_000])
    func killedWhileMigrating(afterMilliseconds delay: Int) async throws {
        let folder = try TemporaryFolder()
        _ = try Self.writeBundle(in: folder.url)
        let url = folder.url.appendingPathComponent("Store.sqlite")
        try Self.writeSource(url, folder: folder.path)

        await #expect(processExitsWith: .signal(SIGKILL)) { [path = folder.path as String, delay = delay as Int] in
            let model = try MigrationKillTests.model(2, in: path)
            let killer = Thread {
                usleep(useconds_t(delay * 1_000))
                kill(getpid(), SIGKILL)
            }
            killer.start()
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            _ = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil,
                                                   at: URL(fileURLWithPath: path).appendingPathComponent("Store.sqlite"),
                                                   options: MigrationKillTests.options)
            // Migrated before the killer woke: killed all the same, as a process may be just after.
            kill(getpid(), SIGKILL)
        }

        let before = try Self.state(of: url, folder: folder.path)
        if delay >= 100_000 { #expect(before == .migrated) }
        // A rerun migrates what is left (or opens the migrated store) and reads every row.
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: try Self.model(2, in: folder.path))
        let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: Self.options)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let (count, sum) = try await context.perform {
            let items = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
            return (items.count, items.reduce(0) { $0 + (($1.value(forKey: "count") as? Int) ?? -1_000_000_000) })
        }
        #expect(count == Self.rows && sum == Self.expectedSum)
        try coordinator.remove(store)
        #expect(try Self.state(of: url, folder: folder.path) == .migrated)
        withExtendedLifetime(folder) {}
    }
}
