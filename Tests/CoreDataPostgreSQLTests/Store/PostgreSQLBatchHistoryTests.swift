import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// Persistent history and remote change notifications of batch requests on the PostgreSQL store:
/// the SQLite store's cases and expectations (`HistoryBatchTests`): one transaction per request
/// that changed rows, one change per row (cascades and nullified to-ones too), written in the
/// request's transaction, and a `NOTIFY` that other coordinators post.
@Suite("PostgreSQL batch requests' history", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLBatchHistoryTests {
    /// `Folder` with `notes` under `rule`; `Note` (unique by title; title and created kept in
    /// tombstones); `Label` without relationships (its batch delete is one `DELETE`), whose
    /// kept values are of several types.
    static func model(rule: NSDeleteRule = .nullifyDeleteRule) -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, kept: Bool = false) -> NSAttributeDescription {
            let a = NSAttributeDescription()
            a.name = name
            a.attributeType = type
            a.preservesValueInHistoryOnDeletion = kept
            return a
        }
        let folder = NSEntityDescription(); folder.name = "Folder"
        let note = NSEntityDescription(); note.name = "Note"
        let label = NSEntityDescription(); label.name = "Label"
        let notes = NSRelationshipDescription(), owner = NSRelationshipDescription()
        notes.name = "notes"; notes.destinationEntity = note; notes.maxCount = 0; notes.deleteRule = rule
        owner.name = "folder"; owner.destinationEntity = folder; owner.maxCount = 1
        notes.inverseRelationship = owner; owner.inverseRelationship = notes
        note.properties = [attribute("title", .stringAttributeType, kept: true), attribute("body", .stringAttributeType),
                           attribute("created", .dateAttributeType, kept: true), owner]
        note.uniquenessConstraints = [["title"]]
        folder.properties = [attribute("name", .stringAttributeType), notes]
        label.properties = [attribute("text", .stringAttributeType, kept: true), attribute("rank", .integer64AttributeType, kept: true),
                            attribute("weight", .doubleAttributeType, kept: true), attribute("data", .binaryDataAttributeType, kept: true),
                            attribute("uuid", .UUIDAttributeType, kept: true), attribute("cost", .decimalAttributeType, kept: true),
                            attribute("flag", .booleanAttributeType, kept: true)]
        let model = NSManagedObjectModel()
        model.entities = [folder, note, label]
        return model
    }

    static var tracking: [AnyHashable: Any] { [NSPersistentHistoryTrackingKey: true as NSNumber] }

    static func stack(rule: NSDeleteRule = .nullifyDeleteRule, options: [AnyHashable: Any]? = tracking) throws -> PostgreSQLBatchStack {
        try PostgreSQLBatchStack(model: model(rule: rule), options: options)
    }

    static func history(after token: NSPersistentHistoryToken?, in stack: PostgreSQLBatchStack) throws -> [NSPersistentHistoryTransaction] {
        let result = try #require(try stack.context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: token)) as? NSPersistentHistoryResult)
        return try #require(result.result as? [NSPersistentHistoryTransaction])
    }

    static func historyRowCounts(_ stack: PostgreSQLBatchStack) throws -> [String] {
        try stack.rows("""
            SELECT (SELECT count(*) FROM "ATRANSACTION"), (SELECT count(*) FROM "ACHANGE"), \
            (SELECT string_agg("Z_MAX"::text, ',' ORDER BY "Z_ENT") FROM "Z_PRIMARYKEY" WHERE "Z_ENT" IN (16001, 16002))
            """)[0]
    }

    @Test func aBatchInsertRecordsOneTransactionWithAnInsertPerRow() throws {
        let stack = try Self.stack()
        stack.context.transactionAuthor = "importer"
        stack.context.name = "import context"
        let request = NSBatchInsertRequest(entityName: "Label", objects: (1...3).map { ["text": "l\($0)", "rank": $0] })
        request.resultType = .objectIDs
        let ids = try #require((try stack.context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])

        let transactions = try Self.history(after: nil, in: stack)
        try #require(transactions.count == 1)
        #expect(transactions[0].author == "importer" && transactions[0].contextName == "import context")
        #expect(transactions[0].changes?.map(\.changeType) == [.insert, .insert, .insert])
        #expect(transactions[0].changes?.map(\.changedObjectID) == ids)
        let label = try stack.rows("SELECT \"Z_ENT\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = 'Label'")[0][0]
        #expect(try stack.rows("""
            SELECT "Z_PK", "Z_ENT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS", "ZTOMBSTONE0" FROM "ACHANGE" ORDER BY 1
            """) == [
            ["1", "16001", "0", label, "1", "1", "NULL", "NULL"],
            ["2", "16001", "0", label, "2", "1", "NULL", "NULL"],
            ["3", "16001", "0", label, "3", "1", "NULL", "NULL"],
        ])
        #expect(try Self.historyRowCounts(stack) == ["1", "3", "3,1"])
    }

    @Test func anUpsertRecordsAnUpdateOfTheRowThatWasThere() throws {
        let stack = try Self.stack()
        stack.insert("Note", ["title": "A", "body": "old"])
        try stack.context.save()
        let token = stack.coordinator.currentPersistentHistoryToken(fromStores: nil)
        let request = NSBatchInsertRequest(entityName: "Note", objects: [["title": "A", "body": "new"], ["title": "B", "body": "b"], ["title": "B", "body": "b2"]])
        _ = try stack.context.execute(request)

        let transactions = try Self.history(after: token, in: stack)
        #expect(transactions.count == 1)
        let changes = try #require(transactions.first?.changes)
        #expect(changes.map(\.changeType) == [.insert, .update])
        #expect(changes.map { $0.changedObjectID.primaryKey } == [2, 1])
        #expect(Set(changes[1].updatedProperties?.map(\.name) ?? []) == ["body", "created"])
    }

    @Test func aBatchUpdateRecordsItsRowsAndItsPropertiesAndMergesIntoAnotherContext() throws {
        let stack = try Self.stack()
        let notes = (1...3).map { stack.insert("Note", ["title": "n\($0)", "body": "b"]) }
        try stack.context.save()
        let view = stack.newContext()
        let seen = try notes.map { try view.existingObject(with: $0.objectID) }
        #expect(seen.map { $0.value(forKey: "body") as? String } == ["b", "b", "b"])
        let token = stack.coordinator.currentPersistentHistoryToken(fromStores: nil)

        let request = NSBatchUpdateRequest(entityName: "Note")
        request.propertiesToUpdate = ["body": "changed"]
        request.predicate = NSPredicate(format: "title != %@", "n2")
        _ = try stack.newContext().execute(request)

        let transactions = try Self.history(after: token, in: stack)
        let changes = try #require(transactions.first?.changes)
        #expect(transactions.count == 1)
        #expect(changes.map(\.changeType) == [.update, .update])
        #expect(changes.map(\.changedObjectID) == [notes[0].objectID, notes[2].objectID])
        #expect(changes.allSatisfy { $0.updatedProperties?.map(\.name) == ["body"] })
        view.mergeChanges(fromContextDidSave: transactions[0].objectIDNotification())
        #expect(seen.map { $0.value(forKey: "body") as? String } == ["changed", "b", "changed"])
    }

    @Test func aBatchDeleteRecordsDeletesWithTombstonesOfEveryType() throws {
        let stack = try Self.stack()
        let uuid = UUID()
        let data = Data((0..<100).map { UInt8($0) }) // long enough for PostgreSQL's base64 to wrap lines
        let values: [String: Any] = ["text": "l2", "rank": 2, "weight": 0.1, "data": data, "uuid": uuid,
                                     "cost": Decimal(string: "1.25")!, "flag": true]
        let labels = [stack.insert("Label", ["text": "l1", "rank": 1]), stack.insert("Label", values), stack.insert("Label", ["text": "l3", "rank": 3])]
        try stack.context.save()
        let token = stack.coordinator.currentPersistentHistoryToken(fromStores: nil)

        // Label has no relationships: the delete is one DELETE, its history one INSERT … SELECT.
        let request = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Label"))
        request.fetchRequest.predicate = NSPredicate(format: "rank >= 2")
        _ = try stack.newContext().execute(request)

        let transactions = try Self.history(after: token, in: stack)
        let changes = try #require(transactions.first?.changes)
        #expect(changes.map(\.changeType) == [.delete, .delete])
        #expect(changes.map(\.changedObjectID) == [labels[1].objectID, labels[2].objectID])
        let kept = try #require(changes.first?.tombstone)
        #expect(kept["text"] as? String == "l2" && kept["rank"] as? Int64 == 2 && kept["weight"] as? Double == 0.1)
        #expect(kept["data"] as? Data == data && kept["uuid"] as? UUID == uuid && kept["cost"] as? Decimal == Decimal(string: "1.25")!)
        #expect(kept["flag"] as? Bool == true)
        #expect(changes[1].tombstone?["text"] as? String == "l3")
        // As a save's delete keeps them.
        let saved = stack.insert("Label", values)
        try stack.context.save()
        let afterSave = stack.coordinator.currentPersistentHistoryToken(fromStores: nil)
        stack.context.delete(saved)
        try stack.context.save()
        let fromSave = try #require(try Self.history(after: afterSave, in: stack).first?.changes?.first?.tombstone)
        #expect(NSDictionary(dictionary: fromSave) == NSDictionary(dictionary: kept))
    }

    /// A folder with two notes, deleted by ID with `folder.notes` under `rule`: the IDs of the
    /// folder and its notes, and the changes the batch delete recorded.
    private func deleteAFolderOfTwoNotes(rule: NSDeleteRule) throws -> (ids: [NSManagedObjectID], changes: [NSPersistentHistoryChange]) {
        let stack = try Self.stack(rule: rule)
        let folder = stack.insert("Folder", ["name": "Inbox"])
        let notes = ["x", "y"].map { stack.insert("Note", ["title": $0, "folder": folder]) }
        try stack.context.save()
        let token = stack.coordinator.currentPersistentHistoryToken(fromStores: nil)
        _ = try stack.context.execute(NSBatchDeleteRequest(objectIDs: [folder.objectID]))
        return ([folder.objectID] + notes.map(\.objectID), try #require(try Self.history(after: token, in: stack).first?.changes))
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
        let stack = try Self.stack()
        stack.insert("Note", ["title": "A"])
        stack.insert("Note", ["title": "B"])
        try stack.context.save()
        let before = try Self.historyRowCounts(stack)
        #expect(before == ["1", "2", "2,1"])

        let insert = NSBatchInsertRequest(entityName: "Label", objects: [["text": "ok"], ["text": 5]])
        #expect(throws: NSError.self) { try stack.context.execute(insert) }
        let update = NSBatchUpdateRequest(entityName: "Note")
        update.propertiesToUpdate = ["title": "same"]
        #expect(throws: NSError.self) { try stack.context.execute(update) }
        update.propertiesToUpdate = ["body": "x"]
        update.predicate = NSPredicate(format: "title == %@", "none")
        _ = try stack.context.execute(update)
        _ = try stack.context.execute(NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Label")))

        #expect(try Self.historyRowCounts(stack) == before)
        #expect(try stack.rows("SELECT count(*) FROM \"ZLABEL\"") == [["0"]])
    }

    @Test func afterAFullPurgeABatchNumbersItsChangesAfterTheLastOnesHandedOut() throws {
        let stack = try Self.stack()
        stack.insert("Label", ["text": "a"])
        stack.insert("Label", ["text": "b"])
        try stack.context.save()
        _ = try stack.context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: .distantFuture))
        #expect(try Self.historyRowCounts(stack) == ["0", "0", "2,1"])
        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Label", objects: [["text": "c"]]))
        stack.insert("Label", ["text": "d"])
        try stack.context.save()
        #expect(try stack.rows("SELECT \"Z_PK\", \"ZTRANSACTIONID\" FROM \"ACHANGE\" ORDER BY 1") == [["3", "2"], ["4", "3"]])
        #expect(try Self.historyRowCounts(stack) == ["2", "2", "4,3"])
    }

    @Test func withoutTheKeyABatchWritesNoHistory() throws {
        let stack = try Self.stack(options: nil)
        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Label", objects: [["text": "a"]]))
        #expect(try stack.rows("SELECT to_regclass('\"ACHANGE\"') IS NULL") == [["t"]])
    }

    @Test func eachBatchRequestIsPostedToAnotherCoordinatorWithItsToken() throws {
        let stack = try Self.stack()
        let observer = try stack.database.coordinator(stack.model, options: [
            NSPersistentHistoryTrackingKey: true as NSNumber, NSPersistentStoreRemoteChangeNotificationPostOptionKey: true as NSNumber,
        ])
        let recorder = PostgreSQLRemoteChangeRecorder(observer)
        func lastToken() throws -> NSPersistentHistoryToken { try #require(stack.coordinator.currentPersistentHistoryToken(fromStores: nil)) }

        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Label", objects: [["text": "a", "rank": 1], ["text": "b", "rank": 2]]))
        #expect(recorder.wait(forToken: try lastToken()))
        let update = NSBatchUpdateRequest(entityName: "Label")
        update.propertiesToUpdate = ["rank": NSExpression(format: "rank + 10")]
        _ = try stack.context.execute(update)
        #expect(recorder.wait(forToken: try lastToken()))
        _ = try stack.context.execute(NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Label")))
        #expect(recorder.wait(forToken: try lastToken()))
        #expect(try Self.history(after: nil, in: stack).map { $0.changes?.map(\.changeType) } == [[.insert, .insert], [.update, .update], [.delete, .delete]])
        withExtendedLifetime(observer) {}
    }

    @Test func aModelThatKeepsMoreValuesAddsTheirTombstoneColumns() throws {
        // A first model keeps nothing: the history tables have no tombstone column.
        let plain = Self.model()
        for entity in plain.entities {
            for case let attribute as NSAttributeDescription in entity.properties { attribute.preservesValueInHistoryOnDeletion = false }
        }
        let first = try PostgreSQLBatchStack(model: plain, options: Self.tracking)
        first.insert("Label", ["text": "l1"])
        try first.context.save()
        // The next version keeps values (migrated to): its saves and history fetches need the columns.
        let connection = try LibPQConnection(url: first.database.url, password: nil)
        try connection.transaction {
            let metadata = try PostgreSQLStore.readMetadata(connection, location: "")
            try PostgreSQLStore.migrate(on: connection, from: plain, to: Self.model(), metadata: metadata)
        }
        connection.close()
        let coordinator = try first.database.coordinator(Self.model(), options: Self.tracking)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let label = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Label")).first)
        context.delete(label)
        try context.save()
        let request = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
        let result = try #require(try context.execute(request) as? NSPersistentHistoryResult)
        let transactions = try #require(result.result as? [NSPersistentHistoryTransaction])
        #expect(transactions.last?.changes?.first?.tombstone?["text"] as? String == "l1")
    }
}
