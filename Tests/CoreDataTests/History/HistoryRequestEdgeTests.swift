import Foundation
import Testing
@testable import CoreData

/// History requests at their edges: a purge with another store's token, changes filtered by
/// entity description, `.count`, tokens after a purge of everything.
@Suite("History requests: edges")
struct HistoryRequestEdgeTests {
    static func stack(_ kind: TestStoreKind) throws -> TestStack {
        try TestStack(model: HistoryTestModel.make(), options: HistoryTestModel.tracking,
                      database: kind == .postgreSQL ? try PostgreSQLTestDatabase() : nil)
    }

    static func transactions(_ request: NSPersistentHistoryChangeRequest, in stack: TestStack) throws -> [NSPersistentHistoryTransaction] {
        try #require((try stack.context.execute(request) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
    }

    /// Two saves: a folder with a note, then a second note.
    static func twoSaves(_ stack: TestStack) throws {
        let folder = stack.insert("Folder", ["name": "Inbox"])
        stack.insert("Note", ["title": "a", "folder": folder])
        try stack.context.save()
        stack.insert("Note", ["title": "b", "folder": folder])
        try stack.context.save()
    }

    @Test("A transaction fetch request's predicate compares tokens: token > %@ gives the later transactions", arguments: TestStoreKind.available)
    func aPredicateOnTokens(_ kind: TestStoreKind) throws {
        let stack = try Self.stack(kind)
        try Self.twoSaves(stack)
        stack.insert("Folder", ["name": "Later"])
        try stack.context.save()
        let all = try Self.transactions(.fetchHistory(after: nil as NSPersistentHistoryToken?), in: stack)
        #expect(all.count == 3)
        let request = try #require(NSPersistentHistoryTransaction.fetchRequest)
        request.predicate = NSPredicate(format: "token > %@", all[0].token)
        #expect(try Self.transactions(.fetchHistory(withFetchRequest: request), in: stack).map(\.transactionNumber) == [2, 3])
        request.predicate = NSPredicate(format: "token == %@", all[1].token)
        #expect(try Self.transactions(.fetchHistory(withFetchRequest: request), in: stack).map(\.transactionNumber) == [2])
        request.predicate = NSPredicate(format: "token IN %@", [all[0].token, all[2].token])
        #expect(try Self.transactions(.fetchHistory(withFetchRequest: request), in: stack).map(\.transactionNumber) == [1, 3])
        request.predicate = NSPredicate(format: "token BETWEEN %@", [all[0].token, all[1].token])
        #expect(try Self.transactions(.fetchHistory(withFetchRequest: request), in: stack).map(\.transactionNumber) == [1, 2])
        // The coordinator's current token (of its one store) too.
        let current = try #require(stack.coordinator.currentPersistentHistoryToken(fromStores: nil))
        request.predicate = NSPredicate(format: "token < %@", current)
        #expect(try Self.transactions(.fetchHistory(withFetchRequest: request), in: stack).map(\.transactionNumber) == [1, 2])
    }

