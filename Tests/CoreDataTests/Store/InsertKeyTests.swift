import Foundation
import Testing
@testable import CoreData

/// New rows whose key is one more than their table's largest are inserted without `Z_PK`
/// (SQLite appends them with that very key); the others bind their key. Either way a row gets
/// the key handed out from `Z_PRIMARYKEY`, in insertion order.
@Suite("SQLite store: primary keys of inserted rows")
struct InsertKeyTests {
    private func rows(_ stack: TestStack, _ sql: String) throws -> [[String]] {
        try RawSQLite.query(stack.url.path, sql).map { $0.map { $0 ?? "NULL" } }
    }

    private func zMax(_ stack: TestStack, _ entity: String) throws -> String? {
        try RawSQLite.query(stack.url.path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = '\(entity)'").first?[0]
    }

    @Test func keysAreNotReusedAfterDeletingTheLastRows() throws {
        let stack = try TestStack()
        let cars = (1...5).map { stack.insert("Car", ["name": "car \($0)"]) }
        try stack.context.save()
        stack.context.delete(cars[3])
        stack.context.delete(cars[4])
        try stack.context.save()
        // The table's largest key is now 3, Z_MAX 5: the next rows take 6, 7, 8.
        let new = (6...8).map { stack.insert("Car", ["name": "car \($0)"]) }
        try stack.context.save()
        #expect(try rows(stack, "SELECT Z_PK, ZNAME FROM ZCAR ORDER BY Z_PK")
                == [["1", "car 1"], ["2", "car 2"], ["3", "car 3"], ["6", "car 6"], ["7", "car 7"], ["8", "car 8"]])
        #expect(new.map { $0.objectID.uriRepresentation().lastPathComponent } == ["p6", "p7", "p8"])
        #expect(try zMax(stack, "Car") == "8")
        // Deleting a row in the middle changes nothing for the next ones.
        stack.context.delete(cars[1])
        stack.insert("Car", ["name": "car 9"])
        try stack.context.save()
        #expect(try rows(stack, "SELECT Z_PK FROM ZCAR ORDER BY Z_PK").map { $0[0] } == ["1", "3", "6", "7", "8", "9"])
        #expect(try zMax(stack, "Car") == "9")
    }

    @Test func entitiesOfOneHierarchyShareTheirTableAndSequence() throws {
        let stack = try TestStack()
        let truck = stack.model.entitiesByName["Truck"]!.layout.entityNumber
        let bike = stack.model.entitiesByName["Bike"]!.layout.entityNumber
        stack.insert("Truck", ["load": 1.5])
        stack.insert("Bike", ["load": 2])
        stack.insert("Car", ["name": "a car between"])
        stack.insert("Bike", ["load": 3])
        stack.insert("Truck", ["load": 4.5])
        try stack.context.save()
        #expect(try rows(stack, "SELECT Z_PK, Z_ENT, Z_OPT FROM ZVEHICLE ORDER BY Z_PK")
                == [["1", "\(truck)", "1"], ["2", "\(bike)", "1"], ["3", "\(bike)", "1"], ["4", "\(truck)", "1"]])
        #expect(try rows(stack, "SELECT Z_PK, ZNAME FROM ZCAR") == [["1", "a car between"]])
        #expect(try zMax(stack, "Vehicle") == "4")
        #expect(try zMax(stack, "Car") == "1")
        // Read back as the entities they were saved as, with their values.
        let other = try stack.reopen()
        let vehicles = try other.fetch("Vehicle") { $0.sortDescriptors = [NSSortDescriptor(key: "wheels", ascending: true)] }
        #expect(vehicles.map { $0.entity.name! }.sorted() == ["Bike", "Bike", "Truck", "Truck"])
        let trucks = try other.fetch("Truck").map { $0.value(forKey: "load") as? Double }
        #expect(trucks.compactMap { $0 }.sorted() == [1.5, 4.5])
    }

    @Test func keysObtainedBeforeTheSaveAreKept() throws {
        let stack = try TestStack()
        let first = stack.insert("Car", ["name": "first"])
        let second = stack.insert("Car", ["name": "second"])
        try stack.context.obtainPermanentIDs(for: [second])
        let third = stack.insert("Car", ["name": "third"])
        try stack.context.save()
        #expect(try rows(stack, "SELECT Z_PK, ZNAME FROM ZCAR ORDER BY Z_PK") == [["1", "second"], ["2", "first"], ["3", "third"]])
        #expect([first, second, third].map { $0.objectID.uriRepresentation().lastPathComponent } == ["p2", "p1", "p3"])
        #expect(try zMax(stack, "Car") == "3")
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
        let saved = ["a", "jump", "b"].map { other.insert("Car", ["name": $0]) }
        #expect(!store.writeLock.withLock { store.implicitKeysRefused })
        try other.context.save()
        #expect(store.writeLock.withLock { store.implicitKeysRefused }) // the save fell back
        #expect(try rows(stack, "SELECT Z_PK, ZNAME FROM ZCAR ORDER BY Z_PK")
                == [["1", "existing"], ["2", "a"], ["3", "jump"], ["4", "b"], ["1000", "extra"]])
        #expect(saved.map { $0.objectID.uriRepresentation().lastPathComponent } == ["p2", "p3", "p4"])
        #expect(try zMax(stack, "Car") == "4")
        // Later saves of that store bind their keys (the table's largest is no guide to them).
        other.insert("Car", ["name": "c"])
        try other.context.save()
        #expect(try rows(stack, "SELECT Z_PK FROM ZCAR WHERE ZNAME = 'c'") == [["5"]])
        #expect(try zMax(stack, "Car") == "5")
        // The saved rows read back through the store's own cache and from disk alike.
        let third = try other.context.existingObject(with: saved[2].objectID)
        #expect(third.value(forKey: "name") as? String == "b")
        #expect(try stack.reopen().fetch("Car").count == 6)
    }
}
