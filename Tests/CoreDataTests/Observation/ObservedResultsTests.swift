import Foundation
import Testing
@testable import CoreData

/// `context.observeResults(of:)`: a fetch request's results as an `AsyncSequence` of IDs,
/// first the current ones, then one element per change that alters them, under concurrent
/// saves from other contexts.
@Suite("Observed results", .timeLimit(.minutes(1)))
struct ObservedResultsTests {
    private func carsByName(_ predicate: NSPredicate? = nil) -> NSFetchRequest<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        request.predicate = predicate
        return request
    }

    /// A fresh fetch of `request`'s IDs in `context`.
    private func fetchIDs(_ context: NSManagedObjectContext, _ request: NSFetchRequest<NSManagedObject>) async throws -> [NSManagedObjectID] {
        nonisolated(unsafe) let request = request
        return try await context.perform {
            try context.fetch(request).map(\.objectID)
        }
    }

    private func insert(_ context: NSManagedObjectContext, _ entity: String, _ values: [String: String], save: Bool = false) async throws {
        try await context.perform {
            let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
            for (key, value) in values { object.setValue(value, forKey: key) }
            context.processPendingChanges()
            if save { try context.save() }
        }
    }

    @Test("A merge of rows saved by another coordinator, none of them registered here, yields the new results")
    func aRemoteMergeOfUnregisteredRowsIsAChange() async throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let context = stack.queueContext()
        var results = context.observeResults(of: carsByName(NSPredicate(format: "name == 'Z'"))).makeAsyncIterator()
        #expect(try await results.next() == [])
        let elsewhere = try stack.reopen()
        let car = try elsewhere.fetch("Car")[0]
        car.setValue("Z", forKey: "name")
        try elsewhere.context.save()
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectIDsKey: [car.objectID]], into: [context])
        #expect(try await results.next()?.count == 1)
    }

    @Test func yieldsTheCurrentResultsThenEachChange() async throws {
        let stack = try TestStack()
        for name in ["b", "d"] { stack.insert("Car", ["name": name]) }
        try stack.context.save()
        let context = stack.queueContext()
        let request = carsByName()
        var results = context.observeResults(of: request).makeAsyncIterator()
        let first = try await results.next()
        #expect(first == (try await fetchIDs(context, request)))
        #expect(first?.count == 2)

        try await insert(context, "Car", ["name": "c"])
        let withInsert = try #require(try await results.next())
        #expect(withInsert == (try await fetchIDs(context, request)))
        #expect(withInsert.count == 3 && withInsert[1].isTemporaryID)

        try await context.perform { try context.save() }
        let saved = try #require(try await results.next())
        #expect(saved.count == 3 && !saved[1].isTemporaryID)
        #expect(saved == (try await fetchIDs(context, request)))
    }

    /// A change that leaves the results as they were yields nothing: the next element is the
    /// next change of the results.
    @Test func yieldsNothingForChangesThatLeaveTheResults() async throws {
        let stack = try TestStack()
        let context = stack.queueContext()
        let other = stack.queueContext()
        let request = carsByName(NSPredicate(format: "name BEGINSWITH 'x'"))
        var results = context.observeResults(of: request).makeAsyncIterator()
        #expect(try await results.next() == [])
        try await insert(context, "Person", ["name": "p"])
        try await insert(context, "Car", ["name": "a"], save: true)
        try await insert(other, "Car", ["name": "b"], save: true)
        try await insert(other, "Car", ["name": "x"], save: true)
        let next = try await results.next()
        #expect(next?.count == 1)
        #expect(next == (try await fetchIDs(context, request)))
    }

    /// Eight contexts save inserts in a loop while the results are read: the elements grow
    /// one distinct list at a time, and the last is what a fetch after the saves gives.
    @Test func missesNoSaveOfConcurrentContexts() async throws {
        let stack = try TestStack()
        let context = stack.queueContext()
        let request = carsByName()
        let (writers, saves) = (8, 10)
        let results = context.observeResults(of: request)
        let reader = Task {
            var seen: [[NSManagedObjectID]] = []
            for try await ids in results {
                seen.append(ids)
                if ids.count == writers * saves * 2 { break }
            }
            return seen
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(60))
            reader.cancel()
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                let writing = stack.queueContext()
                group.addTask {
                    for save in 0..<saves {
                        try await writing.perform {
                            for car in 0..<2 {
                                NSEntityDescription.insertNewObject(forEntityName: "Car", into: writing)
                                    .setValue("w\(writer)-s\(save)-c\(car)", forKey: "name")
                            }
                            try writing.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let seen = try await reader.value
        timeout.cancel()
        #expect(seen.last == (try await fetchIDs(context, request)))
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.count < $1.count })
    }

    @Test func cancellingTheTaskRemovesTheObservers() async throws {
        let stack = try TestStack()
        let context = stack.queueContext()
        let results = context.observeResults(of: carsByName())
        #expect(NotificationObservers.count(observing: context) == 1)
        let reader = Task { for try await _ in results {} }
        reader.cancel()
        try await reader.value
        #expect(NotificationObservers.count(observing: context) == 0)
        do {
            var iterator = context.observeResults(of: carsByName()).makeAsyncIterator()
            #expect(try await iterator.next() == [])
        }
        #expect(NotificationObservers.count(observing: context) == 0)
    }

    @Test func throwsForAConfinementContextOrABadRequest() async throws {
        let stack = try TestStack()
        var confined = stack.context.observeResults(of: carsByName()).makeAsyncIterator()
        do {
            _ = try await confined.next()
            Issue.record("a confinement context was observed")
        } catch {
            let error = error as NSError
            #expect(error.domain == NSCocoaErrorDomain && error.localizedDescription.contains("confinement"))
        }

        let context = stack.queueContext()
        var unknown = context.observeResults(of: NSFetchRequest<NSManagedObject>(entityName: "Nope")).makeAsyncIterator()
        do {
            _ = try await unknown.next()
            Issue.record("an unknown entity was fetched")
        } catch {
            #expect((error as NSError).domain == NSCocoaErrorDomain)
        }
        #expect(NotificationObservers.count(observing: context) == 0)
    }
}
