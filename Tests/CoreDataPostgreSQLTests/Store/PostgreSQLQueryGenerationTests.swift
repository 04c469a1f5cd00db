import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// Query generations on the PostgreSQL store: a pinned context reads one `REPEATABLE READ`
/// snapshot until it moves (as `QueryGenerationTests` on SQLite), whatever this coordinator or
/// another server saves meanwhile.
@Suite("PostgreSQL query generations", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLQueryGenerationTests {
    /// A database with Ann owning cars "a" and "b", and a private-queue context on a new
    /// coordinator of it (`options` the store's).
    private func databaseWithCars(options: [AnyHashable: Any]? = nil) throws -> (TemporaryDatabase, NSPersistentStoreCoordinator, ann: NSManagedObjectID) {
        let database = try TemporaryDatabase()
        let coordinator = try database.coordinator(PostgreSQLTestModel.make(), options: options)
        let writer = context(coordinator)
        let ann = try writer.performAndWait {
            let ann = writer.insert("Person", ["name": "Ann"])
            writer.insert("Car", ["name": "a", "owner": ann])
            writer.insert("Car", ["name": "b", "owner": ann])
            try writer.save()
            return ann.objectID
        }
        return (database, coordinator, ann)
    }

    private func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    private func names(_ context: NSManagedObjectContext) throws -> [String] {
        try context.performAndWait { try context.objects("Car", sortedBy: "name").compactMap { $0.value(forKey: "name") as? String } }
    }

    private func count(_ context: NSManagedObjectContext) throws -> Int {
        try context.performAndWait { try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) }
    }

    /// Renames "a" to "A", deletes "b", inserts "c", and saves, in `context`.
    private func changeEverything(in context: NSManagedObjectContext) throws {
        try context.performAndWait {
            for car in try context.objects("Car") {
                if car.value(forKey: "name") as? String == "a" { car.setValue("A", forKey: "name") } else { context.delete(car) }
            }
            context.insert("Car", ["name": "c"])
            try context.save()
        }
    }

    private func store(_ coordinator: NSPersistentStoreCoordinator) throws -> PostgreSQLStore {
        try #require(coordinator.persistentStores.first as? PostgreSQLStore)
    }

    @Test func aPinnedContextReadsItsSnapshotWhateverAnotherServerSaves() throws {
        let (database, coordinator, ann) = try databaseWithCars()
        let reader = context(coordinator)
        let faults = try reader.performAndWait {
            try reader.setQueryGenerationFrom(.current)
            #expect(reader.queryGenerationToken != nil)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            request.includesPropertyValues = false
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            return try reader.fetch(request) // pins
        }
        // Another server, and this coordinator, change everything.
        try changeEverything(in: context(try database.coordinator(PostgreSQLTestModel.make())))
        try reader.performAndWait {
            #expect(faults.map(\.isFault) == [true, true])
            #expect(faults.compactMap { $0.value(forKey: "name") as? String } == ["a", "b"], "faults fired later read the snapshot")
            let owner = try reader.existingObject(with: ann)
            #expect((owner.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2, "a to-many fault too")
            let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Car")
            dictionaries.resultType = .dictionaryResultType
            dictionaries.propertiesToFetch = ["name"]
            dictionaries.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            #expect(try reader.fetch(dictionaries).compactMap { $0["name"] as? String } == ["a", "b"])
        }
        #expect(try names(reader) == ["a", "b"])
        #expect(try count(reader) == 2)

        // A context pinned from its token reads the same snapshot; an unpinned one the latest.
        let sharing = context(coordinator)
        try sharing.performAndWait { try sharing.setQueryGenerationFrom(reader.performAndWait { reader.queryGenerationToken }) }
        #expect(try names(sharing) == ["a", "b"])
        #expect(try names(context(coordinator)) == ["A", "c"])
        #expect(try store(coordinator).pool?.pinnedReaders == 1, "contexts sharing a generation share its session")

        // Moving on: the next reads see the latest.
        try reader.performAndWait {
            try reader.setQueryGenerationFrom(.current)
            reader.refreshAllObjects()
            #expect(faults[0].value(forKey: "name") as? String == "A")
        }
        #expect(try names(reader) == ["A", "c"])
        #expect(try count(reader) == 2)
    }

    @Test func aSaveOfItsOwnMovesItAndTheSessionEndsWithTheGeneration() throws {
        let (database, coordinator, _) = try databaseWithCars()
        let pool = try #require(try store(coordinator).pool)
        let reader = context(coordinator)
        try reader.performAndWait { try reader.setQueryGenerationFrom(.current) }
        #expect(try count(reader) == 2)
        #expect(pool.pinnedReaders == 1)
        try changeEverything(in: context(try database.coordinator(PostgreSQLTestModel.make())))
        #expect(try count(reader) == 2)

        try reader.performAndWait {
            reader.insert("Car", ["name": "d"])
            try reader.save() // written against the latest data; the context moves to the latest generation
        }
        #expect(try names(reader) == ["A", "c", "d"])
        #expect(pool.pinnedReaders == 1, "the old generation's session was closed")

        try reader.performAndWait { try reader.setQueryGenerationFrom(nil) }
        #expect(pool.pinnedReaders == 0)
        #expect(try database.query("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_xmin IS NOT NULL AND state LIKE 'idle in transaction%'")
            == [["0"]], "no session of the database is left holding a snapshot")
    }

    @Test func aReadTheServerFailsLeavesTheGenerationReadingItsSnapshot() throws {
        let (database, coordinator, ann) = try databaseWithCars()
        let writer = context(coordinator)
        try writer.performAndWait {
            try writer.existingObject(with: ann).setValue(1e300, forKey: "score")
            try writer.save()
        }
        let reader = context(coordinator), sharing = context(coordinator)
        try reader.performAndWait { try reader.setQueryGenerationFrom(.current) }
        #expect(try names(reader) == ["a", "b"]) // pins
        try sharing.performAndWait { try sharing.setQueryGenerationFrom(reader.performAndWait { reader.queryGenerationToken }) }
        try changeEverything(in: context(try database.coordinator(PostgreSQLTestModel.make())))

        // 1e300 * 1e300 overflows a double precision: the server fails the statement (22003).
        let error = #expect(throws: NSError.self) {
            try reader.performAndWait {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                request.predicate = NSPredicate(format: "score * 1e300 > 0")
                return try reader.fetch(request)
            }
        }
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSPersistentStoreOperationError)
        #expect(error?.userInfo[NSPostgreSQLStateErrorKey] as? String == "22003")

        // The generation's transaction was not aborted (25P02): its contexts still read its snapshot.
        #expect(try names(reader) == ["a", "b"])
        #expect(try count(sharing) == 2)
        try reader.performAndWait {
            let owner = try reader.existingObject(with: ann)
            #expect((owner.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2, "a fault fired after the failure")
        }
        #expect(try names(context(coordinator)) == ["A", "c"])
        #expect(try store(coordinator).pool?.pinnedReaders == 1)
    }

    @Test func generationsAreBoundedAndNeverStarveUnpinnedReads() throws {
        let (database, coordinator, _) = try databaseWithCars(options: [NSPersistentStoreConnectionPoolMaxSizeKey: 1 as NSNumber])
        defer { withExtendedLifetime(database) {} }
        let first = context(coordinator), second = context(coordinator)
        try first.performAndWait { try first.setQueryGenerationFrom(.current) }
        try second.performAndWait { try second.setQueryGenerationFrom(.current) }
        #expect(try count(first) == 2)

        let error = #expect(throws: NSError.self) { try count(second) }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSPersistentStoreOperationError)
        #expect(error?.localizedDescription.contains("NSPersistentStoreConnectionPoolMaxSizeKey") == true)
        #expect(try names(context(coordinator)) == ["a", "b"], "an unpinned read does not wait for the generation")

        try first.performAndWait { try first.setQueryGenerationFrom(nil) }
        #expect(try count(second) == 2, "the place is free again once a generation ends")
    }

    /// The generation's session ended by the server (here an administrator's
    /// `pg_terminate_backend`; a timeout or a lost network ends it alike): its snapshot is gone,
    /// so the pinned contexts' reads throw 134070 naming the lost generation, every time, and
    /// never read the current data in its place. A context moved to `.current` reads again.
    @Test func aLostGenerationSessionFailsItsReadsUntilTheContextMoves() throws {
        let (database, coordinator, _) = try databaseWithCars()
        let reader = context(coordinator), sharing = context(coordinator)
        try reader.performAndWait { try reader.setQueryGenerationFrom(.current) }
        #expect(try names(reader) == ["a", "b"]) // pins
        try sharing.performAndWait { try sharing.setQueryGenerationFrom(reader.performAndWait { reader.queryGenerationToken }) }
        try changeEverything(in: context(try database.coordinator(PostgreSQLTestModel.make())))
        #expect(try database.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND backend_xmin IS NOT NULL AND state LIKE 'idle in transaction%'
            """) == [["t"]], "the generation's session, the only one holding a snapshot")

        for read in [{ _ = try names(reader) }, { _ = try count(reader) }, { _ = try names(sharing) }] {
            let error = #expect(throws: NSError.self) { try read() }
            #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSPersistentStoreOperationError)
            #expect(error?.localizedDescription.contains("query generation") == true, "\(String(describing: error))")
            #expect(error?.localizedDescription.contains("setQueryGenerationFrom(.current)") == true)
        }
        #expect(try store(coordinator).pool?.pinnedReaders == 1, "the lost session keeps its place until the generation ends")

        try reader.performAndWait { try reader.setQueryGenerationFrom(.current) }
        #expect(try names(reader) == ["A", "c"], "a new generation, of the latest data")
        #expect(throws: NSError.self, "the other context is still pinned to the lost one") { try count(sharing) }
        try sharing.performAndWait { try sharing.setQueryGenerationFrom(nil) }
        #expect(try count(sharing) == 2)
        #expect(try store(coordinator).pool?.pinnedReaders == 1, "the lost generation's place was freed")
    }
}
