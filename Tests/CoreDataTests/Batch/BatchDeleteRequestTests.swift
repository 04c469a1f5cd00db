import Foundation
import Testing
@testable import CoreData

/// `NSBatchDeleteRequest` on both stores: both forms, every result type, and what Apple's batch
/// delete does with relationships (cascade, deny, nullify: nothing left pointing at a deleted
/// row, join-table rows removed) and with external binary data files.
@Suite("Batch delete requests")
struct BatchDeleteRequestTests {
    static func request(_ entity: String, _ predicate: NSPredicate? = nil, _ type: NSBatchDeleteRequestResultType) -> NSBatchDeleteRequest {
        let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: entity)
        fetch.predicate = predicate
        let request = NSBatchDeleteRequest(fetchRequest: fetch)
        request.resultType = type
        return request
    }

    static func names(_ stack: TestStack, _ entity: String, _ key: String = "name") throws -> [String] {
        try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: entity)).compactMap { $0.value(forKey: key) as? String }.sorted()
    }

    @Test("From a fetch request, and from object IDs; every result type", arguments: [false, true])
    func forms(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        let cars = (1...6).map { stack.insert("Car", ["name": "c\($0)", "year": 2000 + $0]) }
        try stack.context.save()
        let byPredicate = Self.request("Car", NSPredicate(format: "year > %d", 2004), .resultTypeObjectIDs)
        let result = try #require(try stack.context.execute(byPredicate) as? NSBatchDeleteResult)
        #expect(result.resultType == .resultTypeObjectIDs)
        #expect(Set(try #require(result.result as? [NSManagedObjectID])) == Set([cars[4].objectID, cars[5].objectID]))
        #expect(try Self.names(stack, "Car") == ["c1", "c2", "c3", "c4"])
        let byIDs = NSBatchDeleteRequest(objectIDs: [cars[0].objectID, cars[2].objectID])
        byIDs.resultType = .resultTypeCount
        #expect((try stack.context.execute(byIDs) as? NSBatchDeleteResult)?.result as? Int == 2)
        #expect(try Self.names(stack, "Car") == ["c2", "c4"])
        let typed = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSManagedObject>(entityName: "Car"))
        #expect((try stack.context.execute(typed) as? NSBatchDeleteResult)?.result as? Bool == true)
        #expect(try Self.names(stack, "Car").isEmpty)
        #expect((try stack.context.execute(Self.request("Car", nil, .resultTypeCount)) as? NSBatchDeleteResult)?.result as? Int == 0)
    }

    @Test("Sub-entities: the fetch request's includesSubentities decides", arguments: [false, true])
    func subentities(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        stack.insert("Truck", ["wheels": 6])
        stack.insert("Bike", ["wheels": 2])
        try stack.context.save()
        let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Vehicle")
        fetch.includesSubentities = false
        let none = NSBatchDeleteRequest(fetchRequest: fetch)
        none.resultType = .resultTypeCount
        #expect((try stack.context.execute(none) as? NSBatchDeleteResult)?.result as? Int == 0)
        let all = Self.request("Vehicle", NSPredicate(format: "wheels > 1"), .resultTypeObjectIDs)
        let ids = try #require((try stack.context.execute(all) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID])
        #expect(Set(ids.map { $0.entity.name! }) == ["Truck", "Bike"])
    }

    @Test("Delete rules: cascade deletes, deny refuses (nothing deleted), the rest nulled; join-table rows go", arguments: [false, true])
    func relationships(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        let owner = stack.insert("Person", ["name": "p"])
        let keeper = stack.insert("Person", ["name": "k"])
        let tag = stack.insert("Tag", ["label": "t"])
        let cars = (1...3).map { stack.insert("Car", ["name": "c\($0)"]) }
        cars[0].setValue(owner, forKey: "owner")
        cars[1].setValue(owner, forKey: "owner")
        cars[2].setValue(keeper, forKey: "owner")
        for car in cars { car.mutableSetValue(forKey: "tags").add(tag) }
        let playlist = stack.insert("Playlist", ["title": "l"])
        let song = stack.insert("Song", ["title": "s"])
        song.setValue(playlist, forKey: "playlist")
        let garage = stack.insert("Garage", ["city": "g"])
        stack.insert("Truck").setValue(garage, forKey: "garage")
        try stack.context.save()

        // Person.cars cascades: deleting the owner deletes its cars, and their join rows.
        let people = Self.request("Person", NSPredicate(format: "name == %@", "p"), .resultTypeObjectIDs)
        let deleted = try #require((try stack.context.execute(people) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID])
        #expect(Set(deleted) == Set([owner.objectID, cars[0].objectID, cars[1].objectID]))
        #expect(try Self.names(stack, "Car") == ["c3"])
        let reader = stack.newContext()
        let readTag = reader.object(with: tag.objectID)
        #expect((readTag.value(forKey: "cars") as? Set<NSManagedObject>)?.map { $0.objectID } == [cars[2].objectID])
        // Nullify: deleting the playlist leaves the song without one.
        _ = try stack.context.execute(Self.request("Playlist", nil, .resultTypeStatusOnly))
        let songReader = stack.newContext()
        let readSong = songReader.object(with: song.objectID)
        #expect(readSong.value(forKey: "title") as? String == "s")
        #expect(readSong.value(forKey: "playlist") == nil)
        // A tag deleted: the remaining car's join row goes, the car stays.
        _ = try stack.context.execute(Self.request("Tag", nil, .resultTypeStatusOnly))
        let carReader = stack.newContext()
        let readCar = carReader.object(with: cars[2].objectID)
        #expect((readCar.value(forKey: "tags") as? Set<NSManagedObject>)?.isEmpty == true)
        // Garage.vehicles denies: nothing deleted.
        let error = try #require(throws: NSError.self) { try stack.context.execute(Self.request("Garage", nil, .resultTypeCount)) }
        #expect(error.domain == NSCocoaErrorDomain && error.code == 1600)
        #expect(try Self.names(stack, "Garage", "city") == ["g"])
        if !inMemory {
            let join = try #require(try stack.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'Z_[0-9]*'").first?.first)
            #expect(try stack.rows("SELECT count(*) FROM \(join)") == [["0"]])
            // The nullified row's version moves, as Apple's trigger does (optimistic locking sees it).
            #expect(try stack.rows("SELECT ZPLAYLIST, Z_FOK_PLAYLIST, Z_OPT FROM ZSONG") == [["NULL", "NULL", "2"]])
            #expect(try stack.rows("SELECT count(*) FROM ZVEHICLE WHERE ZGARAGE IS NOT NULL") == [["1"]])
        }
    }

    @Test("A deny rule does not count rows the same batch delete deletes, in every store", arguments: [false, true])
    func denyIgnoresRowsTheRequestDeletes(inMemory: Bool) throws {
        let model = TestModel.make()
        (model.entitiesByName["Car"]!.relationshipsByName["owner"]!).deleteRule = .denyDeleteRule
        let stack = try TestStack(model: model, inMemory: inMemory)
        let ada = stack.insert("Person", ["name": "Ada"])
        stack.insert("Car", ["name": "T", "owner": ada]) // Person.cars cascades
        try stack.context.save()
        _ = try stack.context.execute(Self.request("Person", nil, .resultTypeStatusOnly))
        let reader = stack.newContext()
        #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == 0)
        #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 0)
    }

    @Test("A row whose to-one a batch delete cleared has a new version in every store: a context holding it meets a conflict", arguments: [false, true])
    func aClearedRowsVersionMoves(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        let playlist = stack.insert("Playlist", ["title": "p"])
        let song = stack.insert("Song", ["title": "s", "playlist": playlist])
        try stack.context.save()
        _ = try stack.context.execute(Self.request("Playlist", nil, .resultTypeStatusOnly))
        song.setValue("x", forKey: "title")
        let error = #expect(throws: NSError.self) { try stack.context.save() }
        #expect(error?.code == NSManagedObjectMergeError)
    }

    @Test("Refused: a predicate on a missing key, IDs of two entities, an unknown entity; nothing deleted", arguments: [false, true])
    func refusals(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        let car = stack.insert("Car", ["name": "c"])
        let tag = stack.insert("Tag", ["label": "t"])
        try stack.context.save()
        let missing = try #require(throws: NSError.self) {
            try stack.context.execute(Self.request("Car", NSPredicate(format: "colour == %@", "red"), .resultTypeCount))
        }
        #expect(missing.domain == NSCocoaErrorDomain && missing.localizedDescription.contains("colour"))
        let mixed = try #require(throws: NSError.self) {
            try stack.context.execute(NSBatchDeleteRequest(objectIDs: [car.objectID, tag.objectID]))
        }
        #expect(mixed.domain == NSCocoaErrorDomain && mixed.code == 134060)
        let unknown = try #require(throws: NSError.self) { try stack.context.execute(Self.request("Boat", nil, .resultTypeCount)) }
        #expect(unknown.code == 134060)
        #expect(try Self.names(stack, "Car") == ["c"])
        #expect(try Self.names(stack, "Tag", "label") == ["t"])
    }

    /// One entity with no relationship: its rows go in one `DELETE … WHERE …`.
    static func logModel() -> NSManagedObjectModel {
        let log = NSEntityDescription()
        log.name = "Log"
        let level = NSAttributeDescription()
        level.name = "level"
        level.attributeType = .integer64AttributeType
        log.properties = [level]
        let model = NSManagedObjectModel()
        model.entities = [log]
        return model
    }

    @Test("A table nothing refers to: by predicate, whole, and no IDs at all", arguments: [false, true])
    func plainTable(inMemory: Bool) throws {
        let stack = try TestStack(model: Self.logModel(), inMemory: inMemory)
        for level in 1...10 { stack.insert("Log", ["level": level]) }
        try stack.context.save()
        #expect((try stack.context.execute(Self.request("Log", NSPredicate(format: "level <= 4"), .resultTypeCount)) as? NSBatchDeleteResult)?.result as? Int == 4)
        let levels = try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Log")).compactMap { $0.value(forKey: "level") as? Int }
        #expect(levels.sorted() == Array(5...10))
        let none = NSBatchDeleteRequest(objectIDs: [])
        none.resultType = .resultTypeObjectIDs
        #expect((try stack.context.execute(none) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID] == [])
        #expect((try stack.context.execute(Self.request("Log", nil, .resultTypeCount)) as? NSBatchDeleteResult)?.result as? Int == 6)
        #expect(try stack.newContext().count(for: NSFetchRequest<NSManagedObject>(entityName: "Log")) == 0)
    }

    @Test("A predicate through a to-one relationship", arguments: [false, true])
    func predicateThroughARelationship(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        let owner = stack.insert("Person", ["name": "p"])
        for name in ["a", "b", "c"] { stack.insert("Car", ["name": name]).setValue(name == "c" ? nil : owner, forKey: "owner") }
        try stack.context.save()
        let request = Self.request("Car", NSPredicate(format: "owner.name == %@", "p"), .resultTypeCount)
        #expect((try stack.context.execute(request) as? NSBatchDeleteResult)?.result as? Int == 2)
        #expect(try Self.names(stack, "Car") == ["c"])
        #expect(try Self.names(stack, "Person") == ["p"])
    }

    @Test("Two stores of one entity: affectedStores, IDs deleted in their own store, a fetch request in both")
    func twoStores() throws {
        let stack = try TestStack()
        let second = try stack.coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let first = stack.coordinator.persistentStores[0]
        func insert(_ name: String, into store: NSPersistentStore) throws -> NSManagedObjectID {
            let request = NSBatchInsertRequest(entityName: "Car", objects: [["name": name]])
            request.resultType = .objectIDs
            request.affectedStores = [store]
            return try #require((try stack.context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID]).first!
        }
        let a = try insert("a", into: first), b = try insert("b", into: second)
        _ = try insert("c", into: second)
        #expect(a.primaryKey == 1 && b.primaryKey == 1 && a.persistentStore === first && b.persistentStore === second)
        let byID = NSBatchDeleteRequest(objectIDs: [b])
        byID.resultType = .resultTypeObjectIDs
        #expect((try stack.context.execute(byID) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID] == [b])
        #expect(try Self.names(stack, "Car") == ["a", "c"])
        #expect((try stack.context.execute(Self.request("Car", nil, .resultTypeCount)) as? NSBatchDeleteResult)?.result as? Int == 2)
        #expect(try Self.names(stack, "Car").isEmpty)
    }

    @Test("External binary data files of deleted rows are removed after the commit")
    func externalData() throws {
        let stack = try TestStack(model: ExternalBinaryStorageTests.makeModel())
        try ExternalBinaryStorageTests.insert(stack, "kept", ExternalBinaryStorageTests.large + Data([1]))
        try ExternalBinaryStorageTests.insert(stack, "gone", ExternalBinaryStorageTests.large + Data([2]))
        let folder = stack.directory.appendingPathComponent(".Test_SUPPORT/_EXTERNAL_DATA")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 2)
        _ = try stack.context.execute(Self.request("Photo", NSPredicate(format: "name == %@", "gone"), .resultTypeStatusOnly))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 1)
        let kept = try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Photo"))
        #expect(kept.map { $0.value(forKey: "name") as? String } == ["kept"])
        #expect(kept.first?.value(forKey: "image") as? Data == ExternalBinaryStorageTests.large + Data([1]))
    }
}
