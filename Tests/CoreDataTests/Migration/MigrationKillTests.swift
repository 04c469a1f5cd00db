import CSQLite
import Foundation
import Testing
@testable import CoreData
import TestSupport

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

/// Issue 22: the same for a heavyweight migration at store open (a mapping model with policies,
/// a new file moved into the store with its external data): killed at any moment, the store opens as wholly
/// the original or wholly the migrated one, and a rerun succeeds. The child is killed after a
/// time, or at a step (the new store written; its contents and external data moved into the
/// store's, not yet committed; committed), or not at all (`end`).
@Suite("Migration: a process killed while migrating through a mapping model")
struct HeavyweightMigrationKillTests {
    typealias H = HeavyweightMigrationTests
    static let people = 600

    @Test("killed at any moment, the store opens wholly original or wholly migrated, and a rerun succeeds",
          arguments: ["0", "20", "60", "150", "written", "moved", "committed", "end"])
    func killedWhileMigrating(at moment: String) async throws {
        let folder = try TemporaryFolder()
        let bundle = try H.writeNotes(in: folder.url)
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        try H.writeVersion1Store(at: url, bundle: bundle, people: Self.people)

        await #expect(processExitsWith: .signal(SIGKILL)) { [path = url.path as String, bundle = bundle.path as String, moment = moment as String] in
            let model = try HeavyweightMigrationTests.model(URL(fileURLWithPath: bundle), "Notes 2")
            if let delay = Int(moment) {
                Thread {
                    usleep(useconds_t(delay * 1_000))
                    kill(getpid(), SIGKILL)
                }.start()
            } else {
                SQLiteHeavyweightMigration.stepHook = { if $0 == moment { kill(getpid(), SIGKILL) } }
            }
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            _ = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: path),
                                                   options: [NSMigratePersistentStoresAutomaticallyOption: true])
            kill(getpid(), SIGKILL)
        }

        // Opened with version 1, the store is the original whole, or else refused as another
        // version's, and then it is the migrated one whole.
        let original: Bool
        do {
            original = try H.open(url, try H.model(bundle, "Notes"), options: nil) { context in
                let attachments = try H.objects("Attachment", in: context, by: "data")
                #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == Self.people)
                #expect(attachments.count == Self.people && attachments.filter { $0.value(forKey: "data") as? Data == H.largeData }.count == 1)
                return true
            }
        } catch let error as NSError where error.code == NSPersistentStoreIncompatibleVersionHashError {
            original = false
        }
        if ["committed", "end"].contains(moment) { #expect(!original) }
        if ["written", "moved"].contains(moment) { #expect(original) }
        let options: [AnyHashable: Any]? = original ? [NSMigratePersistentStoresAutomaticallyOption: true] : nil
        try H.open(url, try H.model(bundle, "Notes 2"), options: options) { context in
            try H.expectMigratedThroughTheMapping(context)
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Note")) == Self.people)
            let named = NSFetchRequest<NSManagedObject>(entityName: "Attachment")
            named.predicate = NSPredicate(format: "fileName == %@", "file-3.bin")
            #expect(try context.count(for: named) == Self.people - 1)
        }
        #expect(try H.files(besides: url) == [".Notes_SUPPORT", "Notes.sqlite"])
        #expect(H.externalFiles(of: url).count == 1)
        withExtendedLifetime(folder) {}
    }
}