    @Test("A purge with a token of another store leaves this store's history alone", arguments: TestStoreKind.available)
    func aPurgeWithAnotherStoresToken(_ kind: TestStoreKind) throws {
        let mine = try Self.stack(kind)
        let other = try Self.stack(.sqlite)
        try Self.twoSaves(mine)
        try Self.twoSaves(other)
        let othersToken = try #require(other.coordinator.currentPersistentHistoryToken(fromStores: nil))
        _ = try mine.context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: othersToken))
        let othersTransaction = try #require(try Self.transactions(.fetchHistory(after: nil as NSPersistentHistoryToken?), in: other).last)
        _ = try mine.context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: othersTransaction))
        #expect(try Self.transactions(.fetchHistory(after: nil as NSPersistentHistoryToken?), in: mine).count == 2)
        // A nil token still purges everything.
        _ = try mine.context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: nil as NSPersistentHistoryToken?))
        #expect(try Self.transactions(.fetchHistory(after: nil as NSPersistentHistoryToken?), in: mine).isEmpty)
    }

    @Test("Changes filter by entity description, and still by entity number", arguments: TestStoreKind.available)
    func changesFilterByEntityDescription(_ kind: TestStoreKind) throws {
        let stack = try Self.stack(kind)
        try Self.twoSaves(stack)
        let note = stack.model.entitiesByName["Note"]!
        func changes(_ predicate: NSPredicate) throws -> [NSPersistentHistoryChange] {
            let request = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
            request.resultType = .changesOnly
            let fetch = try #require(NSPersistentHistoryChange.fetchRequest)
            fetch.predicate = predicate
            request.fetchRequest = fetch
            return try #require((try stack.context.execute(request) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryChange])
        }
        let notes = try changes(NSPredicate(format: "changedEntity == %@ AND changeType == %d", note, NSPersistentHistoryChangeType.insert.rawValue))
        #expect(notes.count == 2 && notes.allSatisfy { $0.changedObjectID.entity.name == "Note" })
        #expect(try changes(NSPredicate(format: "changedEntity != %@", note)).allSatisfy { $0.changedObjectID.entity.name == "Folder" })
        #expect(try changes(NSPredicate(format: "changedEntity IN %@", [note, stack.model.entitiesByName["Folder"]!])).count == 4)
        // The store's entity number, as before.
        let number = try #require(notes.first).changedEntityNumber
        #expect(try changes(NSPredicate(format: "changedEntity == %lld", number)).count == 2)
    }

    @Test("A token taken before everything was purged stays current, and the current token never goes back", arguments: TestStoreKind.available)
    func aTokenBeforeAPurgeOfEverything(_ kind: TestStoreKind) throws {
        let stack = try Self.stack(kind)
        try Self.twoSaves(stack)
        let token = try #require(stack.coordinator.currentPersistentHistoryToken(fromStores: nil))
        let first = try #require(try Self.transactions(.fetchHistory(after: nil as NSPersistentHistoryToken?), in: stack).first?.token)
        _ = try stack.context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: Date.distantFuture))
        #expect(stack.coordinator.currentPersistentHistoryToken(fromStores: nil) == token)
        #expect(try Self.transactions(.fetchHistory(after: token), in: stack).isEmpty)
        // The first transaction's token missed the second, purged: it has expired.
        let error = #expect(throws: NSError.self) { try stack.context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: first)) }
        #expect(error?.code == NSPersistentHistoryTokenExpiredError)
        // After a new save, the token taken before the purge sees it.
        stack.insert("Folder", ["name": "Later"])
        try stack.context.save()
        #expect(try Self.transactions(.fetchHistory(after: token), in: stack).map(\.transactionNumber) == [3])
    }

    @Test("A did-save notification carries the history token of the save under \"newChangeToken\"", arguments: TestStoreKind.available)
    func theDidSaveNotificationCarriesTheSavesToken(_ kind: TestStoreKind) throws {
        let stack = try Self.stack(kind)
        nonisolated(unsafe) var tokens: [NSPersistentHistoryToken?] = []
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: stack.context, queue: nil) { note in
            tokens.append(note.userInfo?["newChangeToken"] as? NSPersistentHistoryToken)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try Self.twoSaves(stack)
        #expect(tokens.count == 2 && tokens.allSatisfy { $0 != nil })
        #expect(tokens.last! == stack.coordinator.currentPersistentHistoryToken(fromStores: nil))
        #expect(try Self.transactions(.fetchHistory(after: tokens[0]!), in: stack).map(\.transactionNumber) == [2])
        // Without history, no token.
        let plain = try TestStack(model: HistoryTestModel.make())
        let plainObserver = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: plain.context, queue: nil) { note in
            tokens.append(note.userInfo?["newChangeToken"] as? NSPersistentHistoryToken)
        }
        defer { NotificationCenter.default.removeObserver(plainObserver) }
        plain.insert("Folder", ["name": "a"])
        try plain.context.save()
        #expect(tokens.count == 3 && tokens.last! == nil)
    }
}

