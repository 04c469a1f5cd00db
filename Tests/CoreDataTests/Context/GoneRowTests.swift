import Foundation
import Testing
@testable import CoreData

/// Keys and join rows whose destination row was deleted behind the context's back (raw SQL on
/// the file, as another program or a damaged sync would leave it), handled as Apple's framework
/// handles them: the destination of a foreign key reads as a deleted object
/// (`shouldDeleteInaccessibleFaults`), a join row without its destination is not a member, and
/// the next save writes nothing it did not change: no crash, nothing lost.
@Suite("Rows gone behind the context's back")
struct GoneRowTests {
    /// A car "c" tagged "t1" and "t2", saved; and the name of the cars-tags join table.
    static func carTaggedT1AndT2() throws -> (stack: TestStack, join: String) {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "c"])
        car.setValue(Set([stack.insert("Tag", ["label": "t1"]), stack.insert("Tag", ["label": "t2"])]), forKey: "tags")
        try stack.context.save()
        let join = try #require(try stack.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%TAGS' ESCAPE '\\'").first?.first)
        return (stack, join)
    }

    @Test func aForeignKeyToAGoneRowReadsAsADeletedObject() throws {
        let stack = try TestStack()
        let ann = stack.insert("Person", ["name": "Ann"])
        stack.insert("Car", ["name": "c", "owner": ann])
        try stack.context.save()
        try RawSQLite.execute(stack.url.path, "DELETE FROM ZPERSON")

        let reader = try stack.reopen()
        let context = reader.context
        let car = try #require(try reader.fetch("Car").first)
        let owner = try #require(car.value(forKey: "owner") as? NSManagedObject)
        #expect(owner.value(forKey: "name") == nil && owner.value(forKey: "age") == nil)
        #expect((owner.value(forKey: "cars") as? Set<NSManagedObject>)?.isEmpty == true)
        #expect(owner.isDeleted && !owner.isFault)
        #expect(context.deletedObjects == [owner], "as Apple's: in deletedObjects")
        #expect(throws: NSError.self) { try context.existingObject(with: owner.objectID) }
        #expect(car.value(forKey: "name") as? String == "c")

        // Rolled back, it is a fault again, which the store still cannot fulfill.
        context.rollback()
        #expect(owner.isFault && !owner.isDeleted && context.deletedObjects.isEmpty)
        #expect(owner.value(forKey: "name") == nil && owner.isDeleted)

        // The car saves: its key stays as it is (only what changed is written), the owner is
        // not validated, and no row is deleted for it.
        car.setValue("renamed", forKey: "name")
        try context.save()
        #expect(try stack.rows("SELECT ZNAME, ZOWNER FROM ZCAR") == [["renamed", "1"]])
        #expect(context.deletedObjects.isEmpty && owner.isDeleted && owner.managedObjectContext === context)
        // And again: the owner is still an object of the context (no false 133010).
        car.setValue(2001, forKey: "year")
        try context.save()
        // A new owner replaces the key.
        let bob = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
        bob.setValue("Bob", forKey: "name")
        car.setValue(bob, forKey: "owner")
        try context.save()
        #expect(try stack.rows("SELECT ZNAME, ZOWNER FROM ZCAR") == [["renamed", "2"]])
    }

    @Test func aJoinRowWhoseDestinationIsGoneIsNotAMember() throws {
        let (stack, join) = try Self.carTaggedT1AndT2()
        try RawSQLite.execute(stack.url.path, "DELETE FROM ZTAG WHERE ZLABEL = 't2'")

        let reader = try stack.reopen()
        let fetched = try #require(try reader.fetch("Car").first)
        func labels() -> Set<String> {
            Set(((fetched.value(forKey: "tags") as? Set<NSManagedObject>) ?? []).compactMap { $0.value(forKey: "label") as? String })
        }
        #expect(labels() == ["t1"])
        let t3 = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: reader.context)
        t3.setValue("t3", forKey: "label")
        fetched.mutableSetValue(forKey: "tags").add(t3)
        try reader.context.save()
        // The join row without its tag is left as it is, as Apple leaves it: it is no member.
        #expect(try stack.rows("SELECT count(*) FROM \(join)") == [["3"]])
        reader.context.refresh(fetched, mergeChanges: false)
        #expect(labels() == ["t1", "t3"])
        // The car's delete takes its join rows with it, that one included.
        reader.context.delete(fetched)
        try reader.context.save()
        #expect(try stack.rows("SELECT count(*) FROM \(join)") == [["0"]])
    }
}
