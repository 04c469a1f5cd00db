import Foundation
import Testing
@testable import CoreData

/// `context.changes`: a context's `ObjectsDidChange` notifications as an `AsyncSequence` of
/// object IDs, read from another task, none missed or doubled, ended by cancellation.
@Suite("Context changes", .timeLimit(.minutes(1)))
struct ContextChangesTests {
    /// Inserts a car named `name` and posts the change; returns its (temporary) ID.
    private func insertCar(_ context: NSManagedObjectContext, _ name: String) async -> NSManagedObjectID {
        await context.perform {
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            car.setValue(name, forKey: "name")
            context.processPendingChanges()
            return car.objectID
        }
    }

    @Test func reportsInsertsUpdatesAndDeletesAsIDs() async throws {
        let stack = try TestStack()
        let context = stack.queueContext()
        var changes = context.changes.makeAsyncIterator()

        let temporary = await insertCar(context, "a")
        #expect(await changes.next() == ManagedObjectIDChanges(inserted: [temporary]))

        let saved = try await context.perform {
            try context.save()
            return try context.fetch(NSFetchRequest<NSManagedObjectID>(entityName: "Car").ids())[0]
        }
        #expect(!saved.isTemporaryID)
        try await context.perform {
            let car = try context.existingObject(with: saved)
            car.setValue("b", forKey: "name")
            context.processPendingChanges()
        }
        #expect(await changes.next() == ManagedObjectIDChanges(updated: [saved]))

        try await context.perform {
            context.delete(try context.existingObject(with: saved))
            context.processPendingChanges()
        }
        #expect(await changes.next() == ManagedObjectIDChanges(deleted: [saved]))
    }

    @Test("A perform block's changes are posted when it ends, as Apple's perform calls processPendingChanges")
    func performProcessesPendingChangesAtItsEnd() async throws {
        let stack = try TestStack()
        let context = stack.queueContext()
        var changes = context.changes.makeAsyncIterator()
        // The async perform, queued: no processPendingChanges() in the block.
        let first = await context.perform {
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            car.setValue("a", forKey: "name")
            return car.objectID
        }
        #expect(await changes.next() == ManagedObjectIDChanges(inserted: [first]))
        // The block-taking perform(_:).
        let box = IDBox()
        func schedule() { // (not async: the block-taking overload)
            context.perform {
                let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
                car.setValue("b", forKey: "name")
                box.id = car.objectID
            }
        }
        schedule()
        let second = await changes.next()
        #expect(second == ManagedObjectIDChanges(inserted: [try #require(box.id)]))
    }

    @Test func reportsResetAsAllInvalidated() async throws {
        let stack = try TestStack()
        let context = stack.queueContext()
        var changes = context.changes.makeAsyncIterator()
        let id = await context.perform {
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            context.processPendingChanges()
            context.reset()
            return car.objectID
        }
        #expect(await changes.next()?.inserted == [id])
        let change = await changes.next()
        #expect(change?.invalidatedAll == true)
        #expect(change?.invalidated == [id])
    }

    @Test func reportsMergedSavesAsRefreshes() async throws {
        let stack = try TestStack()
        let (reader, writer) = (stack.queueContext(), stack.queueContext())
        let id = await insertCar(writer, "a")
        let saved = try await writer.perform {
            try writer.save()
            return try writer.fetch(NSFetchRequest<NSManagedObjectID>(entityName: "Car").ids())[0]
        }
        #expect(id.isTemporaryID && !saved.isTemporaryID)
        try await reader.perform {
            reader.retainsRegisteredObjects = true // (the merge refreshes only registered objects)
            reader.automaticallyMergesChangesFromParent = true
            _ = try reader.existingObject(with: saved).value(forKey: "name")
        }
        var changes = reader.changes.makeAsyncIterator()
        try await writer.perform {
            try writer.existingObject(with: saved).setValue("b", forKey: "name")
            try writer.save()
        }
        #expect(await changes.next()?.refreshed == [saved])
    }

