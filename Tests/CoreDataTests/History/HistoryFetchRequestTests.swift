import Foundation
import Testing
@testable import CoreData

/// History requests filtered by `NSPersistentHistoryTransaction.fetchRequest` and
/// `NSPersistentHistoryChange.fetchRequest`.
@Suite struct HistoryFetchRequestTests {
    /// Three saves by "importer", "editor", "importer": two inserts, an update, a delete.
    private func stack() throws -> (TestStack, NSManagedObject) {
        let stack = try TestStack(model: HistoryTestModel.make(), options: HistoryTestModel.tracking)
        stack.context.transactionAuthor = "importer"
        let note = stack.insert("Note", ["title": "a"])
        stack.insert("Folder", ["name": "f"])
        try stack.context.save()
        stack.context.transactionAuthor = "editor"
        note.setValue("b", forKey: "title")
        try stack.context.save()
        stack.context.transactionAuthor = "importer"
        stack.context.delete(note)
        try stack.context.save()
        return (stack, note)
    }

    private func result(_ request: NSPersistentHistoryChangeRequest, _ stack: TestStack) throws -> Any? {
        try #require(try stack.context.execute(request) as? NSPersistentHistoryResult).result
    }

    @Test func theEntitiesAreApples() {
        #expect(NSPersistentHistoryTransaction.entityDescription?.name == "Transaction")
        #expect(NSPersistentHistoryChange.entityDescription?.name == "Change")
        #expect(Set(NSPersistentHistoryTransaction.entityDescription?.propertiesByName.keys.map { $0 } ?? [])
                == ["author", "bundleID", "contextName", "processID", "timestamp", "token", "transactionNumber"])
        #expect(Set(NSPersistentHistoryChange.entityDescription?.propertiesByName.keys.map { $0 } ?? [])
                == ["changeID", "changeType", "changedEntity", "changedObjectID"])
        #expect(NSPersistentHistoryTransaction.fetchRequest?.entityName == "Transaction")
    }

    @Test func aTransactionPredicateAndLimitSelectTransactions() throws {
        let (stack, _) = try stack()
        let transactions = try #require(NSPersistentHistoryTransaction.fetchRequest)
        transactions.predicate = NSPredicate(format: "author == %@", "importer")
        let request = NSPersistentHistoryChangeRequest.fetchHistory(withFetchRequest: transactions)
        let found = try #require(try result(request, stack) as? [NSPersistentHistoryTransaction])
        #expect(found.map(\.transactionNumber) == [1, 3])
        transactions.predicate = NSPredicate(format: "transactionNumber > 1")
        transactions.fetchLimit = 1
        let after = NSPersistentHistoryChangeRequest.fetchHistory(after: Date.distantPast)
        after.fetchRequest = transactions
        #expect((try result(after, stack) as? [NSPersistentHistoryTransaction])?.map(\.transactionNumber) == [2])
    }

    @Test func aChangePredicateSelectsChangesAndTheirTransactions() throws {
        let (stack, note) = try stack()
        let changes = try #require(NSPersistentHistoryChange.fetchRequest)
        changes.predicate = NSPredicate(format: "changeType == %d AND changedObjectID == %@", NSPersistentHistoryChangeType.delete.rawValue, note.objectID)
        let request = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
        request.fetchRequest = changes
        let found = try #require(try result(request, stack) as? [NSPersistentHistoryTransaction])
        #expect(found.map(\.transactionNumber) == [3])
        #expect(found[0].changes?.map(\.changeType) == [.delete])
        let noteEntity = try #require(Int64(try stack.rows("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Note'")[0][0]))
        changes.predicate = NSPredicate(format: "changedEntity == %lld", noteEntity)
        request.resultType = .changesOnly
        let noteChanges = try #require(try result(request, stack) as? [NSPersistentHistoryChange])
        #expect(noteChanges.map(\.changeType) == [.insert, .update, .delete])
    }

    /// A key the entity lacks (a transaction's `author` in a change's predicate, a misspelled
    /// sort key) is refused, not matched against nothing.
    @Test func aKeyTheEntityLacksIsRefused() throws {
        let (stack, _) = try stack()
        let changes = try #require(NSPersistentHistoryChange.fetchRequest)
        changes.predicate = NSPredicate(format: "changeType == 2 OR author == %@", "importer")
        let request = NSPersistentHistoryChangeRequest.fetchHistory(withFetchRequest: changes)
        let error = #expect(throws: NSError.self) { try stack.context.execute(request) }
        #expect(error?.code == NSPersistentStoreUnsupportedRequestTypeError)
        #expect(error?.localizedDescription.contains("keypath author not found in entity Change") == true)
        let transactions = try #require(NSPersistentHistoryTransaction.fetchRequest)
        transactions.sortDescriptors = [NSSortDescriptor(key: "timeStamp", ascending: false)]
        let sorted = NSPersistentHistoryChangeRequest.fetchHistory(withFetchRequest: transactions)
        let sortError = #expect(throws: NSError.self) { try stack.context.execute(sorted) }
        #expect(sortError?.localizedDescription.contains("keypath timeStamp not found in entity Transaction") == true)
        transactions.sortDescriptors = [NSSortDescriptor(key: "self", ascending: false)]
        #expect(throws: NSError.self) { try stack.context.execute(sorted) }
        transactions.sortDescriptors = [NSSortDescriptor(key: "timestamp", ascending: false)]
        transactions.predicate = NSPredicate(format: "SUBQUERY({1, 2}, $x, $x > 1).@count == 1 AND author != nil")
        #expect((try result(sorted, stack) as? [NSPersistentHistoryTransaction])?.map(\.transactionNumber) == [3, 2, 1])
    }

    @Test func aFetchRequestOfAnotherEntityIsRefused() throws {
        let (stack, _) = try stack()
        let request = NSPersistentHistoryChangeRequest.fetchHistory(withFetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Note"))
        let error = #expect(throws: NSError.self) { try stack.context.execute(request) }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSPersistentStoreUnsupportedRequestTypeError)
        #expect(error?.localizedDescription.contains("'Note'") == true)
    }
}
