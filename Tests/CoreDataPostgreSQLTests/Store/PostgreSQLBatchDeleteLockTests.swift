import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// A batch delete whose delete rules write rows of other tables, and a save of those rows on
/// another server at the same time: they wait for each other and never deadlock
/// (`PostgreSQLStore+BatchDeleteLocks.swift`); the later one meets the earlier one's changes.
@Suite("PostgreSQL batch delete locks", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLBatchDeleteLockTests {
    /// Ann (30) owns cars "a" and "b". One server batch-deletes Ann, whose cars' owner the
    /// nullify rule clears (one `UPDATE` of `ZCAR`, "a" then "b"); another changes Ann's age and
    /// renames "b" in one save (which locks "b", then Ann: `ZCAR` comes before `ZPERSON`). A
    /// trigger on `ZCAR` holds the first of the two to update a car at a gate (an advisory lock
    /// the test holds, the car's row locked) until the other waits for a row too. Written in the
    /// rules' order, the batch delete would hold Ann and "a" at the gate while the save held "b"
    /// and waited for Ann: a deadlock once the gate opens and the delete goes on to "b". Returns
    /// the save's error (`nil` if it saved), the people and cars (name, owner cleared) left, and
    /// the deadlocks the server counted.
    private func crossing(batchFirst: Bool, policy: Any) throws -> (error: NSError?, people: [[String?]], cars: [[String?]], deadlocks: Int?) {
        let database = try TemporaryDatabase()
        let (saving, deleting) = try database.contextsOfTwoCoordinators(PostgreSQLTestModel.make())
        try saving.performAndWait {
            saving.mergePolicy = policy
            let ann = saving.insert("Person", ["name": "Ann", "age": 30])
            saving.insert("Car", ["name": "a", "owner": ann])
            saving.insert("Car", ["name": "b", "owner": ann])
            try saving.save()
            ann.setValue(31, forKey: "age")
            try saving.objects("Car", "name == 'b'")[0].setValue("B", forKey: "name")
        }
        let errors = Locked<[String: NSError]>([:])
        let save = TemporaryDatabase.atGate(saving, "save", errors) { try saving.save() }
        let delete = TemporaryDatabase.atGate(deleting, "delete", errors) {
            let request = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<any NSFetchRequestResult>(entityName: "Person"))
            request.fetchRequest.predicate = NSPredicate(format: "name == %@", "Ann")
            _ = try deleting.execute(request)
        }
        try database.runAtGate(on: "ZCAR", batchFirst ? [delete, save] : [save, delete])
        let found = errors.withLock { $0 }
        #expect(found["delete"] == nil, "the batch delete failed: \(String(describing: found["delete"]))")
        return (found["save"], try database.query("SELECT \"ZNAME\", \"ZAGE\" FROM \"ZPERSON\""),
                try database.query("SELECT \"ZNAME\", \"ZOWNER\" IS NULL FROM \"ZCAR\" ORDER BY \"Z_PK\""),
                try database.deadlocksCounted(removingTheStoresOf: [saving, deleting]))
    }

    /// The save first: it holds both rows at the gate, the batch delete waits, then deletes Ann
    /// as the save left her and clears her car's owner.
    @Test func aBatchDeleteWaitsForASaveOfTheRowsItsRulesReach() throws {
        let (error, people, cars, deadlocks) = try crossing(batchFirst: false, policy: NSErrorMergePolicy)
        #expect(error == nil)
        #expect(people == [])
        #expect(cars == [["a", "t"], ["B", "t"]])
        #expect(deadlocks == 0)
    }

    /// The batch delete first: it holds Ann's row and her cars' at the gate (the cars locked
    /// before either is written), the save waits, then meets Ann deleted and the car changed: a
    /// merge conflict, resolved by the save's merge policy. (Under the overwrite policy the save
    /// now fails with 133010, its car pointing at the Ann the policy dropped: the merge policy's
    /// matter, not the lock order's, so only the lock order is checked there.)
    @Test(arguments: [("error", ["a", "b"]), ("objectTrump", ["a", "B"]), ("storeTrump", ["a", "B"]), ("overwrite", nil), ("rollback", ["a", "b"])])
    func aSaveWaitsForABatchDeleteOfTheRowsItsRulesReach(_ name: String, _ carNames: [String]?) throws {
        let policy = TemporaryDatabase.mergePolicy(named: name)
        let (error, people, cars, deadlocks) = try crossing(batchFirst: true, policy: policy)
        #expect(deadlocks == 0)
        #expect(people == [], "a save can't revive a person the batch delete removed")
        guard let carNames else { return }
        #expect(cars.map { $0[0] } == carNames)
        #expect(cars.map { $0[1] } == ["t", "t"], "the cars' owner cleared")
        if name == "error" {
            #expect(error?.code == NSManagedObjectMergeError)
        } else {
            #expect(error == nil)
        }
    }

    /// The rows a batch delete's rules will write, found before it writes: the people deleted,
    /// their cars (`Person.cars` cascades), and the songs whose playlist is cleared (nullify);
    /// not another person's car, nor rows the rules leave alone.
    @Test func theRowsTheRulesReachAreTheOnesTheyWrite() throws {
        let stack = try PostgreSQLBatchStack()
        let ann = stack.insert("Person", ["name": "Ann"]), bob = stack.insert("Person", ["name": "Bob"])
        for (name, owner) in [("a1", ann), ("a2", ann), ("b1", bob)] { stack.insert("Car", ["name": name, "owner": owner]) }
        let list = stack.insert("Playlist", ["title": "p"])
        stack.insert("Song", ["playlist": list])
        stack.insert("Song", [:])
        try stack.context.save()
        let store = try #require(stack.coordinator.persistentStores.first as? PostgreSQLStore)
        func reached(_ objects: [NSManagedObject]) throws -> [String: [Int64]] {
            let keys = objects.map { FetchedKey(entity: $0.entity, primaryKey: $0.objectID.primaryKey!) }
            let rows = try store.inTransaction { connection in
                try store.schema.rowsReachedByDeleteRules(keys, root: objects[0].entity.rootEntity, using: store.deleteStatements(on: connection))
            }
            return Dictionary(uniqueKeysWithValues: rows.values.map { ($0.root.name!, $0.keys.sorted()) })
        }
        #expect(try reached([ann]) == ["Person": [1], "Car": [1, 2]])
        #expect(try reached([ann, bob]) == ["Person": [1, 2], "Car": [1, 2, 3]])
        #expect(try reached([list]) == ["Playlist": [1], "Song": [1]])
    }
}
