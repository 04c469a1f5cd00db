import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL
import TestSupport

/// A PostgreSQL store opened with automatic migration is migrated through the mapping model the
/// app ships (`PostgreSQLHeavyweightMigration.swift`): `HeavyweightMigrationTests`'s cases on a
/// database of the test server. Needs a server (`COREDATA_POSTGRES_URL`, docs/POSTGRESQL.md);
/// skips without one.
@Suite("Heavyweight migration of a PostgreSQL store", PostgreSQLTestDatabase.skipUnlessServer())
struct PostgreSQLHeavyweightMigrationTests {
    typealias H = HeavyweightMigrationTests
    typealias P = PostgreSQLLightweightMigrationTests

    static var migrate: [AnyHashable: Any] { [NSMigratePersistentStoresAutomaticallyOption: true] }

    /// The schemas migrations made that are still there.
    static func migrationSchemas(_ database: MigrationTestDatabase) throws -> [String] {
        try database.query("SELECT nspname FROM pg_namespace WHERE starts_with(nspname, 'cd_migration_')").map { $0[0]! }
    }

    /// A version-1 store of `people` people in a new database.
    static func v1Store(_ bundle: URL, people: Int = 1, options: [AnyHashable: Any]? = nil) throws -> MigrationTestDatabase {
        let database = try MigrationTestDatabase()
        try H.writeVersion1Store(at: database.url, bundle: bundle, people: people, type: NSPostgreSQLStoreType, options: options)
        return database
    }

    @Test func aMappingModelTheAppShipsMigratesTheStoreAtOpenWithItsPolicies() throws {
        let folder = try TemporaryFolder()
        let bundle = try H.writeNotes(in: folder.url)
        let database = try Self.v1Store(bundle, people: 3)
        let v2 = try H.model(bundle, "Notes 2")

        let parent = ParentProgress(totalUnitCount: 1)
        parent.becomeCurrent(withPendingUnitCount: 1)
        try H.open(database.url, v2, options: Self.migrate, type: NSPostgreSQLStoreType) { context in
            try H.expectMigratedThroughTheMapping(context)
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 3)
        }
        parent.resignCurrent()
        #expect(parent.fractionCompleted == 1)
        #expect(parent.children.count == 1 && parent.children.first?.totalUnitCount == 1000)

