import Foundation
import Observation
import Testing
@testable import CoreData

/// `Observable` classes of ``TestModel``'s entities.
final class ObservedCar: NSManagedObject, Observable {
    @Managed var name: String?
    @Managed var year: Int32
    @Managed var owner: ObservedPerson?
    @Managed var tags: Set<ObservedTag>
}

final class ObservedPerson: NSManagedObject, Observable {
    @Managed var name: String
    @Managed var cars: Set<ObservedCar>
}

final class ObservedTag: NSManagedObject, Observable {
    @Managed var label: String?
}

/// An `Observable` class of the Blog model's `Author` (`Fixtures/Blog.xcdatamodeld`).
final class ObservedAuthor: NSManagedObject, Observable {
    @Managed var name: String?
    @Managed var postCount: Int64 // derived: posts.@count, computed at save
}

/// A class that is not `Observable`: its objects take no part in observation.
final class UnobservedCar: NSManagedObject {
    @Managed var name: String?
}

/// How many times an `onChange` ran (it may run on another thread).
final class ChangeCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}

/// `withObservationTracking` over `read`, counting its `onChange`.
func tracking(_ read: () -> Void) -> ChangeCount {
    let changes = ChangeCount()
    withObservationTracking(read) { changes.add() }
    return changes
}

/// `@Managed` subclasses that conform to `Observable` with Swift's `Observation` framework: a read
/// is seen, and a change of that property of that object through any path fires `onChange` once.
@Suite("Observation of managed objects")
struct ManagedObservationTests {
    static let classes: [String: NSManagedObject.Type] = ["Car": ObservedCar.self, "Person": ObservedPerson.self, "Tag": ObservedTag.self]

    /// A stack of the observed classes with a saved car "Model T" (2000) owned by "Ada", and a tag.
    private func savedStack() throws -> (TestStack, ObservedCar, ObservedPerson, ObservedTag) {
        let stack = try TestStack(classes: Self.classes)
        let ada = ObservedPerson(context: stack.context)
        ada.name = "Ada"
        let car = ObservedCar(context: stack.context)
        car.name = "Model T"
        car.owner = ada
        let tag = ObservedTag(context: stack.context)
        tag.label = "classic"
        try stack.context.save()
        return (stack, car, ada, tag)
    }

    /// The car saved by ``savedStack()`` as `context` fetches it.
    private func car(in context: NSManagedObjectContext) throws -> ObservedCar {
        try #require(context.fetch(NSFetchRequest<ObservedCar>(entityName: "Car")).first)
    }

    /// Sets the saved car's values in a context of its own, saves, and returns the save's notification.
    private func saveElsewhere(_ stack: TestStack, _ change: (ObservedCar) -> Void) throws -> Notification {
        let other = stack.newContext()
        let car = try car(in: other)
        change(car)
        nonisolated(unsafe) var saved: Notification?
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { saved = $0 }
        defer { NotificationCenter.default.removeObserver(observer) }
        try other.save()
        return try #require(saved)
    }

    // MARK: Setters

    @Test func theManagedSetterFiresOnce() throws {
        let (_, car, _, _) = try savedStack()
        let changes = tracking { _ = car.name }
        car.name = "Model A"
        #expect(changes.value == 1)
        car.name = "Model B"
        #expect(changes.value == 1) // a tracking fires once
    }

    @Test func setValueForKeyFires() throws {
        let (_, car, _, _) = try savedStack()
        let changes = tracking { _ = car.name }
        car.setValue("Model A", forKey: "name")
        #expect(changes.value == 1)
    }

    @Test func valueForKeyReadsAreTrackedToo() throws {
        let (_, car, _, _) = try savedStack()
        let changes = tracking { _ = car.value(forKey: "name") }
        car.name = "Model A"
        #expect(changes.value == 1)
    }

    @Test func anotherPropertyOrAnotherObjectDoesNotFire() throws {
        let (stack, car, _, _) = try savedStack()
        let other = ObservedCar(context: stack.context)
        other.name = "other"
        let changes = tracking { _ = car.name }
        car.year = 1927
        other.name = "Model A"
        car.setValue("x", forKey: "scratch")
        #expect(changes.value == 0)
        car.name = "Model A"
        #expect(changes.value == 1)
    }

