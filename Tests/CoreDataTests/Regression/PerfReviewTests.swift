import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Review of the perf-store / perf-values / perf-ctx changes: risky paths of lazy registration
/// of new objects, the deferred registry list, implicit primary keys and the typed values buffer.
@Suite("Performance changes: review")
struct PerfReviewTests {
    private let many = SQLiteStore.appendingMinimum

    /// Runs `first` and `second`, each on a thread of its own, started while `context`'s registry
    /// lock is held so that they meet at it (in that order); returns when both are done.
    private func meetAtRegistryLock(of context: NSManagedObjectContext, _ first: @escaping @Sendable () -> Void,
                                    _ second: @escaping @Sendable () -> Void) {
        let started = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        done.enter(); done.enter()
        context.withRegistryLock { _ in
            for body in [first, second] {
                Thread.detachNewThread {
                    started.signal()
                    body()
                    done.leave()
                }
            }
            started.wait(); started.wait()
            usleep(1000)
        }
        done.wait()
    }

    // MARK: Lazy registration of new objects

    /// A new object deleted and then rolled back before `processPendingChanges` is in neither
    /// the inserted set nor `pendingDeletes` after the rollback. It was never registered (its
    /// ID was not asked for), so nothing detaches it: it must leave the context at the rollback,
    /// or it keeps an unretained pointer to a context that may be freed (its `deinit` then
    /// unregisters from freed memory).
    @Test func rollbackDetachesANewObjectDeletedBeforeProcessing() throws {
        let stack = try TestStack()
        var context: NSManagedObjectContext? = stack.newContext()
        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context!)
        context!.delete(car)
        context!.rollback()
        try #require(car.managedObjectContext == nil) // (otherwise the end reads a freed context)
        #expect(!context!.registeredObjects.contains(car))
        #expect(!context!.hasChanges)
        weak let gone = context
        context = nil
        #expect(gone == nil)
        #expect(car.managedObjectContext == nil) // would read a freed context
    }

    /// The same with a new object whose ID was asked for (registered under its temporary ID).
    @Test func rollbackForgetsTheTemporaryIDOfANewObjectDeletedBeforeProcessing() throws {
        let stack = try TestStack()
        let context = stack.newContext()
        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
        let id = car.objectID
        context.delete(car)
        context.rollback()
        #expect(context.registeredObject(for: id) == nil)
        #expect(car.managedObjectContext == nil)
    }

    /// Saves whose objects are never looked up: the deferred list of one save is still waiting
    /// when the next save registers more (same owner: appended; another owner: into the table),
    /// then objects die in save order, out of order, and after a lookup.
    @Test func deferredRegistrationsAcrossSeveralSaves() throws {
        let stack = try TestStack()
        let context = stack.newContext()
        var cars: [NSManagedObject]? = (0..<40).map { i in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            car.setValue("a\(i)", forKey: "name")
            return car
        }
        try context.save()
        var people: [NSManagedObject]? = (0..<20).map { i in
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            person.setValue("p\(i)", forKey: "name")
            return person
        }
        try context.save()
        var moreCars: [NSManagedObject]? = (0..<20).map { i in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            car.setValue("b\(i)", forKey: "name")
            return car
        }
        try context.save()
        let carIDs = cars!.map(\.objectID) + moreCars!.map(\.objectID)
        let personIDs = people!.map(\.objectID)
        #expect(Set(carIDs.map(\.key)).count == 60)
        #expect(context.registeredObjects.count == 80)
        // Dropped: the second batch of cars first, then the people, then the first cars.
        moreCars = nil
        people = nil
        #expect(context.registeredObjects.count == 40)
        cars = nil
        #expect(context.registeredObjects.isEmpty)
        for id in carIDs + personIDs { #expect(context.registeredObject(for: id) == nil) }
        #expect(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).count == 60)
        #expect(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).count == 20)
    }

    /// Saved objects that outlive their context are detached by its `deinit`, whether they are
    /// still in the deferred list or not.
    @Test func savedObjectsOutlivingTheirContextAreDetached() throws {
        let stack = try TestStack()
        var context: NSManagedObjectContext? = stack.newContext()
        let cars = (0..<20).map { i in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context!)
            car.setValue("\(i)", forKey: "name")
            return car
        }
        try context!.save()
        let unsaved = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context!)
        context = nil
        #expect(cars.allSatisfy { $0.managedObjectContext == nil })
        #expect(unsaved.managedObjectContext == nil)
    }

    /// A save that fails in the store (a trigger aborts one row of a batch) leaves the new
    /// objects inserted, with temporary IDs, registered as before; the retried save writes
    /// every row once with the keys handed out, and the objects move to them.
    @Test func aSaveThatFailsInTheStoreIsRetried() throws {
        let stack = try TestStack()
        try stack.refuseCars(named: "boom")
        let other = try stack.reopen()
        let context = other.context
        let cars = (1...3 * many).map { i in other.insert("Car", ["name": i == 20 ? "boom" : "car \(i)"]) }
        let asked = cars[5].objectID
        #expect(throws: (any Error).self) { try context.save() }
        #expect(context.insertedObjects.count == 3 * many)
        #expect(cars.allSatisfy { $0.objectID.isTemporaryID })
        #expect(context.registeredObject(for: asked) === cars[5])
        #expect(context.registeredObjects.count == 3 * many)
        #expect(try stack.rows("SELECT count(*) FROM ZCAR") == [["0"]])
        #expect(try stack.rows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Car'") == [["0"]])
        cars[19].setValue("fixed", forKey: "name")
        try context.save()
        #expect(cars.map { $0.objectID.uriRepresentation().lastPathComponent } == (1...3 * many).map { "p\($0)" })
        #expect(context.registeredObject(for: asked) == nil)
        #expect(context.registeredObjects == Set(cars))
        let saved = try stack.rows("SELECT Z_PK, ZNAME FROM ZCAR ORDER BY Z_PK")
        #expect(saved == (1...3 * many).map { ["\($0)", $0 == 20 ? "fixed" : "car \($0)"] })
        let store = try #require(other.coordinator.persistentStores.first as? SQLiteStore)
        #expect(!store.writeLock.withLock { store.implicitKeysRefused })
    }

    /// After a failed save, rollback and reset forget the new objects.
    @Test func rollbackAndResetAfterAFailedSave() throws {
        let stack = try TestStack()
        try stack.refuseCars(named: "boom")
        let other = try stack.reopen()
        let context = other.context
        var cars = (1...many).map { i in other.insert("Car", ["name": i == many ? "boom" : "car \(i)"]) }
        _ = cars[0].objectID
        #expect(throws: (any Error).self) { try context.save() }
        context.rollback()
        #expect(context.registeredObjects.isEmpty)
        #expect(cars.allSatisfy { $0.managedObjectContext == nil })
        cars = (1...many).map { i in other.insert("Car", ["name": i == many ? "boom" : "car \(i)"]) }
        _ = cars[3].objectID
        #expect(throws: (any Error).self) { try context.save() }
        context.reset()
        #expect(context.registeredObjects.isEmpty)
        #expect(cars.allSatisfy { $0.managedObjectContext == nil })
        let fine = (1...many).map { i in other.insert("Car", ["name": "fine \(i)"]) }
        try context.save()
        #expect(fine.map { $0.objectID.uriRepresentation().lastPathComponent } == (1...many).map { "p\($0)" })
        #expect(try stack.rows("SELECT count(*), min(Z_PK), max(Z_PK) FROM ZCAR") == [["\(many)", "1", "\(many)"]])
    }

    /// `objectID` read off the context's queue (allowed for IDs) while the context lets the new
    /// object go (a delete processed): the temporary ID registered by the getter must not
    /// outlive the object's membership, or the registry keeps a pointer the object's `deinit`
    /// (no context any more) never removes. The registry's lock is held while both threads
    /// start, so that they meet at it.
    @Test func objectIDReadOffQueueWhileTheObjectLeavesItsContext() throws {
        let stack = try TestStack()
        let context = stack.newContext() // confinement: no queue checks
        let entity = stack.model.entitiesByName["Tag"]!
        var kept: [NSManagedObject] = []
        var leaks = 0
        for _ in 0..<200 {
            let tag = NSManagedObject(entity: entity, insertInto: context)
            kept.append(tag)
            let shared = UncheckedPair(context, tag)
            let result = CoreData.Locked<NSManagedObjectID?>(nil)
            meetAtRegistryLock(of: context, {
                shared.context.delete(shared.object)
                shared.context.processPendingChanges()
            }, {
                let id = shared.object.objectID
                result.withLock { $0 = id }
            })
            #expect(tag.managedObjectContext == nil)
            if let id = result.withLock({ $0 }), context.registeredObject(for: id) != nil { leaks += 1 }
        }
        #expect(leaks == 0, "\(leaks) objects that left the context stayed registered")
        context.reset() // detaches whatever leaked while the objects are alive
        _ = kept
    }

    /// An object without a context has no lock to make its ID under: two threads reading its
    /// `objectID` at once must still get one ID between them, and the other one made must not
    /// leak (each used to store its own over the other's).
    @Test func objectIDOfAnObjectWithoutAContextReadOnTwoThreads() throws {
        let stack = try TestStack()
        let entity = stack.model.entitiesByName["Tag"]!
        final class Weak { weak var id: NSManagedObjectID?; init(_ id: NSManagedObjectID) { self.id = id } }
        var weaks: [Weak] = []
        var distinct = 0
        for _ in 0..<500 {
            do {
                let shared = UncheckedPair(stack.context, NSManagedObject(entity: entity, insertInto: nil))
                let ids = CoreData.Locked<[NSManagedObjectID]>([])
                meetAtRegistryLock(of: stack.context, {
                    let id = shared.object.objectID
                    ids.withLock { $0.append(id) }
                }, {
                    let id = shared.object.objectID
                    ids.withLock { $0.append(id) }
                })
                let both = ids.withLock { $0 }
                if both[0] !== both[1] || both[0] != both[1] { distinct += 1 }
                weaks += both.map(Weak.init)
            }
        }
        #expect(distinct == 0, "\(distinct) objects answered with two different IDs")
        // The threads' closures (and so the objects) may be let go just after the threads end.
        for _ in 0..<200 where weaks.contains(where: { $0.id != nil }) { usleep(10_000) }
        #expect(weaks.allSatisfy { $0.id == nil }, "\(weaks.filter { $0.id != nil }.count) IDs outlived their objects")
    }

    /// An object's ID is replaced by a save (temporary → permanent) while a reader on another
    /// thread may have just loaded it: the object keeps every ID it had until it goes, so that
    /// reader can still retain it (ThreadSanitizer runs the two tests around this one).
    @Test func anObjectKeepsItsTemporaryIDUntilItGoes() throws {
        let stack = try TestStack()
        let context = stack.context
        weak var temporary: NSManagedObjectID?
        weak var object: NSManagedObject?
        do {
            let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            tag.setValue("t", forKey: "label")
            object = tag
            do {
                let id = tag.objectID
                #expect(id.isTemporaryID)
                temporary = id
            }
            try context.save()
            #expect(!tag.objectID.isTemporaryID)
            #expect(temporary != nil, "the temporary ID was freed while its object lived")
            #expect(context.registeredObject(for: tag.objectID) === tag)
        }
        #expect(object == nil)
        #expect(temporary == nil, "the temporary ID outlived its object")
    }

    /// `objectID` read off the context's queue while the context saves the new object: the
    /// object ends with its permanent ID, registered under it only.
    @Test func objectIDReadOffQueueWhileTheContextSaves() throws {
        let stack = try TestStack()
        let context = stack.newContext() // confinement: no queue checks
        var wrong: [String] = []
        for i in 0..<60 {
            let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            tag.setValue("t\(i)", forKey: "label")
            let shared = UncheckedPair(context, tag)
            let seen = CoreData.Locked<NSManagedObjectID?>(nil)
            let failure = CoreData.Locked<String?>(nil)
            meetAtRegistryLock(of: context, {
                do { try shared.context.save() } catch { failure.withLock { $0 = "\(error)" } }
            }, {
                let id = shared.object.objectID
                seen.withLock { $0 = id }
            })
            if let failure = failure.withLock({ $0 }) { wrong.append("\(i): the save failed: \(failure)") }
            if tag.objectID.isTemporaryID { wrong.append("\(i): still temporary") }
            if context.registeredObject(for: tag.objectID) !== tag { wrong.append("\(i): not registered") }
            if let id = seen.withLock({ $0 }), id.isTemporaryID, context.registeredObject(for: id) != nil {
                wrong.append("\(i): temporary ID still registered")
            }
        }
        #expect(wrong.isEmpty, "\(wrong)")
    }

    /// Merging another context's save into objects with unsaved changes: narrow values (integer,
    /// double, date, Boolean) of both sides end where they belong; committed values follow.
    @Test func mergeKeepsUnsavedNarrowValuesOverTheNewRow() throws {
        let stack = try TestStack()
        let base = Date(timeIntervalSinceReferenceDate: 1000)
        let car = stack.insert("Car", ["name": "a", "year": 1990, "price": 1.5, "built": base, "electric": false])
        try stack.context.save()
        let other = stack.newContext()
        let mirror = other.object(with: car.objectID)
        mirror.setValue(2.5, forKey: "price")
        car.setValue(1991, forKey: "year")
        car.setValue(true, forKey: "electric")
        car.setValue(base.addingTimeInterval(5), forKey: "built")
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: stack.context, queue: nil) { note in
            other.mergeChanges(fromContextDidSave: note)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try stack.context.save()
        #expect(mirror.value(forKey: "year") as? Int == 1991)
        #expect(mirror.value(forKey: "electric") as? Bool == true)
        #expect(mirror.value(forKey: "built") as? Date == base.addingTimeInterval(5))
        #expect(mirror.value(forKey: "price") as? Double == 2.5)
        #expect(mirror.committedValues(forKeys: ["year", "price"])["year"] as? Int == 1991)
        #expect(mirror.committedValues(forKeys: ["year", "price"])["price"] as? Double == 1.5)
        #expect(Set(mirror.changedValues().keys) == ["price"])
        try other.save()
        let saved = try stack.rows("SELECT ZYEAR, ZPRICE, ZELECTRIC, ZBUILT FROM ZCAR")
        #expect(saved == [["1991", "2.5", "1", "1005"]], "\(saved)") // (NUMERIC affinity stores 1005.0 as an integer)
    }

    /// A child deletes its parent's new object: the parent's `ObjectsDidChange` still lists it as
    /// inserted since the last notification, and it leaves the parent.
    @Test func aChildDeletesItsParentsNewObject() throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        let notes = ObjectsDidChangeRecorder(parent)
        let (car, kept) = parent.performAndWait { () -> (NSManagedObject, NSManagedObject) in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: parent)
            let kept = NSEntityDescription.insertNewObject(forEntityName: "Car", into: parent)
            car.setValue("gone", forKey: "name")
            kept.setValue("kept", forKey: "name")
            return (car, kept)
        }
        try child.performAndWait {
            let cars = try child.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
            #expect(cars.count == 2)
            for car in cars where car.value(forKey: "name") as? String == "gone" { child.delete(car) }
            try child.save()
        }
        try parent.performAndWait {
            #expect(car.managedObjectContext == nil)
            #expect(parent.insertedObjects == [kept])
            #expect(Set(notes.inserted) == [ObjectIdentifier(car), ObjectIdentifier(kept)])
            #expect(parent.registeredObjects == [kept])
            try parent.save()
        }
        #expect(try stack.rows("SELECT ZNAME FROM ZCAR") == [["kept"]])
    }

    /// A save of new objects of two root entities: the first entity's wait in the deferred list,
    /// the second's go straight into the table (another owner), which grows meanwhile. Every
    /// saved object must stay registered once the deferred ones move into the table.
    @Test func savedObjectsOfTwoEntitiesStayRegistered() throws {
        for count in [9, 20, 40, 41, 100] {
            let stack = try TestStack()
            let context = stack.newContext()
            let cars = (0..<count).map { i in
                let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
                car.setValue("car \(i)", forKey: "name")
                return car
            }
            let people = (0..<count).map { i in
                let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                person.setValue("person \(i)", forKey: "name")
                return person
            }
            try context.save()
            let lost = (cars + people).filter { context.registeredObject(for: $0.objectID) !== $0 }
            #expect(lost.isEmpty, "\(count) of each: \(lost.count) saved objects not registered")
            #expect(context.registeredObjects.count == 2 * count)
            // A fetch finds the same objects, not new ones for the same rows.
            let fetched = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(Set(fetched) == Set(people), "\(count) of each: a fetch made new objects for saved rows")
        }
    }

    /// An entity without any property: its rows have only `Z_PK`, `Z_ENT` and `Z_OPT` (the
    /// batched INSERT binds nothing), and its objects have no values buffer.
    @Test func appendedRowsOfAnEntityWithoutProperties() throws {
        let empty = NSEntityDescription()
        empty.name = "Marker"
        let model = NSManagedObjectModel()
        model.entities = [empty]
        let stack = try TestStack(model: model)
        let markers = (1...2 * SQLiteStore.appendBatch + 3).map { _ in stack.insert("Marker") }
        try stack.context.save()
        #expect(markers.map { $0.objectID.uriRepresentation().lastPathComponent } == markers.indices.map { "p\($0 + 1)" })
        #expect(try stack.rows("SELECT count(*), min(Z_PK), max(Z_PK), min(Z_OPT), max(Z_OPT) FROM ZMARKER")
                == [["\(markers.count)", "1", "\(markers.count)", "1", "1"]])
        #expect(try stack.reopen().fetch("Marker").count == markers.count)
    }

    /// Stress: `objectID` first read off the queue at a random moment of a save of the object.
    @Test func objectIDFirstReadOffQueueAtRandomMomentsOfASave() throws {
        let stack = try TestStack()
        let context = stack.newContext()
        var wrong: [String] = []
        var kept: [NSManagedObject] = []
        for i in 0..<1500 {
            let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            kept.append(tag)
            let shared = UncheckedPair(context, tag)
            let done = DispatchSemaphore(value: 0)
            let delay = UInt32.random(in: 0...400)
            let go = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                go.wait()
                var spin = 0
                for _ in 0..<(delay * 20) { spin &+= 1 }
                _ = shared.object.objectID
                _ = spin
                done.signal()
            }
            go.signal()
            try context.save()
            done.wait()
            if tag.objectID.isTemporaryID { wrong.append("\(i): still temporary after the save") }
            else if context.registeredObject(for: tag.objectID) !== tag { wrong.append("\(i): not registered") }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5)) (\(wrong.count))")
        context.reset()
        _ = kept
    }

    // MARK: Nested contexts

    /// A child inserts enough objects for the root's save to append them; the objects, dropped
    /// in the child and the parent, leave both registries.
    @Test func childInsertsSavedThroughTheParent() throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        let notes = ObjectsDidChangeRecorder(parent)
        var childIDs: [NSManagedObjectID] = []
        var childCars: [NSManagedObject] = []
        try child.performAndWait {
            let cars = (1...2 * many).map { i in
                let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
                car.setValue("c\(i)", forKey: "name")
                car.setValue(Int64(1900 + i), forKey: "year")
                return car
            }
            try child.save()
            childIDs = cars.map(\.objectID)
            childCars = cars
        }
        #expect(notes.inserted.count == 2 * many)
        try parent.performAndWait {
            #expect(parent.insertedObjects.count == 2 * many)
            try parent.save()
        }
        child.performAndWait {
            for (id, car) in zip(childIDs, childCars) {
                #expect(child.object(with: id) === car)
                #expect(!car.objectID.isTemporaryID)
            }
            childCars = []
            #expect(child.registeredObjects.isEmpty)
        }
        #expect(try stack.rows("SELECT count(*), max(Z_PK) FROM ZCAR") == [["\(2 * many)", "\(2 * many)"]])
        let years = try stack.rows("SELECT ZYEAR FROM ZCAR ORDER BY ZYEAR").map { $0[0] }
        #expect(years == (1...2 * many).map { "\(1900 + $0)" })
        parent.performAndWait { #expect(parent.registeredObjects.isEmpty) }
    }

    // MARK: Two stores

    /// Two SQLite stores in one coordinator, both getting appended rows in one save; the saved
    /// objects register under keys of different owners.
    @Test func twoStoresInOneCoordinator() throws {
        let model = TestModel.makeWithConfigurations()
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} } // the stores' files go with it, at the end
        let directory = folder.url
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let music = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Music",
                                                       at: directory.appendingPathComponent("Music.sqlite"), options: nil)
        let garage = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Garage",
                                                        at: directory.appendingPathComponent("Garage.sqlite"), options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var objects: [NSManagedObject]? = []
        for i in 1...2 * many {
            let song = NSEntityDescription.insertNewObject(forEntityName: "Song", into: context)
            song.setValue("song \(i)", forKey: "title")
            let truck = NSEntityDescription.insertNewObject(forEntityName: i % 2 == 0 ? "Truck" : "Bike", into: context)
            truck.setValue(i % 2 == 0 ? Double(i) : i, forKey: "load")
            objects!.append(contentsOf: [song, truck])
        }
        try context.save()
        let ids = objects!.map(\.objectID)
        #expect(ids.filter { $0.persistentStore === music }.count == 2 * many)
        #expect(ids.filter { $0.persistentStore === garage }.count == 2 * many)
        #expect(Set(ids).count == 4 * many)
        for (id, object) in zip(ids, objects!) { #expect(context.registeredObject(for: id) === object) }
        objects = nil
        #expect(context.registeredObjects.isEmpty)
        let songs = try RawSQLite.query(directory.appendingPathComponent("Music.sqlite").path, "SELECT Z_PK, ZTITLE FROM ZSONG ORDER BY Z_PK")
        #expect(songs == (1...2 * many).map { ["\($0)", "song \($0)"] })
        let vehicles = try RawSQLite.query(directory.appendingPathComponent("Garage.sqlite").path, "SELECT Z_PK FROM ZVEHICLE ORDER BY Z_PK")
        #expect(vehicles == (1...2 * many).map { ["\($0)"] })
        let fresh = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        fresh.persistentStoreCoordinator = coordinator
        let loads = try fresh.fetch(NSFetchRequest<NSManagedObject>(entityName: "Vehicle")).map { "\($0.value(forKey: "load") ?? "nil")" }
        #expect(loads.count == 2 * many)
    }

    // MARK: Values

    /// Every attribute kind, in a save big enough to be appended in batches, reads back the
    /// same from the row cache (another context), from disk (another stack), and as the
    /// objects' committed values.
    @Test func everyKindOfValueSurvivesAnAppendedSave() throws {
        let stack = try TestStack()
        let owner = stack.insert("Person", ["name": "Ada", "age": 36])
        let base = Date(timeIntervalSinceReferenceDate: 700_000_000.123456)
        func values(_ i: Int) -> [String: Any] {
            [
                "name": "car \(i) ü", "year": 1900 + i, "price": Double(i) + 0.1,
                "built": base.addingTimeInterval(Double(i)),
                "vin": UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", i))!,
                "photo": Data([UInt8(i), 0, 255]), "electric": i % 2 == 0,
                "site": URL(string: "https://example.com/\(i)")!, "cost": Decimal(string: "\(i).25")!,
                "extras": ["n": i] as NSDictionary,
            ]
        }
        let count = 2 * SQLiteStore.appendBatch + 5
        let cars = (1...count).map { i in
            let car = stack.insert("Car", values(i))
            car.setValue(owner, forKey: "owner")
            car.setValue("temp", forKey: "scratch")
            return car
        }
        try stack.context.save()
        func check(_ car: NSManagedObject, _ i: Int, _ label: String) {
            let expected = values(i)
            for key in ["name", "year", "price", "built", "vin", "photo", "electric", "site", "cost"] {
                let actual = car.value(forKey: key)
                let same = (actual as? NSObject)?.isEqual(expected[key]) ?? false
                    || "\(actual ?? "nil")" == "\(expected[key]!)"
                #expect(same, "\(label): \(key) of car \(i): \(String(describing: actual)) ≠ \(expected[key]!)")
            }
            #expect((car.value(forKey: "extras") as? NSDictionary)?["n"] as? Int == i, "\(label): extras of car \(i)")
            #expect((car.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String == "Ada", "\(label): owner")
        }
        for (i, car) in zip(1..., cars) {
            check(car, i, "saved object")
            #expect(car.changedValues().isEmpty)
            let committed = car.committedValues(forKeys: ["year", "electric", "built", "price"])
            #expect(committed["year"] as? Int == 1900 + i)
            #expect(committed["electric"] as? Bool == (i % 2 == 0))
            #expect(committed["built"] as? Date == base.addingTimeInterval(Double(i)))
        }
        let second = stack.newContext()
        for (i, car) in zip(1..., cars) { check(second.object(with: car.objectID), i, "row cache") }
        let other = try stack.reopen()
        for (i, car) in zip(1..., cars) {
            let id = try #require(other.coordinator.managedObjectID(forURIRepresentation: car.objectID.uriRepresentation()))
            check(try other.context.existingObject(with: id), i, "disk")
        }
    }

    /// A mistyped value in an 8-byte slot is kept (validation reports it), copied with the
    /// buffer, and replaced by a good value; the object then saves, and refresh and rollback
    /// give back the committed values.
    @Test func mistypedValuesInNarrowSlots() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a", "year": 1990, "price": 1.5, "electric": true])
        try stack.context.save()
        car.setValue("not a number", forKey: "year")
        car.setValue("not a double", forKey: "price")
        #expect(car.value(forKey: "year") as? String == "not a number")
        #expect((car.changedValues()["year"] as? String) == "not a number")
        #expect(car.committedValues(forKeys: ["year"])["year"] as? Int == 1990)
        #expect(throws: (any Error).self) { try stack.context.save() }
        car.setValue(1995, forKey: "year")
        #expect(car.value(forKey: "year") as? Int == 1995)
        #expect(throws: (any Error).self) { try stack.context.save() }
        stack.context.rollback()
        #expect(car.value(forKey: "price") as? Double == 1.5)
        #expect(car.value(forKey: "year") as? Int == 1990)
        car.setValue(2001, forKey: "year")
        car.setValue(2.5, forKey: "price")
        try stack.context.save()
        stack.context.refresh(car, mergeChanges: false)
        #expect(car.value(forKey: "year") as? Int == 2001)
        #expect(car.value(forKey: "price") as? Double == 2.5)
        #expect(try stack.rows("SELECT ZYEAR, ZPRICE, ZELECTRIC FROM ZCAR") == [["2001", "2.5", "1"]])
    }

    /// Values copied between objects of one buffer: an object written after its snapshot and the
    /// store's row share its buffer leaves them as they were.
    @Test func copyOnWriteBetweenObjectSnapshotAndRowCache() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a", "year": 1990])
        try stack.context.save()
        let other = stack.newContext()
        let mirror = other.object(with: car.objectID)
        #expect(mirror.value(forKey: "year") as? Int == 1990)
        car.setValue(1991, forKey: "year")
        car.setValue("b", forKey: "name")
        #expect(mirror.value(forKey: "year") as? Int == 1990)
        #expect(car.committedValues(forKeys: ["year", "name"])["year"] as? Int == 1990)
        #expect(Set(car.changedValues().keys) == ["year", "name"])
        let thirdContext = stack.newContext()
        let third = thirdContext.object(with: car.objectID)
        #expect(third.value(forKey: "year") as? Int == 1990)
        try stack.context.save()
        other.refresh(mirror, mergeChanges: false)
        #expect(mirror.value(forKey: "year") as? Int == 1991)
        #expect(mirror.value(forKey: "name") as? String == "b")
    }
}

/// The inserted objects of every `ObjectsDidChange` a context posted.
final class ObjectsDidChangeRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var _inserted: [ObjectIdentifier] = [] // not the objects: they must be free to go
    private var token: (any NSObjectProtocol)?
    var inserted: [ObjectIdentifier] { lock.withLock { _inserted } }

    init(_ context: NSManagedObjectContext) {
        token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) { [weak self] note in
            let objects = (note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject>) ?? []
            self?.lock.withLock { self?._inserted.append(contentsOf: objects.map(ObjectIdentifier.init)) }
        }
    }
    deinit { if let token { NotificationCenter.default.removeObserver(token) } }
}

private final class UncheckedPair: @unchecked Sendable {
    let context: NSManagedObjectContext
    let object: NSManagedObject
    init(_ context: NSManagedObjectContext, _ object: NSManagedObject) { self.context = context; self.object = object }
}