        // The store is one of version 2, with a new store's layout (its indexes moved with its
        // tables), and opens without the options; the schema the new store was written in is gone.
        #expect(try P.layout(database) == P.freshLayout(v2))
        try H.open(database.url, v2, options: nil, type: NSPostgreSQLStoreType) { try H.expectMigratedThroughTheMapping($0) }
        #expect(try Self.migrationSchemas(database).isEmpty)
    }

    @Test func aFailingPolicyLeavesTheStoreAsItWasAndNoSchemaBehind() throws {
        let folder = try TemporaryFolder()
        let bundle = try H.writeNotes(in: folder.url, policy: String(reflecting: FailingNotesPolicy.self))
        let database = try Self.v1Store(bundle, people: 3)
        let before = try P.contents(database)
        let error = #expect(throws: NSError.self) {
            try H.open(database.url, try H.model(bundle, "Notes 2"), options: Self.migrate, type: NSPostgreSQLStoreType) { _ in }
        }
        #expect(error?.code == NSEntityMigrationPolicyError && error?.localizedDescription == "no attachments today")
        #expect(try P.contents(database) == before)
        #expect(try Self.migrationSchemas(database).isEmpty)
        let people = try H.open(database.url, try H.model(bundle, "Notes"), options: nil, type: NSPostgreSQLStoreType) {
            try H.objects("Person", in: $0, by: "name").count
        }
        #expect(people == 3)
    }

    /// The store keeps its UUID, its own metadata keys and its history (Apple's `A…` tables and
    /// their `Z_PRIMARYKEY` rows), which goes on after the migration; a table of the app's own stays.
    @Test func theStoreKeepsItsIdentifierMetadataHistoryAndOtherTables() throws {
        let folder = try TemporaryFolder()
        let bundle = try H.writeNotes(in: folder.url)
        let database = try Self.v1Store(bundle, options: [NSPersistentHistoryTrackingKey: true])
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSPostgreSQLStoreType, at: database.url, options: nil)
        let identifier = try #require(metadata[NSStoreUUIDKey] as? String)
        metadata["importedFrom"] = "legacy"
        try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSPostgreSQLStoreType, at: database.url, options: nil)
        _ = try database.query("CREATE TABLE app_log (line text)")
        _ = try database.query("INSERT INTO app_log VALUES ('kept')")
        _ = try database.query("CREATE TABLE \"ZONES\" (name text)") // (an app's own, named Z…)
        _ = try database.query("INSERT INTO \"ZONES\" VALUES ('kept too')")

        let options: [AnyHashable: Any] = [NSMigratePersistentStoresAutomaticallyOption: true, NSPersistentHistoryTrackingKey: true]
        let transactions = try H.open(database.url, try H.model(bundle, "Notes 2"), options: options, type: NSPostgreSQLStoreType) { context -> [Int64] in
            let store = try #require(context.persistentStoreCoordinator?.persistentStores.first)
            #expect(store.identifier == identifier)
            #expect(store.metadata["importedFrom"] as? String == "legacy")
            try H.expectMigratedThroughTheMapping(context)
            NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context).setValue("new", forKey: "label")
            try context.save()
            let result = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)) as? NSPersistentHistoryResult
            return (result?.result as? [NSPersistentHistoryTransaction] ?? []).map(\.transactionNumber)
        }
        // The save that made the store, none by the migration, the one after it.
        #expect(transactions == [1, 2])
        #expect(try database.query("SELECT line FROM app_log") == [["kept"]])
        #expect(try database.query("SELECT name FROM \"ZONES\"") == [["kept too"]])
    }

    /// A session that goes on reading the store's tables keeps the migration from replacing them:
    /// it fails after the store's timeout (without making the reader wait), the store as it was.
    @Test func aReaderThatDoesNotLetGoFailsTheMigrationAfterTheTimeoutAndLeavesTheStore() throws {
        let folder = try TemporaryFolder()
        let bundle = try H.writeNotes(in: folder.url)
        let database = try Self.v1Store(bundle)
        let before = try P.contents(database)
        let reader = try LibPQConnection(url: database.url, password: nil)
        defer { reader.close() }
        try reader.run("BEGIN")
        _ = try reader.execute("SELECT count(*) FROM \"ZPERSON\"", [])
        let options: [AnyHashable: Any] = [NSMigratePersistentStoresAutomaticallyOption: true, NSPersistentStoreTimeoutOption: 1]
        let error = #expect(throws: NSError.self) {
            try H.open(database.url, try H.model(bundle, "Notes 2"), options: options, type: NSPostgreSQLStoreType) { _ in }
        }
        #expect(error?.code == NSMigrationError)
        #expect(error?.localizedDescription.contains("NSPersistentStoreTimeoutOption") == true)
        // The reader still reads, in its transaction, the old tables.
        #expect(try reader.execute("SELECT count(*) FROM \"ZPERSON\"", []).text(0, 0) == "1")
        try reader.run("COMMIT")
        #expect(try P.contents(database) == before)
        #expect(try Self.migrationSchemas(database).isEmpty)
    }

    @Test func aSchemaAKilledMigrationLeftIsDroppedByTheNextMigration() throws {
        let folder = try TemporaryFolder()
        let bundle = try H.writeNotes(in: folder.url)
        let database = try Self.v1Store(bundle)
        _ = try database.query("CREATE SCHEMA cd_migration_0123")
        _ = try database.query("CREATE TABLE cd_migration_0123.\"ZNOTE\" (\"Z_PK\" bigint)")
        try H.open(database.url, try H.model(bundle, "Notes 2"), options: Self.migrate, type: NSPostgreSQLStoreType) {
            try H.expectMigratedThroughTheMapping($0)
        }
        #expect(try Self.migrationSchemas(database).isEmpty)
    }

    /// Two servers adding the old store at once: one migrates it, the other waits and finds it migrated.
    @Test func twoServersAddingTheStoreAtOnceMigrateItOnce() async throws {
        let folder = try TemporaryFolder()
        let bundle = try H.writeNotes(in: folder.url)
        let database = try Self.v1Store(bundle)
        let url = database.url
        let v2 = try H.model(bundle, "Notes 2")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try H.open(url, v2, options: Self.migrate, type: NSPostgreSQLStoreType) { try H.expectMigratedThroughTheMapping($0) }
                }
            }
            try await group.waitForAll()
        }
        try H.open(url, v2, options: nil, type: NSPostgreSQLStoreType) { context in
            let notes = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Note"))
            #expect(notes == 1)
        }
        // The server that waited and found the store migrated left no schema.
        #expect(try Self.migrationSchemas(database).isEmpty)
    }

    /// A coordinator that still has the store open with the old model writes nothing into the
    /// new tables: its save fails, and the store is as the migration left it. Its save's keys come
    /// from a block it took before (the check before `COMMIT`), or from a key transaction (block
    /// size 1: the check in that transaction).
    @Test(arguments: [100, 1])
    func aCoordinatorOfTheOldModelCantWriteIntoTheMigratedTables(keyBlockSize: Int) throws {
        let folder = try TemporaryFolder()
        let bundle = try H.writeNotes(in: folder.url)
        let database = try Self.v1Store(bundle, people: 2)
        let stale = NSPersistentStoreCoordinator(managedObjectModel: try H.model(bundle, "Notes"))
        try stale.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: database.url,
                                     options: [NSPostgreSQLKeyBlockSizeOption: keyBlockSize])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = stale
        NSEntityDescription.insertNewObject(forEntityName: "Person", into: context).setValue("Early", forKey: "name")
        try context.save()

        try H.open(database.url, try H.model(bundle, "Notes 2"), options: Self.migrate, type: NSPostgreSQLStoreType) { _ in }
        let migrated = try P.contents(database)
        // A new person, whose key the new table does not hold: its INSERT would run.
        NSEntityDescription.insertNewObject(forEntityName: "Person", into: context).setValue("Late", forKey: "name")
        let error = #expect(throws: NSError.self) { try context.save() }
        #expect(error?.localizedDescription.contains("The store was migrated") == true)
        let after = try P.contents(database)
        #expect(after == migrated, "\(Set(after).symmetricDifference(migrated).map { $0.prefix(200) })")
        // Added again with the model it has now, the store takes saves.
        try H.open(database.url, try H.model(bundle, "Notes 2"), options: nil, type: NSPostgreSQLStoreType) { context in
            NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context).setValue("after", forKey: "label")
            try context.save()
        }
    }
}
