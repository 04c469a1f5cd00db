import Foundation
import Testing
@testable import CoreData

/// A car whose `willSave` keeps its owner's denormalised count of cars (in `age`), as real apps
/// keep counters: the owner changes during the save, after the first round of `willSave`.
final class CountingCar: NSManagedObject {
    override func willSave() {
        guard let owner = value(forKey: "owner") as? NSManagedObject, !owner.isDeleted else { return }
        let count = (owner.value(forKey: "cars") as? Set<NSManagedObject>)?.filter { !$0.isDeleted }.count ?? 0
        if owner.value(forKey: "age") as? Int != count { owner.setValue(count, forKey: "age") }
    }
}

/// A person whose `willSave` records its calls and the count it saw, and may keep changing itself.
final class CountedPerson: NSManagedObject {
    var seenCounts: [Int] = []
    /// Set by a test: a `willSave` that changes the object every time (a bug Apple warns about).
    var changesItselfEveryTime = false
    /// Whether `willSave` sets `name` once, the first time, if it is still "unnamed".
    var namesItselfOnce = false

    override func willSave() {
        seenCounts.append(value(forKey: "age") as? Int ?? -1)
        if changesItselfEveryTime { setValue((value(forKey: "age") as? Int ?? 0) + 1, forKey: "age") }
        if namesItselfOnce, value(forKey: "name") as? String == "unnamed" { setValue("named", forKey: "name") }
    }
}

/// `willSave` runs again for objects changed by other objects' `willSave` (or their own), pass
/// after pass until nothing new changes, as on Apple platforms (issue 21, B3).
@Suite("willSave, pass after pass")
struct WillSaveRepetitionTests {
    private func stack() throws -> TestStack { try TestStack(classes: ["Car": CountingCar.self, "Person": CountedPerson.self]) }

    /// The app renames a car only; the car's `willSave` corrects its owner's stale counter, and
    /// the owner, changed by nobody else, gets its own `willSave` in the next pass.
    @Test func anObjectAnotherObjectsWillSaveChangedGetsItsOwnWillSave() throws {
        let stack = try stack()
        let first = stack.insert("Person", ["name": "Ada"]) as! CountedPerson
        stack.insert("Car", ["name": "x", "owner": first])
        try stack.context.save()
        #expect(try stack.rows("SELECT ZAGE FROM ZPERSON") == [["1"]])
        try RawSQLite.execute(stack.url.path, "UPDATE ZPERSON SET ZAGE = 7") // a stale counter

        let context = stack.newContext()
        let car = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).first)
        let person = try #require(car.value(forKey: "owner") as? CountedPerson)
        car.setValue("x2", forKey: "name")
        try context.save()
        #expect(person.seenCounts == [1], "called once, after the car's willSave changed it")
        #expect(try stack.rows("SELECT ZAGE FROM ZPERSON") == [["1"]])
        #expect(!context.hasChanges)
    }

    @Test func aDeletedObjectsWillSaveMayChangeAnotherObject() throws {
        let stack = try stack()
        let person = stack.insert("Person", ["name": "Ada"]) as! CountedPerson
        for name in ["x", "y"] { stack.insert("Car", ["name": name, "owner": person]) }
        try stack.context.save()
        #expect(person.seenCounts.last == 2)
        person.seenCounts = []
        stack.context.delete(try stack.fetch("Car").first!)
        try stack.context.save()
        #expect(person.seenCounts.last == 1, "\(person.seenCounts)")
        #expect(try stack.rows("SELECT ZAGE FROM ZPERSON") == [["1"]])
    }

    @Test func anObjectThatChangesItselfInWillSaveGetsWillSaveAgain() throws {
        let stack = try stack()
        let person = stack.insert("Person", ["name": "unnamed"]) as! CountedPerson
        person.namesItselfOnce = true
        try stack.context.save()
        #expect(person.seenCounts.count == 2, "again after its own change, then no more")
        #expect(try stack.rows("SELECT ZNAME FROM ZPERSON") == [["named"]])
    }

    @Test func aWillSaveThatNeverStopsChangingFailsTheSaveWithNothingWritten() throws {
        let stack = try stack()
        let person = stack.insert("Person", ["name": "Ada"]) as! CountedPerson
        try stack.context.save()
        person.changesItselfEveryTime = true
        person.setValue("Ada Lovelace", forKey: "name")
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.localizedDescription.contains("willSave"))
        #expect(person.seenCounts.count == 1 + 100, "one pass in the first save, then Apple's limit of 100 passes")
        #expect(try stack.rows("SELECT ZNAME, ZAGE FROM ZPERSON") == [["Ada", "0"]], "nothing was written")
        #expect(stack.context.hasChanges)
    }
}
