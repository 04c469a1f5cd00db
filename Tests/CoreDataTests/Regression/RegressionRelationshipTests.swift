import Foundation
import Testing
@testable import CoreData
import TestSupport

@Suite("Review: relationships")
struct ReviewRelationshipTests {
    @Test func oneToOneReassignClearsBothOldPartners() throws {
        let stack = try TestStack(model: ReviewModel.make())
        let h1 = stack.insert("Husband", ["name": "h1"]), h2 = stack.insert("Husband", ["name": "h2"])
        let w1 = stack.insert("Wife", ["name": "w1"]), w2 = stack.insert("Wife", ["name": "w2"])
        h1.setValue(w1, forKey: "wife"); h2.setValue(w2, forKey: "wife")
        try stack.context.save()
        h2.setValue(w1, forKey: "wife") // w1 leaves h1, h2 leaves w2
        #expect(h1.rv("wife") == nil)
        #expect(w1.rv("husband") as? NSManagedObject === h2)
        #expect(w2.rv("husband") == nil)
        try stack.context.save()
        let other = try stack.reopen()
        let wives = try other.fetch("Wife").sorted { $0.rvName! < $1.rvName! }
        #expect((wives[0].rv("husband") as? NSManagedObject)?.rvName == "h2")
        #expect(wives[1].rv("husband") == nil)
        let husbands = try other.fetch("Husband").sorted { $0.rvName! < $1.rvName! }
        #expect(husbands[0].rv("wife") == nil)
    }

    /// A member moved from a saved owner to a new one, over a to-many without an inverse (its
    /// key in the member's row): the removal from the old owner is not written after the
    /// addition to the new one, which would leave the member in neither.
    @Test(arguments: [nil] + TestStoreKind.available.map(Optional.some))
    func aMemberMovedBetweenOwnersOfAToManyWithoutInverseStaysWithTheNewOne(_ kind: TestStoreKind?) throws {
        let stack = try kind.map { try TestStack($0, model: ReviewModel.make()) } ?? TestStack(model: ReviewModel.make(), inMemory: true)
        let old = stack.insert("Owner", ["name": "old"]), pet = stack.insert("Pet", ["name": "rex"])
        old.mutableSetValue(forKey: "pets").add(pet)
        try stack.context.save()
        let new = stack.insert("Owner", ["name": "new"])
        old.mutableSetValue(forKey: "pets").remove(pet)
        new.mutableSetValue(forKey: "pets").add(pet)
        try stack.context.save()
        let other = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        other.persistentStoreCoordinator = stack.coordinator
        let owners = try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner")).sorted { $0.rvName! < $1.rvName! }
        #expect(owners.map { $0.rvSet("pets").map(\.rvName) } == [["rex"], []])
    }

