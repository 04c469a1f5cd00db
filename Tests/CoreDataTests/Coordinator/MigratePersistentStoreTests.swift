import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `migratePersistentStore(_:to:options:withType:)`: a store's objects in a new store of any
/// type, in the old one's place.
@Suite("Migrating a store to a new location or type")
struct MigratePersistentStoreTests {
    /// People with cars, tagged cars, a playlist of ordered songs, a garage of vehicles of two sub-entities.
    static func fill(_ context: NSManagedObjectContext) throws {
        func insert(_ entity: String, _ values: [String: Any]) -> NSManagedObject {
            let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
            for (key, value) in values { object.setValue(value, forKey: key) }
            return object
        }
        let ann = insert("Person", ["name": "Ann", "age": 40])
        let red = insert("Tag", ["label": "red"]), old = insert("Tag", ["label": "old"])
        let car = insert("Car", ["name": "Model T", "year": 1908, "owner": ann])
        car.mutableSetValue(forKey: "tags").addObjects(from: [red, old])
        insert("Car", ["name": "Beetle", "year": 1938, "owner": ann]).mutableSetValue(forKey: "tags").add(red)
        let list = insert("Playlist", ["title": "Road"])
        for title in ["c", "a", "b"] { list.mutableOrderedSetValue(forKey: "songs").add(insert("Song", ["title": title])) }
        let garage = insert("Garage", ["city": "Oslo"])
        _ = insert("Truck", ["load": 3.5, "garage": garage])
        _ = insert("Bike", ["load": 1, "garage": garage])
        try context.save()
    }

    /// What `fill` made, as read through `context`.
    static func check(_ context: NSManagedObjectContext) throws {
        func fetch(_ entity: String) throws -> [NSManagedObject] {
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity))
        }
        let ann = try #require(try fetch("Person").first)
        let cars = (ann.value(forKey: "cars") as? Set<NSManagedObject> ?? []).sorted { ($0.value(forKey: "name") as! String) < ($1.value(forKey: "name") as! String) }
        #expect(cars.map { $0.value(forKey: "name") as? String } == ["Beetle", "Model T"])
        #expect(cars.map { ($0.value(forKey: "tags") as? Set<NSManagedObject>)?.count } == [1, 2])
        let red = try #require(try fetch("Tag").first { $0.value(forKey: "label") as? String == "red" })
        #expect((red.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
        let songs = try #require(try fetch("Playlist").first?.value(forKey: "songs") as? NSOrderedSet)
        #expect(songs.array.map { ($0 as! NSManagedObject).value(forKey: "title") as? String } == ["c", "a", "b"])
        let vehicles = try #require(try fetch("Garage").first?.value(forKey: "vehicles") as? Set<NSManagedObject>)
        #expect(Set(vehicles.map { $0.entity.name ?? "" }) == ["Truck", "Bike"])
    }

    func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    @Test func aSQLiteStoreMovesToAnotherFileWithItsExternalData() throws {
        let folder = try TemporaryFolder()
        let model = ExternalBinaryStorageTests.makeModel()
        let stack = try TestStack(model: model, directory: folder.url)
        let photo = try ExternalBinaryStorageTests.insert(stack, "big", ExternalBinaryStorageTests.large)
        let uri = photo.objectID.uriRepresentation()
        let old = stack.coordinator.persistentStores[0]
        let target = folder.url.appendingPathComponent("Moved.sqlite")
        let moved = try stack.coordinator.migratePersistentStore(old, to: target, withType: NSSQLiteStoreType)
        #expect(stack.coordinator.persistentStores.count == 1 && stack.coordinator.persistentStores[0] === moved)
        #expect(moved.url == target && FileManager.default.fileExists(atPath: stack.url.path))
        #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent(".Moved_SUPPORT/_EXTERNAL_DATA").path))
        let context = context(stack.coordinator)
        let id = try #require(stack.coordinator.managedObjectID(forURIRepresentation: uri))
        #expect(id.persistentStore === moved)
        #expect(try context.existingObject(with: id).value(forKey: "image") as? Data == ExternalBinaryStorageTests.large)
    }

    @Test func rowsAndRelationshipsMoveBetweenTypes() throws {
        let folder = try TemporaryFolder()
        let stack = try TestStack(directory: folder.url)
        try Self.fill(stack.context)
        // SQLite → in memory.
        let memory = try stack.coordinator.migratePersistentStore(stack.coordinator.persistentStores[0], to: URL(string: "memory://moved")!,
                                                                  withType: NSInMemoryStoreType)
        #expect(memory.type == NSInMemoryStoreType && stack.coordinator.persistentStores.count == 1)
        try Self.check(context(stack.coordinator))
        // In memory → a new SQLite file, read by another coordinator.
        let target = folder.url.appendingPathComponent("Back.sqlite")
        _ = try stack.coordinator.migratePersistentStore(memory, to: target, type: .sqlite)
        let other = NSPersistentStoreCoordinator(managedObjectModel: stack.model)
        try other.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: target, options: nil)
        let reader = context(other)
        try Self.check(reader)
        // New objects take keys after the copied ones.
        let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: reader)
        person.setValue("Bo", forKey: "name")
        try reader.save()
        #expect(try RawSQLite.query(target.path, "SELECT count(DISTINCT Z_PK), count(*) FROM ZPERSON") == [["2", "2"]])
    }

    /// "Start in memory, then save as": a SQLite store at `/dev/null` moves to a file, and back.
    @Test func anInMemorySQLiteStoreMovesToAFileAndBack() throws {
        let folder = try TemporaryFolder()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let memory = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil,
                                                        at: URL(fileURLWithPath: "/dev/null"))
        try Self.fill(context(coordinator))
        let file = folder.url.appendingPathComponent("Saved.sqlite")
        let saved = try coordinator.migratePersistentStore(memory, to: file, withType: NSSQLiteStoreType)
        #expect(saved.url == file && coordinator.persistentStores.count == 1)
        try Self.check(context(coordinator))
        let other = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        try other.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: file)
        try Self.check(context(other))
        let back = try coordinator.migratePersistentStore(saved, to: URL(fileURLWithPath: "/dev/null"), withType: NSSQLiteStoreType)
        #expect(back.url?.path == "/dev/null")
        try Self.check(context(coordinator))
    }

    @Test func anExistingFileIsNeverOverwritten() throws {
        let folder = try TemporaryFolder()
        let stack = try TestStack(directory: folder.url)
        try Self.fill(stack.context)
        let target = folder.url.appendingPathComponent("Taken.sqlite")
        try Data("keep me".utf8).write(to: target)
        let error = #expect(throws: NSError.self) {
            _ = try stack.coordinator.migratePersistentStore(stack.coordinator.persistentStores[0], to: target, withType: NSSQLiteStoreType)
        }
        #expect(error?.code == NSFileWriteFileExistsError)
        #expect(try Data(contentsOf: target) == Data("keep me".utf8))
        #expect(stack.coordinator.persistentStores.count == 1)
        try Self.check(stack.newContext())
    }
}

