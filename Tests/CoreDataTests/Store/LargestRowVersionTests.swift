import Foundation
import Testing
@testable import CoreData

/// A row whose version (`Z_OPT`) is the largest integer (another tool wrote the store): a save
/// that changes it gives it version 1, instead of stopping the process on an overflow. (A version
/// that is not an integer at all is a conflict the save reports: the row's version is not the
/// one read.)
@Suite("The largest row version and key")
struct LargestRowVersionTests {
    /// A row another tool wrote without a version (`Z_OPT` NULL) reads as version 0, and a
    /// save updates or deletes it, rather than meeting a conflict on every attempt.
    @Test func aRowWithoutAVersionIsUpdatedAndDeleted() throws {
        let first = try TestStack()
        first.insert("Car", ["name": "Old"])
        first.insert("Car", ["name": "Gone"])
        try first.context.save()
        let stack = try first.rewritten(by: "UPDATE ZCAR SET Z_OPT = NULL")
        try withExtendedLifetime(first) {
            let cars = try stack.fetch("Car") { $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: false)] }
            cars[0].setValue("New", forKey: "name")
            stack.context.delete(cars[1])
            try stack.context.save()
            #expect(try stack.rawRows("SELECT Z_OPT, ZNAME FROM ZCAR") == [["1", "New"]])
            // A batch update of such a row gives it a version too: a context that read it
            // before then meets a conflict.
            _ = try stack.rewritten(by: "UPDATE ZCAR SET Z_OPT = NULL")
        }
        let again = try first.reopen()
        let car = try #require(try again.fetch("Car").first)
        let batch = NSBatchUpdateRequest(entityName: "Car")
        batch.propertiesToUpdate = ["name": "Batch"]
        try again.context.execute(batch)
        #expect(try again.rawRows("SELECT Z_OPT, ZNAME FROM ZCAR") == [["1", "Batch"]])
        car.setValue("Mine", forKey: "name")
        #expect(throws: NSError.self) { try again.context.save() }
    }

    @Test func aRowAtTheLargestVersionIsSavedWithVersionOne() throws {
        let first = try TestStack()
        first.insert("Car", ["name": "Old"])
        first.insert("Person", ["name": "Ada"])
        try first.context.save()
        let stack = try first.rewritten(by: "UPDATE ZCAR SET Z_OPT = 9223372036854775807; UPDATE ZPERSON SET Z_OPT = 9223372036854775807")
        try withExtendedLifetime(first) {
            let car = try #require(try stack.fetch("Car").first)
            car.setValue("New", forKey: "name")
            try stack.context.save()
            #expect(try stack.rawRows("SELECT Z_OPT, ZNAME FROM ZCAR") == [["1", "New"]])
            // The context holds the version the store wrote: the next save finds no conflict.
            car.setValue("Newer", forKey: "name")
            try stack.context.save()
            #expect(try stack.rawRows("SELECT Z_OPT, ZNAME FROM ZCAR") == [["2", "Newer"]])
            // A relationship change of a row at the largest version too.
            let ada = try #require(try stack.fetch("Person").first)
            car.setValue(ada, forKey: "owner")
            try stack.context.save()
            #expect(try stack.rawRows("SELECT Z_OPT FROM ZPERSON") == [["1"]])
        }
    }

    /// A `Z_MAX` at (or one short of) the largest integer: the table's keys have run out, so a
    /// save or a batch insert of a new row throws 134030 and writes nothing.
    @Test(arguments: ["9223372036854775807", "9223372036854775806"])
    func keysThatRunOutAreAnError(zMax: String) throws {
        let first = try TestStack()
        first.insert("Car", ["name": "Old"])
        try first.context.save()
        let stack = try first.rewritten(by: "UPDATE Z_PRIMARYKEY SET Z_MAX = \(zMax) WHERE Z_NAME = 'Car'")
        try withExtendedLifetime(first) {
            stack.insert("Car", ["name": "New"])
            stack.insert("Car", ["name": "Newer"])
            let error = try #require(throws: NSError.self) { try stack.context.save() }
            #expect(error.code == 134030)
            #expect(error.localizedDescription.contains("run out"))
            stack.context.rollback()
            let batch = NSBatchInsertRequest(entityName: "Car", objects: [["name": "Batch"], ["name": "Batch 2"]])
            let batchError = try #require(throws: NSError.self) { try stack.context.execute(batch) }
            #expect(batchError.code == 134030)
            #expect(try stack.storedCarNames() == ["Old"])
            #expect(try stack.rawRows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Car'") == [[zMax]])
        }
    }

    /// A `Z_MAX` that is NULL hands out no keys: a save of a new row throws 134030, on SQLite and
    /// PostgreSQL (where keys below 1 were handed out before).
    @Test(arguments: TestStoreKind.available)
    func aMissingMaximumIsAnError(kind: TestStoreKind) throws {
        let first = try TestStack(kind)
        first.insert("Car", ["name": "Old"])
        try first.context.save()
        let stack: TestStack
        if let database = first.database {
            _ = try database.query("UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = NULL WHERE \"Z_NAME\" = 'Car'")
            stack = try first.reopen()
        } else {
            stack = try first.rewritten(by: "UPDATE Z_PRIMARYKEY SET Z_MAX = NULL WHERE Z_NAME = 'Car'")
        }
        try withExtendedLifetime(first) {
            stack.insert("Car", ["name": "New"])
            let error = try #require(throws: NSError.self) { try stack.context.save() }
            #expect(error.code == 134030)
            #expect(error.localizedDescription.contains("not a number"))
            #expect(try stack.storedCarNames() == ["Old"])
        }
    }
}