    @Test func manyToManyChangedFromBothSides() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"]), fast = stack.insert("Tag", ["label": "fast"]), red = stack.insert("Tag", ["label": "red"])
        car.mutableSetValue(forKey: "tags").add(fast)
        red.mutableSetValue(forKey: "cars").add(car)
        try stack.context.save()
        fast.mutableSetValue(forKey: "cars").remove(car)      // from the tag side
        car.mutableSetValue(forKey: "tags").remove(red)       // from the car side
        #expect(car.rvSet("tags").isEmpty && fast.rvSet("cars").isEmpty && red.rvSet("cars").isEmpty)
        try stack.context.save()
        let n = stack.model.entitiesByName["Car"]!.layout.entityNumber
        #expect(try RawSQLite.query(stack.url.path, "SELECT count(*) FROM Z_\(n)TAGS").first?[0] == "0")
    }

    @Test func orderedReorderSavesAndReloads() throws {
        let stack = try TestStack()
        let list = stack.insert("Playlist", ["title": "p"])
        let songs = ["a", "b", "c"].map { stack.insert("Song", ["title": $0]) }
        list.setValue(NSOrderedSet(array: songs), forKey: "songs")
        try stack.context.save()
        list.setValue(NSOrderedSet(array: [songs[2], songs[0], songs[1]]), forKey: "songs")
        try stack.context.save()
        let reopened = try stack.reopen()
        let reloaded = try reopened.fetch("Playlist")[0]
        #expect(reloaded.rvOrdered("songs").map(\.rvName) == ["c", "a", "b"])
    }

    @Test func orderedProxyExchangeAndMove() async throws {
        let folder = try TemporaryFolder() // made and removed here: a child that stops leaves nothing behind
        defer { withExtendedLifetime(folder) {} } // until the child has ended
        await #expect(processExitsWith: .success) { [path = folder.path as String] in
            let stack = try! TestStack(directory: URL(fileURLWithPath: path))
            let list = stack.insert("Playlist", ["title": "p"])
            let songs = ["a", "b", "c"].map { stack.insert("Song", ["title": $0]) }
            list.setValue(NSOrderedSet(array: songs), forKey: "songs")
            let proxy = list.mutableOrderedSetValue(forKey: "songs")
            proxy.exchangeObject(at: 0, withObjectAt: 2)   // traps: the proxy's own (empty) storage
            precondition(list.rvOrdered("songs").map(\.rvName) == ["c", "b", "a"])
            proxy.moveObjects(at: IndexSet(integer: 0), to: 2)
            precondition(list.rvOrdered("songs").map(\.rvName) == ["b", "a", "c"])
        }
    }

    @Test func setProxyBulkOperations() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        let cars = (0..<3).map { stack.insert("Car", ["name": "c\($0)"]) }
        let proxy = ada.mutableSetValue(forKey: "cars")
        proxy.addObjects(from: cars)
        #expect(ada.rvSet("cars").count == 3)
        #expect(cars.allSatisfy { $0.rv("owner") as? NSManagedObject === ada })
        proxy.minus(Set(cars.prefix(1)))
        #expect(ada.rvSet("cars").count == 2)
        #expect(proxy.contains(cars[2]))
    }

    @Test func cascadeChainThroughThreeLevels() throws {
        let stack = try TestStack(model: ReviewModel.make())
        let root = stack.insert("Node", ["name": "root"])
        let mid = stack.insert("Node", ["name": "mid"]); mid.setValue(root, forKey: "parent")
        let leaf = stack.insert("Node", ["name": "leaf"]); leaf.setValue(mid, forKey: "parent")
        try stack.context.save()
        stack.context.delete(root)
        try stack.context.save()
        #expect(try stack.reopen().fetch("Node").isEmpty)
        #expect(leaf.managedObjectContext == nil)
    }

    @Test func nullifyRemovesFromToManyInverseAndJoinRows() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"]), tag = stack.insert("Tag", ["label": "x"]), keep = stack.insert("Tag", ["label": "y"])
        car.setValue(Set([tag, keep]), forKey: "tags")
        try stack.context.save()
        stack.context.delete(tag)
        try stack.context.save()
        #expect(car.rvSet("tags") == [keep])
        let reopened = try stack.reopen()
        let reloaded = try reopened.fetch("Car")[0]
        #expect(reloaded.rvSet("tags").count == 1)
    }

    @Test func deletingInsertedObjectWithRelationships() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        try stack.context.save()
        let car = stack.insert("Car", ["name": "new"])
        car.setValue(ada, forKey: "owner")
        stack.context.delete(car)
        try stack.context.save()
        #expect(ada.rvSet("cars").isEmpty)
        #expect(try stack.reopen().fetch("Car").isEmpty)
        // Inserted owner with inserted cars, deleted before the first save: cascade, nothing written.
        let bob = stack.insert("Person", ["name": "Bob"])
        let c = stack.insert("Car", ["name": "c"]); c.setValue(bob, forKey: "owner")
        stack.context.delete(bob)
        try stack.context.save()
        #expect(try stack.reopen().fetch("Car").isEmpty)
        #expect(!stack.context.hasChanges)
    }

    @Test func deletedInsertedObjectLeavesTheContext() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "x"])
        stack.context.delete(car)
        try stack.context.save()
        #expect(car.managedObjectContext == nil)
        #expect(!stack.context.registeredObjects.contains(car))
    }

    @Test func rollbackAfterRelationshipChanges() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"]), bob = stack.insert("Person", ["name": "Bob"])
        let c1 = stack.insert("Car", ["name": "c1"]); c1.setValue(ada, forKey: "owner")
        let tag = stack.insert("Tag", ["label": "t"]); c1.mutableSetValue(forKey: "tags").add(tag)
        try stack.context.save()
        let c2 = stack.insert("Car", ["name": "c2"]); c2.setValue(ada, forKey: "owner")
        c1.setValue(bob, forKey: "owner")
        tag.mutableSetValue(forKey: "cars").remove(c1)
        stack.context.rollback()
        #expect(ada.rvSet("cars") == [c1])
        #expect(bob.rvSet("cars").isEmpty)
        #expect(c1.rv("owner") as? NSManagedObject === ada)
        #expect(c1.rvSet("tags") == [tag] && tag.rvSet("cars") == [c1])
        #expect(!stack.context.hasChanges)
    }

    @Test func rollbackAfterCascadeDelete() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        let c1 = stack.insert("Car", ["name": "c1"]); c1.setValue(ada, forKey: "owner")
        try stack.context.save()
        stack.context.delete(ada)
        stack.context.processPendingChanges()
        stack.context.rollback()
        #expect(!ada.isDeleted && !c1.isDeleted)
        #expect(ada.rvSet("cars") == [c1])
        #expect(c1.rv("owner") as? NSManagedObject === ada)
    }

    @Test func refreshMergeKeepsRelationshipChangeAndTakesStoreValues() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"]), bob = stack.insert("Person", ["name": "Bob"])
        let car = stack.insert("Car", ["name": "a"]); car.setValue(ada, forKey: "owner")
        try stack.context.save()
        let other = stack.newContext()
        try other.existingObject(with: car.objectID).setValue("renamed", forKey: "name")
        try other.save()
        car.setValue(bob, forKey: "owner")
        stack.context.refresh(car, mergeChanges: true)
        #expect(car.rv("owner") as? NSManagedObject === bob)
        #expect(car.rvName == "renamed")
        try stack.context.save()
        let reopened = try stack.reopen()
        let reloaded = try reopened.fetch("Car")[0]
        #expect((reloaded.rv("owner") as? NSManagedObject)?.rvName == "Bob")
        #expect(reloaded.rvName == "renamed")
    }

    @Test func refreshMergeTakesStoreRelationshipChanges() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"]), bob = stack.insert("Person", ["name": "Bob"])
        let car = stack.insert("Car", ["name": "a"]); car.setValue(ada, forKey: "owner")
        try stack.context.save()
        _ = ada.rvSet("cars"); _ = bob.rvSet("cars")
        let other = stack.newContext()
        try other.existingObject(with: car.objectID).setValue(try other.existingObject(with: bob.objectID), forKey: "owner")
        try other.save()
        stack.context.refreshAllObjects()
        #expect(car.rv("owner") as? NSManagedObject === bob)
        #expect(bob.rvSet("cars") == [car])
        #expect(ada.rvSet("cars").isEmpty)
    }

    @Test func toManyWithoutInverseSavesAndReloads() throws {
        let stack = try TestStack(model: ReviewModel.make())
        let owner = stack.insert("Owner", ["name": "o"])
        let pets = ["a", "b", "c"].map { stack.insert("Pet", ["name": $0]) }
        owner.setValue(Set(pets), forKey: "pets")
        owner.setValue(NSOrderedSet(array: [pets[2], pets[0]]), forKey: "line")
        try stack.context.save()
        var other = try stack.reopen()
        var reloaded = try other.fetch("Owner")[0]
        #expect(Set(reloaded.rvSet("pets").map(\.rvName)) == ["a", "b", "c"])
        #expect(reloaded.rvOrdered("line").map(\.rvName) == ["c", "a"])
        owner.mutableSetValue(forKey: "pets").remove(pets[1])
        try stack.context.save()
        other = try stack.reopen()
        reloaded = try other.fetch("Owner")[0]
        #expect(Set(reloaded.rvSet("pets").map(\.rvName)) == ["a", "c"])
        #expect(reloaded.rvOrdered("line").map(\.rvName) == ["c", "a"])
    }
}
