import Foundation
import Testing
@testable import CoreData

@Suite("Review: more")
struct ReviewMoreTests {
    static func modelWithFavorite() -> NSManagedObjectModel {
        let model = TestModel.make()
        let person = model.entitiesByName["Person"]!, vehicle = model.entitiesByName["Vehicle"]!
        let favorite = ReviewModel.relationship("favorite", to: vehicle, toMany: false)
        person.properties = person.properties + [favorite]
        return model
    }

    @Test func toOneToAbstractEntityReloadsTheSubentity() throws {
        let stack = try TestStack(model: Self.modelWithFavorite())
        let ada = stack.insert("Person", ["name": "Ada"]); let bike = stack.insert("Bike", ["load": 2])
        ada.setValue(bike, forKey: "favorite")
        try stack.context.save()
        let reopened = try stack.reopen()
        let fav = try #require(reopened.fetch("Person")[0].rv("favorite") as? NSManagedObject)
        #expect(fav.entity.name == "Bike")
        #expect(fav.rv("load") as? Int == 2)
        #expect(try reopened.fetch("Person") { $0.predicate = NSPredicate(format: "favorite.wheels = 4") }.count == 1)
    }

    @Test func toManyAcrossContextsFailsCleanly() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"]); try stack.context.save()
        let other = stack.newContext()
        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: other)
        ada.mutableSetValue(forKey: "cars").add(car)
        #expect(car.rv("owner") == nil, "the other context's object is untouched")
        #expect(throws: (any Error).self) { try stack.context.save() }
    }

    @Test func unsavedSingleObjectIsFreedAfterItsContext() throws {
        weak var weakCar: NSManagedObject?
        do {
            let stack = try TestStack()
            let car = stack.insert("Car", ["name": "a"])
            try stack.context.save()
            weakCar = car
        }
        #expect(weakCar == nil)
    }

    @Test func orderedManyToManyViaJoinTableReorders() throws {
        let model = TestModel.make()
        let tags = model.entitiesByName["Car"]!.propertiesByName["tags"] as! NSRelationshipDescription
        tags.isOrdered = true
        let stack = try TestStack(model: model)
        let car = stack.insert("Car", ["name": "a"])
        let t = ["x", "y", "z"].map { stack.insert("Tag", ["label": $0]) }
        car.setValue(NSOrderedSet(array: t), forKey: "tags")
        try stack.context.save()
        car.setValue(NSOrderedSet(array: [t[2], t[1], t[0]]), forKey: "tags")
        try stack.context.save()
        let reopened = try stack.reopen()
        let labels = try reopened.fetch("Car")[0].rvOrdered("tags").map { $0.rv("label") as? String }
        #expect(labels == ["z", "y", "x"])
    }

    @Test func deleteOfInsertedTargetOfToOneWithoutInverse() throws {
        let stack = try TestStack(model: Self.modelWithFavorite())
        let ada = stack.insert("Person", ["name": "Ada"]); let bike = stack.insert("Bike", ["load": 2])
        ada.setValue(bike, forKey: "favorite")
        stack.context.delete(bike)
        // Apple refuses a dangling reference to a deleted object; here it must at least not write garbage.
        _ = try? stack.context.save()
        let reopened = try stack.reopen()
        let people = try reopened.fetch("Person")
        #expect(people.allSatisfy { $0.rv("favorite") == nil })
    }
}
