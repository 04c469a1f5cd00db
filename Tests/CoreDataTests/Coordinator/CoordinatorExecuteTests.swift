import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `NSPersistentStoreCoordinator.execute(_:with:)`, as apps call it for batch deletes, and the
/// coordinator's value-returning `performAndWait` and `async` `perform`.
@Suite struct CoordinatorExecuteTests {
    private func stackWithCars(_ names: [String]) throws -> TestStack {
        let stack = try TestStack()
        for name in names { stack.insert("Car", ["name": name]) }
        try stack.context.save()
        return stack
    }

    @Test func aBatchDeleteThroughTheCoordinatorDeletesAndReturnsItsResult() throws {
        let stack = try stackWithCars(["a", "b", "c"])
        let request = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Car"))
        request.resultType = .resultTypeObjectIDs
        let result = try stack.coordinator.execute(request, with: stack.context) as? NSBatchDeleteResult
        #expect((result?.result as? [NSManagedObjectID])?.count == 3)
        #expect(try stack.rows("SELECT count(*) FROM ZCAR") == [["0"]])

        let count = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Car"))
        count.resultType = .resultTypeCount
        #expect((try stack.coordinator.execute(count, with: stack.context) as? NSBatchDeleteResult)?.result as? Int == 0)
    }

    @Test func batchInsertUpdateAndHistoryRequestsReturnTheirResults() throws {
        let stack = try TestStack(options: [NSPersistentHistoryTrackingKey: true as NSNumber])
        let insert = NSBatchInsertRequest(entityName: "Car", objects: [["name": "x"], ["name": "y"]])
        insert.resultType = .count
        #expect((try stack.coordinator.execute(insert, with: stack.context) as? NSBatchInsertResult)?.result as? Int == 2)
        let update = NSBatchUpdateRequest(entityName: "Car")
        update.propertiesToUpdate = ["year": 1999]
        update.resultType = .updatedObjectsCountResultType
        #expect((try stack.coordinator.execute(update, with: stack.context) as? NSBatchUpdateResult)?.result as? Int == 2)
        let history = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
        let transactions = (try stack.coordinator.execute(history, with: stack.context) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction]
        #expect(transactions?.count == 2)
    }

    /// A fetch returns the stores' rows as the context registers them, without its unsaved
    /// changes (as a fetch with `includesPendingChanges` false), in each result type.
    @Test func aFetchReturnsTheStoresRowsWithoutUnsavedChanges() throws {
        let stack = try stackWithCars(["saved"])
        stack.insert("Car", ["name": "unsaved"])
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        let objects = try stack.coordinator.execute(request, with: stack.context) as? [NSManagedObject]
        #expect(objects?.map { $0.value(forKey: "name") as? String } == ["saved"])
        #expect(objects?.first?.managedObjectContext === stack.context)
        #expect(request.includesPendingChanges) // the caller's request is left as it was
        #expect(try stack.context.fetch(request).count == 2)

        let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Car")
        ids.resultType = .managedObjectIDResultType
        #expect((try stack.coordinator.execute(ids, with: stack.context) as? [NSManagedObjectID]) == objects?.map(\.objectID))
        let count = NSFetchRequest<NSNumber>(entityName: "Car")
        count.resultType = .countResultType
        #expect((try stack.coordinator.execute(count, with: stack.context) as? [NSNumber])?.map(\.intValue) == [1])
        let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Car")
        dictionaries.resultType = .dictionaryResultType
        dictionaries.propertiesToFetch = ["name"]
        #expect((try stack.coordinator.execute(dictionaries, with: stack.context) as? [NSDictionary])?.map { $0["name"] as? String } == ["saved"])
    }

    /// The request's type parameter does not limit what comes back: its `resultType` decides, as
    /// with Apple's untyped method.
    @Test func theResultTypeDecidesWhateverTheRequestsTypeParameter() throws {
        let stack = try stackWithCars(["a"])
        let ids = NSFetchRequest<NSManagedObject>(entityName: "Car")
        ids.resultType = .managedObjectIDResultType
        #expect((try stack.coordinator.execute(ids, with: stack.context) as? [NSManagedObjectID])?.count == 1)
        let count = NSFetchRequest<NSManagedObject>(entityName: "Car")
        count.resultType = .countResultType
        #expect((try stack.coordinator.execute(count, with: stack.context) as? [NSNumber]) == [1])
    }

