import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// An upsert (a batch insert with a uniqueness constraint) that updates stored rows, and a save
/// of those rows on another server at the same time: they wait for each other and never
/// deadlock (`PostgreSQLStore+UpsertLocks.swift`); the later one meets the earlier one's changes.
@Suite("PostgreSQL upsert locks", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLUpsertLockTests {
    /// `Item`: a unique `code` and a `value`.
    private static func model() -> NSManagedObjectModel {
        let item = NSEntityDescription()
        item.name = "Item"
        let code = NSAttributeDescription(), value = NSAttributeDescription()
        code.name = "code"
        code.attributeType = .stringAttributeType
        value.name = "value"
        value.attributeType = .integer64AttributeType
        item.properties = [code, value]
        item.uniquenessConstraints = [["code"]]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }

    /// Items "a" (key 1) and "b" (key 2), value 0. One server upserts "b" then "a" with value 9
    /// (updating both, in that order); another sets both values to 1 in one save (which locks
    /// "a", then "b"). A trigger on `ZITEM` holds the first of the two to update an item at a gate
    /// until the other waits for a row too. Updating in the request's order, the upsert would hold
    /// "b" at the gate while the save held "a" and waited for "b": a deadlock once the gate opens,
    /// and a batch insert is never run again after one (134030). Returns the save's error (`nil`
    /// if it saved), the items' codes and values, and the deadlocks the server counted.
    private func crossing(upsertFirst: Bool, policy: Any) throws -> (error: NSError?, items: [[String?]], deadlocks: Int?) {
        let database = try TemporaryDatabase()
        let model = Self.model()
        let (saving, upserting) = try database.contextsOfTwoCoordinators(model)
        try saving.performAndWait {
            saving.mergePolicy = policy
            saving.insert("Item", ["code": "a", "value": 0])
            saving.insert("Item", ["code": "b", "value": 0])
            try saving.save()
            for item in try saving.objects("Item") { item.setValue(1, forKey: "value") }
        }
        let errors = Locked<[String: NSError]>([:])
        let save = TemporaryDatabase.atGate(saving, "save", errors) { try saving.save() }
        let upsert = TemporaryDatabase.atGate(upserting, "upsert", errors) {
            _ = try upserting.execute(NSBatchInsertRequest(entityName: "Item", objects: [["code": "b", "value": 9], ["code": "a", "value": 9]]))
        }
        try database.runAtGate(on: "ZITEM", upsertFirst ? [upsert, save] : [save, upsert])
        let found = errors.withLock { $0 }
        #expect(found["upsert"] == nil, "the upsert failed: \(String(describing: found["upsert"]))")
        return (found["save"], try database.query("SELECT \"ZCODE\", \"ZVALUE\" FROM \"ZITEM\" ORDER BY \"Z_PK\""),
                try database.deadlocksCounted(removingTheStoresOf: [saving, upserting]))
    }

    /// The save first: it holds both rows at the gate; the upsert waits, then writes over it.
    @Test func anUpsertWaitsForASaveOfTheRowsItUpdates() throws {
        let (error, items, deadlocks) = try crossing(upsertFirst: false, policy: NSErrorMergePolicy)
        #expect(error == nil)
        #expect(items == [["a", "9"], ["b", "9"]])
        #expect(deadlocks == 0)
    }

    /// The upsert first: it holds both rows at the gate (locked before it updates either); the
    /// save waits, then meets both changed: a merge conflict, resolved by its merge policy.
    @Test(arguments: [("error", "9"), ("objectTrump", "1"), ("storeTrump", "9"), ("overwrite", "1"), ("rollback", "9")])
    func aSaveWaitsForAnUpsertOfTheRowsItChanges(_ name: String, _ value: String) throws {
        let policy = TemporaryDatabase.mergePolicy(named: name)
        let (error, items, deadlocks) = try crossing(upsertFirst: true, policy: policy)
        #expect(deadlocks == 0)
        #expect(items == [["a", value], ["b", value]])
        if name == "error" {
            #expect(error?.code == NSManagedObjectMergeError)
        } else {
            #expect(error == nil)
        }
    }
}
