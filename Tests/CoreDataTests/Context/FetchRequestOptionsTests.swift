import Foundation
import Testing
@testable import CoreData

@Suite("Fetch requests: includesPropertyValues, returnsObjectsAsFaults, shouldRefreshRefetchedObjects")
struct FetchRequestOptionsTests {
    private func seeded(inMemory: Bool = false) throws -> TestStack {
        let stack = try TestStack(inMemory: inMemory)
        for (offset, name) in ["a", "b", "c"].enumerated() { stack.insert("Car", ["name": name, "year": 2001 + offset]) }
        try stack.context.save()
        return stack
    }

    @Test func withoutPropertyValuesObjectsAreDataLessFaultsThatLoadOnFirstTouch() throws {
        let seed = try seeded()
        defer { withExtendedLifetime(seed) {} }
        let stack = try seed.reopen() // a new coordinator: no cached rows
        let before = stack.readStatements
        let cars = try stack.fetch("Car") { $0.includesPropertyValues = false }
        #expect(stack.readStatements == before + 1)
        #expect(cars.count == 3)
        #expect(cars.allSatisfy { $0.isFault && !$0._hasData })
        #expect(cars[1].value(forKey: "name") as? String == "b")
        #expect(stack.readStatements == before + 2)      // one row, for the object touched
        #expect(cars[0].isFault && !cars[0]._hasData)
        #expect(cars.map { $0.value(forKey: "name") as? String } == ["a", "b", "c"])
    }

    @Test func withoutPropertyValuesInMemory() throws {
        let stack = try seeded(inMemory: true)
        stack.context.reset()
        let cars = try stack.fetch("Car") { $0.includesPropertyValues = false; $0.predicate = NSPredicate(format: "year > 2001") }
        #expect(cars.allSatisfy { $0.isFault && !$0._hasData })
        #expect(cars.map { $0.value(forKey: "name") as? String } == ["b", "c"])
    }

