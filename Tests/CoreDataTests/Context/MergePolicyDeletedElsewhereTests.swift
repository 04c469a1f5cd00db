import Foundation
import Testing
@testable import CoreData

/// A save whose objects point at an object another context deleted, under each merge policy
/// that resolves conflicts: the save succeeds, the deleted object leaves the context, and the
/// objects that pointed at it no longer do (`NSManagedObjectContext+Conflicts.swift`).
@Suite("Merge policies and objects deleted elsewhere")
struct MergePolicyDeletedElsewhereTests {
    static let policies: [String: NSMergePolicyType] = [
        "objectTrump": .mergeByPropertyObjectTrumpMergePolicyType, "storeTrump": .mergeByPropertyStoreTrumpMergePolicyType,
        "overwrite": .overwriteMergePolicyType, "rollback": .rollbackMergePolicyType,
    ]

    /// An `owner` entity's object named "P" and two `member` objects named `names`, linked by the
    /// members' `link`, saved; another context deletes the owner; this context renames the owner
    /// "Q" and the first member (its name + "2"), and saves under `policy`.
    private func saveAfterDeleteElsewhere(_ kind: TestStoreKind, _ policy: String, owner: String, member: String,
                                          name: String, link: String, names: [String]) throws -> (TestStack, NSManagedObject, [NSManagedObject]) {
        let stack = try TestStack(kind)
        let root = stack.insert(owner, [name: "P"])
        let members = names.map { stack.insert(member, [name: $0, link: root]) }
        try stack.context.save()
        let other = try stack.reopen()
        other.context.delete(try other.fetch(owner)[0])
        try other.context.save()

        root.setValue("Q", forKey: name)
        members[0].setValue(names[0] + "2", forKey: name)
        stack.context.mergePolicy = NSMergePolicy(merge: Self.policies[policy]!)
        try stack.context.save()
        #expect(root.managedObjectContext == nil)
        #expect(!stack.context.hasChanges)
        return (stack, root, members)
    }

    /// A person and her cars "a" and "b" (cascade); another context deletes her, and her cars with
    /// her; this context, which changed her and car "a", saves.
    @Test(arguments: TestStoreKind.available, policies.keys.sorted())
    func cascadeDeletedElsewhere(_ kind: TestStoreKind, _ policy: String) throws {
        let (stack, _, cars) = try saveAfterDeleteElsewhere(kind, policy, owner: "Person", member: "Car", name: "name", link: "owner", names: ["a", "b"])
        #expect(cars[0].managedObjectContext == nil)
        #expect(try stack.rawRows("SELECT count(*) FROM \"ZPERSON\"") == [["0"]])
        #expect(try stack.rawRows("SELECT count(*) FROM \"ZCAR\"") == [["0"]])
    }

    /// A playlist and its songs "s" and "t" (nullify); another context deletes the playlist, which
    /// takes the songs out of it; this context, which changed the playlist and song "s", saves:
    /// "s" keeps its change (but under rollback) and no longer points at the playlist (before,
    /// overwrite failed with 133010 and the others left "t" pointing at it).
    @Test(arguments: TestStoreKind.available, policies.keys.sorted())
    func nullifiedElsewhere(_ kind: TestStoreKind, _ policy: String) throws {
        let (stack, _, songs) = try saveAfterDeleteElsewhere(kind, policy, owner: "Playlist", member: "Song", name: "title", link: "playlist", names: ["s", "t"])
        #expect(songs.allSatisfy { $0.value(forKey: "playlist") == nil })
        let kept = policy == "rollback" ? "s" : "s2"
        #expect(try stack.rawRows("SELECT \"ZTITLE\", \"ZPLAYLIST\" FROM \"ZSONG\" ORDER BY \"Z_PK\"") == [[kept, nil], ["t", nil]])
        #expect(try stack.rawRows("SELECT count(*) FROM \"ZPLAYLIST\"") == [["0"]])
    }
}
