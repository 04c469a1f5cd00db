import Foundation
import Testing
@testable import CoreData

/// A uniqueness-constraint conflict between two coordinators of one store (two processes on a
/// SQLite file, two servers on a PostgreSQL database): both insert a tag of the same name before
/// either saves, so the second reaches the unique index after the first committed. Each merge
/// policy ends the same way on both kinds of store (``TestStoreKind``).
@Suite("Uniqueness constraints: a conflict between two coordinators of one store")
struct UniquenessConflictAcrossStacksTests {
    /// `Tag`: `name` (unique), `note`, `rank`.
    static func model() -> NSManagedObjectModel {
        let tag = NSEntityDescription()
        tag.name = "Tag"
        tag.properties = [attribute("name", .stringAttributeType), attribute("note", .stringAttributeType), attribute("rank", .integer64AttributeType)]
        tag.uniquenessConstraints = [["name"]]
        let model = NSManagedObjectModel()
        model.entities = [tag]
        return model
    }

    /// The first coordinator's tag `red` (note "first", rank 1) is saved; then the second's
    /// `red` (note "second", no rank), inserted before the first save, is saved with `policy`.
    @Test(arguments: TestStoreKind.available, [NSMergePolicyType.errorMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType,
                                               .mergeByPropertyStoreTrumpMergePolicyType, .overwriteMergePolicyType])
    func secondSaveOfADuplicate(_ kind: TestStoreKind, _ policy: NSMergePolicyType) throws {
        let first = try TestStack(kind, model: Self.model())
        let second = try first.reopen()
        let stored = first.insert("Tag", ["name": "red", "note": "first", "rank": 1])
        let duplicate = second.insert("Tag", ["name": "red", "note": "second"])
        try first.context.save()
        second.context.mergePolicy = NSMergePolicy(merge: policy)
        let rows = { try first.rawRows("SELECT \"Z_PK\", \"ZNAME\", \"ZNOTE\", \"ZRANK\" FROM \"ZTAG\"") }

        guard policy != .errorMergePolicyType else {
            let error = try #require(throws: NSError.self) { try second.context.save() }
            #expect(error.domain == NSCocoaErrorDomain && error.code == NSManagedObjectConstraintMergeError)
            let conflicts = try #require(error.userInfo["conflictList"] as? [NSConstraintConflict])
            #expect(conflicts.count == 1)
            #expect(conflicts.first?.constraint == ["name"])
            #expect(conflicts.first?.constraintValues["name"] as? String == "red")
            #expect(conflicts.first?.conflictingObjects == [duplicate])
            #expect(conflicts.first?.databaseObject?.objectID.uriRepresentation() == stored.objectID.uriRepresentation())
            #expect(conflicts.first?.databaseSnapshot?["note"] as? String == "first")
            #expect(try rows() == [["1", "red", "first", "1"]], "nothing of the refused save was written")
            #expect(duplicate.isInserted, "the refused object stays to be saved")
            return
        }
        try second.context.save()
        // Object trump: the saving context's values over the stored row's, property by property
        // (the rank, which the new object does not set, is kept); overwrite: the saving
        // context's object in full (no rank); store trump: the stored row. One row either way,
        // under the first key; the duplicate leaves the saving context.
        let note = policy == .mergeByPropertyStoreTrumpMergePolicyType ? "first" : "second"
        #expect(try rows() == [["1", "red", note, policy == .overwriteMergePolicyType ? nil : "1"]])
        #expect(duplicate.managedObjectContext == nil)
        let seen = try second.fetch("Tag")
        #expect(seen.count == 1)
        #expect(seen.first?.objectID.uriRepresentation() == stored.objectID.uriRepresentation())
        #expect(seen.first?.value(forKey: "note") as? String == note)
        #expect(!second.context.hasChanges)
    }
}
