import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// Two servers save a tag of the same name at once: both saves are in their transactions, held
/// at a gate before their `INSERT`s (their keys obtained before, so neither waits for the other's
/// `Z_PRIMARYKEY` row), when the gate opens; the unique index takes one row and refuses the other
/// (23505) once the first commits. The refused save meets a constraint conflict and its merge
/// policy resolves it as if the other had saved first (`UniquenessConflictAcrossStacksTests`, in
/// `CoreDataTests`, saves one after the other on SQLite and PostgreSQL).
@Suite("PostgreSQL: a uniqueness conflict between two servers' saves at once", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLUniquenessRaceTests {
    /// `Tag`: `name` (unique) and `note`.
    static func model() -> NSManagedObjectModel {
        let tag = NSEntityDescription()
        tag.name = "Tag"
        tag.properties = ["name", "note"].map { name in
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = .stringAttributeType
            return attribute
        }
        tag.uniquenessConstraints = [["name"]]
        let model = NSManagedObjectModel()
        model.entities = [tag]
        return model
    }

    @Test(arguments: ["error", "objectTrump", "storeTrump", "overwrite"])
    func twoServersSaveTheSameNameAtOnce(_ policy: String) throws {
        let database = try TemporaryDatabase()
        let (first, second) = try database.contextsOfTwoCoordinators(Self.model())
        let contexts = ["first": first, "second": second]
        let tags = try contexts.mapValues { context in
            try context.performAndWait {
                context.mergePolicy = TemporaryDatabase.mergePolicy(named: policy)
                let tag = context.insert("Tag", ["name": "red", "note": context === first ? "first" : "second"])
                try context.obtainPermanentIDs(for: [tag])
                return tag
            }
        }
        let errors = Locked<[String: NSError]>([:])
        try database.runAtGate(on: "ZTAG", event: "INSERT", contexts.keys.sorted().map { note in
            TemporaryDatabase.atGate(contexts[note]!, note, errors) { try contexts[note]!.save() }
        })
        let rows = try database.query("SELECT \"ZNAME\", \"ZNOTE\" FROM \"ZTAG\"")
        #expect(rows.count == 1)
        let failed = errors.withLock { $0 }
        // The save the index refused: its tag left its context, or (error policy) its save failed.
        let refused = contexts.keys.filter { note in
            contexts[note]!.performAndWait { failed[note] != nil || tags[note]!.managedObjectContext == nil }
        }
        try #require(refused.count == 1, "one save was refused by the unique index")
        let loser = refused[0], winner = loser == "first" ? "second" : "first"

        if policy == "error" {
            let error = try #require(failed[loser])
            #expect(error.domain == NSCocoaErrorDomain && error.code == NSManagedObjectConstraintMergeError)
            let conflicts = try #require(error.userInfo["conflictList"] as? [NSConstraintConflict])
            #expect(conflicts.count == 1 && conflicts.first?.constraintValues["name"] as? String == "red")
            #expect(failed[winner] == nil)
            #expect(rows == [["red", winner]])
            return
        }
        #expect(failed.isEmpty, "\(failed)")
        // Store trump keeps the row the first commit wrote; object trump and overwrite write the
        // refused save's values over it.
        #expect(rows == [["red", policy == "storeTrump" ? winner : loser]])
    }
}
