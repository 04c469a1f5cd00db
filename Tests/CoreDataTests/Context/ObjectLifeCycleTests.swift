import Foundation
import Testing
@testable import CoreData

@Suite("Objects, IDs, faults and the context")
struct ObjectLifeCycleTests {
    @Test func insertSaveFetchAndReopen() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "Model T", "year": 1908])
        #expect(car.isInserted && car.hasChanges && stack.context.hasChanges)
        #expect(car.objectID.isTemporaryID)
        #expect(car.value(forKey: "electric") as? Bool == false, "default value")
        try stack.context.save()
        #expect(!car.isInserted && !car.hasChanges && !stack.context.hasChanges)
        #expect(!car.objectID.isTemporaryID)
        let other = try stack.reopen()
        let fetched = try other.fetch("Car")
        #expect(fetched.count == 1)
        #expect(fetched[0].value(forKey: "name") as? String == "Model T")
        #expect(fetched[0].value(forKey: "year") as? NSNumber == 1908)
        #expect(fetched[0].objectID.uriRepresentation() == car.objectID.uriRepresentation())
    }

    @Test func everyAttributeTypeRoundTrips() throws {
        let stack = try TestStack()
        let vin = UUID()
        let built = Date(timeIntervalSinceReferenceDate: 700_000_000.25)
        stack.insert("Car", ["name": "Ünïcødé ✓", "year": NSNumber(value: 1999), "price": 1.5, "built": built, "vin": vin,
                             "photo": Data([0, 255, 7]), "electric": true, "site": URL(string: "https://a.example/x?y=1")!,
                             "cost": Decimal(string: "12345.6789")!, "extras": ["a", "b"], "scratch": "temp"])
        try stack.context.save()
        let reopened = try stack.reopen()
        let car = try #require(try reopened.fetch("Car").first)
        #expect(car.value(forKey: "name") as? String == "Ünïcødé ✓")
        #expect(car.value(forKey: "year") as? Int == 1999)
        #expect(car.value(forKey: "price") as? Double == 1.5)
        #expect(car.value(forKey: "built") as? Date == built)
        #expect(car.value(forKey: "vin") as? UUID == vin)
        #expect(car.value(forKey: "photo") as? Data == Data([0, 255, 7]))
        #expect(car.value(forKey: "electric") as? Bool == true)
        #expect(car.value(forKey: "site") as? URL == URL(string: "https://a.example/x?y=1")!)
        #expect((car.value(forKey: "cost") as? NSDecimalNumber)?.decimalValue == Decimal(string: "12345.6789")!)
        #expect((car.value(forKey: "extras") as? NSArray)?.compactMap { $0 as? String } == ["a", "b"])
        #expect(car.value(forKey: "scratch") == nil, "transient values are not stored")
    }

    @Test func inMemoryStoreBehavesTheSame() throws {
        let stack = try TestStack(inMemory: true)
        for name in ["c", "a", "b"] { stack.insert("Car", ["name": name]) }
        try stack.context.save()
        let context = stack.newContext()
        let cars = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
        #expect(cars.map { $0.value(forKey: "name") as? String } == ["c", "a", "b"])
        cars[0].setValue("z", forKey: "name")
        try context.save()
        #expect(try stack.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).count == 3)
    }

    @Test func fetchReturnsInsertionOrderWithoutSortDescriptors() throws {
        let stack = try TestStack()
        let names = (0..<300).map { "\(($0 * 7919) % 1000)" }
        for name in names { stack.insert("Car", ["name": name]) }
        try stack.context.save()
        #expect(try stack.reopen().fetch("Car").map { $0.value(forKey: "name") as! String } == names)
    }

    @Test func uniquingGivesOneObjectPerID() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let first = try stack.fetch("Car")[0]
        let second = try stack.fetch("Car")[0]
        #expect(first === second)
        #expect(stack.context.object(with: first.objectID) === first)
        #expect(try stack.context.existingObject(with: first.objectID) === first)
        #expect(stack.context.registeredObject(for: first.objectID) === first)
    }

    @Test func fetchedObjectsAreFaultsUntilTouched() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let other = try stack.reopen()
        let car = try other.fetch("Car")[0]
        #expect(car.isFault)
        _ = car.value(forKey: "name")
        #expect(!car.isFault)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.returnsObjectsAsFaults = false
        let third = try stack.reopen()
        #expect(try third.context.fetch(request).allSatisfy { !$0.isFault })
    }

    @Test func objectWithIDIsAFaultThatLoadsOnAccess() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let context = stack.newContext()
        let fault = context.object(with: car.objectID)
        #expect(fault.isFault)
        #expect(fault.value(forKey: "name") as? String == "a")
        #expect(!fault.isFault)
    }

    @Test func existingObjectThrowsForMissingRows() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let id = car.objectID
        stack.context.delete(car)
        try stack.context.save()
        let context = stack.newContext()
        #expect(throws: NSError.self) { try context.existingObject(with: id) }
        do { _ = try context.existingObject(with: id) } catch let error as NSError {
            #expect(error.code == NSManagedObjectReferentialIntegrityError)
        }
        // object(with:) never fails; its fault reads as deleted.
        let ghost = context.object(with: id)
        #expect(ghost.value(forKey: "name") == nil)
        #expect(ghost.isDeleted)
    }

    @Test func uriRepresentationRoundTrips() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        #expect(car.objectID.uriRepresentation().absoluteString.hasPrefix("x-coredata:///Car/t"))
        try stack.context.save()
        let uri = car.objectID.uriRepresentation()
        let store = stack.coordinator.persistentStores[0]
        #expect(uri.absoluteString == "x-coredata://\(store.identifier!)/Car/p1")
        let id = try #require(stack.coordinator.managedObjectID(forURIRepresentation: uri))
        #expect(id == car.objectID)
        #expect(id.hashValue == car.objectID.hashValue)
        #expect(stack.coordinator.managedObjectID(forURIRepresentation: URL(string: "x-coredata://nope/Car/p1")!) == nil)
        #expect(stack.coordinator.managedObjectID(forURIRepresentation: URL(string: "https://example.com")!) == nil)
    }

    @Test func obtainPermanentIDsBeforeSave() throws {
        let stack = try TestStack()
        let a = stack.insert("Car", ["name": "a"])
        let b = stack.insert("Car", ["name": "b"])
        try stack.context.obtainPermanentIDs(for: [a, b])
        #expect(!a.objectID.isTemporaryID && !b.objectID.isTemporaryID)
        let ids = (a.objectID, b.objectID)
        try stack.context.save()
        #expect(a.objectID == ids.0 && b.objectID == ids.1)
        #expect(stack.context.registeredObject(for: ids.0) === a)
        #expect(try stack.reopen().fetch("Car").count == 2)
    }

    @Test func changeTrackingAndCommittedValues() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a", "year": 1950])
        try stack.context.save()
        #expect(car.changedValues().isEmpty)
        car.setValue("b", forKey: "name")
        car.setValue("scratch", forKey: "scratch")
        #expect(car.isUpdated && car.hasPersistentChangedValues)
        #expect(car.changedValues().keys.sorted() == ["name"])
        #expect(car.changedValues()["name"] as? String == "b")
        #expect(car.committedValues(forKeys: ["name"])["name"] as? String == "a")
        #expect(stack.context.updatedObjects.contains(car))
        try stack.context.save()
        #expect(!car.isUpdated && car.committedValues(forKeys: ["name"])["name"] as? String == "b")
    }

    @Test func rollbackRestoresLastSavedState() throws {
        let stack = try TestStack()
        let kept = stack.insert("Car", ["name": "kept"])
        let doomed = stack.insert("Car", ["name": "doomed"])
        try stack.context.save()
        kept.setValue("changed", forKey: "name")
        stack.context.delete(doomed)
        let fresh = stack.insert("Car", ["name": "fresh"])
        stack.context.rollback()
        #expect(!stack.context.hasChanges)
        #expect(kept.value(forKey: "name") as? String == "kept")
        #expect(!doomed.isDeleted)
        #expect(fresh.managedObjectContext == nil)
        #expect(try stack.fetch("Car").count == 2)
    }

    @Test func resetForgetsEverything() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        stack.insert("Car", ["name": "unsaved"])
        stack.context.reset()
        #expect(!stack.context.hasChanges)
        #expect(stack.context.registeredObjects.isEmpty)
        #expect(car.managedObjectContext == nil)
        #expect(try stack.fetch("Car").count == 1)
    }

    @Test func refreshDiscardsOrKeepsChanges() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a", "year": 1950])
        try stack.context.save()
        let other = stack.newContext()
        let mirror = try other.existingObject(with: car.objectID)
        mirror.setValue(1960, forKey: "year")
        try other.save()

        car.setValue("b", forKey: "name")
        stack.context.refresh(car, mergeChanges: true)
        #expect(car.value(forKey: "name") as? String == "b", "unsaved change kept")
        #expect(car.value(forKey: "year") as? Int == 1960, "store value taken")
        try stack.context.save() // no conflict: the refresh took the store's version

        car.setValue("c", forKey: "name")
        stack.context.refresh(car, mergeChanges: false)
        #expect(car.isFault)
        #expect(car.value(forKey: "name") as? String == "b")
        #expect(!stack.context.hasChanges)
    }

    @Test func lifeCycleHooksRun() throws {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.managedObjectClassName = String(reflecting: HookedCar.self)
        let stack = try TestStack(model: model)
        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: stack.context)
        let hooked = try #require(car as? HookedCar)
        #expect(hooked.events == ["awakeFromInsert"])
        hooked.setValue("x", forKey: "name")
        try stack.context.save()
        #expect(hooked.events == ["awakeFromInsert", "willSave", "didSave"])
        stack.context.delete(hooked)
        stack.context.processPendingChanges()
        #expect(hooked.events.last == "prepareForDeletion")
        let reopened = try stack.reopen()
        let fetched = try reopened.fetch("Car")[0] as! HookedCar
        _ = fetched.value(forKey: "name")
        #expect(fetched.events == ["awakeFromFetch"])
    }

    @Test func classNamesResolveOrFallBack() throws {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.managedObjectClassName = String(reflecting: HookedCar.self)
        model.entitiesByName["Tag"]!.managedObjectClassName = "NoSuchModule.NoSuchClass"
        let stack = try TestStack(model: model)
        #expect(stack.insert("Car") is HookedCar)
        #expect(type(of: stack.insert("Tag")) == NSManagedObject.self)
        #expect(try stack.context.fetch(NSFetchRequest<HookedCar>(entityName: "Car")).count == 1)
    }

    @Test func fetchIncludesPendingChanges() throws {
        let stack = try TestStack()
        let a = stack.insert("Car", ["name": "a"])
        stack.insert("Car", ["name": "b"])
        try stack.context.save()
        stack.context.delete(a)
        stack.insert("Car", ["name": "c"])
        #expect(try stack.fetch("Car").map { $0.value(forKey: "name") as? String } == ["b", "c"])
        #expect(try stack.context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == 2)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.includesPendingChanges = false
        #expect(try stack.context.fetch(request).count == 2)
        #expect(try stack.context.fetch(request).contains(a))
    }

    @Test func subentitiesAreFetchedThroughTheirParent() throws {
        let stack = try TestStack()
        stack.insert("Truck", ["load": 2.5])
        stack.insert("Bike", ["load": 1])
        try stack.context.save()
        let other = try stack.reopen()
        let vehicles = try other.fetch("Vehicle")
        #expect(vehicles.map { $0.entity.name } == ["Truck", "Bike"])
        #expect(vehicles[0].value(forKey: "load") as? Double == 2.5)
        #expect(vehicles[1].value(forKey: "load") as? Int == 1)
        #expect(try other.fetch("Truck").count == 1)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Vehicle")
        request.includesSubentities = false
        #expect(try other.context.fetch(request).isEmpty)
    }

    @Test func resultTypes() throws {
        let stack = try TestStack()
        for name in ["a", "b"] { stack.insert("Car", ["name": name]) }
        try stack.context.save()
        let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Car")
        ids.resultType = .managedObjectIDResultType
        #expect(try stack.context.fetch(ids).count == 2)
        let count = NSFetchRequest<NSNumber>(entityName: "Car")
        count.resultType = .countResultType
        #expect(try stack.context.fetch(count) == [2])
        let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Car")
        dictionaries.resultType = .dictionaryResultType
        dictionaries.propertiesToFetch = ["name"]
        #expect(try stack.context.fetch(dictionaries).map { $0["name"] as? String } == ["a", "b"])
        let any = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
        #expect(try stack.context.fetch(any).count == 2)
        // Every result type through NSFetchRequest<NSFetchRequestResult>, as Apple's code writes it.
        for type in [NSFetchRequestResultType.managedObjectIDResultType, .dictionaryResultType, .countResultType] {
            any.resultType = type
            let results = try stack.context.fetch(any)
            #expect(results.count == (type == .countResultType ? 1 : 2))
        }
        any.resultType = .managedObjectIDResultType
        #expect(try stack.context.fetch(any).allSatisfy { $0 is NSManagedObjectID })
        let limited = NSFetchRequest<NSManagedObject>(entityName: "Car")
        limited.fetchLimit = 1
        limited.fetchOffset = 1
        #expect(try stack.context.fetch(limited).map { $0.value(forKey: "name") as? String } == ["b"])
    }

    @Test func unknownEntityNameThrows() throws {
        let stack = try TestStack()
        #expect(throws: NSError.self) { try stack.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Nope")) }
        #expect(NSEntityDescription.entity(forEntityName: "Nope", in: stack.context) == nil)
    }
}

final class HookedCar: NSManagedObject {
    var events: [String] = []
    override func awakeFromInsert() { events.append("awakeFromInsert") }
    override func awakeFromFetch() { events.append("awakeFromFetch") }
    override func willSave() { events.append("willSave") }
    override func didSave() { events.append("didSave") }
    override func prepareForDeletion() { events.append("prepareForDeletion") }
}
