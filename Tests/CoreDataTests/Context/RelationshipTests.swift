import Foundation
import Testing
@testable import CoreData
import TestSupport

@Suite("Relationships and delete rules")
struct RelationshipTests {
    @Test func toOneSetsTheInverseToMany() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        let car = stack.insert("Car", ["name": "a"])
        car.setValue(ada, forKey: "owner")
        #expect((ada.value(forKey: "cars") as? Set<NSManagedObject>) == [car])
        let bob = stack.insert("Person", ["name": "Bob"])
        car.setValue(bob, forKey: "owner")
        #expect((ada.value(forKey: "cars") as? Set<NSManagedObject>)?.isEmpty == true)
        #expect((bob.value(forKey: "cars") as? Set<NSManagedObject>) == [car])
        try stack.context.save()
        let other = try stack.reopen()
        let people = try other.fetch("Person")
        let reloadedBob = try #require(people.first { $0.value(forKey: "name") as? String == "Bob" })
        let cars = try #require(reloadedBob.value(forKey: "cars") as? Set<NSManagedObject>)
        #expect(cars.map { $0.value(forKey: "name") as? String } == ["a"])
        #expect((cars.first!.value(forKey: "owner") as? NSManagedObject) === reloadedBob)
    }

    @Test func mutableSetAddsAndRemovesWithInverse() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        let cars = (0..<3).map { stack.insert("Car", ["name": "c\($0)"]) }
        let set = ada.mutableSetValue(forKey: "cars")
        for car in cars { set.add(car) }
        #expect(cars.allSatisfy { $0.value(forKey: "owner") as? NSManagedObject === ada })
        set.remove(cars[1])
        #expect(cars[1].value(forKey: "owner") == nil)
        #expect(set.count == 2)
        try stack.context.save()
        let reopened = try stack.reopen()
        let reloaded = try reopened.fetch("Person")[0]
        #expect((reloaded.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
    }

    @Test func manyToManyJoinTable() throws {
        let stack = try TestStack()
        let fast = stack.insert("Tag", ["label": "fast"])
        let red = stack.insert("Tag", ["label": "red"])
        let a = stack.insert("Car", ["name": "a"])
        let b = stack.insert("Car", ["name": "b"])
        a.setValue(Set([fast, red]), forKey: "tags")
        b.mutableSetValue(forKey: "tags").add(fast)
        #expect((fast.value(forKey: "cars") as? Set<NSManagedObject>) == [a, b])
        try stack.context.save()
        let carNumber = stack.model.entitiesByName["Car"]!.layout.entityNumber
        #expect(try RawSQLite.query(stack.url.path, "SELECT count(*) FROM Z_\(carNumber)TAGS").first?[0] == "3")
        let other = try stack.reopen()
        let tags = try other.fetch("Tag")
        let reloadedFast = try #require(tags.first { $0.value(forKey: "label") as? String == "fast" })
        #expect((reloadedFast.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
        // Remove one link and save again.
        let reloadedA = try #require(try other.fetch("Car").first { $0.value(forKey: "name") as? String == "a" })
        reloadedA.mutableSetValue(forKey: "tags").remove(reloadedFast)
        try other.context.save()
        #expect(try RawSQLite.query(stack.url.path, "SELECT count(*) FROM Z_\(carNumber)TAGS").first?[0] == "2")
    }

    @Test func orderedRelationshipKeepsOrder() throws {
        let stack = try TestStack()
        let playlist = stack.insert("Playlist", ["title": "mix"])
        let songs = ["c", "a", "b"].map { stack.insert("Song", ["title": $0]) }
        let ordered = playlist.mutableOrderedSetValue(forKey: "songs")
        for song in songs { ordered.add(song) }
        ordered.insert(stack.insert("Song", ["title": "first"]), at: 0)
        #expect(songs[0].value(forKey: "playlist") as? NSManagedObject === playlist)
        try stack.context.save()
        let reopened = try stack.reopen()
        let reloaded = try reopened.fetch("Playlist")[0]
        let titles = (reloaded.value(forKey: "songs") as? NSOrderedSet)?.array.map { ($0 as! NSManagedObject).value(forKey: "title") as? String }
        #expect(titles == ["first", "c", "a", "b"])
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZTITLE, Z_FOK_PLAYLIST FROM ZSONG ORDER BY Z_FOK_PLAYLIST").map { $0[0]! }
                == ["first", "c", "a", "b"])
    }

    @Test func cascadeDeletesRelatedObjects() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        for i in 0..<3 { stack.insert("Car", ["name": "c\(i)"]).setValue(ada, forKey: "owner") }
        try stack.context.save()
        stack.context.delete(ada)
        stack.context.processPendingChanges()
        #expect(stack.context.deletedObjects.count == 4)
        try stack.context.save()
        #expect(try stack.reopen().fetch("Car").isEmpty)
    }

    @Test func nullifyClearsTheInverse() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        let car = stack.insert("Car", ["name": "c"])
        car.setValue(ada, forKey: "owner")
        try stack.context.save()
        stack.context.delete(car)
        stack.context.processPendingChanges()
        #expect((ada.value(forKey: "cars") as? Set<NSManagedObject>)?.isEmpty == true)
        try stack.context.save()
        #expect(try stack.reopen().fetch("Person").count == 1)
    }

    @Test func denyRefusesTheDelete() throws {
        let stack = try TestStack()
        let garage = stack.insert("Garage", ["city": "Oslo"])
        stack.insert("Truck", ["load": 1.0]).setValue(garage, forKey: "garage")
        try stack.context.save()
        stack.context.delete(garage)
        do {
            try stack.context.save()
            Issue.record("the save should fail")
        } catch let error as NSError {
            #expect(error.code == NSValidationRelationshipDeniedDeleteError)
            #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "vehicles")
        }
        #expect(try stack.reopen().fetch("Garage").count == 1, "nothing was written")
        stack.context.rollback()
        #expect(!stack.context.hasChanges)
    }

    @Test func relationshipAcrossContextsFailsCleanly() throws {
        // Seed 004: a team fetched in the main context used in a temporary context.
        let stack = try TestStack()
        stack.insert("Person", ["name": "Ada"])
        try stack.context.save()
        let ada = try stack.fetch("Person")[0]
        let temporary = stack.newContext()
        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: temporary)
        car.setValue("wrong", forKey: "name")
        car.setValue(ada, forKey: "owner")
        #expect((ada.value(forKey: "cars") as? Set<NSManagedObject>)?.isEmpty == true, "the other context's object is untouched")
        #expect(!stack.context.hasChanges)
        do {
            try temporary.save()
            Issue.record("the save should fail")
        } catch let error as NSError {
            #expect(error.code == NSManagedObjectExternalRelationshipError)
            #expect(error.localizedDescription.contains("'owner'"))
            #expect(error.localizedDescription.contains("different contexts"))
        }
        #expect(try stack.reopen().fetch("Car").isEmpty, "nothing was written")
        // The right way: fetch the object in this context by its ID.
        car.setValue(temporary.object(with: ada.objectID), forKey: "owner")
        try temporary.save()
        let reopened = try stack.reopen()
        let reloaded = try reopened.fetch("Car")
        #expect((reloaded.first?.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String == "Ada")
    }

    /// An object made in no context (`insertInto: nil`) and related to one in a context keeps
    /// both sides in step: inserted afterwards, it saves the relationship (the foreign key lived
    /// on its side and was lost); never inserted, the save refuses it as another context's object.
    @Test(arguments: [false, true])
    func anObjectInNoContextKeepsTheInverseInStep(fromTheLooseSide: Bool) throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        try stack.context.save()
        let car = NSManagedObject(entity: stack.model.entitiesByName["Car"]!, insertInto: nil)
        car.setValue("loose", forKey: "name")
        if fromTheLooseSide { car.setValue(ada, forKey: "owner") } else { ada.mutableSetValue(forKey: "cars").add(car) }
        #expect(car.value(forKey: "owner") as? NSManagedObject === ada)
        #expect((ada.value(forKey: "cars") as? Set<NSManagedObject>)?.contains(car) == true)
        // Not inserted: the save refuses the relationship to an object in no context.
        #expect(throws: NSError.self) { try stack.context.save() }
        stack.context.insert(car)
        try stack.context.save()
        #expect(try stack.rawRows("SELECT ZNAME, ZOWNER FROM ZCAR") == [["loose", "1"]])
        let reopened = try stack.reopen()
        let reread = try reopened.fetch("Person")[0]
        #expect((reread.value(forKey: "cars") as? Set<NSManagedObject>)?.map { $0.value(forKey: "name") as? String } == ["loose"])
    }

    /// An inverse declared on a sub-entity of the destination (`Box.items` → `Item`, whose
    /// inverse is `SpecialItem.box`): an item of another entity has no slot for it, and is
    /// related without one (the process stopped with "index out of range").
    @Test(arguments: [false, true])
    func anInverseDeclaredOnASubentityOfTheDestination(inMemory: Bool) throws {
        let box = NSEntityDescription(); box.name = "Box"
        let item = NSEntityDescription(); item.name = "Item"
        let special = NSEntityDescription(); special.name = "SpecialItem"
        item.subentities = [special]
        let items = NSRelationshipDescription(); items.name = "items"; items.destinationEntity = item; items.maxCount = 0
        let owner = NSRelationshipDescription(); owner.name = "box"; owner.destinationEntity = box; owner.maxCount = 1
        items.inverseRelationship = owner; owner.inverseRelationship = items
        let label = NSAttributeDescription(); label.name = "label"; label.attributeType = .stringAttributeType
        box.properties = [items]
        item.properties = [label]
        special.properties = [owner]
        let model = NSManagedObjectModel()
        model.entities = [box, item, special]
        let stack = try TestStack(model: model, inMemory: inMemory)
        let b = stack.insert("Box")
        let plain = stack.insert("Item", ["label": "plain"])
        let specialItem = stack.insert("SpecialItem", ["label": "special"])
        b.mutableSetValue(forKey: "items").addObjects(from: [plain, specialItem])
        #expect(specialItem.value(forKey: "box") as? NSManagedObject === b)
        b.mutableSetValue(forKey: "items").remove(plain)
        try stack.context.save()
        // Read back by another context: the store's members (the in-memory store stopped too).
        let readers = stack.newContext()
        let reread = try readers.fetch(NSFetchRequest<NSManagedObject>(entityName: "Box"))
        #expect(reread.first?.mutableSetValue(forKey: "items").count == 1)
        stack.context.delete(b)
        try stack.context.save()
        #expect(specialItem.value(forKey: "box") == nil)
    }

    /// An object of another entity in a relationship is Apple's `NSInvalidArgumentException`
    /// ("Unacceptable type of value"): the process stops with that message, where it used to stop
    /// with "Index out of range" while keeping the inverse in step (or write another property's slot).
    @Test(arguments: ["owner", "tags"])
    func anObjectOfAnotherEntityStopsTheProcessWithApplesMessage(_ key: String) async throws {
        let folder = try TemporaryFolder() // made and removed here: a child that stops leaves nothing behind
        defer { withExtendedLifetime(folder) {} } // until the child has ended
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = folder.path as String, key = key as String] in
            let stack = try TestStack(directory: URL(fileURLWithPath: path))
            let car = stack.insert("Car", ["name": "Beetle"])
            let other = stack.insert("Car", ["name": "Mini"])
            if key == "owner" { car.setValue(other, forKey: key) } else { car.setValue(Set([other]), forKey: key) }
        } .map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("Unacceptable type of value for \(key == "owner" ? "to-one" : "to-many") relationship: property = \"\(key)\"; desired type = \(key == "owner" ? "Person" : "Tag"); given type = Car"), "\(text)")
        }
    }

    /// A value that is not an object (an object ID) for a to-one, or a single object for a
    /// to-many, is Apple's `NSInvalidArgumentException` too: it used to clear the relationship
    /// silently, and the save wrote the cleared foreign keys.
    @Test(arguments: ["owner", "tags"])
    func aValueThatIsNotAnObjectOrACollectionOfThemStopsTheProcess(_ key: String) async throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = folder.path as String, key = key as String] in
            let stack = try TestStack(directory: URL(fileURLWithPath: path))
            let car = stack.insert("Car", ["name": "Beetle"])
            let ada = stack.insert("Person", ["name": "Ada"])
            let tag = stack.insert("Tag", ["label": "old"])
            try stack.context.save()
            if key == "owner" { car.setValue(ada.objectID, forKey: key) } else { car.setValue(tag, forKey: key) }
        } .map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("Unacceptable type of value for \(key == "owner" ? "to-one" : "to-many") relationship: property = \"\(key)\""), "\(text)")
        }
    }
}
