import Foundation
import Testing
@testable import CoreData

/// What an `NSIncrementalStore` is handed and when it is asked, as Apple's contract says: the
/// requesting context, `newValuesForObject` only when a fault fires (and before a save, for the
/// version checks), and faults of sub-entities read by their own entity.
@Suite("NSIncrementalStore: the contexts it is handed and when it is asked")
struct IncrementalStoreContractTests {
    typealias Stack = IncrementalStoreTests.Stack

    @Test("Fetches, faults and relationship loads hand the store the context that asked; a child's, its parent")
    func requestingContext() throws {
        let stack = try Stack()
        let writer = stack.context()
        let ada = stack.person("Ada", in: writer)
        _ = stack.car("Beetle", owner: ada, in: writer)
        try writer.save()

        let reader = stack.context()
        let people = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        #expect(stack.store.contexts["execute"] == ObjectIdentifier(reader))
        #expect(people.first?.value(forKey: "name") as? String == "Ada")
        #expect(stack.store.contexts["newValuesForObject"] == ObjectIdentifier(reader))
        #expect((people.first?.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 1)
        #expect(stack.store.contexts["newValueForRelationship"] == ObjectIdentifier(reader))
        // The objects the store made in the context (`context.object(with:)`) are the ones fetched.
        #expect(people.allSatisfy { reader.registeredObject(for: $0.objectID) === $0 })

        let parent = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        parent.persistentStoreCoordinator = stack.coordinator
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        let count = try child.performAndWait { try child.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).count }
        #expect(count == 1)
        #expect(stack.store.contexts["execute"] == ObjectIdentifier(parent))
    }

    @Test("A fetch returns faults: newValuesForObject runs when one fires, and around a save only for updated and deleted objects")
    func valuesWhenFaultsFire() throws {
        let stack = try Stack()
        let writer = stack.context()
        for (name, age) in [("Ada", 36), ("Bea", 22), ("Cleo", 41)] { _ = stack.person(name, age: age, in: writer) }
        try writer.save()
        func asked() -> Int { stack.store.calls["newValuesForObject"] ?? 0 }
        #expect(asked() == 0, "a save of new objects reads no node")

        // (No predicate or sort: the test store evaluates those on the objects, firing them.)
        let reader = stack.context()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        let people = try reader.fetch(request)
        #expect(people.count == 3)
        #expect(people.allSatisfy { $0.isFault })
        #expect(asked() == 0, "the store's objects are faults until used")
        #expect(people[0].value(forKey: "name") is String)
        #expect(asked() == 1)
        _ = people[0].value(forKey: "age")
        #expect(asked() == 1, "one node per fault")

        let other = stack.context()
        request.returnsObjectsAsFaults = false
        #expect(try other.fetch(request).allSatisfy { !$0.isFault })
        #expect(asked() == 4, "returnsObjectsAsFaults false asks every node with the fetch")

        // A save asks the nodes of the objects it updates or deletes (their versions), not after.
        _ = people[1].value(forKey: "name") // (deleting a fault fires it, for its delete rules)
        people[0].setValue(37, forKey: "age")
        reader.delete(people[1])
        let before = asked()
        try reader.save()
        #expect(asked() == before + 2)
        people[0].setValue(38, forKey: "age")
        try reader.save()
        #expect(asked() == before + 3, "the version the context took after its save is the node's")
    }

    @Test("A batched fetch of an abstract entity reads each object by its own entity, once")
    func batchedSubentities() throws {
        let stack = try Stack()
        let writer = stack.context()
        var first: NSManagedObject?
        for (index, entity) in ["Truck", "Bike", "Truck", "Bike", "Truck"].enumerated() {
            let vehicle = NSEntityDescription.insertNewObject(forEntityName: entity, into: writer)
            vehicle.setValue(index + 2, forKey: "wheels")
            first = first ?? vehicle
        }
        try writer.save()

        let reader = stack.context()
        // One object already loaded before the fetch is not read again with its batch.
        let loaded = reader.object(with: first!.objectID)
        #expect(loaded.value(forKey: "wheels") as? Int == 2)
        stack.store.askedEntities = []
        let request = NSFetchRequest<NSManagedObject>(entityName: "Vehicle")
        request.fetchBatchSize = 2
        let vehicles = try reader.fetch(request)
        #expect(vehicles.map { $0.entity.name ?? "?" }.sorted() == ["Bike", "Bike", "Truck", "Truck", "Truck"])
        #expect(vehicles.compactMap { $0.value(forKey: "wheels") as? Int }.sorted() == [2, 3, 4, 5, 6])
        #expect(stack.store.askedEntities.sorted() == ["Bike", "Bike", "Truck", "Truck"])
        withExtendedLifetime(loaded) {}
    }
}

