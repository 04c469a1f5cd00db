import Foundation
import Testing
@testable import CoreData

/// The dictionary form of `NSPersistentHistoryTrackingKey`: only the included (or not the
/// excluded) entities' changes are recorded, in saves and in batch requests; a save or batch that
/// changed none of them writes no transaction; bad options fail the open (134080).
@Suite struct HistoryTrackedEntitiesTests {
    private func stack(_ tracking: [String: Any]) throws -> TestStack {
        try TestStack(model: HistoryTestModel.make(), options: [NSPersistentHistoryTrackingKey: tracking as NSDictionary])
    }

    /// The entity numbers of the changes of each transaction, oldest first.
    private func recorded(_ stack: TestStack) throws -> [[String]] {
        let transactions = try stack.rows("SELECT Z_PK FROM ATRANSACTION ORDER BY Z_PK").map { $0[0] }
        return try transactions.map { number in
            try stack.rows("SELECT e.Z_NAME FROM ACHANGE c JOIN Z_PRIMARYKEY e ON e.Z_ENT = c.ZENTITY WHERE c.ZTRANSACTIONID = \(number) ORDER BY c.Z_PK").map { $0[0] }
        }
    }

    @Test(arguments: [[NSPersistentHistoryTrackingEntitiesToInclude: ["Note"]], [NSPersistentHistoryTrackingEntitiesToExclude: ["Folder", "Gone"]]])
    func onlyTrackedEntitiesAreRecorded(tracking: [String: [String]]) throws {
        let stack = try stack(tracking)
        let folder = stack.insert("Folder", ["name": "Inbox"])
        let note = stack.insert("Note", ["title": "a", "folder": folder])
        try stack.context.save()
        folder.setValue("Outbox", forKey: "name")
        try stack.context.save() // a folder only: no transaction
        stack.context.delete(note)
        try stack.context.save() // the note (and the folder's `notes`)
        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Folder", objects: [["name": "x"]])) // none
        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Note", objects: [["title": "b"]]))

        #expect(try recorded(stack) == [["Note"], ["Note"], ["Note"]])
        #expect(try stack.rows("SELECT ZTOMBSTONE1 FROM ACHANGE WHERE ZCHANGETYPE = 2") == [["a"]])
    }

    @Test func badOptionsFailTheOpen() throws {
        let bad: [[String: Any]] = [
            [NSPersistentHistoryTrackingEntitiesToInclude: ["Note"], NSPersistentHistoryTrackingEntitiesToExclude: ["Folder"]],
            [NSPersistentHistoryTrackingEntitiesToInclude: ["Gone"]],
            [NSPersistentHistoryTrackingEntitiesToInclude: "Note"],
            [NSPersistentHistoryTrackingEntitiesToExclude: [1]],
        ]
        for tracking in bad {
            let error = #expect(throws: NSError.self) { try stack(tracking) }
            #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSPersistentStoreOpenError)
            #expect(error?.localizedDescription.contains("NSPersistentHistoryTrackingEntitiesTo") == true)
        }
    }

    @Test func emptyListsTrackEverything() throws {
        let stack = try stack([NSPersistentHistoryTrackingEntitiesToInclude: [String](), NSPersistentHistoryTrackingEntitiesToExclude: [String]()])
        stack.insert("Folder", ["name": "Inbox"])
        try stack.context.save()
        #expect(try recorded(stack) == [["Folder"]])
    }
}
