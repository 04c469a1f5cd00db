import Foundation
import Testing
@testable import CoreData

/// In a save that gives a table at least `SQLiteStore.appendingMinimum` new keys, a new row whose
/// key is one more than the table's largest is inserted without `Z_PK` (SQLite appends it with
/// that very key); the others bind their key. Either way a row gets the key handed out from
/// `Z_PRIMARYKEY`, in insertion order.
@Suite("SQLite store: primary keys of inserted rows")
struct InsertKeyTests {
    /// Enough new rows for one table for a save to append them.
    private let many = SQLiteStore.appendingMinimum

    private func zMax(_ stack: TestStack, _ entity: String) throws -> String? {
        try RawSQLite.query(stack.url.path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = '\(entity)'").first?[0]
    }

    private func keys(_ objects: [NSManagedObject]) -> [String] {
        objects.map { $0.objectID.uriRepresentation().lastPathComponent }
    }

    @Test func keysAreNotReusedAfterDeletingTheLastRows() throws {
        let stack = try TestStack()
        let cars = (1...many).map { stack.insert("Car", ["name": "car \($0)"]) }
        try stack.context.save()
        stack.context.delete(cars[many - 2])
        stack.context.delete(cars[many - 1])
        try stack.context.save()
        // The table's largest key is now many - 2, Z_MAX many: the next rows take the keys after many.
        let new = (many + 1...2 * many).map { stack.insert("Car", ["name": "car \($0)"]) }
        try stack.context.save()
        let expected = Array(1...many - 2) + Array(many + 1...2 * many)
        #expect(try stack.rows("SELECT Z_PK, ZNAME FROM ZCAR ORDER BY Z_PK") == expected.map { ["\($0)", "car \($0)"] })
        #expect(keys(new) == (many + 1...2 * many).map { "p\($0)" })
        #expect(try zMax(stack, "Car") == "\(2 * many)")
        // Deleting a row in the middle changes nothing for the next ones; nor does a small save.
        stack.context.delete(cars[1])
        let last = stack.insert("Car", ["name": "last"])
        try stack.context.save()
        #expect(keys([last]) == ["p\(2 * many + 1)"])
        #expect(try stack.rows("SELECT count(*), max(Z_PK) FROM ZCAR") == [["\(expected.count)", "\(2 * many + 1)"]])
        #expect(try zMax(stack, "Car") == "\(2 * many + 1)")
    }

    @Test func entitiesOfOneHierarchyShareTheirTableAndSequence() throws {
        let stack = try TestStack()
        let truck = stack.model.entitiesByName["Truck"]!.layout.entityNumber
        let bike = stack.model.entitiesByName["Bike"]!.layout.entityNumber
        // Trucks and bikes in runs of one and two, a car between them.
        var expected: [[String]] = []
        for i in 1...many {
            let isTruck = i % 3 == 0
            stack.insert(isTruck ? "Truck" : "Bike", ["load": isTruck ? Double(i) : i])
            expected.append(["\(i)", "\(isTruck ? truck : bike)", "1"])
            if i == many / 2 { stack.insert("Car", ["name": "a car between"]) }
        }
        try stack.context.save()
        #expect(try stack.rows("SELECT Z_PK, Z_ENT, Z_OPT FROM ZVEHICLE ORDER BY Z_PK") == expected)
        #expect(try stack.rows("SELECT Z_PK, ZNAME FROM ZCAR") == [["1", "a car between"]])
        #expect(try zMax(stack, "Vehicle") == "\(many)")
        #expect(try zMax(stack, "Car") == "1")
        // Read back as the entities they were saved as, with their values.
        let other = try stack.reopen()
        let trucks = try other.fetch("Truck").compactMap { $0.value(forKey: "load") as? Double }
        #expect(trucks.sorted() == (1...many).filter { $0 % 3 == 0 }.map(Double.init))
        let bikes = try other.fetch("Bike").compactMap { $0.value(forKey: "load") as? Int }
        #expect(bikes.sorted() == (1...many).filter { $0 % 3 != 0 })
    }

    @Test func keysObtainedBeforeTheSaveAreKept() throws {
        let stack = try TestStack()
        let first = stack.insert("Car", ["name": "first"])
        let second = stack.insert("Car", ["name": "second"])
        try stack.context.obtainPermanentIDs(for: [second])
        let others = (3...many + 1).map { stack.insert("Car", ["name": "car \($0)"]) }
        try stack.context.save()
        let saved = try stack.rows("SELECT Z_PK, ZNAME FROM ZCAR ORDER BY Z_PK")
        #expect(saved.prefix(3) == [["1", "second"], ["2", "first"], ["3", "car 3"]])
        #expect(saved.count == many + 1 && saved.last == ["\(many + 1)", "car \(many + 1)"])
        #expect(keys([first, second]) == ["p2", "p1"])
        #expect(keys(others) == (3...many + 1).map { "p\($0)" })
        #expect(try zMax(stack, "Car") == "\(many + 1)")
    }

    /// Something else writing the table (here a trigger) makes SQLite pick another key than the
    /// one handed out: the save is rolled back and written again with every key bound.
    @Test func anInsertThatGetsAnotherKeyFallsBackToExplicitKeys() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "existing"])
        try stack.context.save()
        try RawSQLite.execute(stack.url.path, """
            CREATE TRIGGER jump BEFORE INSERT ON ZCAR WHEN NEW.ZNAME = 'jump'
            BEGIN INSERT INTO ZCAR (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (1000, NEW.Z_ENT, 1, 'extra'); END
            """)
        let other = try stack.reopen()
        let store = try #require(other.coordinator.persistentStores.first as? SQLiteStore)
        let names = (2...many + 1).map { $0 == 4 ? "jump" : "car \($0)" }
        let saved = names.map { other.insert("Car", ["name": $0]) }
        #expect(!store.writeLock.withLock { store.implicitKeysRefused })
        try other.context.save()
        #expect(store.writeLock.withLock { store.implicitKeysRefused }) // the save fell back
        let expected = [["1", "existing"]] + zip(2..., names).map { ["\($0)", $1] } + [["1000", "extra"]]
        #expect(try stack.rows("SELECT Z_PK, ZNAME FROM ZCAR ORDER BY Z_PK") == expected)
        #expect(keys(saved) == (2...many + 1).map { "p\($0)" })
        #expect(try zMax(stack, "Car") == "\(many + 1)")
        // Later saves of that store bind their keys (the table's largest is no guide to them).
        let later = (1...many).map { other.insert("Car", ["name": "later \($0)"]) }
        try other.context.save()
        #expect(keys(later) == (many + 2...2 * many + 1).map { "p\($0)" })
        #expect(try zMax(stack, "Car") == "\(2 * many + 1)")
        // The saved rows read back through the store's own cache and from disk alike.
        let third = try other.context.existingObject(with: saved[2].objectID)
        #expect(third.value(forKey: "name") as? String == "jump")
        #expect(try stack.reopen().fetch("Car").count == 2 * many + 2)
    }

    /// Appended rows go in batches of `SQLiteStore.appendBatch` per statement, the rest one by
    /// one; relationships to new objects (temporary IDs in the values) resolve in both.
    @Test func batchesOfAppendedRowsKeepEveryValueAndRelationship() throws {
        let stack = try TestStack()
        let count = 2 * SQLiteStore.appendBatch + 3
        let owner = stack.insert("Person", ["name": "Ada", "age": 36])
        let tag = stack.insert("Tag", ["label": "fast"])
        let cars = (1...count).map { i in
            let car = stack.insert("Car", ["name": "car \(i)", "year": 1900 + i, "price": Double(i) / 2])
            if i % 2 == 0 { car.setValue(owner, forKey: "owner") }
            if i % 5 == 0 { car.mutableSetValue(forKey: "tags").add(tag) }
            return car
        }
        try stack.context.save()
        #expect(keys(cars) == (1...count).map { "p\($0)" })
        let saved = try stack.rows("SELECT Z_PK, ZNAME, ZYEAR, ZPRICE, ZOWNER FROM ZCAR ORDER BY Z_PK")
        #expect(saved == (1...count).map { i in
            ["\(i)", "car \(i)", "\(1900 + i)", "\(Double(i) / 2)", i % 2 == 0 ? "1" : "NULL"]
        })
        let join = "Z_\(stack.model.entitiesByName["Car"]!.layout.entityNumber)TAGS"
        #expect(try stack.rows("SELECT count(*) FROM \(join)")[0][0] == "\(count / 5)")
        #expect(try zMax(stack, "Car") == "\(count)")
        let other = try stack.reopen()
        let ada = try #require(try other.fetch("Person").first)
        #expect((ada.value(forKey: "cars") as? Set<NSManagedObject>)?.count == count / 2)
    }
}