/// Batch and history requests reach an `NSIncrementalStore`'s `execute(_:with:)`; its results,
/// and its errors, come back to the caller.
@Suite("NSIncrementalStore: batch and history requests")
struct IncrementalStoreBatchRequestTests {
    typealias Stack = IncrementalStoreTests.Stack

    @Test("A batch delete and a batch update are answered by the store, and their results come back")
    func batchDeleteAndUpdate() throws {
        let stack = try Stack()
        let context = stack.context()
        let people = [("Ada", 36), ("Bea", 22), ("Cleo", 41)].map { stack.person($0, age: $1, in: context) }
        try context.save()
        let executed = stack.store.calls["execute"] ?? 0

        let old = NSFetchRequest<NSFetchRequestResult>(entityName: "Person")
        old.predicate = NSPredicate(format: "age > 40")
        let delete = NSBatchDeleteRequest(fetchRequest: old)
        delete.resultType = .resultTypeObjectIDs
        let deleted = try #require(try context.execute(delete) as? NSBatchDeleteResult)
        #expect(deleted.result as? [NSManagedObjectID] == [people[2].objectID])
        #expect(stack.store.records.count == 2)
        #expect(stack.store.contexts["execute"] == ObjectIdentifier(context))

        let update = NSBatchUpdateRequest(entityName: "Person")
        update.predicate = NSPredicate(format: "age < 30")
        update.propertiesToUpdate = ["age": 23]
        update.resultType = .updatedObjectsCountResultType
        let updated = try #require(try context.execute(update) as? NSBatchUpdateResult)
        #expect(updated.result as? Int == 1)
        #expect(stack.store.records[stack.store.referenceObject(for: people[1].objectID) as! String]?.values["age"] as? Int == 23)
        #expect(stack.store.calls["execute"] == executed + 2)
    }

    @Test("A batch insert is answered by the store: its status, count or object IDs come back in an NSBatchInsertResult")
    func batchInsert() throws {
        let stack = try Stack()
        let context = stack.context()
        let cases: [(NSBatchInsertRequestResultType, [String])] = [(.statusOnly, ["Ada"]), (.count, ["Bea", "Cleo"]), (.objectIDs, ["Dora", "Eve"])]
        for (resultType, names) in cases {
            let insert = NSBatchInsertRequest(entityName: "Person", objects: names.map { ["name": $0, "age": 30] })
            insert.resultType = resultType
            let result = try #require(try context.execute(insert) as? NSBatchInsertResult)
            #expect(result.resultType == resultType)
            switch resultType {
            case .statusOnly: #expect(result.result as? Bool == true)
            case .count: #expect(result.result as? Int == 2)
            case .objectIDs:
                let ids = try #require(result.result as? [NSManagedObjectID])
                #expect(ids.allSatisfy { $0.persistentStore === stack.store && !$0.isTemporaryID })
                #expect(Set(ids.map { context.object(with: $0).value(forKey: "name") as? String }) == ["Dora", "Eve"])
            }
            #expect(stack.store.contexts["execute"] == ObjectIdentifier(context))
        }
        #expect(stack.store.calls["execute"] == 3)
        let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        #expect(Set(IncrementalStoreTests.names(people)) == ["Ada", "Bea", "Cleo", "Dora", "Eve"])
    }

