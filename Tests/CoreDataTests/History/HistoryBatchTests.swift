import Foundation
import Testing
@testable import CoreData

/// Persistent history of batch requests: one transaction per request that changed rows, one
/// change per row (cascades and nullified to-ones too), written in the request's transaction.
@Suite struct HistoryBatchTests {
    /// ``HistoryTestModel`` with a `Label` entity that has no relationships (its batch delete is
    /// one `DELETE`), notes unique by title (a batch insert upserts) and `folder.notes` under `rule`.
    private func stack(rule: NSDeleteRule = .nullifyDeleteRule, options: [AnyHashable: Any]? = HistoryTestModel.tracking) throws -> TestStack {
        let model = HistoryTestModel.make()
        let label = NSEntityDescription(); label.name = "Label"
        let text = attribute("text", .stringAttributeType)
        text.preservesValueInHistoryOnDeletion = true
        label.properties = [text, attribute("rank", .integer64AttributeType)]
        model.entities += [label]
        model.entitiesByName["Note"]!.uniquenessConstraints = [["title"]]
        (model.entitiesByName["Folder"]!.propertiesByName["notes"] as! NSRelationshipDescription).deleteRule = rule
        return try TestStack(model: model, options: options)
    }

    private func history(after token: NSPersistentHistoryToken?, in stack: TestStack) throws -> [NSPersistentHistoryTransaction] {
        let result = try #require(try stack.context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: token)) as? NSPersistentHistoryResult)
        return try #require(result.result as? [NSPersistentHistoryTransaction])
    }

    private func historyRowCounts(_ stack: TestStack) throws -> [String] {
        try stack.rows("SELECT (SELECT count(*) FROM ATRANSACTION), (SELECT count(*) FROM ACHANGE), (SELECT group_concat(Z_MAX) FROM Z_PRIMARYKEY WHERE Z_ENT IN (16001, 16002))")[0]
    }

