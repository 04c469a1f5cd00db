import CSQLite
import Foundation
import Testing
@testable import CoreData

/// Query generations: `NSQueryGenerationToken`, `setQueryGenerationFrom(_:)` and
/// `queryGenerationToken`, as Apple's header and "Accessing data when the store changes" describe them.
@Suite("Query generations")
struct QueryGenerationTests {
    /// A stack with cars "a" (2001) and "b" (2002) saved, and a second context on its coordinator.
    private func stackWithCars(options: [AnyHashable: Any]? = nil) throws -> (stack: TestStack, writer: NSManagedObjectContext) {
        let stack = try TestStack(options: options)
        stack.insert("Car", ["name": "a", "year": 2001])
        stack.insert("Car", ["name": "b", "year": 2002])
        try stack.context.save()
        return (stack, stack.newContext())
    }

    private func cars(_ context: NSManagedObjectContext, faults: Bool = false) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.sortDescriptors = [NSSortDescriptor(key: "year", ascending: true)]
        if faults { request.includesPropertyValues = false }
        return try context.fetch(request)
    }

    private func count(_ context: NSManagedObjectContext) throws -> Int {
        try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car"))
    }

    /// The other context renames "a" to "A", deletes "b" and inserts "c", and saves.
    private func changeEverything(in writer: NSManagedObjectContext) throws {
        for car in try cars(writer) {
            if car.value(forKey: "name") as? String == "a" { car.setValue("A", forKey: "name") } else { writer.delete(car) }
        }
        let new = NSEntityDescription.insertNewObject(forEntityName: "Car", into: writer)
        new.setValue("c", forKey: "name")
        new.setValue(2003, forKey: "year")
        try writer.save()
    }

    /// A PASSIVE checkpoint on a connection of its own: (frames in the log, frames checkpointed).
    private func checkpoint(_ stack: TestStack) throws -> (log: Int32, checkpointed: Int32) {
        var db: OpaquePointer?
        guard sqlite3_open(stack.url.path, &db) == SQLITE_OK else { throw CocoaError(.fileReadUnknown) }
        defer { sqlite3_close(db) }
        // A first read opens the WAL index; until then the connection does not know the file's mode.
        guard sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nil, nil, nil) == SQLITE_OK else { throw CocoaError(.fileReadUnknown) }
        var log: Int32 = 0, done: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &done)
        guard rc == SQLITE_OK else { throw NSError(domain: "checkpoint", code: Int(rc)) }
        return (log, done)
    }

    @Test func aPinnedContextSeesItsGenerationInFetchesCountsAndLaterFaults() throws {
        let (stack, writer) = try stackWithCars()
        let reader = stack.newContext()
        #expect(reader.queryGenerationToken == nil, "unpinned by default")
        try reader.setQueryGenerationFrom(.current)
        #expect(reader.queryGenerationToken != nil)
        let faults = try cars(reader, faults: true) // pins; the objects are faults without values
        #expect(faults.map(\.isFault) == [true, true])
        let ids = faults.map(\.objectID)

        try changeEverything(in: writer) // on the same coordinator: its rows go into the row cache

        // Faults fired after the save read the generation, not the newer cached rows.
        #expect(faults[0].value(forKey: "name") as? String == "a")
        #expect(faults[1].value(forKey: "name") as? String == "b", "a row deleted since is still there")
        #expect(try count(reader) == 2)
        #expect(try cars(reader).compactMap { $0.value(forKey: "name") as? String } == ["a", "b"])
        let other = stack.newContext()
        try other.setQueryGenerationFrom(reader.queryGenerationToken)
        #expect(try other.existingObject(with: ids[0]).value(forKey: "name") as? String == "a", "a fault of a new object too")

        // An unpinned context sees the latest, from the cache or the file: no old row was cached.
        let fresh = stack.newContext()
        #expect(fresh.object(with: ids[0]).value(forKey: "name") as? String == "A")
        #expect(try cars(fresh).compactMap { $0.value(forKey: "name") as? String } == ["A", "c"])

        // Moving the generation: the next reads see the latest.
        try reader.setQueryGenerationFrom(.current)
        reader.refreshAllObjects()
        #expect(faults[0].value(forKey: "name") as? String == "A")
        #expect(try cars(reader).compactMap { $0.value(forKey: "name") as? String } == ["A", "c"])
        #expect(try count(reader) == 2)
    }

    @Test func everyKindOfReadSeesTheGeneration() throws {
        let stack = try TestStack()
        let person = stack.insert("Person", ["name": "p"])
        stack.insert("Car", ["name": "a", "year": 2001, "owner": person])
        try stack.context.save()
        let reader = stack.newContext()
        try reader.setQueryGenerationFrom(.current)
        let owner = reader.object(with: person.objectID)
        #expect(owner.value(forKey: "name") as? String == "p") // pins

        stack.insert("Car", ["name": "b", "year": 2002, "owner": person])
        person.setValue("q", forKey: "name")
        try stack.fetch("Car").first { $0.value(forKey: "name") as? String == "a" }?.setValue("A", forKey: "name")
        try stack.context.save()

        // A to-many fault, a batched fetch, prefetching (in a context that has no objects yet),
        // a dictionary fetch, IDs and counts.
        #expect((owner.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 1)
        let batched = NSFetchRequest<NSManagedObject>(entityName: "Car")
        batched.fetchBatchSize = 1
        #expect(try reader.fetch(batched).compactMap { $0.value(forKey: "name") as? String } == ["a"])
        let second = stack.newContext()
        try second.setQueryGenerationFrom(reader.queryGenerationToken)
        let prefetching = NSFetchRequest<NSManagedObject>(entityName: "Person")
        prefetching.relationshipKeyPathsForPrefetching = ["cars"]
        let prefetched = try second.fetch(prefetching)
        let prefetchedCars = prefetched.first?.primitiveValue(forKey: "cars") as? Set<NSManagedObject>
        #expect(prefetchedCars?.compactMap { $0.value(forKey: "name") as? String } == ["a"])
        let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Car")
        dictionaries.resultType = .dictionaryResultType
        dictionaries.propertiesToFetch = ["name"]
        #expect(try reader.fetch(dictionaries).compactMap { $0["name"] as? String } == ["a"])
        let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Car")
        ids.resultType = .managedObjectIDResultType
        #expect(try reader.fetch(ids).count == 1)
        #expect(try count(reader) == 1)
        let people = NSFetchRequest<NSManagedObject>(entityName: "Person")
        people.predicate = NSPredicate(format: "name == 'p'")
        #expect(try reader.count(for: people) == 1)
    }

    @Test func contextsSharingAGenerationReadOnSeveralQueuesAtOnce() async throws {
        let (stack, writer) = try stackWithCars()
        let first = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        first.persistentStoreCoordinator = stack.coordinator
        let token = try await first.perform {
            try first.setQueryGenerationFrom(.current)
            _ = try count(first)
            return try #require(first.queryGenerationToken)
        }
        try changeEverything(in: writer)
        let readers = (0..<4).map { _ in
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = stack.coordinator
            return context
        }
        try await withThrowingTaskGroup(of: [String].self) { group in
            for context in readers + [first] {
                group.addTask {
                    try await context.perform {
                        if context !== first { try context.setQueryGenerationFrom(token) }
                        var names: [String] = []
                        for _ in 0..<20 { names = try cars(context).compactMap { $0.value(forKey: "name") as? String } }
                        return names
                    }
                }
            }
            for try await names in group { #expect(names == ["a", "b"]) }
        }
    }

    @Test func anotherCoordinatorsSavesStayOutOfTheGenerationRefreshesIncluded() throws {
        let (stack, _) = try stackWithCars()
        let reader = stack.newContext()
        try reader.setQueryGenerationFrom(.current)
        let pinned = try cars(reader)
        let other = try stack.reopen() // another coordinator on the file, as another process would be
        try changeEverything(in: other.context)
        reader.refreshAllObjects() // refreshed objects read their generation again
        #expect(pinned.compactMap { $0.value(forKey: "name") as? String } == ["a", "b"])
        #expect(try count(reader) == 2)
        try reader.setQueryGenerationFrom(.current)
        reader.refreshAllObjects()
        #expect(pinned[0].value(forKey: "name") as? String == "A")
        #expect(pinned[1].isDeleted || pinned[1].value(forKey: "name") == nil, "deleted since: inaccessible")
        #expect(NSManagedObjectContextQueryGenerationKey == "newQueryGeneration")
    }

    @Test func aGenerationIsPinnedAtTheFirstReadNotWhenItIsSet() throws {
        let (stack, writer) = try stackWithCars()
        let reader = stack.newContext()
        try reader.setQueryGenerationFrom(.current)
        try changeEverything(in: writer)
        #expect(try count(reader) == 2, "the first read pins the latest generation") // a, b gone; A, c
        #expect(try cars(reader).compactMap { $0.value(forKey: "name") as? String } == ["A", "c"])
    }

    @Test func unpinningReadsTheLatestAgain() throws {
        let (stack, writer) = try stackWithCars()
        let reader = stack.newContext()
        try reader.setQueryGenerationFrom(.current)
        #expect(try count(reader) == 2)
        let extra = NSEntityDescription.insertNewObject(forEntityName: "Car", into: writer)
        extra.setValue("x", forKey: "name")
        try writer.save()
        #expect(try count(reader) == 2)
        try reader.setQueryGenerationFrom(nil)
        #expect(reader.queryGenerationToken == nil)
        #expect(try count(reader) == 3)
    }

    @Test func contextsPinnedFromOneTokenShareItsGeneration() throws {
        let (stack, writer) = try stackWithCars()
        let first = stack.newContext()
        try first.setQueryGenerationFrom(.current)
        #expect(try count(first) == 2)
        try changeEverything(in: writer)
        let second = stack.newContext()
        let token = try #require(first.queryGenerationToken)
        try second.setQueryGenerationFrom(token)
        #expect(second.queryGenerationToken == token, "tokens of one generation are equal")
        #expect(second.queryGenerationToken != NSQueryGenerationToken.current)
        #expect(try cars(second).compactMap { $0.value(forKey: "name") as? String } == ["a", "b"])
        #expect((token.copy() as? NSQueryGenerationToken) == token)
    }

    /// Tokens archive: `current` reads back as `current`; a pinned token reads back naming its
    /// generation while that lives (another context pinned from it sees the same data), and
    /// expired once it is gone.
    @Test func tokensArchiveAndReadBackAsTheirGeneration() throws {
        func roundTrip(_ token: NSQueryGenerationToken) throws -> NSQueryGenerationToken {
            let data = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
            return try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSQueryGenerationToken.self, from: data))
        }
        let current = try roundTrip(.current)
        #expect(current == NSQueryGenerationToken.current)

        let (stack, writer) = try stackWithCars()
        var first: NSManagedObjectContext? = stack.newContext()
        try first!.setQueryGenerationFrom(current)
        #expect(try count(first!) == 2)
        try changeEverything(in: writer)
        let token = try #require(first!.queryGenerationToken)
        let archived = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
        let again = try roundTrip(token)
        #expect(again == token && again != NSQueryGenerationToken.current)
        let second = stack.newContext()
        try second.setQueryGenerationFrom(again)
        #expect(try cars(second).compactMap { $0.value(forKey: "name") as? String } == ["a", "b"])

        // Once no context uses the generation it has expired: read back, the token can't be set.
        try second.setQueryGenerationFrom(nil)
        first = nil
        let expired = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSQueryGenerationToken.self, from: archived))
        #expect(expired == token)
        // A later generation's token is another token, even if the generation reuses the memory.
        let later = stack.newContext()
        try later.setQueryGenerationFrom(.current)
        _ = try count(later)
        #expect(later.queryGenerationToken != token && later.queryGenerationToken != expired)
        #expect { try stack.newContext().setQueryGenerationFrom(expired) } throws: { error in
            (error as NSError).code == NSCoreDataError && (error as NSError).localizedDescription.contains("expired")
        }
    }

    @Test func aSavingContextSavesAgainstTheLatestAndMovesOn() throws {
        let (stack, writer) = try stackWithCars()
        let reader = stack.newContext()
        try reader.setQueryGenerationFrom(.current)
        let before = try cars(reader)
        let token = try #require(reader.queryGenerationToken)
        let extra = NSEntityDescription.insertNewObject(forEntityName: "Car", into: writer)
        extra.setValue("x", forKey: "name")
        try writer.save()
        #expect(try count(reader) == 2)

        before[0].setValue("edited", forKey: "name")
        try reader.save()
        let after = try #require(reader.queryGenerationToken, "still pinned, to the latest generation")
        #expect(after != token)
        #expect(try count(reader) == 3, "a, b and x")
        #expect(try stack.rows("SELECT ZNAME FROM ZCAR WHERE ZYEAR = 2001") == [["edited"]])
    }

    @Test func aSaveMeetsConflictsInTheLatestDataNotInItsGeneration() throws {
        let (stack, writer) = try stackWithCars()
        let reader = stack.newContext()
        try reader.setQueryGenerationFrom(.current)
        let car = try cars(reader)[0]
        let theirs = try cars(writer)[0]
        theirs.setValue("theirs", forKey: "name")
        try writer.save()
        car.setValue("mine", forKey: "name")
        reader.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
        try reader.save()
        #expect(car.value(forKey: "name") as? String == "theirs", "the store's latest value won")
        #expect(try stack.rows("SELECT ZNAME FROM ZCAR WHERE ZYEAR = 2001") == [["theirs"]])
    }

    @Test func aSaveFindsUniquenessConflictsInTheLatestDataNotInItsGeneration() throws {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        let stack = try TestStack(model: model)
        let reader = stack.newContext()
        try reader.setQueryGenerationFrom(.current)
        #expect(try count(reader) == 0) // pins
        stack.insert("Tag", ["label": "swift"])
        try stack.context.save()

        let mine = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: reader)
        mine.setValue("swift", forKey: "label")
        reader.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try reader.save() // the stored "swift", saved after the generation, is found: an upsert
        #expect(try stack.rows("SELECT count(*) FROM ZTAG WHERE ZLABEL = 'swift'") == [["1"]])
    }

    @Test func resetAndMergesMoveTheGenerationAndRefreshingDoesNot() throws {
        let (stack, writer) = try stackWithCars()
        let reader = stack.newContext()
        try reader.setQueryGenerationFrom(.current)
        #expect(try count(reader) == 2)
        let first = try #require(reader.queryGenerationToken)
        reader.refreshAllObjects()
        #expect(reader.queryGenerationToken == first, "refreshing objects keeps the generation, as Apple's")
        let update = NSBatchUpdateRequest(entityName: "Car")
        update.propertiesToUpdate = ["year": 1999]
        _ = try reader.execute(update)
        #expect(reader.queryGenerationToken == first, "a batch request keeps it too, as Apple's header says")
        let updated = NSFetchRequest<NSManagedObject>(entityName: "Car")
        updated.predicate = NSPredicate(format: "year == 1999")
        #expect(try reader.count(for: updated) == 0, "the batch wrote after the generation")

        try changeEverything(in: writer)
        #expect(try count(reader) == 2)
        let saved = Notification(name: .NSManagedObjectContextDidSave, object: writer,
                                 userInfo: [NSUpdatedObjectIDsKey: Set(try cars(writer).map(\.objectID))])
        reader.mergeChanges(fromContextDidSave: saved)
        let second = try #require(reader.queryGenerationToken)
        #expect(second != first)
        #expect(try cars(reader).compactMap { $0.value(forKey: "name") as? String } == ["A", "c"])

        let extra = NSEntityDescription.insertNewObject(forEntityName: "Car", into: writer)
        extra.setValue("x", forKey: "name")
        try writer.save()
        #expect(try count(reader) == 2)
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSInsertedObjectIDsKey: [extra.objectID]], into: [reader])
        #expect(try count(reader) == 3)
        let third = try #require(reader.queryGenerationToken)
        #expect(third != second)

        writer.delete(extra)
        try writer.save()
        #expect(try count(reader) == 3)
        reader.reset()
        #expect(reader.queryGenerationToken != nil && reader.queryGenerationToken != third)
        #expect(try count(reader) == 2)
    }

    @Test func aWriterNeverWaitsForAPinnedReader() throws {
        // No lock wait at all: a writer that met the reader's lock would fail at once with SQLITE_BUSY.
        let (stack, writer) = try stackWithCars(options: [NSPersistentStoreTimeoutOption: 0])
        let reader = stack.newContext()
        try reader.setQueryGenerationFrom(.current)
        let pinned = try cars(reader, faults: true)
        for index in 0..<50 {
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: writer)
            car.setValue("n\(index)", forKey: "name")
            try writer.save()
            #expect(try count(reader) == 2)
        }
        #expect(pinned[1].value(forKey: "name") as? String == "b")
        #expect(try count(writer) == 52)
    }

    @Test func aPinnedReaderNeverSeesHalfASave() async throws {
        let (stack, _) = try stackWithCars()
        let writer = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        writer.persistentStoreCoordinator = stack.coordinator
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = stack.coordinator
        let writing = Task {
            for round in 0..<20 {
                try await writer.perform {
                    for index in 0..<10 {
                        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: writer)
                        car.setValue("r\(round)-\(index)", forKey: "name")
                    }
                    try writer.save()
                }
            }
        }
        for _ in 0..<20 {
            try await reader.perform {
                try reader.setQueryGenerationFrom(.current)
                let counted = try count(reader)
                #expect((counted - 2) % 10 == 0, "whole saves only")
                #expect(try cars(reader).count == counted, "every read of a generation agrees")
            }
        }
        try await writing.value
    }

    @Test func aChildSeesItsParentsGenerationAndCannotBePinned() throws {
        let (stack, writer) = try stackWithCars()
        let (parent, child) = stack.parentAndChild()
        try parent.performAndWait {
            try parent.setQueryGenerationFrom(.current)
            #expect(try count(parent) == 2)
        }
        try changeEverything(in: writer)
        try child.performAndWait {
            #expect(child.queryGenerationToken == nil, "a child returns nil, as Apple's")
            #expect(try cars(child).compactMap { $0.value(forKey: "name") as? String } == ["a", "b"])
            let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Car")
            dictionaries.resultType = .dictionaryResultType
            dictionaries.propertiesToFetch = ["name"]
            dictionaries.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            #expect(try child.fetch(dictionaries).compactMap { $0["name"] as? String } == ["a", "b"], "straight from the store, at the parent's generation")
            let error = #expect(throws: NSError.self) { try child.setQueryGenerationFrom(.current) }
            #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSCoreDataError)
            try child.setQueryGenerationFrom(nil) // nil is no pin: nothing to refuse
        }
    }

    @Test func aTokenOfAnotherCoordinatorIsRefused() throws {
        let (stack, _) = try stackWithCars()
        let pinned = stack.newContext()
        try pinned.setQueryGenerationFrom(.current)
        let token = try #require(pinned.queryGenerationToken)
        let other = try stack.reopen()
        let error = #expect(throws: NSError.self) { try other.context.setQueryGenerationFrom(token) }
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSCoreDataError)
        #expect(error?.localizedDescription.contains("does not have any of the referenced stores") == true)
        #expect(other.context.queryGenerationToken == nil)

        let memory = try TestStack(inMemory: true)
        #expect(throws: NSError.self) { try memory.context.setQueryGenerationFrom(token) }
    }

    @Test func anExpiredTokenIsRefused() throws {
        let (stack, _) = try stackWithCars()
        var token: NSQueryGenerationToken?
        do {
            let pinned = stack.newContext()
            try pinned.setQueryGenerationFrom(.current)
            token = pinned.queryGenerationToken
            try pinned.setQueryGenerationFrom(nil)
        }
        let expired = try #require(token)
        let error = #expect(throws: NSError.self) { try stack.context.setQueryGenerationFrom(expired) }
        #expect(error?.code == NSCoreDataError)
        #expect(stack.context.queryGenerationToken == nil)
    }

    @Test func storesWithoutWALReadUnpinned() throws {
        let memory = try TestStack(inMemory: true)
        try memory.context.setQueryGenerationFrom(.current)
        #expect(memory.context.queryGenerationToken == nil, "an in-memory store: unpinned, as Apple's")

        let (stack, writer) = try stackWithCars(options: [NSSQLitePragmasOption: ["journal_mode": "DELETE"]])
        let reader = stack.newContext()
        try reader.setQueryGenerationFrom(.current)
        #expect(reader.queryGenerationToken == nil, "a rollback journal: a held read would block saves")
        #expect(try count(reader) == 2)
        try changeEverything(in: writer)
        #expect(try count(reader) == 2)
        #expect(try cars(reader).compactMap { $0.value(forKey: "name") as? String } == ["A", "c"])
    }

    @Test func theReadTransactionEndsWhenTheContextMovesOrGoes() throws {
        let (stack, writer) = try stackWithCars()
        func saveOne() throws {
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: writer)
            car.setValue("x", forKey: "name")
            try writer.save()
        }
        do {
            let reader = stack.newContext()
            try reader.setQueryGenerationFrom(.current)
            #expect(try count(reader) == 2)
            try saveOne()
            let held = try checkpoint(stack)
            #expect(held.checkpointed < held.log, "frames after the generation stay in the log")
            try reader.setQueryGenerationFrom(.current) // moved: the old generation ends
            let moved = try checkpoint(stack)
            #expect(moved.log > 0 && moved.checkpointed == moved.log)

            #expect(try count(reader) == 3) // pinned again
            try saveOne()
            let again = try checkpoint(stack)
            #expect(again.checkpointed < again.log)
        }
        // The context is gone, and its generation with it.
        let released = try checkpoint(stack)
        #expect(released.log > 0 && released.checkpointed == released.log)
    }
}