    @Test("A history request is answered with transactions the store made up: its own result as it is, or the value alone, wrapped")
    func history() throws {
        let stack = try Stack()
        let context = stack.context()
        context.transactionAuthor = "importer"
        _ = stack.person("Ada", in: context)
        try context.save()
        _ = try context.execute(NSBatchInsertRequest(entityName: "Person", objects: [["name": "Bea", "age": 22]]))
        #expect(stack.store.transactions.count == 2)

        // The default result type: the store returns an NSPersistentHistoryResult of its own.
        let all = try #require(try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)) as? NSPersistentHistoryResult)
        #expect(all is DictionaryStore.HistoryResult)
        #expect(all.resultType == .transactionsAndChanges)
        let transactions = try #require(all.result as? [NSPersistentHistoryTransaction])
        #expect(transactions.map(ObjectIdentifier.init) == stack.store.transactions.map(ObjectIdentifier.init))
        #expect(transactions.map(\.transactionNumber) == [1, 2])
        #expect(transactions.allSatisfy { $0.author == "importer" && $0.storeID == stack.store.identifier && $0.changes == nil })

        // Other result types: the store returns the value, which comes back in a result of the request's type.
        let after = NSPersistentHistoryChangeRequest.fetchHistory(after: transactions[0].token)
        after.resultType = .transactionsOnly
        let later = try #require(try context.execute(after) as? NSPersistentHistoryResult)
        #expect(later.resultType == .transactionsOnly)
        #expect((later.result as? [NSPersistentHistoryTransaction])?.map(ObjectIdentifier.init) == [ObjectIdentifier(transactions[1])])
        after.resultType = .count
        let count = try #require(try context.execute(after) as? NSPersistentHistoryResult)
        #expect(count.resultType == .count && count.result as? Int == 1)
        after.resultType = .statusOnly
        let status = try #require(try context.execute(after) as? NSPersistentHistoryResult)
        #expect(status.resultType == .statusOnly && status.result as? Bool == true)
        #expect(stack.store.contexts["execute"] == ObjectIdentifier(context))
    }

    @Test("A result of the wrong kind for a batch or history request ends in 134070 naming it")
    func wrongResult() throws {
        let stack = try Stack()
        let context = stack.context()
        func refused(_ request: NSPersistentStoreRequest, answered result: Any) throws -> String {
            stack.store.nextResult = result
            let error = try #require(throws: NSError.self) { try context.execute(request) }
            #expect(error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreOperationError)
            return error.localizedDescription
        }
        let insert = NSBatchInsertRequest(entityName: "Person", objects: [["name": "Ada", "age": 30]])
        insert.resultType = .count
        let text = try refused(insert, answered: "one")
        #expect(text.contains("String") && text.contains("a count") && text.contains("NSBatchInsertResult"))
        insert.resultType = .objectIDs
        #expect(try refused(insert, answered: DictionaryStore.HistoryResult([])).contains("HistoryResult"), "another request's result")

        let history = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
        history.resultType = .transactionsOnly
        #expect(try refused(history, answered: 2).contains("[NSPersistentHistoryTransaction]"))
        #expect(stack.store.records.isEmpty)
    }

    @Test("A request the store does not answer ends in the store's own error")
    func unansweredRequest() throws {
        let stack = try Stack()
        let context = stack.context()
        // (The DictionaryStore answers batch inserts of a list of objects only.)
        let insert = NSBatchInsertRequest(entityName: "Person", dictionaryHandler: { _ in true })
        let error = try #require(throws: NSError.self) { try context.execute(insert) }
        #expect(error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreInvalidTypeError, "the DictionaryStore's error")
        #expect(stack.store.calls["execute"] == 1)
    }
}
