import Foundation
import Testing
@testable import CoreData

@Suite("Review: fetching, saving, IDs")
struct ReviewFetchTests {
    @Test func pendingChangesWithSortAndLimit() throws {
        let stack = try TestStack()
        let a = stack.insert("Car", ["name": "a", "year": 1990]); stack.insert("Car", ["name": "b", "year": 2000])
        try stack.context.save()
        stack.insert("Car", ["name": "c", "year": 1995])
        a.setValue(2010, forKey: "year")
        let names = try stack.fetch("Car") {
            $0.sortDescriptors = [NSSortDescriptor(key: "year", ascending: true)]; $0.fetchLimit = 2
        }.map(\.rvName)
        #expect(names == ["c", "b"])
        let offset = try stack.fetch("Car") {
            $0.sortDescriptors = [NSSortDescriptor(key: "year", ascending: false)]; $0.fetchOffset = 1; $0.fetchLimit = 1
        }.map(\.rvName)
        #expect(offset == ["b"])
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car"); request.predicate = NSPredicate(format: "year > %d", 1992)
        request.fetchLimit = 2
        #expect(try stack.context.count(for: request) == 2)
        request.fetchLimit = 0
        #expect(try stack.context.count(for: request) == 3)
        request.includesPendingChanges = false
        #expect(try stack.context.count(for: request) == 1)
    }

    @Test func pendingUpdateStopsMatchingPredicate() throws {
        let stack = try TestStack()
        let a = stack.insert("Car", ["name": "a", "year": 1990])
        try stack.context.save()
        a.setValue(2020, forKey: "year")
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car"); request.predicate = NSPredicate(format: "year < 2000")
        #expect(try stack.context.fetch(request).isEmpty)
        #expect(try stack.context.count(for: request) == 0)
        request.resultType = .managedObjectIDResultType
        #expect(try stack.context.fetch(request).isEmpty)
    }

