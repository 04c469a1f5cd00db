import CSQLite
import Foundation
import Testing
@testable import CoreData

/// The coordinator's row cache: a second context's fault on a row another context just saved
/// is served from memory, and never with an older snapshot than the store holds.
@Suite("The row cache")
struct RowCacheTests {
    private func sqliteStore(_ stack: TestStack) throws -> SQLiteStore {
        try #require(stack.coordinator.persistentStores.first as? SQLiteStore)
    }

    /// The name, year and version a new context of `stack` faults in for `id`.
    private func fault(_ id: NSManagedObjectID, in stack: TestStack) throws -> (String?, Int?, Int64?) {
        let context = stack.newContext()
        let car = try context.existingObject(with: id)
        return (car.value(forKey: "name") as? String, car.value(forKey: "year") as? Int, car._snapshot?.version)
    }

    @Test func aSecondContextsFaultGetsTheSavedValuesAndVersionWithoutReadingTheFile() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a", "year": 1950])
        try stack.context.save()
        car.setValue("b", forKey: "name")
        car.setValue(1960, forKey: "year")
        try stack.context.save()
        let (name, year, version) = try fault(car.objectID, in: stack)
        #expect(name == "b")
        #expect(year == 1960)
        #expect(version == 2)
        // Nothing has read the file since the store opened: the fault came from the cache.
        #expect(try sqliteStore(stack).readerCounts.open == 0)
    }

    @Test func consecutiveSavesNeverLeaveAnOlderSnapshot() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "v1", "year": 1901])
        try stack.context.save()
        let reader = stack.newContext()
        let mirror = try reader.existingObject(with: car.objectID)
        #expect(mirror.value(forKey: "name") as? String == "v1")
        for version in 2...5 {
            car.setValue("v\(version)", forKey: "name")
            car.setValue(1900 + version, forKey: "year")
            try stack.context.save()
            reader.refresh(mirror, mergeChanges: false)
            #expect(mirror.value(forKey: "name") as? String == "v\(version)")
            #expect(mirror.value(forKey: "year") as? Int == 1900 + version)
            #expect(mirror._snapshot?.version == Int64(version))
            let (name, _, fresh) = try fault(car.objectID, in: stack)
            #expect(name == "v\(version)" && fresh == Int64(version))
        }
        // What the file holds agrees.
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZNAME, Z_OPT FROM ZCAR").first! == ["v5", "5"])
    }

    @Test func aDeletedRowLeavesTheCache() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "gone"])
        try stack.context.save()
        let id = car.objectID
        #expect(try fault(id, in: stack).0 == "gone")
        stack.context.delete(car)
        try stack.context.save()
        #expect(!stack.coordinator.rowCache.contains(try #require(cacheKey(id, stack))))
        #expect(throws: NSError.self) { try stack.newContext().existingObject(with: id) }
    }

    @Test func aConflictThenAMergeSavesOverTheCachedRow() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a", "year": 1950])
        try stack.context.save()
        let other = stack.newContext()
        let stale = try other.existingObject(with: car.objectID)
        _ = stale.value(forKey: "name")
        car.setValue(1960, forKey: "year")
        try stack.context.save() // version 2, cached
        stale.setValue("b", forKey: "name")
        #expect(throws: NSError.self) { try other.save() } // expected version 1
        other.refresh(stale, mergeChanges: true) // takes version 2 (from the cache), keeps "b"
        #expect(stale.value(forKey: "year") as? Int == 1960)
        try other.save()
        let (name, year, version) = try fault(car.objectID, in: stack)
        #expect(name == "b" && year == 1960 && version == 3)
    }

    @Test func anotherCoordinatorsSaveIsSeenAtOnce() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "mine", "year": 1950])
        try stack.context.save()
        #expect(try fault(car.objectID, in: stack).0 == "mine")
        let other = try stack.reopen()
        try other.fetch("Car")[0].setValue("theirs", forKey: "name")
        try other.context.save()
        let (name, _, version) = try fault(car.objectID, in: stack)
        #expect(name == "theirs")
        #expect(version == 2)
    }

    @Test func anotherProcesssWriteIsSeenAtOnce() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "mine", "year": 1950])
        try stack.context.save()
        #expect(try fault(car.objectID, in: stack).0 == "mine")
        try RawSQLite.execute(stack.url.path, "UPDATE ZCAR SET ZNAME = 'raw', Z_OPT = Z_OPT + 1")
        let (name, _, version) = try fault(car.objectID, in: stack)
        #expect(name == "raw")
        #expect(version == 2)
    }

    @Test func theCachedRowIsWhatTheStoreReadsBack() throws {
        let stack = try TestStack()
        let owner = stack.insert("Person", ["name": "Ada"])
        let base = URL(string: "https://a.example/cars/")!
        let car = stack.insert("Car", [
            "name": "Ünïcødé ✓", "year": 1999, "price": Double.nan, "built": Date(timeIntervalSinceReferenceDate: 700_000_000.25),
            "vin": UUID(), "photo": Data(), "electric": true, "site": URL(string: "x?y=1", relativeTo: base)!,
            "cost": Decimal(string: "12345.6789")!, "extras": ["a", "b"], "scratch": "transient", "owner": owner,
        ])
        car.mutableSetValue(forKey: "tags").add(stack.insert("Tag", ["label": "fast"]))
        let truck = stack.insert("Truck", ["load": 2.5, "garage": stack.insert("Garage", ["city": "Oslo"])])
        try stack.context.save()
        car.setValue("updated", forKey: "name")
        try stack.context.save()
        let store = try sqliteStore(stack)
        for object in [car, owner, truck] {
            let key = try #require(cacheKey(object.objectID, stack))
            let cached = try #require(stack.coordinator.rowCache.row(for: key))
            let read = try #require(try store.row(for: object.objectID))
            #expect(cached.entity === read.entity)
            #expect(cached.version == read.version)
            #expect(cached.values == read.values, "\(object.entity.name ?? "")")
        }
    }

    /// A decimal with more digits than a double holds is stored rounded (the column has numeric
    /// affinity, as in Apple's files): the row cache does not keep the exact value the file lacks.
    @Test func aDecimalTheFileRoundsReadsTheSameFromTheCacheAndTheFile() throws {
        let stack = try TestStack()
        let exact = Decimal(string: "0.1234567890123456789")!
        let car = stack.insert("Car", ["name": "a", "cost": exact])
        let plain = stack.insert("Car", ["name": "b", "cost": Decimal(string: "12345.6789")!])
        try stack.context.save()
        let fromCache = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        fromCache.persistentStoreCoordinator = stack.coordinator
        let cached = try #require(fromCache.object(with: car.objectID).value(forKey: "cost") as? Decimal)
        let reopened = try stack.reopen()
        let read = try #require(try reopened.fetch("Car").first { $0.value(forKey: "name") as? String == "a" }?.value(forKey: "cost") as? Decimal)
        #expect(cached == read)
        #expect(read != exact)
        #expect(stack.coordinator.rowCache.row(for: try #require(cacheKey(plain.objectID, stack))) != nil)
    }

    @Test func aToOneIntoAHierarchyIsCachedWithItsExactEntity() throws {
        let shape = NSEntityDescription(); shape.name = "Shape"
        let circle = NSEntityDescription(); circle.name = "Circle"
        let drawing = NSEntityDescription(); drawing.name = "Drawing"
        let radius = NSAttributeDescription(); radius.name = "radius"; radius.attributeType = .doubleAttributeType
        let toShape = NSRelationshipDescription(); toShape.name = "shape"; toShape.destinationEntity = shape; toShape.maxCount = 1
        let drawings = NSRelationshipDescription(); drawings.name = "drawings"; drawings.destinationEntity = drawing; drawings.maxCount = 0
        toShape.inverseRelationship = drawings; drawings.inverseRelationship = toShape
        circle.properties = [radius]
        shape.properties = [drawings]
        shape.subentities = [circle]
        drawing.properties = [toShape]
        let model = NSManagedObjectModel()
        model.entities = [shape, circle, drawing]
        let stack = try TestStack(model: model)
        let picture = stack.insert("Drawing", ["shape": stack.insert("Circle", ["radius": 1.0])])
        try stack.context.save()
        let key = try #require(cacheKey(picture.objectID, stack))
        let cached = try #require(stack.coordinator.rowCache.row(for: key))
        let read = try #require(try sqliteStore(stack).row(for: picture.objectID))
        #expect(cached.values == read.values)
        guard case .objectID(let target)? = cached.values.first(where: { !$0.isNull }) else {
            Issue.record("no to-one in the cached row")
            return
        }
        #expect(target.entity.name == "Circle")
    }

    @Test func largeSavesKeepTheCacheBoundedAndCorrect() throws {
        let stack = try TestStack()
        let capacity = stack.coordinator.rowCache.capacity
        let count = capacity + 904
        var cars: [NSManagedObject] = []
        for i in 0..<count { cars.append(stack.insert("Car", ["name": "car \(i)", "year": 1950])) }
        try stack.context.save()
        #expect(stack.coordinator.rowCache.count <= capacity)
        for car in cars { car.setValue(1960, forKey: "year") }
        try stack.context.save()
        #expect(stack.coordinator.rowCache.count <= capacity)
        // Every row, cached or not, comes back with the update.
        for car in [cars[0], cars[903], cars[904], cars[count - 1]] {
            let (_, year, version) = try fault(car.objectID, in: stack)
            #expect(year == 1960 && version == 2)
        }
    }

    @Test func removingTheStoreEmptiesItsPartOfTheCache() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        #expect(stack.coordinator.rowCache.count == 1)
        try stack.coordinator.remove(try #require(stack.coordinator.persistentStores.first))
        #expect(stack.coordinator.rowCache.count == 0)
    }

    @Test func theInMemoryStoreUsesNoCache() throws {
        let stack = try TestStack(inMemory: true)
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        #expect(stack.coordinator.rowCache.count == 0)
    }

    @Test func theOldestRowsLeaveFirst() {
        let cache = RowCache(capacity: 4)
        let entity = TestModel.make().entitiesByName["Car"]!
        func key(_ value: Int64) -> IDKey { IDKey(store: 1, root: 1, value: value) }
        func row(_ version: Int64) -> RowSnapshot { RowSnapshot(entity: entity, values: [], version: version) }
        cache.record((1...6).map { CachedRow(key: key($0), row: row($0)) }, forgetting: [])
        #expect(!cache.contains(key(1)) && !cache.contains(key(2)))
        #expect((3...6).allSatisfy { cache.contains(key($0)) })
        cache.record([CachedRow(key: key(3), row: row(30))], forgetting: [key(6)])
        #expect(cache.row(for: key(3))?.version == 30, "the newer copy wins")
        #expect(!cache.contains(key(6)))
        cache.forgetRows(ofStore: 1)
        #expect(cache.count == 0)
    }

    /// The cache key of an object ID of `stack`'s store.
    /// `stalenessInterval = 0` means no cached data is acceptable: the fault reads the store.
    @Test func aContextWithZeroStalenessIgnoresTheCache() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "stored"])
        try stack.context.save()
        let key = try #require(cacheKey(car.objectID, stack))
        var planted = try #require(stack.coordinator.rowCache.row(for: key))
        planted.values[car.entity.layout.nameTable.index(of: "name")!] = .string("planted in the cache")
        stack.coordinator.rowCache.record([CachedRow(key: key, row: planted)], forgetting: [])
        func name(staleness: TimeInterval) -> String? {
            let context = stack.newContext()
            context.stalenessInterval = staleness
            return context.object(with: car.objectID).value(forKey: "name") as? String
        }
        #expect(name(staleness: -1) == "planted in the cache", "the default takes the cached row")
        #expect(name(staleness: 0) == "stored")
    }

    private func cacheKey(_ id: NSManagedObjectID, _ stack: TestStack) -> IDKey? {
        guard let store = stack.coordinator.persistentStores.first, let pk = id.primaryKey else { return nil }
        return IDKey(store: store.tag, root: id.entity.layout.rootNumber, value: pk)
    }
}
