import Foundation
import Testing
@testable import CoreData
import TestSupport

/// The SQLite store writes a save's inserts' change rows by runs of consecutive keys in one
/// table (`SQLiteHistory.recordInserts`): the rows must be those a row per insert would give, in
/// insertion order, with change keys that follow on from the last.
@Suite struct HistoryInsertRunsTests {
    /// ``HistoryTestModel`` with `Shape` and its sub-entities `Circle` and `Square` (one table),
    /// and `Cache`.
    private static func model() -> NSManagedObjectModel {
        let model = HistoryTestModel.make()
        let shape = NSEntityDescription(); shape.name = "Shape"
        let circle = NSEntityDescription(); circle.name = "Circle"
        let square = NSEntityDescription(); square.name = "Square"
        let cache = NSEntityDescription(); cache.name = "Cache"
        shape.properties = [attribute("label", .stringAttributeType)]
        cache.properties = [attribute("label", .stringAttributeType)]
        shape.subentities = [circle, square]
        model.entities += [shape, circle, square, cache]
        return model
    }

    private static func stack(excluding excluded: [String]) throws -> TestStack {
        let options: [AnyHashable: Any] = excluded.isEmpty ? HistoryTestModel.tracking
            : [NSPersistentHistoryTrackingKey: [NSPersistentHistoryTrackingEntitiesToExclude: excluded] as NSDictionary]
        return try TestStack(model: model(), options: options)
    }

    @discardableResult
    private static func insert(_ name: String, into stack: TestStack, _ text: String) -> NSManagedObject {
        stack.insert(name, [name == "Note" ? "title" : name == "Folder" ? "name" : "label": text])
    }

    /// Checks the change rows of the save that followed change key `before`: the inserts of
    /// `inserted` whose entity is not `excluded` first, in order, as (`Z_ENT`, key); then the
    /// updates and deletes; keys from `before + 1` without a gap, and `Z_MAX` at the last.
    private static func expectChanges(of inserted: [NSManagedObject], after before: Int, excluding excluded: [String],
                                      in stack: TestStack, _ comment: Comment? = nil) throws {
        let tracked = inserted.filter { !excluded.contains($0.entity.name!) }
        let expected = try tracked.map { object in
            [try stack.rows("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = '\(object.entity.name!)'")[0][0], "\(object.objectID.primaryKey!)"]
        }
        #expect(try stack.rows("SELECT ZENTITY, ZENTITYPK FROM ACHANGE WHERE Z_PK > \(before) AND ZCHANGETYPE = 0 ORDER BY Z_PK") == expected, comment)
        let all = try stack.rows("SELECT Z_PK, ZCHANGETYPE FROM ACHANGE WHERE Z_PK > \(before) ORDER BY Z_PK")
        #expect(all.map { Int($0[0])! } == Array(before + 1 ..< before + 1 + all.count), comment)
        #expect(all.prefix(tracked.count).allSatisfy { $0[1] == "0" } && all.dropFirst(tracked.count).allSatisfy { $0[1] != "0" }, comment)
        if !all.isEmpty {
            #expect(try stack.rows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 16001") == [["\(before + all.count)"]], comment)
        }
    }

    /// One save whose inserts make every kind of run: one across the three entities of one table;
    /// consecutive keys in two tables (Folder 1, Note 2), which are two runs; a key taken early,
    /// out of insertion order; increasing keys with a gap; an untracked sub-entity in a tracked
    /// table. The history fetch reads them back.
    @Test func everyKindOfRunIsRecordedInInsertionOrder() throws {
        let excluded = ["Square"]
        let stack = try Self.stack(excluding: excluded)
        Self.insert("Note", into: stack, "first")
        try stack.context.save() // Note's keys go on from 2
        let before = Int(try stack.rows("SELECT max(Z_PK) FROM ACHANGE")[0][0])!

        let inserted = ["Folder", "Note", "Circle", "Shape", "Circle", "Square", "Circle", "Shape", "Circle", "Circle", "Note"]
            .enumerated().map { Self.insert($0.element, into: stack, "\($0.offset)") }
        let dropped = Self.insert("Circle", into: stack, "dropped")
        // inserted[8] takes Shape key 1 now, out of insertion order, and the next Shape,
        // inserted[9], follows it with a gap; `dropped` takes key 2 and is deleted before the
        // save, so no row ever has key 2.
        try stack.context.obtainPermanentIDs(for: [inserted[8], dropped])
        stack.context.delete(dropped)
        try stack.context.save()

        let keys = inserted.map { $0.objectID.primaryKey! }
        #expect(keys == [1, 2, 3, 4, 5, 6, 7, 8, 1, 9, 3])
        try Self.expectChanges(of: inserted, after: before, excluding: excluded, in: stack)

        let request = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
        let transactions = (try stack.context.execute(request) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction] ?? []
        let tracked = inserted.filter { $0.entity.name != "Square" }
        #expect(transactions.count == 2)
        #expect(transactions.last?.changes?.map(\.changedObjectID) == tracked.map(\.objectID))
        #expect(transactions.last?.changes?.allSatisfy { $0.changeType == .insert } == true)
    }

    /// Random saves against the rule of a row per insert: random entities, random exclusions,
    /// keys taken early in random order, and updates and deletes after the inserts.
    @Test(arguments: 0..<40) func randomSavesGiveTheRowsOfARowPerInsert(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed) &* 7919 &+ 1)
        let names = ["Circle", "Square", "Shape", "Cache", "Note", "Folder"]
        let excluded = names.filter { _ in Int.random(in: 0..<3, using: &random) == 0 }
        let stack = try Self.stack(excluding: excluded)
        var live: [NSManagedObject] = []
        for round in 0..<6 {
            let inserted = (0..<Int.random(in: 0..<30, using: &random)).map { _ in
                Self.insert(names[Int.random(in: 0..<names.count, using: &random)], into: stack, "r\(round)")
            }
            for object in inserted.filter({ _ in Int.random(in: 0..<4, using: &random) == 0 }).shuffled(using: &random) {
                try stack.context.obtainPermanentIDs(for: [object])
            }
            for object in live.shuffled(using: &random).prefix(Int.random(in: 0..<5, using: &random)) {
                if Bool.random(using: &random) {
                    stack.context.delete(object)
                } else {
                    let name = object.entity.name!
                    object.setValue("u\(round)", forKey: name == "Note" ? "title" : name == "Folder" ? "name" : "label")
                }
            }
            let before = Int(try stack.rows("SELECT coalesce(max(Z_PK), 0) FROM ACHANGE")[0][0])!
            try stack.context.save()
            live = live.filter { !$0.isDeleted && $0.managedObjectContext != nil } + inserted
            try Self.expectChanges(of: inserted, after: before, excluding: excluded, in: stack, "seed \(seed) round \(round)")
        }
    }
}