    @Test func pendingRelationshipPredicate() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        car.setValue(ada, forKey: "owner")
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car"); request.predicate = NSPredicate(format: "owner.name = %@", "Ada")
        #expect(try stack.context.fetch(request) == [car])
        let people = NSFetchRequest<NSManagedObject>(entityName: "Person"); people.predicate = NSPredicate(format: "ANY cars.name = %@", "a")
        #expect(try stack.context.fetch(people) == [ada])
    }

    @Test func transformableRoundTrip() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        car.setValue(["x", "y"] as NSArray, forKey: "extras")
        try stack.context.save()
        let reopened = try stack.reopen()
        let reloaded = try reopened.fetch("Car")[0]
        #expect((reloaded.rv("extras") as? [String]) == ["x", "y"] || (reloaded.rv("extras") as? NSArray) == (["x", "y"] as NSArray))
        #expect(reloaded.changedValues().isEmpty)
        reloaded.setValue("b", forKey: "name")
        try reopened.context.save()
        let again = try stack.reopen()
        #expect((try again.fetch("Car")[0].rv("extras") as? NSArray) == (["x", "y"] as NSArray))
    }

    /// A stored transformable value its transformer can't read became nil with no word: it
    /// still reads as nil, and a warning naming the attribute is logged (once per attribute).
    @Test func anUnreadableTransformableValueIsLogged() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let raw = try SQLiteConnection(path: stack.url.path)
        try raw.execute("UPDATE ZCAR SET ZEXTRAS = X'00010203'")
        let reopened = try stack.reopen()
        #expect(try reopened.fetch("Car")[0].value(forKey: "extras") == nil)
        #expect(CoreDataLog.recent.withLock { $0 }.contains { $0.contains("Car.extras") && $0.contains("reads as nil") })
    }

    @Test func subentityAttributePredicates() throws {
        let stack = try TestStack()
        stack.insert("Truck", ["load": 2.5]); stack.insert("Truck", ["load": 0.5])
        stack.insert("Bike", ["load": 1]); stack.insert("Bike", ["load": 3])
        try stack.context.save()
        let reopened = try stack.reopen()
        #expect(try reopened.fetch("Bike") { $0.predicate = NSPredicate(format: "load > 2") }.count == 1)
        #expect(try reopened.fetch("Truck") { $0.predicate = NSPredicate(format: "load > 2") }.count == 1)
        #expect(try reopened.fetch("Bike") { $0.sortDescriptors = [NSSortDescriptor(key: "load", ascending: false)] }
                    .map { $0.rv("load") as? Int } == [3, 1])
        #expect(try reopened.fetch("Vehicle") { $0.predicate = NSPredicate(format: "wheels = 4") }.count == 4)
    }

    @Test func uniquenessViolationInOneContextThenFix() throws {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        let stack = try TestStack(model: model)
        stack.insert("Tag", ["label": "red"])
        let twin = stack.insert("Tag", ["label": "red"])
        #expect(throws: (any Error).self) { try stack.context.save() }
        #expect(stack.context.hasChanges)
        twin.setValue("blue", forKey: "label")
        try stack.context.save()
        #expect(try RawSQLite.query(stack.url.path, "SELECT count(*) FROM ZTAG").first?[0] == "2")
        #expect(!stack.context.hasChanges)
    }

    @Test func storeErrorMidSaveLeavesStatementsUsable() throws {
        // A constraint failure on the second insert of one entity, then a save that reuses the INSERT.
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        let stack = try TestStack(model: model)
        stack.insert("Tag", ["label": "a"]); try stack.context.save()
        let dup = stack.insert("Tag", ["label": "a"])
        #expect(throws: (any Error).self) { try stack.context.save() }
        stack.context.delete(dup)
        stack.insert("Tag", ["label": "b"])
        try stack.context.save()
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZLABEL FROM ZTAG ORDER BY Z_PK").map { $0[0] } == ["a", "b"])
    }

    @Test func validationErrorThenFixSaves() throws {
        let stack = try TestStack()
        let p = stack.insert("Person") // name is required
        #expect(throws: (any Error).self) { try stack.context.save() }
        p.setValue("ok", forKey: "name")
        try stack.context.save()
        #expect(!p.objectID.isTemporaryID)
    }

    @Test func temporaryIDFromAnotherContext() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        let other = stack.newContext()
        #expect(throws: (any Error).self) { try other.existingObject(with: car.objectID) }
        let ghost = other.object(with: car.objectID)
        _ = ghost.rv("name")
        // No row: as Apple's `shouldDeleteInaccessibleFaults`, it reads as deleted, in
        // `deletedObjects`, and the next save discards it, writing nothing.
        #expect(ghost.isDeleted && other.deletedObjects == [ghost])
        try other.save()
        #expect(!other.hasChanges)
        try stack.context.save()
        #expect(try other.existingObject(with: car.objectID).rvName == "a")
    }

    @Test func faultFiresAfterRowDeletedElsewhere() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let id = car.objectID
        let other = try stack.reopen()
        let fault = other.context.object(with: id)
        let third = try stack.reopen()
        third.context.delete(try third.context.existingObject(with: id))
        try third.context.save()
        #expect(fault.rv("name") == nil)
        #expect(throws: (any Error).self) { try other.context.existingObject(with: id) }
        // A deleted object (Apple's `shouldDeleteInaccessibleFaults`): an edit of it is not
        // saved, and the save that discards it writes no row back.
        fault.setValue("edited", forKey: "name")
        #expect(fault.isDeleted && other.context.deletedObjects == [fault])
        try other.context.save()
        #expect(try stack.rows("SELECT count(*) FROM ZCAR") == [["0"]])
    }

    @Test func uriRoundTripForSubentities() throws {
        let stack = try TestStack()
        let truck = stack.insert("Truck", ["load": 1.0]); let bike = stack.insert("Bike", ["load": 2])
        try stack.context.save()
        for object in [truck, bike] {
            let uri = object.objectID.uriRepresentation()
            let id = try #require(stack.coordinator.managedObjectID(forURIRepresentation: uri))
            #expect(id == object.objectID)
            #expect(id.entity.name == object.entity.name)
            let reopened = try stack.reopen()
            let reid = try #require(reopened.coordinator.managedObjectID(forURIRepresentation: uri))
            #expect(try reopened.context.existingObject(with: reid).entity.name == object.entity.name)
        }
        // A URI naming the abstract parent must not give an object of the abstract entity.
        let parentURI = URL(string: truck.objectID.uriRepresentation().absoluteString.replacingOccurrences(of: "/Truck/", with: "/Vehicle/"))!
        if let id = stack.coordinator.managedObjectID(forURIRepresentation: parentURI) {
            let other = stack.newContext()
            #expect(try other.existingObject(with: id).entity.name == "Truck")
        }
    }
}

@Suite("Review: order with pending changes")
struct ReviewOrderTests {
    @Test func unsortedFetchWithPendingUpdateKeepsPrimaryKeyOrder() throws {
        let stack = try TestStack()
        let a = stack.insert("Car", ["name": "a", "year": 1990]); stack.insert("Car", ["name": "b", "year": 2000])
        try stack.context.save()
        a.setValue(2010, forKey: "year")
        let names = try stack.fetch("Car") { $0.predicate = NSPredicate(format: "year > 1995") }.map(\.rvName)
        #expect(names == ["a", "b"])
    }
}