    @Test func withoutPropertyValuesInAChildContext() throws {
        let stack = try seeded()
        let (_, child) = stack.parentAndChild()
        let names = try child.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            request.includesPropertyValues = false
            let cars = try child.fetch(request)
            #expect(cars.allSatisfy { $0.isFault && !$0._hasData })
            return cars.map { $0.value(forKey: "name") as? String }
        }
        #expect(names == ["a", "b", "c"])
    }

    @Test func returnsObjectsAsFaultsFalseHoldsInAChildContext() throws {
        let stack = try seeded()
        let (_, child) = stack.parentAndChild()
        let states = child.performAndWait { () -> (faults: [Bool], loaded: [Bool]) in
            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            let faults = (try? child.fetch(request))?.map(\.isFault) ?? []
            child.reset()
            request.returnsObjectsAsFaults = false
            let loaded = (try? child.fetch(request))?.map(\.isFault) ?? []
            return (faults, loaded)
        }
        #expect(states.faults == [true, true, true])
        #expect(states.loaded == [false, false, false])
    }

    @Test func returnsObjectsAsFaultsFalseFiresObjectsAlreadyRegistered() throws {
        let seed = try seeded()
        defer { withExtendedLifetime(seed) {} }
        let stack = try seed.reopen()
        let faults = try stack.fetch("Car")
        #expect(faults.allSatisfy { $0.isFault })
        let loaded = try stack.fetch("Car") { $0.returnsObjectsAsFaults = false }
        #expect(loaded.allSatisfy { !$0.isFault })
        #expect(zip(faults, loaded).allSatisfy { $0 === $1 })
    }

    /// Changes another context saved while `stack.context` holds the object.
    private func saveElsewhere(_ stack: TestStack, year: Int, name: String? = nil) throws {
        let other = stack.newContext()
        let car = try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))[0]
        car.setValue(year, forKey: "year")
        if let name { car.setValue(name, forKey: "name") }
        try other.save()
    }

    @Test("A refreshed object reads its row at its next access, not at the refresh")
    func aRefreshedObjectReadsItsRowWhenNextTouched() throws {
        let stack = try seeded()
        let car = try stack.fetch("Car")[0]
        #expect(car.value(forKey: "year") as? Int == 2001)
        stack.context.stalenessInterval = 0
        stack.context.refresh(car, mergeChanges: false)
        #expect(car.isFault)
        try saveElsewhere(stack, year: 1999)
        #expect(car.value(forKey: "year") as? Int == 1999)
        // The same through refreshAllObjects().
        stack.context.refreshAllObjects()
        try saveElsewhere(stack, year: 1998)
        #expect(car.value(forKey: "year") as? Int == 1998)
    }

    @Test("A refresh that merges changes keeps transient values, as Apple documents, also of an object with no changes")
    func aMergingRefreshKeepsTransientValues() throws {
        let stack = try seeded()
        let car = try stack.fetch("Car")[0]
        car.setValue("memo", forKey: "scratch")
        try stack.context.save()
        stack.context.refreshAllObjects()
        #expect(car.value(forKey: "scratch") as? String == "memo")
        stack.context.refresh(car, mergeChanges: true)
        #expect(car.value(forKey: "scratch") as? String == "memo")
        // Without merging, transient values are disposed of.
        stack.context.refresh(car, mergeChanges: false)
        #expect(car.value(forKey: "scratch") == nil)
    }

    @Test("A fetched fault never fired takes the row a later fetch reads")
    func aFaultTakesTheRowOfALaterFetch() throws {
        let stack = try seeded()
        let context = stack.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let cars = try context.fetch(request) // faults holding their rows
        #expect(cars[0].isFault)
        try saveElsewhere(stack, year: 1999)
        _ = try context.fetch(request)
        #expect(cars[0].value(forKey: "year") as? Int == 1999)
    }

    @Test("shouldRefreshRefetchedObjects refreshes loaded objects in a batched fetch and one without property values too")
    func refreshingRefetchedObjectsInEveryKindOfFetch() throws {
        for configure in [{ (r: NSFetchRequest<NSManagedObject>) in r.fetchBatchSize = 10 }, { r in r.includesPropertyValues = false }] {
            let stack = try seeded()
            let car = try stack.fetch("Car") { $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)] }[0]
            #expect(car.value(forKey: "year") as? Int == 2001)
            try saveElsewhere(stack, year: 1999)
            let again = try stack.fetch("Car") {
                $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
                $0.shouldRefreshRefetchedObjects = true
                configure($0)
            }
            #expect(again[0] === car)
            #expect(car.value(forKey: "year") as? Int == 1999)
        }
    }

    @Test("A batched fetch refuses a prefetching key path that names no relationship, as an unbatched one does")
    func aBatchedFetchChecksItsPrefetchingKeyPaths() throws {
        let stack = try seeded()
        for batch in [0, 5] {
            let error = #expect(throws: NSError.self) {
                try stack.fetch("Car") { $0.fetchBatchSize = batch; $0.relationshipKeyPathsForPrefetching = ["nope"] }
            }
            #expect(error?.domain == NSCocoaErrorDomain && error?.code == 134060)
            // A path of several relationships is checked step by step, also with no object.
            #expect(try stack.fetch("Car") { $0.fetchBatchSize = batch; $0.relationshipKeyPathsForPrefetching = ["owner.cars"] }.count == 3)
            #expect(try stack.fetch("Car") { $0.fetchBatchSize = batch; $0.predicate = NSPredicate(value: false)
                $0.relationshipKeyPathsForPrefetching = ["owner.cars"] }.isEmpty)
        }
    }

    @Test func refetchedObjectsKeepTheirValuesUnlessRefreshed() throws {
        let stack = try seeded()
        let car = try stack.fetch("Car")[0]
        #expect(car.value(forKey: "year") as? Int == 2001)
        try saveElsewhere(stack, year: 1999)
        _ = try stack.fetch("Car")
        #expect(car.value(forKey: "year") as? Int == 2001)      // not refreshed: the values it had
        let again = try stack.fetch("Car") { $0.shouldRefreshRefetchedObjects = true }
        #expect(again[0] === car)
        #expect(car.value(forKey: "year") as? Int == 1999)      // the store's
        #expect(!car.hasChanges)
    }

    @Test func refreshingKeepsPendingChangesOnTopOfTheStoresValues() throws {
        let stack = try seeded()
        let car = try stack.fetch("Car")[0]
        car.setValue("mine", forKey: "name")
        try saveElsewhere(stack, year: 1990, name: "theirs")
        _ = try stack.fetch("Car") { $0.shouldRefreshRefetchedObjects = true }
        #expect(car.value(forKey: "year") as? Int == 1990)      // the store's value
        #expect(car.value(forKey: "name") as? String == "mine") // the unsaved change, kept
        #expect(car.hasChanges)
        try stack.context.save()                                 // the refreshed version: no conflict
        let reloaded = try stack.reopen().fetch("Car")[0]
        #expect(reloaded.value(forKey: "name") as? String == "mine")
        #expect(reloaded.value(forKey: "year") as? Int == 1990)
    }

    /// Refreshing a refetched object drops its related objects; one held only there is freed,
    /// and its `deinit` takes the registry's lock: a fetch must not be holding it then (this
    /// hung for good when it was).
    @Test(.timeLimit(.minutes(1))) func refreshingRefetchedObjectsThatHeldTheLastReferenceToARelatedObject() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        for name in ["a", "b"] { stack.insert("Car", ["name": name]).setValue(ada, forKey: "owner") }
        try stack.context.save()
        stack.context.reset()
        let context = stack.newContext()
        let first = NSFetchRequest<NSManagedObject>(entityName: "Car")
        first.relationshipKeyPathsForPrefetching = ["owner"]
        let cars = try context.fetch(first)
        #expect(cars.compactMap { ($0.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String } == ["Ada", "Ada"])
        let again = NSFetchRequest<NSManagedObject>(entityName: "Car")
        again.shouldRefreshRefetchedObjects = true
        #expect(try context.fetch(again).count == 2)
        #expect(cars.compactMap { ($0.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String } == ["Ada", "Ada"])
    }
}
