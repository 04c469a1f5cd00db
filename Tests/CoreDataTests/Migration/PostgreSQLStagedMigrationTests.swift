import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL
import TestSupport

/// Staged migration and migration progress of a PostgreSQL store: `StagedMigrationTests`'s chains
/// and failures, and `MigrationProgressTests`'s report, on a database of the test server. Needs a
/// server (`COREDATA_POSTGRES_URL`, docs/POSTGRESQL.md); skips without one.
@Suite("Staged migration and progress of a PostgreSQL store", PostgreSQLTestDatabase.skipUnlessServer())
struct PostgreSQLStagedMigrationTests {
    typealias P = PostgreSQLLightweightMigrationTests
    typealias Staged = StagedMigrationTests
    typealias L = SQLiteLightweightMigrationTests

    /// A database holding a store of `v1` with Ada Lovelace and Alan Turing.
    static func v1Store(_ v1: NSManagedObjectModel) throws -> MigrationTestDatabase {
        try P.makeStore(v1) { context in
            for name in ["Ada Lovelace", "Alan Turing"] { _ = L.insert("Person", ["name": name], into: context) }
        }
    }

    /// Each person's `keys`, the store opened with `model`.
    static func values(_ database: MigrationTestDatabase, _ model: NSManagedObjectModel, _ keys: [String]) throws -> [[String]] {
        try L.fetch("Person", P.open(database, model)).map { person in keys.map { person.value(forKey: $0) as? String ?? "nil" } }
    }

    static func versionChecksum(_ database: MigrationTestDatabase) throws -> String {
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSPostgreSQLStoreType, at: database.url, options: nil)
        return VersionHash.versionChecksum(entityHashes: (metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]).compactMapValues { $0 as? Data })
    }

    @Test func theOptionOfAStoreDescriptionRunsTheStagesOnAPostgreSQLStore() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Staged.people(in: folder)
        let database = try Self.v1Store(v1)
        let seen = Locked<[String]>([])
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum]), Staged.splitStage(v2, v3, seen: seen)])
        let container = NSPersistentContainer(name: "People", managedObjectModel: v3)
        let description = NSPersistentStoreDescription(url: database.url)
        description.type = NSPostgreSQLStoreType
        description.setOption(manager, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
        container.persistentStoreDescriptions = [description]
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil, "\(String(describing: loadError))")
        // The handlers ran on the PostgreSQL store, opened with V2 before the step and V3 after it.
        #expect(seen.value == ["will " + v2.versionChecksum, "did " + v3.versionChecksum])
        #expect(manager.container == nil)
        #expect(container.persistentStoreCoordinator.persistentStores.first?.type == NSPostgreSQLStoreType)
        let context = container.newBackgroundContext()
        let initials: Set<String> = try context.performAndWait {
            Set(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).compactMap { $0.value(forKey: "initials") as? String })
        }
        #expect(initials == ["AL", "AT"])
        #expect(try Self.values(database, v3, ["firstName", "lastName"]).sorted { $0[0] < $1[0] } == [["Ada", "Lovelace"], ["Alan", "Turing"]])
        #expect(try Self.versionChecksum(database) == v3.versionChecksum)
        // It opens without the manager now.
        #expect(try P.open(database, v3).count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 2)
    }

    @Test func aThrowingWillMigrateHandlerLeavesTheLastCompleteVersionAndARunResumesThere() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Staged.people(in: folder)
        let database = try Self.v1Store(v1)
        let stage = NSCustomMigrationStage(migratingFrom: Staged.reference(v2), to: Staged.reference(v3))
        stage.willMigrateHandler = { manager, _ in
            try Staged.change(manager) { context in
                for person in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")) { person.setValue("X", forKey: "firstName") }
            }
            throw Staged.HandlerFailure()
        }
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum]), stage])
        #expect(throws: Staged.HandlerFailure()) {
            try manager.migrateStore(at: database.url, ofType: NSPostgreSQLStoreType, options: nil, to: v3)
        }
        #expect(manager.container == nil)
        #expect(try Self.versionChecksum(database) == v2.versionChecksum)
        #expect(try Self.values(database, v2, ["name", "firstName"]).sorted { $0[0] < $1[0] } == [["Ada Lovelace", "X"], ["Alan Turing", "X"]])

        stage.willMigrateHandler = nil
        try manager.migrateStore(at: database.url, ofType: NSPostgreSQLStoreType, options: nil, to: v3)
        #expect(try Self.values(database, v3, ["firstName"]) == [["X"], ["X"]])
    }

    @Test func aStoreOfAVersionInNoStageIsRefusedAndUntouched() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Staged.people(in: folder)
        let database = try Self.v1Store(v1)
        let before = try P.contents(database)
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v2.versionChecksum, v3.versionChecksum])])
        Staged.expectError(NSMigrationMissingSourceModelError, "is in none of the stages") {
            try manager.migrateStore(at: database.url, ofType: NSPostgreSQLStoreType, options: nil, to: v3)
        }
        #expect(try P.contents(database) == before)
        // A database without a store: nothing to migrate.
        let empty = try MigrationTestDatabase()
        try manager.migrateStore(at: empty.url, ofType: NSPostgreSQLStoreType, options: nil, to: v3)
    }

    /// A step another server already took changes nothing; a store that another server moved to
    /// a third version meanwhile is refused (134110) and left as that server left it.
    @Test func aStepAnotherServerTookIsSkippedAndAStoreOfAnotherVersionIsRefused() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Staged.people(in: folder)
        let database = try Self.v1Store(v1)
        try PostgreSQLStore.migrateStage(at: database.url, options: nil, from: v1, to: v2)
        let migrated = try P.contents(database)
        try PostgreSQLStore.migrateStage(at: database.url, options: nil, from: v1, to: v2)
        #expect(try P.contents(database) == migrated)
        Staged.expectError(NSMigrationError, "another server changed the store's model version") {
            try PostgreSQLStore.migrateStage(at: database.url, options: nil, from: v1, to: v3)
        }
        #expect(try P.contents(database) == migrated)
    }

    @Test func aMigrationWhenTheStoreIsAddedReportsToTheCallersCurrentProgress() throws {
        let folder = try TemporaryFolder()
        let (database, v2) = try P.bundleStore(P.versions, current: "V2", in: folder)
        let parent = ParentProgress(totalUnitCount: 10)
        parent.becomeCurrent(withPendingUnitCount: 10)
        let context = try P.open(database, v2, options: AutomaticMigrationTests.migrate)
        parent.resignCurrent()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 2)
        // One child, made by the migration: a unit per table (Person, Tag), the indexes, the metadata.
        try parent.expectOneMigrationChild(units: 4)
    }
}