extension HistoryRequestEdgeTests {
    /// A token past every transaction the store wrote (a store restored from an older copy) has
    /// expired: a fetch after it would skip the transactions the store writes next.
    @Test("A token newer than the store has expired", arguments: TestStoreKind.available)
    func aTokenNewerThanTheStoreHasExpired(_ kind: TestStoreKind) throws {
        let stack = try Self.stack(kind)
        try Self.twoSaves(stack)
        let store = stack.coordinator.persistentStores[0]
        let future = NSPersistentHistoryToken(storeTokens: [store.identifier: 500])
        let error = #expect(throws: NSError.self) { try stack.context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: future)) }
        #expect(error?.code == NSPersistentHistoryTokenExpiredError)
    }
}

extension HistoryRequestEdgeTests {
    /// `.count` is the number of changes (in SQL without a fetch request, from the changes it
    /// keeps with one), after a date, a token or nothing.
    @Test(".count counts changes, with and without a fetch request", arguments: TestStoreKind.available)
    func countCountsChanges(_ kind: TestStoreKind) throws {
        let stack = try Self.stack(kind)
        try Self.twoSaves(stack)
        let all = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
        all.resultType = .changesOnly
        let changes = try #require((try stack.context.execute(all) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryChange])
        func count(_ request: NSPersistentHistoryChangeRequest) throws -> Int? {
            request.resultType = .count
            return (try stack.context.execute(request) as? NSPersistentHistoryResult)?.result as? Int
        }
        #expect(try count(.fetchHistory(after: nil as NSPersistentHistoryToken?)) == changes.count)
        #expect(try count(.fetchHistory(after: Date.distantPast)) == changes.count)
        let first = try #require(try Self.transactions(.fetchHistory(after: nil as NSPersistentHistoryToken?), in: stack).first)
        #expect(try count(.fetchHistory(after: first.token)) == changes.count - (first.changes?.count ?? 0))
        let inserts = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
        let fetch = try #require(NSPersistentHistoryChange.fetchRequest)
        fetch.predicate = NSPredicate(format: "changeType == %d", NSPersistentHistoryChangeType.insert.rawValue)
        inserts.fetchRequest = fetch
        #expect(try count(inserts) == changes.filter { $0.changeType == .insert }.count)
    }

    /// A transaction fetch request's sort descriptors order what it returns before its limit:
    /// "the latest transaction" (they were ignored: the oldest came back).
    @Test(arguments: TestStoreKind.available)
    func sortDescriptorsApplyBeforeTheLimit(_ kind: TestStoreKind) throws {
        let stack = try Self.stack(kind)
        try Self.twoSaves(stack)
        let request = try #require(NSPersistentHistoryTransaction.fetchRequest)
        request.fetchLimit = 1
        request.sortDescriptors = [NSSortDescriptor(key: "timestamp", ascending: false), NSSortDescriptor(key: "token", ascending: false)]
        #expect(try Self.transactions(.fetchHistory(withFetch: request), in: stack).map(\.transactionNumber) == [2])
        request.fetchLimit = 0
        request.sortDescriptors = [NSSortDescriptor(key: "token", ascending: false)]
        #expect(try Self.transactions(.fetchHistory(withFetch: request), in: stack).map(\.transactionNumber) == [2, 1])
    }

    /// A token taken before the store had any transaction is checked too: once history after
    /// it is purged, a fetch after it throws 134301 (it returned what was left, silently).
    @Test(arguments: TestStoreKind.available)
    func aTokenTakenBeforeAnyTransactionExpires(_ kind: TestStoreKind) throws {
        let stack = try Self.stack(kind)
        let first = try #require(stack.coordinator.currentPersistentHistoryToken(fromStores: nil))
        try Self.twoSaves(stack)
        #expect(try Self.transactions(.fetchHistory(after: first), in: stack).count == 2)
        let all = try Self.transactions(.fetchHistory(after: nil as NSPersistentHistoryToken?), in: stack)
        _ = try stack.context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: all[1].token))
        let error = #expect(throws: NSError.self) { try stack.context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: first)) }
        #expect(error?.code == NSPersistentHistoryTokenExpiredError)
    }
}
