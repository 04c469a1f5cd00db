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

/// The objects a save was the last to hold go at its end. Plain objects of a model whose
/// objects hold only plain values go while the context holds its registry's lock once for all
/// of them (`lettingGoOfSavedObjects`), rather than each `deinit` taking it; objects whose going
/// may run app code (a subclass's `deinit`, values of app classes, related objects) go as
/// before, each taking the lock.
@Suite("Objects a save lets go of", .serialized)
struct SavedObjectsReleaseTests {
    /// A model of one entity with plain values only: no relationships, no transformables.
    private func valuesOnlyStack() throws -> TestStack { try TestStack(model: valuesOnlyItemModel()) }

    private func stackWithRegistryReadingCars() throws -> TestStack {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.managedObjectClassName = String(reflecting: RegistryReadingCar.self)
        return try TestStack(model: model)
    }

    @Test func plainObjectsHoldingPlainValuesGoUnderOneHoldOfTheLock() throws {
        let stack = try valuesOnlyStack()
        let context = stack.context
        #expect(stack.model.objectsHoldOnlyValues)
        weak var dropped: NSManagedObject?
        var kept: [NSManagedObject] = []
        for index in 0..<300 {
            let item = stack.insert("Item", ["number": index, "title": "item \(index)", "stamp": Date(), "blob": Data([1, 2])])
            if index == 0 { dropped = item }
            if index % 100 == 1 { kept.append(item) }
        }
        let holds = context.registryHolds
        try context.save()
        #expect(context.registryHolds == holds + 1)
        #expect(dropped == nil, "an object nobody holds went at the end of the save")
        #expect(context.registryCount == kept.count)
        for object in kept {
            #expect(!object.objectID.isTemporaryID)
            #expect(context.registeredObject(for: object.objectID) === object)
        }
        #expect(!context.isLettingGoOfSavedObjects)
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) == 300)

        // A second save (updates and deletes among new objects) holds the lock again.
        kept[0].setValue(-1, forKey: "number")
        context.delete(kept[1])
        stack.insert("Item", ["number": 1_000])
        try context.save()
        #expect(context.registryHolds == holds + 2)
        #expect(context.registryCount == kept.count - 1)
    }

    @Test func objectsOfASubclassGoEachTakingTheLock() throws {
        let stack = try stackWithRegistryReadingCars()
        let context = stack.context
        var seen = 0
        var heldAnyTime = false
        RegistryReadingCar.whenGoing = { context in
            seen += 1
            heldAnyTime = heldAnyTime || context.isLettingGoOfSavedObjects
        }
        defer { RegistryReadingCar.whenGoing = nil }
        for index in 0..<200 { stack.insert("Car", ["name": "car \(index)"]) }
        let holds = context.registryHolds
        try context.save()
        #expect(seen == 200, "every saved car went at the end of the save")
        #expect(!heldAnyTime, "a subclass's deinit (app code) never runs under the hold")
        #expect(context.registryHolds == holds)
        #expect(context.registryCount == 0)
    }

    @Test func plainObjectsOfAModelWithRelationshipsGoEachTakingTheLock() throws {
        let stack = try TestStack()
        #expect(!stack.model.objectsHoldOnlyValues)
        for index in 0..<50 { stack.insert("Person", ["name": "person \(index)"]) }
        let holds = stack.context.registryHolds
        try stack.context.save()
        #expect(stack.context.registryHolds == holds)
        #expect(stack.context.registryCount == 0)
    }

    @Test func aDeinitThatUsesTheRegistryFindsItWhole() throws {
        let stack = try stackWithRegistryReadingCars()
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

    @Test func insertNewObjectGivesAPlainObjectItsOwnValues() throws {
        let stack = try valuesOnlyStack()
        let first = stack.insert("Item")
        let second = stack.insert("Item")
        #expect(first._isPlain && second._isPlain)
        #expect(first.isInserted && second.isInserted)
        #expect(first.managedObjectContext === stack.context)
        let defaults = first.layout.defaultValues.storage
        #expect(first._values.storage !== defaults && second._values.storage !== defaults)
        #expect(first._values.storage !== second._values.storage)
        first.setValue(7, forKey: "number")
        #expect(second.value(forKey: "number") == nil)
        #expect(first.layout.defaultValues.storage.map { PropertyValues($0) }?[first.layout.nameTable.index(of: "number")!] == .null)
    }
}