    @Test func aFaultFiringOrARelationshipLoadDoesNotFire() throws {
        let (stack, _, _, _) = try savedStack()
        let context = stack.newContext()
        let car = try car(in: context)
        #expect(car.isFault)
        let changes = tracking { _ = car.year }
        #expect(!car.isFault) // fired inside the tracking
        _ = car.name
        _ = car.tags
        _ = car.owner?.name
        context.refresh(car, mergeChanges: false) // a fault again, with the same values
        _ = car.name
        #expect(changes.value == 0)
    }

    // MARK: Relationships

    @Test func aToOneAndAToManyFireWhenTheirObjectsChange() throws {
        let (stack, car, ada, tag) = try savedStack()
        let grace = ObservedPerson(context: stack.context)
        grace.name = "Grace"
        let owner = tracking { _ = car.owner }
        let adaCars = tracking { _ = ada.cars }
        let graceCars = tracking { _ = grace.cars }
        let tags = tracking { _ = car.tags }
        car.owner = grace // the inverse changes both people's cars
        #expect(owner.value == 1)
        #expect(adaCars.value == 1)
        #expect(graceCars.value == 1)
        #expect(tags.value == 0)
        car.tags = [tag]
        #expect(tags.value == 1)

        let byInverse = tracking { _ = car.owner }
        ada.cars = [car] // the car's owner changes through the inverse
        #expect(byInverse.value == 1)
    }

    // MARK: Merges

    @Test func aMergedSaveFiresForTheChangedPropertyOnly() throws {
        let (stack, car, _, _) = try savedStack()
        let name = tracking { _ = car.name }
        let owner = tracking { _ = car.owner }
        let yearOnly = try saveElsewhere(stack) { $0.year = 1927 }
        stack.context.mergeChanges(fromContextDidSave: yearOnly)
        #expect(car.year == 1927)
        #expect(name.value == 0)
        #expect(owner.value == 0)

        let renamed = try saveElsewhere(stack) { $0.name = "Model A" }
        stack.context.mergeChanges(fromContextDidSave: renamed)
        #expect(car.name == "Model A")
        #expect(name.value == 1)
        #expect(owner.value == 0)
    }

    @Test func aMergedSaveFiresForAToOneAndAToMany() throws {
        let (stack, car, ada, _) = try savedStack()
        _ = ada.cars // loaded
        let owner = tracking { _ = car.owner }
        let cars = tracking { _ = ada.cars }
        let note = try saveElsewhere(stack) { $0.owner = nil }
        stack.context.mergeChanges(fromContextDidSave: note)
        #expect(car.owner == nil)
        #expect(owner.value == 1)
        #expect(cars.value == 1)
        #expect(ada.cars.isEmpty)
    }

