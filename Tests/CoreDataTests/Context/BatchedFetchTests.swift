import Foundation
import Testing
@testable import CoreData

@Suite("Batched fetches (fetchBatchSize)")
struct BatchedFetchTests {
    /// `count` cars named "car 000"… saved by one stack; the test reads them through another
    /// (a new coordinator, so that no row comes from the coordinator's cache of saved rows).
    private func seeded(_ count: Int, inMemory: Bool = false) throws -> TestStack {
        let stack = try TestStack(inMemory: inMemory)
        for index in 0..<count {
            stack.insert("Car", ["name": String(format: "car %05d", index), "year": 1900 + index % 100])
        }
        try stack.context.save()
        return stack
    }

    private func names(_ objects: [NSManagedObject]) -> [String] { objects.map { $0.value(forKey: "name") as? String ?? "?" } }

    @Test func theResultHasItsCountAndOrderAtOnceAndLoadsOneBatchPerQuery() throws {
        let seed = try seeded(100)
        defer { withExtendedLifetime(seed) {} }
        let stack = try seed.reopen()
        let before = stack.readStatements
        let cars = try stack.fetch("Car") {
            $0.fetchBatchSize = 10
            $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: false)]
        }
        #expect(stack.readStatements == before + 1)          // the IDs only
        #expect(cars.count == 100)
        #expect(stack.objectsWithData == 0)
        #expect(cars[55].value(forKey: "name") as? String == "car 00044")
        #expect(stack.readStatements == before + 2)          // one batch: results 50..<60
        #expect(stack.objectsWithData == 10)
        #expect(cars[50..<60].allSatisfy { $0._hasData } && !cars[49]._hasData && !cars[60]._hasData)
        #expect(cars[59].value(forKey: "name") as? String == "car 00040")
        #expect(stack.readStatements == before + 2)          // same batch: no query
        #expect(names(cars) == (0..<100).reversed().map { String(format: "car %05d", $0) })
        #expect(stack.readStatements == before + 11)         // ten batches in all
    }

    @Test func touchingOneElementOfALargeResultLoadsOneBatch() throws {
        let seed = try seeded(20_000)
        defer { withExtendedLifetime(seed) {} }
        let stack = try seed.reopen()
        let cars = try stack.fetch("Car") { $0.fetchBatchSize = 50 }
        #expect(cars.count == 20_000)
        #expect(cars[12_345].value(forKey: "name") as? String == "car 12345")
        #expect(stack.context.registeredObjects.count == 20_000)
        #expect(stack.objectsWithData == 50)
    }

    /// A new object given its permanent ID before the save (`obtainPermanentIDs`, a child's
    /// save into its parent) still has its place in a batched, sorted result.
    @Test func aNewObjectWithAPermanentIDIsSortedIntoABatchedResult() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "B"]); stack.insert("Car", ["name": "D"])
        try stack.context.save()
        let new = stack.insert("Car", ["name": "A"])
        try stack.context.obtainPermanentIDs(for: [new])
        let sorted: (NSFetchRequest<NSManagedObject>) -> Void = { $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)] }
        #expect(names(try stack.fetch("Car") { sorted($0); $0.fetchBatchSize = 20 }) == ["A", "B", "D"])
        #expect(names(try stack.fetch("Car") { sorted($0); $0.fetchBatchSize = 20; $0.fetchLimit = 1 }) == ["A"])
        #expect(names(try stack.fetch("Car", sorted)) == ["A", "B", "D"])
    }

    /// Objects an earlier fetch returned as faults carrying their rows, never read, take the
    /// rows a batched fetch reads, as an unbatched fetch gives them its own: their values agree
    /// with the predicate that found them. Relationships prefetched into such a fault go too.
    @Test func aBatchedFetchGivesFaultsItMeetsAgainTheirCurrentRows() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"]), bob = stack.insert("Person", ["name": "Bob"])
        stack.insert("Car", ["name": "old", "owner": ada])
        try stack.context.save()
        let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        reader.persistentStoreCoordinator = stack.coordinator
        let prefetching = NSFetchRequest<NSManagedObject>(entityName: "Car")
        prefetching.relationshipKeyPathsForPrefetching = ["owner"]
        let first = try reader.fetch(prefetching)
        #expect(first.count == 1 && first[0].isFault)

        let car = try stack.fetch("Car")[0]
        car.setValue("new", forKey: "name")
        car.setValue(bob, forKey: "owner")
        try stack.context.save()

        let batched = NSFetchRequest<NSManagedObject>(entityName: "Car")
        batched.predicate = NSPredicate(format: "name == 'new'")
        batched.fetchBatchSize = 10
        let found = try reader.fetch(batched)
        #expect(found.first === first[0])
        #expect(found.first?.value(forKey: "name") as? String == "new")
        #expect((found.first?.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String == "Bob")

        // Unbatched, a refetched fault's prefetched relationship goes with its older row too.
        reader.refreshAllObjects()
        _ = try reader.fetch(prefetching)
        car.setValue(ada, forKey: "owner")
        try stack.context.save()
        let byOwner = NSFetchRequest<NSManagedObject>(entityName: "Car")
        byOwner.predicate = NSPredicate(format: "owner.name == 'Ada'")
        let again = try reader.fetch(byOwner)
        #expect(again.first === first[0])
        #expect((again.first?.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String == "Ada")
    }

    /// Paging through a store with one offset after another adds no prepared statement per
    /// page to the reader connections (the limit and offset are bound, not in the query's text).
    @Test func pagesShareOnePreparedStatement() throws {
        let stack = try seeded(5)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.fetchLimit = 1
        let store = try #require(stack.coordinator.persistentStores.first as? SQLiteStore)
        let before = try store.withReader { $0.cachedStatementCount }
        for page in 0..<200 {
            request.fetchOffset = page % 7
            request.fetchLimit = 1 + page % 5
            _ = try stack.context.fetch(request)
            _ = try stack.context.count(for: request)
        }
        #expect(try store.withReader { $0.cachedStatementCount } < before + 20)
    }

    @Test func aBatchedFetchSeesPendingChangesAsAnUnbatchedOneDoes() throws {
        let stack = try seeded(40)
        let all = try stack.fetch("Car")
        stack.context.delete(all[3])
        all[7].setValue("car 00031b", forKey: "name")         // moves in name order
        all[8].setValue(1800, forKey: "year")                  // no longer matches
        stack.insert("Car", ["name": "car 00010b", "year": 1950])
        stack.insert("Car", ["name": "car 99999", "year": 1950])
        for sorted in [true, false] {
            func configure(_ request: NSFetchRequest<NSManagedObject>) {
                request.predicate = NSPredicate(format: "year >= 1900")
                if sorted { request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)] }
            }
            let plain = try stack.fetch("Car", configure)
            stack.context.refreshAllObjects()
            let batched = try stack.fetch("Car") { configure($0); $0.fetchBatchSize = 7 }
            #expect(batched.count == 40 - 2 + 2)    // one deleted, one no longer matching, two new
            #expect(names(batched) == names(plain))
        }
    }

    @Test func limitsAndOffsetsApplyBeforeBatching() throws {
        let seed = try seeded(30)
        defer { withExtendedLifetime(seed) {} }
        let stack = try seed.reopen()
        let cars = try stack.fetch("Car") { $0.fetchBatchSize = 4; $0.fetchOffset = 5; $0.fetchLimit = 10 }
        #expect(names(cars) == (5..<15).map { String(format: "car %05d", $0) })
    }

    @Test func aRowDeletedBeforeItsBatchLoadsReadsAsDeleted() throws {
        let seed = try seeded(10)
        defer { withExtendedLifetime(seed) {} }
        let stack = try seed.reopen()
        let cars = try stack.fetch("Car") { $0.fetchBatchSize = 5 }
        let other = seed.newContext()
        other.delete(try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))[2])
        try other.save()
        #expect(cars[0].value(forKey: "name") as? String == "car 00000")
        #expect(cars[1]._hasData && !cars[2].isDeleted)
        _ = cars[2].value(forKey: "name")
        #expect(cars[2].isDeleted)
        #expect(cars[4].value(forKey: "name") as? String == "car 00004")
    }

    @Test func batchedFetchOnTheInMemoryStore() throws {
        let stack = try seeded(25, inMemory: true)
        stack.context.reset()
        let cars = try stack.fetch("Car") { $0.fetchBatchSize = 10; $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)] }
        #expect(cars.count == 25)
        #expect(stack.objectsWithData == 0)
        #expect(cars[12].value(forKey: "name") as? String == "car 00012")
        #expect(stack.objectsWithData == 10)
        #expect(names(cars) == (0..<25).map { String(format: "car %05d", $0) })
    }

    /// The memory of a batched fetch of 1,000,000 rows, for docs/PORTING.md: run with
    /// `COREDATA_MEMORY_TEST=1 swift test --filter millionRows`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["COREDATA_MEMORY_TEST"] != nil))
    func millionRows() throws {
        let seed = try TestStack()
        let tag = try #require(seed.model.entitiesByName["Tag"]).layout.entityNumber
        try RawSQLite.execute(seed.url.path, """
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000000)
            INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZLABEL) SELECT x, \(tag), 1, 'tag ' || x FROM n;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 1000000 WHERE Z_ENT = \(tag);
            """)
        let stack = try seed.reopen()
        let before = Self.residentBytes()
        let start = Date()
        let tags = try stack.fetch("Tag") { $0.fetchBatchSize = 100 }
        let elapsed = Date().timeIntervalSince(start)
        let after = Self.residentBytes()
        #expect(tags.count == 1_000_000)
        #expect(tags[765_432].value(forKey: "label") as? String == "tag 765433")
        print("1,000,000-row batched fetch: \(String(format: "%.2f", elapsed)) s, resident memory +\((after - before) / 1_048_576) MB (\((after - before) / 1_000_000) bytes per result)")
        withExtendedLifetime(seed) {}
    }

    private static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }
}