    @Test func aBatchInsertRecordsOneTransactionWithAnInsertPerRow() throws {
        let stack = try stack()
        stack.context.transactionAuthor = "importer"
        stack.context.name = "import context"
        let request = NSBatchInsertRequest(entityName: "Label", objects: (1...3).map { ["text": "l\($0)", "rank": $0] })
        request.resultType = .objectIDs
        let ids = try #require((try stack.context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])

        let transactions = try history(after: nil, in: stack)
        try #require(transactions.count == 1)
        #expect(transactions[0].author == "importer" && transactions[0].contextName == "import context")
        #expect(transactions[0].changes?.map(\.changeType) == [.insert, .insert, .insert])
        #expect(transactions[0].changes?.map(\.changedObjectID) == ids)
        let label = try stack.rows("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Label'")[0][0]
        #expect(try stack.rows("SELECT Z_PK, Z_ENT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS, ZTOMBSTONE0 FROM ACHANGE ORDER BY Z_PK") == [
            ["1", "16001", "0", label, "1", "1", "NULL", "NULL"],
            ["2", "16001", "0", label, "2", "1", "NULL", "NULL"],
            ["3", "16001", "0", label, "3", "1", "NULL", "NULL"],
        ])
        #expect(try historyRowCounts(stack) == ["1", "3", "3,1"]) // Z_MAX of CHANGE and TRANSACTION
    }

    @Test func anUpsertRecordsAnUpdateOfTheRowThatWasThere() throws {
        let stack = try stack()
        stack.insert("Note", ["title": "A", "body": "old"])
        try stack.context.save()
        let token = stack.coordinator.currentPersistentHistoryToken(fromStores: nil)
        let request = NSBatchInsertRequest(entityName: "Note", objects: [["title": "A", "body": "new"], ["title": "B", "body": "b"], ["title": "B", "body": "b2"]])
        _ = try stack.context.execute(request)

        let transactions = try history(after: token, in: stack)
        #expect(transactions.count == 1)
        let changes = try #require(transactions.first?.changes)
        // B is inserted (its second row updated the row just inserted: still an insert); A was
        // there: an update of what the upsert wrote, every attribute but the constrained title.
        #expect(changes.map(\.changeType) == [.insert, .update])
        #expect(changes.map { $0.changedObjectID.primaryKey } == [2, 1])
        #expect(Set(changes[1].updatedProperties?.map(\.name) ?? []) == ["body", "created"])
    }

    @MainActor
    @Test func aBatchUpdateRecordsItsRowsAndItsPropertiesAndMergesIntoAViewContext() throws {
        let stack = try stack()
        let notes = (1...3).map { stack.insert("Note", ["title": "n\($0)", "body": "b"]) }
        try stack.context.save()
        let view = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        view.persistentStoreCoordinator = stack.coordinator
        let seen = try notes.map { try view.existingObject(with: $0.objectID) }
        #expect(seen.map { $0.value(forKey: "body") as? String } == ["b", "b", "b"])
        let token = stack.coordinator.currentPersistentHistoryToken(fromStores: nil)

        let request = NSBatchUpdateRequest(entityName: "Note")
        request.propertiesToUpdate = ["body": "changed"]
        request.predicate = NSPredicate(format: "title != %@", "n2")
        _ = try stack.newContext().execute(request)

        let transactions = try history(after: token, in: stack)
        let changes = try #require(transactions.first?.changes)
        #expect(transactions.count == 1)
        #expect(changes.map(\.changeType) == [.update, .update])
        #expect(changes.map(\.changedObjectID) == [notes[0].objectID, notes[2].objectID])
        #expect(changes.allSatisfy { $0.updatedProperties?.map(\.name) == ["body"] })
        view.mergeChanges(fromContextDidSave: transactions[0].objectIDNotification())
        #expect(seen.map { $0.value(forKey: "body") as? String } == ["changed", "b", "changed"])
    }

    @MainActor
    @Test func aBatchDeleteRecordsDeletesWithTombstonesAndTheViewContextLetsTheObjectsGo() throws {
        let stack = try stack()
        let labels = (1...3).map { stack.insert("Label", ["text": "l\($0)", "rank": $0]) }
        try stack.context.save()
        let view = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        view.persistentStoreCoordinator = stack.coordinator
        let seen = try labels.map { try view.existingObject(with: $0.objectID) }
        let token = stack.coordinator.currentPersistentHistoryToken(fromStores: nil)

        // Label has no relationships: the delete is one DELETE, its history one INSERT … SELECT.
        let request = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Label"))
        request.fetchRequest.predicate = NSPredicate(format: "rank >= 2")
        _ = try stack.newContext().execute(request)

        let transactions = try history(after: token, in: stack)
        let changes = try #require(transactions.first?.changes)
        #expect(changes.map(\.changeType) == [.delete, .delete])
        #expect(changes.map(\.changedObjectID) == [labels[1].objectID, labels[2].objectID])
        #expect(changes.map { $0.tombstone?["text"] as? String } == ["l2", "l3"])
        view.mergeChanges(fromContextDidSave: transactions[0].objectIDNotification())
        #expect(view.registeredObject(for: labels[1].objectID) == nil || seen[1].isDeleted)
        #expect(try view.fetch(NSFetchRequest<NSManagedObject>(entityName: "Label")).map(\.objectID) == [labels[0].objectID])
    }

    /// A folder with two notes, deleted by ID with `folder.notes` under `rule`: the IDs of the
    /// folder and its notes, and the changes the batch delete recorded.
    private func deleteAFolderOfTwoNotes(rule: NSDeleteRule) throws -> (ids: [NSManagedObjectID], changes: [NSPersistentHistoryChange]) {
        let stack = try stack(rule: rule)
        let folder = stack.insert("Folder", ["name": "Inbox"])
        let notes = ["x", "y"].map { stack.insert("Note", ["title": $0, "folder": folder]) }
        try stack.context.save()
        let token = stack.coordinator.currentPersistentHistoryToken(fromStores: nil)
        _ = try stack.context.execute(NSBatchDeleteRequest(objectIDs: [folder.objectID]))
        return ([folder.objectID] + notes.map(\.objectID), try #require(try history(after: token, in: stack).first?.changes))
    }

    @Test func aCascadeRecordsTheRelatedRowsDeletedToo() throws {
        let (ids, changes) = try deleteAFolderOfTwoNotes(rule: .cascadeDeleteRule)
        #expect(changes.map(\.changeType) == [.delete, .delete, .delete])
        #expect(changes.map(\.changedObjectID) == ids)
        #expect(changes.map { $0.tombstone?["title"] as? String } == [nil, "x", "y"])
    }

    @Test func aNullifiedToOneIsRecordedAsAnUpdateOfTheRelationship() throws {
        let (ids, changes) = try deleteAFolderOfTwoNotes(rule: .nullifyDeleteRule)
        #expect(changes.map(\.changeType) == [.delete, .update, .update])
        #expect(changes.map(\.changedObjectID) == ids)
        #expect(changes.dropFirst().allSatisfy { $0.updatedProperties?.map(\.name) == ["folder"] })
    }

    @Test func aBatchThatThrowsOrChangesNothingRecordsNothing() throws {
        let stack = try stack()
        stack.insert("Note", ["title": "A"])
        stack.insert("Note", ["title": "B"])
        try stack.context.save()
        let before = try historyRowCounts(stack)
        #expect(before == ["1", "2", "2,1"])

        // A row of the wrong type after one good row: the insert is refused whole.
        let insert = NSBatchInsertRequest(entityName: "Label", objects: [["text": "ok"], ["text": 5]])
        #expect(throws: NSError.self) { try stack.context.execute(insert) }
        // A batch update that breaks the uniqueness of titles.
        let update = NSBatchUpdateRequest(entityName: "Note")
        update.propertiesToUpdate = ["title": "same"]
        #expect(throws: NSError.self) { try stack.context.execute(update) }
        // A batch update and a delete that match no row.
        update.propertiesToUpdate = ["body": "x"]
        update.predicate = NSPredicate(format: "title == %@", "none")
        _ = try stack.context.execute(update)
        let delete = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Label"))
        _ = try stack.context.execute(delete)

        #expect(try historyRowCounts(stack) == before)
        #expect(try stack.rows("SELECT count(*) FROM ZLABEL") == [["0"]])
    }

    @Test func afterAFullPurgeABatchNumbersItsChangesAfterTheLastOnesHandedOut() throws {
        let stack = try stack()
        stack.insert("Label", ["text": "a"])
        stack.insert("Label", ["text": "b"])
        try stack.context.save()
        _ = try stack.context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: .distantFuture))
        #expect(try historyRowCounts(stack) == ["0", "0", "2,1"])
        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Label", objects: [["text": "c"]]))
        stack.insert("Label", ["text": "d"])
        try stack.context.save()
        // Keys go on from Z_MAX, as Apple's do: the purged changes' keys are not handed out again.
        #expect(try stack.rows("SELECT Z_PK, ZTRANSACTIONID FROM ACHANGE ORDER BY Z_PK") == [["3", "2"], ["4", "3"]])
        #expect(try historyRowCounts(stack) == ["2", "2", "4,3"])
    }

    @Test func withoutTheKeyABatchWritesNoHistory() throws {
        let stack = try stack(options: nil)
        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Label", objects: [["text": "a"]]))
        #expect(try stack.rows("SELECT count(*) FROM sqlite_master WHERE name = 'ACHANGE'") == [["0"]])
    }
}