/// What the coordinator's review found: saves during a move, destroying what is not a store,
/// a read-only store that is not there.
@Suite("Migrating, destroying and opening stores safely")
struct StoreFileSafetyTests {
    /// A save begun by another context while the store moves waits for the move, and lands in the
    /// new store (before, it could go to the old file only, which the coordinator then dropped).
    @Test func aSaveDuringAMoveWaitsAndLandsInTheNewStore() throws {
        let folder = try TemporaryFolder()
        let stack = try TestStack(directory: folder.url)
        stack.insert("Car", ["name": "before"])
        try stack.context.save()
        // (A context of its own thread, not a queue's: the test's thread blocks, and a 2-core
        // machine's dispatch pool may then have no thread left for a queue.)
        let worker = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        worker.persistentStoreCoordinator = stack.coordinator
        let saved = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var finishedDuringMove = false
        nonisolated(unsafe) var saveError: Error?
        stack.coordinator.migrationWillSwapHook = {
            Thread {
                NSEntityDescription.insertNewObject(forEntityName: "Car", into: worker).setValue("during", forKey: "name")
                do { try worker.save() } catch { saveError = error }
                saved.signal()
            }.start()
            finishedDuringMove = saved.wait(timeout: .now() + 0.3) == .success
        }
        let target = folder.url.appendingPathComponent("Moved.sqlite")
        try stack.coordinator.migratePersistentStore(stack.coordinator.persistentStores[0], to: target, withType: NSSQLiteStoreType)
        let finished = finishedDuringMove || saved.wait(timeout: .now() + 60) == .success
        #expect(finished && !finishedDuringMove)
        #expect(saveError == nil)
        #expect(try RawSQLite.query(target.path, "SELECT ZNAME FROM ZCAR ORDER BY Z_PK").map { $0[0] } == ["before", "during"])
    }

    /// A folder given for a store's URL is refused and left whole; a damaged store file is
    /// deleted (destroy and load again is how an app recovers from one).
    @Test func destroyingAFolderIsRefusedAndADamagedFileIsDeleted() throws {
        let folder = try TemporaryFolder()
        let stack = try TestStack(directory: folder.url)
        try stack.context.save()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: stack.model)
        #expect(throws: NSError.self) { try coordinator.destroyPersistentStore(at: folder.url, ofType: NSSQLiteStoreType) }
        #expect(FileManager.default.fileExists(atPath: stack.url.path))
        let damaged = folder.url.appendingPathComponent("Damaged.sqlite")
        try Data("not a database".utf8).write(to: damaged)
        try coordinator.destroyPersistentStore(at: damaged, ofType: NSSQLiteStoreType)
        #expect(!FileManager.default.fileExists(atPath: damaged.path))
    }

    @Test func aReadOnlyStoreThatIsNotThereMakesNothing() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("a/b/Missing.sqlite")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let error = #expect(throws: NSError.self) {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: [NSReadOnlyPersistentStoreOption: true])
        }
        #expect(error?.code == NSFileReadNoSuchFileError)
        #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("a").path))
    }
}
