import Foundation
import Testing
@testable import CoreData

/// A car that, as it goes, runs ``whenGoing`` with its context (set by the tests below).
final class RegistryReadingCar: NSManagedObject {
    /// Run by every such car's `deinit` while it is still registered in its context.
    nonisolated(unsafe) static var whenGoing: ((NSManagedObjectContext) -> Void)?

    deinit {
        if let context = managedObjectContext { Self.whenGoing?(context) }
    }
}

/// The objects a save was the last to hold go at its end, while the context holds its registry's
/// lock once for all of them (`lettingGoOfSavedObjects`), rather than each `deinit` taking it.
/// Code their `deinit` runs on that thread finds the lock its own.
@Suite("Objects a save lets go of", .serialized)
struct SavedObjectsReleaseTests {
    private func stack() throws -> TestStack {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.managedObjectClassName = String(reflecting: RegistryReadingCar.self)
        return try TestStack(model: model)
    }

    @Test func savedObjectsNobodyHoldsGoUnderOneHoldOfTheLock() throws {
        let stack = try stack()
        let context = stack.context
        var seen = 0
        var heldEachTime = true
        RegistryReadingCar.whenGoing = { context in
            seen += 1
            heldEachTime = heldEachTime && context.isLettingGoOfSavedObjects
        }
        defer { RegistryReadingCar.whenGoing = nil }
        for index in 0..<200 { stack.insert("Car", ["name": "car \(index)"]) }
        #expect(context.registryCount == 0, "new objects are registered only once their IDs are made")
        try context.save()
        #expect(seen == 200, "every saved car went at the end of the save")
        #expect(heldEachTime, "each went while the save held the registry's lock")
        #expect(context.registryCount == 0)
        #expect(!context.isLettingGoOfSavedObjects)
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == 200)
    }

    @Test func aDeinitThatUsesTheRegistryDoesNotWaitForItself() throws {
        let stack = try stack()
        let context = stack.context
        stack.insert("Person", ["name": "owner"])
        try context.save()
        context.reset()
        // A fetched object: its ID is made on first read, under the registry's lock.
        let person = try #require(try stack.fetch("Person").first)
        #expect(!person._hasObjectID)

        var ids: [NSManagedObjectID] = []
        var found: [NSManagedObject?] = []
        RegistryReadingCar.whenGoing = { context in
            // Both take the registry's lock, which this thread holds while the cars go.
            let id = person.objectID
            ids.append(id)
            found.append(context.registeredObject(for: id))
        }
        defer { RegistryReadingCar.whenGoing = nil }
        for index in 0..<50 { stack.insert("Car", ["name": "car \(index)"]) }
        try context.save()
        #expect(ids.count == 50)
        #expect(Set(ids).count == 1, "one ID, made once")
        #expect(found.allSatisfy { $0 === person })
        #expect(context.registryCount == 1, "only the person is left")
    }

    @Test func savedObjectsStillHeldStayRegistered() throws {
        let stack = try stack()
        let context = stack.context
        let kept = (0..<10).map { stack.insert("Person", ["name": "kept \($0)"]) }
        for index in 0..<100 { stack.insert("Person", ["name": "dropped \(index)"]) }
        try context.save()
        #expect(context.registryCount == kept.count)
        for object in kept {
            #expect(context.registeredObject(for: object.objectID) === object)
            #expect(!object.objectID.isTemporaryID)
        }
    }

    @Test func anotherThreadWaitsForTheHoldAndThenFindsTheRegistryWhole() async throws {
        let stack = try stack()
        let context = stack.context
        stack.insert("Person", ["name": "owner"])
        try context.save()
        context.reset()
        let people = try stack.fetch("Person")
        nonisolated(unsafe) let person = people[0]
        // Another thread reads the fetched person's ID (allowed on any thread) while the save
        // lets its cars go: it takes the registry's lock, and waits while the save holds it.
        let reader = Task.detached { () -> Set<NSManagedObjectID> in
            var ids = Set<NSManagedObjectID>()
            for _ in 0..<2_000 { ids.insert(person.objectID) }
            return ids
        }
        for index in 0..<2_000 { stack.insert("Car", ["name": "car \(index)"]) }
        try context.save()
        let ids = await reader.value
        #expect(ids.count == 1)
        #expect(context.registeredObject(for: person.objectID) === person)
        #expect(context.registryCount == 1)
    }
}