    @Test("A merge posts only Apple's keys, and nothing when no object of the context changed")
    func aMergeOfUnregisteredRowsPostsNothing() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        let other = stack.insert("Car", ["name": "b"])
        try stack.context.save()
        let reader = stack.newContext()
        nonisolated(unsafe) var posted: [[AnyHashable: Any]] = []
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: reader, queue: nil) {
            posted.append($0.userInfo ?? [:])
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        car.setValue("a2", forKey: "name")
        nonisolated(unsafe) var saved: Notification?
        let saveObserver = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: stack.context, queue: nil) { saved = $0 }
        try stack.context.save()
        NotificationCenter.default.removeObserver(saveObserver)
        reader.mergeChanges(fromContextDidSave: try #require(saved))
        #expect(posted.isEmpty, "no object of the reader changed")
        // With a registered object: Apple's keys only.
        let held = try reader.existingObject(with: other.objectID)
        other.setValue("b2", forKey: "name")
        car.setValue("a3", forKey: "name")
        let again = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: stack.context, queue: nil) { saved = $0 }
        try stack.context.save()
        NotificationCenter.default.removeObserver(again)
        reader.mergeChanges(fromContextDidSave: try #require(saved))
        #expect(posted.count == 1)
        #expect(posted.first.map { Set($0.keys.compactMap { $0 as? String }) } == [NSRefreshedObjectsKey])
        #expect(held.value(forKey: "name") as? String == "b2")
    }

    @Test("A sequence awaited by a task keeps neither its context alive nor the task waiting once the context goes")
    func aSequenceEndsWhenItsContextGoes() async throws {
        let stack = try TestStack()
        weak var weakContext: NSManagedObjectContext?
        let changes: Task<Int, Never>
        let results: Task<Int, any Error>
        do {
            let context = stack.queueContext()
            weakContext = context
            let sequence = context.changes
            let observed = context.observeResults(of: NSFetchRequest<NSManagedObject>(entityName: "Car"))
            changes = Task { var count = 0; for await _ in sequence { count += 1 }; return count }
            results = Task { var count = 0; for try await _ in observed { count += 1 }; return count }
            _ = await insertCar(context, "a")
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        // The context's queue may still hold a scheduled block for a moment.
        for _ in 0..<200 where weakContext != nil { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(weakContext == nil)
        #expect(await changes.value == 1)
        #expect(try await results.value >= 1)
    }

    /// Changes made before the first `next()`, and faster than they are read, all arrive, in
    /// order, once each.
    @Test func missesAndDoublesNoChange() async throws {
        let stack = try TestStack()
        let context = stack.queueContext()
        let changes = context.changes
        var ids: [NSManagedObjectID] = []
        for index in 0..<200 { ids.append(await insertCar(context, "c\(index)")) }
        let reader = Task {
            var seen: [NSManagedObjectID] = []
            for await change in changes {
                seen.append(contentsOf: change.inserted)
                if seen.count == 201 { break }
            }
            return seen
        }
        ids.append(await insertCar(context, "last"))
        #expect(await reader.value == ids)
    }

    @Test func cancellingTheTaskRemovesTheObserver() async throws {
        let stack = try TestStack()
        let context = stack.queueContext()
        let changes = context.changes
        #expect(NotificationObservers.count(observing: context) == 1)
        let reader = Task { for await _ in changes {} }
        reader.cancel()
        await reader.value
        #expect(NotificationObservers.count(observing: context) == 0)
        _ = await insertCar(context, "after") // posts to no one
    }

    @Test func droppingTheIteratorOrTheSequenceRemovesTheObserver() async throws {
        let stack = try TestStack()
        let context = stack.queueContext()
        do {
            var iterator = context.changes.makeAsyncIterator()
            _ = await insertCar(context, "a")
            #expect(await iterator.next() != nil)
            #expect(NotificationObservers.count(observing: context) == 1)
        }
        #expect(NotificationObservers.count(observing: context) == 0)
        do {
            let unused = context.changes
            #expect(NotificationObservers.count(observing: context) == 1)
            _ = unused
        }
        #expect(NotificationObservers.count(observing: context) == 0)
    }
}

extension TestStack {
    /// A private-queue context on the stack's coordinator.
    func queueContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }
}

extension NSFetchRequest where ResultType == NSManagedObjectID {
    /// The request, for IDs.
    func ids() -> Self { resultType = .managedObjectIDResultType; return self }
}

/// An ID written on a context's queue and read after its change arrived.
private final class IDBox: @unchecked Sendable {
    var id: NSManagedObjectID?
}
