import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// An upsert (a batch insert with a uniqueness constraint) that updates stored rows, and a save
/// of those rows on another server at the same time: they wait for each other and never
/// deadlock (`PostgreSQLStore+UpsertLocks.swift`); the later one meets the earlier one's changes.
@Suite("PostgreSQL upsert locks", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLUpsertLockTests {
    /// `Item`: a unique `code`, a `value` and a `blob`.
    static func model() -> NSManagedObjectModel {
        let item = NSEntityDescription()
        item.name = "Item"
        let code = NSAttributeDescription(), value = NSAttributeDescription(), blob = NSAttributeDescription()
        code.name = "code"
        code.attributeType = .stringAttributeType
        value.name = "value"
        value.attributeType = .integer64AttributeType
        blob.name = "blob"
        blob.attributeType = .binaryDataAttributeType
        item.properties = [code, value, blob]
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

    /// Items "c0"…"c9" saved, then upserted in reverse order with "c10"…"c13" and a large blob
    /// each, the store sending `rowsPerStatement` rows a statement (the lock step's matching and
    /// locking too): the rows the upsert leaves.
    private func upsert(rowsPerStatement: Int) throws -> (keys: [Int64], rows: [[String?]]) {
        let database = try TemporaryDatabase()
        let coordinator = try database.coordinator(Self.model())
        let store = try #require(coordinator.persistentStores.first as? PostgreSQLStore)
        store.batchRowsPerStatement = rowsPerStatement
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let keys = try context.performAndWait { () throws -> [Int64] in
            for number in 0..<10 { context.insert("Item", ["code": "c\(number)", "value": number]) }
            try context.save()
            let blob = Data(repeating: 7, count: 256 << 10)
            let request = NSBatchInsertRequest(entityName: "Item", objects: (0..<14).reversed().map { number in
                ["code": "c\(number)", "value": 100 + number, "blob": blob + Data([UInt8(number)])]
            })
            request.resultType = .objectIDs
            let ids = (try context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID]
            return (ids ?? []).compactMap(\.primaryKey)
        }
        let rows = try database.query("SELECT \"Z_PK\", \"Z_OPT\", \"ZCODE\", \"ZVALUE\", length(\"ZBLOB\"), get_byte(\"ZBLOB\", length(\"ZBLOB\") - 1) FROM \"ZITEM\" ORDER BY \"Z_PK\"")
        return (keys, rows)
    }

    /// An upsert whose lock step is split across several statements (`PostgreSQLStore+UpsertLocks.swift`)
    /// updates and inserts as one that sends them all at once.
    @Test func anUpsertLocksItsRowsInChunks() throws {
        let chunked = try upsert(rowsPerStatement: 3)
        #expect(chunked.keys == [11, 12, 13, 14] + (1...10).reversed())
        // Keys 1…10: c0…c9 updated; 11…14: c13…c10 inserted in the request's order.
        let expected: [[String?]] = (1...14).map { key in
            let number = key <= 10 ? key - 1 : 24 - key
            return [String(key), key <= 10 ? "2" : "1", "c\(number)", String(100 + number), String((256 << 10) + 1), String(number)]
        }
        #expect(chunked.rows == expected)
        let whole = try upsert(rowsPerStatement: 4096)
        #expect(whole.keys == chunked.keys && whole.rows == chunked.rows)
    }
}