    /// A fetch reads only the stores of its `affectedStores` (through the coordinator, and
    /// through the context's own `fetch` and `count`).
    @Test func aFetchReadsOnlyItsAffectedStores() throws {
        let stack = try TestStack()
        let first = stack.coordinator.persistentStores[0]
        let second = try stack.coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        for (name, store) in [("a", first), ("b", second), ("c", second)] {
            let insert = NSBatchInsertRequest(entityName: "Car", objects: [["name": name]])
            insert.affectedStores = [store]
            try stack.context.execute(insert)
        }
        func names(_ stores: [NSPersistentStore]?) throws -> [String] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            request.affectedStores = stores
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let objects = try #require(try stack.coordinator.execute(request, with: stack.context) as? [NSManagedObject])
            #expect(try stack.context.fetch(request) == objects)
            #expect(try stack.context.count(for: request) == objects.count)
            return objects.compactMap { $0.value(forKey: "name") as? String }
        }
        #expect(try names(nil) == ["a", "b", "c"])
        #expect(try names([first]) == ["a"])
        #expect(try names([second]) == ["b", "c"])
        let other = try TestStack()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.affectedStores = [other.coordinator.persistentStores[0]]
        #expect { try stack.context.fetch(request) } throws: { error in
            (error as NSError).localizedDescription.contains("among the request's affectedStores")
        }
    }

    @Test func aContextOfAnotherCoordinatorOrASaveRequestIsRefusedAndNothingRuns() throws {
        let stack = try stackWithCars(["kept"])
        let other = try TestStack()
        let delete = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Car"))
        #expect { try stack.coordinator.execute(delete, with: other.context) } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSCoreDataError
                && error.localizedDescription.contains("another persistent store coordinator")
        }
        #expect(try stack.rows("SELECT count(*) FROM ZCAR") == [["1"]])
        let bare = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        #expect { try stack.coordinator.execute(delete, with: bare) } throws: { error in
            (error as NSError).localizedDescription.contains("has no persistent store coordinator")
        }

        stack.insert("Car", ["name": "pending"])
        let save = NSSaveChangesRequest(inserted: stack.context.insertedObjects, updated: nil, deleted: nil, locked: nil)
        #expect { try stack.coordinator.execute(save, with: stack.context) } throws: { error in
            (error as NSError).code == NSPersistentStoreUnsupportedRequestTypeError
        }
        #expect(try stack.rows("SELECT count(*) FROM ZCAR") == [["1"]])
    }

    @Test func performAndWaitReturnsTheBlocksValueOrThrowsItsError() throws {
        let stack = try TestStack()
        let coordinator = stack.coordinator
        #expect(coordinator.performAndWait { coordinator.persistentStores.count } == 1)
        struct Refused: Error {}
        #expect(throws: Refused.self) { try coordinator.performAndWait { () throws -> Int in throw Refused() } }
    }

    /// `performAndWait` runs on the coordinator's queue: after the blocks given before, and at
    /// once when called from one of the coordinator's blocks.
    @Test func performAndWaitRunsAfterTheBlocksGivenBeforeAndNestsInThem() throws {
        let stack = try TestStack()
        let coordinator = stack.coordinator
        let order = LockedList()
        coordinator.perform {
            Thread.sleep(forTimeInterval: 0.05)
            order.append("first")
            coordinator.performAndWait { order.append("nested in perform") }
        }
        let value = coordinator.performAndWait { () -> Int in
            order.append("second")
            return coordinator.performAndWait { order.append("nested in performAndWait"); return 7 }
        }
        #expect(value == 7)
        #expect(order.items == ["first", "nested in perform", "second", "nested in performAndWait"])
    }

    /// Code a save runs while it holds the coordinator (a merge policy resolving a conflict) may
    /// call `performAndWait`: it runs at once, even with a block queued behind the save.
    @Test(.timeLimit(.minutes(1))) func performAndWaitFromAMergePolicyDuringASaveRunsAtOnce() throws {
        final class Policy: NSMergePolicy, @unchecked Sendable {
            var coordinator: NSPersistentStoreCoordinator?
            let order = LockedList()
            override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
                let order = self.order
                coordinator?.perform { order.append("queued") } // waits for the save to end
                Thread.sleep(forTimeInterval: 0.02)
                coordinator?.performAndWait { order.append("in the policy") }
                try super.resolve(optimisticLockingConflicts: list)
            }
        }
        let stack = try stackWithCars(["a"])
        let car = try stack.fetch("Car")[0]
        car.setValue("mine", forKey: "name")
        let other = stack.newContext()
        try other.performAndWait {
            try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))[0].setValue("theirs", forKey: "name")
            try other.save()
        }
        let policy = Policy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
        policy.coordinator = stack.coordinator
        stack.context.mergePolicy = policy
        try stack.context.save()
        stack.coordinator.performAndWait {}
        #expect(policy.order.items == ["in the policy", "queued"])
        #expect(try stack.rows("SELECT ZNAME FROM ZCAR") == [["mine"]])
    }

    @Test func asyncPerformRunsAfterTheBlocksGivenBeforeAndReturnsTheValue() async throws {
        let stack = try TestStack()
        let coordinator = stack.coordinator
        let order = LockedList()
        // The fire-and-forget `perform` (from synchronous code: in an async context the `async`
        // one is chosen, as with Apple's overloads).
        func enqueue() { coordinator.perform { Thread.sleep(forTimeInterval: 0.05); order.append("first") } }
        enqueue()
        let count = await coordinator.perform { order.append("second"); return coordinator.persistentStores.count }
        #expect(count == 1)
        #expect(order.items == ["first", "second"])
        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await coordinator.perform { () throws -> Int in throw Refused() } }
    }
}

/// Strings appended from several queues.
private final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ item: String) { lock.withLock { list.append(item) } }
    var items: [String] { lock.withLock { list } }
}
