import Foundation
import Testing
@testable import CoreData

/// Persistent history read and purged through `NSPersistentHistoryChangeRequest`.
@Suite struct HistoryFetchTests {
    private func trackingStack() throws -> TestStack {
        try TestStack(model: HistoryTestModel.make(), options: HistoryTestModel.tracking)
    }

    private func run(_ request: NSPersistentHistoryChangeRequest, in stack: TestStack) throws -> NSPersistentHistoryResult {
        try #require(try stack.context.execute(request) as? NSPersistentHistoryResult)
    }

    private func transactions(_ request: NSPersistentHistoryChangeRequest, in stack: TestStack) throws -> [NSPersistentHistoryTransaction] {
        try #require(try run(request, in: stack).result as? [NSPersistentHistoryTransaction])
    }

    /// Three saves: insert a folder and a note (author "importer"), retitle the note, delete it.
    private func threeSaves(_ stack: TestStack) throws -> NSManagedObject {
        stack.context.name = "editor context"
        stack.context.transactionAuthor = "importer"
        let folder = stack.insert("Folder", ["name": "Inbox"])
        let note = stack.insert("Note", ["title": "Hello", "body": "b", "folder": folder])
        try stack.context.save()
        stack.context.transactionAuthor = nil
        note.setValue("Hi", forKey: "title")
        note.setValue("c", forKey: "body")
        try stack.context.save()
        stack.context.delete(note)
        try stack.context.save()
        return folder
    }

    /// A purge committed between reading the transactions and reading their changes does not
    /// leave the transactions read without their changes: both reads see one snapshot.
    @Test func aPurgeDuringAFetchLeavesTheTransactionsReadWhole() throws {
        let stack = try trackingStack()
        _ = try threeSaves(stack)
        let store = try #require(stack.coordinator.persistentStores.first as? SQLiteStore)
        nonisolated(unsafe) var purged = 0
        store.historyFetchBetweenReadsHook = { [unowned store] in
            guard purged == 0 else { return }
            purged = (try? store.deleteHistory(before: nil)) ?? -1
        }
        let all = try transactions(.fetchHistory(after: nil as NSPersistentHistoryToken?), in: stack)
        #expect(purged == 3)
        #expect(all.map { $0.changes?.count ?? -1 } == [2, 1, 2])
        #expect(try transactions(.fetchHistory(after: nil as NSPersistentHistoryToken?), in: stack).isEmpty)
    }

    @Test func aFetchReturnsEveryTransactionWithItsChanges() throws {
        let stack = try trackingStack()
        let folder = try threeSaves(stack)
        let all = try transactions(.fetchHistory(after: nil as NSPersistentHistoryToken?), in: stack)
        #expect(all.map(\.transactionNumber) == [1, 2, 3])
        #expect(all.map(\.author) == ["importer", nil, nil])
        #expect(all.allSatisfy { $0.contextName == "editor context" && $0.storeID == stack.coordinator.persistentStores[0].identifier })
        #expect(all[0].processID == ProcessInfo.processInfo.processName)
        #expect(abs(all[2].timestamp.timeIntervalSinceNow) < 60)
        let first = try #require(all[0].changes)
        #expect(first.map(\.changeType) == [.insert, .insert])
        #expect(first[0].changedObjectID == folder.objectID)
        #expect(first[0].transaction === all[0])
        #expect(first[0].updatedProperties == nil && first[0].tombstone == nil)
        let update = try #require(all[1].changes?.first)
        #expect(update.changeType == .update)
        #expect(Set(update.updatedProperties?.map(\.name) ?? []) == ["title", "body"])
        // The folder lost its note: an update of its `notes`.
        #expect(all[2].changes?.map(\.changeType) == [.update, .delete])
        #expect(all[2].changes?.first?.updatedProperties?.map(\.name) == ["notes"])
        let delete = try #require(all[2].changes?.last)
        #expect(delete.changeType == .delete)
        #expect(delete.tombstone?["title"] as? String == "Hi")
        #expect(delete.tombstone?["created"] == nil)
        #expect(delete.changedObjectID == update.changedObjectID)
    }

    @Test func aFetchAfterATokenOrATransactionReturnsWhatCameAfterIt() throws {
        let stack = try trackingStack()
        _ = try threeSaves(stack)
        let all = try transactions(.fetchHistory(after: nil as NSPersistentHistoryTransaction?), in: stack)
        #expect(try transactions(.fetchHistory(after: all[0].token), in: stack).map(\.transactionNumber) == [2, 3])
        #expect(try transactions(.fetchHistory(after: all[1]), in: stack).map(\.transactionNumber) == [3])
        let current = try #require(stack.coordinator.currentPersistentHistoryToken(fromStores: nil))
        #expect(current == all[2].token)
        #expect(try transactions(.fetchHistory(after: current), in: stack).isEmpty)
        stack.insert("Folder", ["name": "Later"])
        try stack.context.save()
        #expect(try transactions(.fetchHistory(after: current), in: stack).map(\.transactionNumber) == [4])
    }