    @Test func automaticMergesFromTheParentFire() async throws {
        let stack = try TestStack(classes: Self.classes)
        let context = stack.queueContext()
        context.automaticallyMergesChangesFromParent = true
        context.retainsRegisteredObjects = true // the car must still be there when the merge comes
        let id = try await context.perform {
            let car = ObservedCar(context: context)
            car.name = "Model T"
            try context.save()
            return car.objectID
        }
        let changes = try await context.perform {
            let car = try #require(context.existingObject(with: id) as? ObservedCar)
            return tracking { _ = car.name }
        }
        let writer = stack.queueContext()
        try await writer.perform {
            let car = try #require(writer.existingObject(with: id) as? ObservedCar)
            car.name = "Model A"
            try writer.save()
        }
        // The merge runs on the context's queue after the save: wait for it.
        for _ in 0..<500 where changes.value == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(changes.value == 1)
        let name = try await context.perform { try #require(context.existingObject(with: id) as? ObservedCar).name }
        #expect(name == "Model A")
    }

    // MARK: Refresh, rollback, undo

    @Test func refreshWithAndWithoutMergingFiresWhenTheValueDiffers() throws {
        let (stack, car, _, _) = try savedStack()
        _ = try saveElsewhere(stack) { $0.name = "Model A" }
        let merging = tracking { _ = car.name }
        car.year = 1927 // an unsaved change: the merge keeps it
        stack.context.refresh(car, mergeChanges: true)
        #expect(merging.value == 1)
        #expect(car.name == "Model A" && car.year == 1927)

        _ = try saveElsewhere(stack) { $0.name = "Model B" }
        let faulting = tracking { _ = car.name }
        stack.context.refresh(car, mergeChanges: false)
        #expect(faulting.value == 1)
        #expect(car.name == "Model B")
    }

    @Test func aRefreshThatChangesNothingDoesNotFire() throws {
        let (stack, car, _, _) = try savedStack()
        let changes = tracking { _ = car.name; _ = car.owner }
        stack.context.refresh(car, mergeChanges: true)
        stack.context.refresh(car, mergeChanges: false)
        stack.context.refreshAllObjects()
        #expect(changes.value == 0)
    }

    @Test func aMergePolicyTakingTheStoresValueFires() throws {
        let (stack, car, _, _) = try savedStack()
        _ = try saveElsewhere(stack) { $0.name = "Model A" }
        stack.context.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
        car.year = 1927
        let changes = tracking { _ = car.name }
        try stack.context.save() // a conflict: the store's name wins, the car's year stays
        #expect(car.name == "Model A" && car.year == 1927)
        #expect(changes.value == 1)
    }

    @Test func aDerivedAttributeComputedAtSaveFires() throws {
        let model = try DerivedAttributeTests.blog()
        model.entitiesByName["Author"]!.managedObjectClassName = String(reflecting: ObservedAuthor.self)
        let stack = try TestStack(model: model)
        let author = ObservedAuthor(context: stack.context)
        author.name = "Ada"
        try stack.context.save()
        let count = tracking { _ = author.postCount }
        let name = tracking { _ = author.name }
        let post = NSEntityDescription.insertNewObject(forEntityName: "Post", into: stack.context)
        post.setValue(author, forKey: "author")
        try stack.context.save()
        #expect(author.postCount == 1)
        #expect(count.value == 1)
        #expect(name.value == 0)
    }

    @Test func rollbackFires() throws {
        let (stack, car, _, _) = try savedStack()
        car.name = "Model A"
        let changes = tracking { _ = car.name }
        let year = tracking { _ = car.year }
        stack.context.rollback()
        #expect(car.name == "Model T")
        #expect(changes.value == 1)
        #expect(year.value == 0)
    }

    @Test func undoAndRedoFire() throws {
        let (stack, car, _, _) = try savedStack()
        stack.context.undoManager = UndoManager()
        car.name = "Model A"
        stack.context.processPendingChanges()
        let undone = tracking { _ = car.name }
        stack.context.undo()
        #expect(car.name == "Model T")
        #expect(undone.value == 1)
        let redone = tracking { _ = car.name }
        stack.context.redo()
        #expect(car.name == "Model A")
        #expect(redone.value == 1)
    }

    // MARK: Cost and scope

    @Test func onlyObjectsReadGetARegistrar() throws {
        let (stack, car, ada, _) = try savedStack()
        #expect(car.observationRegistrar == nil && ada.observationRegistrar == nil)
        _ = car.name
        #expect(car.observationRegistrar != nil && ada.observationRegistrar == nil)
        // Each object its own: a change of the other does not reach this one's tracking.
        let other = ObservedCar(context: stack.context)
        let changes = tracking { _ = car.name; _ = other.year }
        #expect(other.observationRegistrar != nil)
        let own = tracking { _ = car.year }
        other.year = 1927
        #expect(changes.value == 1 && own.value == 0)
    }

    @Test func objectsOfAClassThatIsNotObservableAreNotObserved() throws {
        let stack = try TestStack(classes: ["Car": UnobservedCar.self])
        let car = UnobservedCar(context: stack.context)
        let plain = stack.insert("Person", ["name": "Ada"])
        let changes = tracking { _ = car.name; _ = plain.value(forKey: "name") }
        car.name = "Model A"
        plain.setValue("Grace", forKey: "name")
        #expect(changes.value == 0)
        #expect(car.observationRegistrar == nil && plain.observationRegistrar == nil)
    }

    // MARK: Concurrency

    @Test func eightWritersEachSeeTheirOwnChangesOnly() async throws {
        let stack = try TestStack(classes: Self.classes)
        let rounds = 50
        try await withThrowingTaskGroup(of: Int.self) { group in
            for writer in 0..<8 {
                let context = stack.queueContext()
                group.addTask {
                    try await context.perform {
                        let car = ObservedCar(context: context)
                        let bystander = ObservedCar(context: context)
                        var fired = 0
                        for round in 0..<rounds {
                            let changes = tracking { _ = car.name }
                            bystander.name = "\(round)" // not observed here
                            #expect(changes.value == 0)
                            car.name = "\(writer)-\(round)"
                            car.name = "\(writer)-\(round)!"
                            fired += changes.value
                        }
                        try context.save()
                        return fired
                    }
                }
            }
            for try await fired in group { #expect(fired == rounds) }
        }
    }
}