    @Test func aFetchAfterADateReturnsTheLaterTransactions() throws {
        let stack = try trackingStack()
        _ = try threeSaves(stack)
        #expect(try transactions(.fetchHistory(after: Date.distantPast), in: stack).count == 3)
        #expect(try transactions(.fetchHistory(after: Date().addingTimeInterval(60)), in: stack).isEmpty)
        // Date is compared with the stored timestamp: move transaction 1 an hour back.
        try RawSQLite.execute(stack.url.path, "UPDATE ATRANSACTION SET ZTIMESTAMP = ZTIMESTAMP - 3600 WHERE Z_PK = 1")
        let recent = try transactions(.fetchHistory(after: Date().addingTimeInterval(-1800)), in: stack)
        #expect(recent.map(\.transactionNumber) == [2, 3])
    }

    @Test func eachResultType() throws {
        let stack = try trackingStack()
        _ = try threeSaves(stack)
        func result(_ type: NSPersistentHistoryResultType) throws -> NSPersistentHistoryResult {
            let request = NSPersistentHistoryChangeRequest.fetchHistory(after: Date.distantPast)
            request.resultType = type
            let result = try run(request, in: stack)
            #expect(result.resultType == type)
            return result
        }
        #expect(NSPersistentHistoryChangeRequest.fetchHistory(after: Date.distantPast).resultType == .transactionsAndChanges)
        #expect(try result(.statusOnly).result as? Bool == true)
        // `.count` is the number of changes, as Apple documents it ("the number of persistent history changes since…").
        #expect(try result(.count).result as? Int == 5)
        #expect((try result(.objectIDs).result as? [NSManagedObjectID])?.count == 5)
        let only = try #require(try result(.transactionsOnly).result as? [NSPersistentHistoryTransaction])
        #expect(only.count == 3 && only.allSatisfy { $0.changes == nil })
        let changes = try #require(try result(.changesOnly).result as? [NSPersistentHistoryChange])
        #expect(changes.map(\.changeType) == [.insert, .insert, .update, .update, .delete])
        #expect(changes.map { $0.transaction?.transactionNumber } == [1, 1, 2, 3, 3])
    }

    @Test func aPurgeBeforeATokenKeepsItsTransactionAndAPurgeThroughItExpiresIt() throws {
        let stack = try trackingStack()
        _ = try threeSaves(stack)
        let all = try transactions(.fetchHistory(after: Date.distantPast), in: stack)
        let purge = NSPersistentHistoryChangeRequest.deleteHistory(before: all[1].token)
        purge.resultType = .count
        #expect(try run(purge, in: stack).result as? Int == 1)
        #expect(try stack.rows("SELECT Z_PK FROM ATRANSACTION") == [["2"], ["3"]])
        #expect(try stack.rows("SELECT DISTINCT ZTRANSACTIONID FROM ACHANGE ORDER BY 1") == [["2"], ["3"]])
        // The token of transaction 2 is still good.
        #expect(try transactions(.fetchHistory(after: all[1].token), in: stack).map(\.transactionNumber) == [3])
        // Transaction 1 was purged, but nothing after it: its token still reads the whole rest.
        #expect(try transactions(.fetchHistory(after: all[0].token), in: stack).map(\.transactionNumber) == [2, 3])
        // Purged past it (transaction 2 gone too): transaction 1's token has expired.
        _ = try run(.deleteHistory(before: all[2].token), in: stack)
        let error = #expect(throws: NSError.self) { try stack.context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: all[0].token)) }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSPersistentHistoryTokenExpiredError)
        #expect(error?.localizedDescription.contains("expired") == true)
        // Everything, by date: the strings stay, as Apple's do.
        _ = try run(.deleteHistory(before: Date.distantFuture), in: stack)
        #expect(try stack.rows("SELECT (SELECT count(*) FROM ATRANSACTION), (SELECT count(*) FROM ACHANGE), (SELECT count(*) > 0 FROM ATRANSACTIONSTRING)") == [["0", "0", "1"]])
    }

    @Test func aRequestToAStoreWithoutTheKeyThrows134091() throws {
        let stack = try TestStack(model: HistoryTestModel.make())
        let error = #expect(throws: NSError.self) { try stack.context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: Date.distantPast)) }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSPersistentStoreUnsupportedRequestTypeError)
        #expect(error?.localizedDescription.contains("no history tracking option") == true)
        #expect(stack.coordinator.currentPersistentHistoryToken(fromStores: nil) == nil)
    }

    @Test func theObjectIDNotificationMergesATransactionIntoAnotherContext() throws {
        let stack = try trackingStack()
        let viewContext = stack.newContext()
        let folder = stack.insert("Folder", ["name": "Inbox"])
        try stack.context.save()
        let seen = try viewContext.existingObject(with: folder.objectID)
        #expect(seen.value(forKey: "name") as? String == "Inbox")
        let token = try #require(stack.coordinator.currentPersistentHistoryToken(fromStores: nil))
        folder.setValue("Outbox", forKey: "name")
        try stack.context.save()
        let later = try transactions(.fetchHistory(after: token), in: stack)
        let notification = try #require(later.first?.objectIDNotification())
        #expect((notification.userInfo?[NSUpdatedObjectIDsKey] as? Set<NSManagedObjectID>) == [folder.objectID])
        viewContext.mergeChanges(fromContextDidSave: notification)
        #expect(seen.value(forKey: "name") as? String == "Outbox")
    }
}
