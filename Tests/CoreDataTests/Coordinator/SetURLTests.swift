import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `NSPersistentStoreCoordinator.setURL(_:for:)`: a store pointed at another location.
@Suite struct SetURLTests {
    private func carNames(in context: NSManagedObjectContext) throws -> [String] {
        try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).compactMap { $0.value(forKey: "name") as? String }.sorted()
    }

    /// Copies (or moves) the store file at `from`, with its `-wal` and `-shm` files, to `to`.
    static func copyStore(_ from: URL, to: URL, moving: Bool = false) throws {
        for suffix in ["", "-wal", "-shm"] {
            let source = URL(fileURLWithPath: from.path + suffix), destination = URL(fileURLWithPath: to.path + suffix)
            guard FileManager.default.fileExists(atPath: source.path) else { continue }
            if moving { try FileManager.default.moveItem(at: source, to: destination) } else { try FileManager.default.copyItem(at: source, to: destination) }
        }
    }

    @Test func aMovedStoreFileIsFollowed() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let store = stack.coordinator.persistentStores[0]
        let identifier = store.identifier
        let moved = stack.directory.appendingPathComponent("Moved.sqlite")
        try Self.copyStore(stack.url, to: moved, moving: true)

        #expect(stack.coordinator.setURL(moved, for: store))
        #expect(store.url == moved && stack.coordinator.persistentStores[0] === store && store.identifier == identifier)
        #expect(stack.coordinator.persistentStore(for: moved) === store)
        stack.insert("Car", ["name": "b"])
        try stack.context.save()
        #expect(try carNames(in: stack.newContext()) == ["a", "b"])
        #expect(try RawSQLite.query(moved.path, "SELECT ZNAME FROM ZCAR ORDER BY ZNAME").map { $0[0] ?? "" } == ["a", "b"])
        #expect(!FileManager.default.fileExists(atPath: stack.url.path), "nothing is made at the old location")
    }

    @Test func aCopyTakesTheSavesAndTheOriginalStaysAsItWas() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let store = stack.coordinator.persistentStores[0]
        let copy = stack.directory.appendingPathComponent("Copy.sqlite")
        try Self.copyStore(stack.url, to: copy)
        #expect(stack.coordinator.setURL(copy, for: store))
        stack.insert("Car", ["name": "b"])
        try stack.context.save()
        #expect(try RawSQLite.query(copy.path, "SELECT ZNAME FROM ZCAR ORDER BY ZNAME").map { $0[0] ?? "" } == ["a", "b"])
        #expect(try stack.storedCarNames() == ["a"], "the first file is no longer written")
        // And back: the first file is the same store.
        let b = try #require(try stack.fetch("Car").first { $0.value(forKey: "name") as? String == "b" }).objectID
        #expect(stack.coordinator.setURL(stack.url, for: store))
        #expect(try carNames(in: stack.newContext()) == ["a"])
        // A fault reads the file, not the row the save into the copy left in the coordinator's cache.
        #expect(throws: NSError.self) { try stack.newContext().existingObject(with: b) }
    }

    @Test func theReadersOfTheOldLocationAreLetGo() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let store = try #require(stack.coordinator.persistentStores.first as? SQLiteStore)
        _ = try carNames(in: stack.newContext()) // a reader connection, idle in the pool now
        #expect(store.readerCounts.open >= 1)
        let moved = stack.directory.appendingPathComponent("Moved.sqlite")
        try Self.copyStore(stack.url, to: moved, moving: true)
        #expect(stack.coordinator.setURL(moved, for: store))
        #expect(store.readerCounts.open == 0, "the idle readers of the old location are closed")
        #expect(try carNames(in: stack.newContext()) == ["a"], "new readers open the new location")
    }

    @Test func readsOnOtherThreadsGoOnWhileTheStoreMoves() async throws {
        let stack = try TestStack()
        for index in 0..<50 { stack.insert("Car", ["name": "car \(index)"]) }
        try stack.context.save()
        let store = stack.coordinator.persistentStores[0]
        let copy = stack.directory.appendingPathComponent("Copy.sqlite")
        try Self.copyStore(stack.url, to: copy)
        let coordinator = stack.coordinator
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                    context.persistentStoreCoordinator = coordinator
                    for _ in 0..<60 {
                        let count = try context.performAndWait {
                            context.reset()
                            let cars = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
                            return cars.filter { $0.value(forKey: "name") != nil }.count
                        }
                        #expect(count == 50)
                    }
                }
            }
            for round in 0..<20 {
                #expect(coordinator.setURL(round.isMultiple(of: 2) ? copy : stack.url, for: store))
            }
            try await group.waitForAll()
        }
    }

    @Test(arguments: TestStoreKind.available)
    func anotherStoreOfTheModelIsRefused(_ kind: TestStoreKind) throws {
        // Linux difference: Apple's takes another store of the model; here only the same store.
        let first = try TestStack(kind)
        let second = try TestStack(kind)
        first.insert("Car", ["name": "a"])
        try first.context.save()
        second.insert("Car", ["name": "b"])
        try second.context.save()
        let store = first.coordinator.persistentStores[0]
        #expect(!first.coordinator.setURL(second.url, for: store))
        #expect(store.url == first.url)
        first.insert("Car", ["name": "c"])
        try first.context.save()
        #expect(try first.storedCarNames() == ["a", "c"])
        #expect(try second.storedCarNames() == ["b"])
    }

    @Test func anInMemorySQLiteStoreIsRefusedAndKeepsItsObjects() throws {
        let folder = try TemporaryFolder()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: "/dev/null"))
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("kept", forKey: "name")
        try context.save()
        let file = folder.url.appendingPathComponent("File.sqlite")
        try NSPersistentStoreCoordinator(managedObjectModel: TestModel.make()).addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: file)
        #expect(!coordinator.setURL(file, for: store))
        context.reset()
        #expect(try carNames(in: context) == ["kept"])
    }

    @Test func aLocationWithoutTheStoreIsRefusedAndLeftAsItWas() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let store = stack.coordinator.persistentStores[0]
        let original = stack.url

        let missing = stack.directory.appendingPathComponent("Missing.sqlite")
        #expect(!stack.coordinator.setURL(missing, for: store))
        #expect(!FileManager.default.fileExists(atPath: missing.path), "no store is created")

        let text = stack.directory.appendingPathComponent("Notes.sqlite")
        try Data("not a store".utf8).write(to: text)
        #expect(!stack.coordinator.setURL(text, for: store))
        #expect(try Data(contentsOf: text) == Data("not a store".utf8))

        // A store of another model.
        let otherModel = NSManagedObjectModel()
        let thing = NSEntityDescription()
        thing.name = "Thing"
        otherModel.entities = [thing]
        let otherURL = stack.directory.appendingPathComponent("Other.sqlite")
        try NSPersistentStoreCoordinator(managedObjectModel: otherModel).addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: otherURL)
        #expect(!stack.coordinator.setURL(otherURL, for: store))

        // Each time the store stayed where it was, and works.
        #expect(store.url == original)
        stack.insert("Car", ["name": "b"])
        try stack.context.save()
        #expect(try stack.storedCarNames() == ["a", "b"])
    }

    @Test func anotherStoresURLOrAnotherCoordinatorsStoreIsRefused() throws {
        let stack = try TestStack()
        let secondURL = stack.directory.appendingPathComponent("Second.sqlite")
        let second = try stack.coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: secondURL)
        #expect(!stack.coordinator.setURL(secondURL, for: stack.coordinator.persistentStores[0]))
        let other = try TestStack()
        #expect(!other.coordinator.setURL(other.url, for: second))
        #expect(stack.coordinator.setURL(stack.url, for: stack.coordinator.persistentStores[0]), "its own URL: nothing to do")
    }

    @Test func anInMemoryStoreTakesTheURL() throws {
        let stack = try TestStack(inMemory: true)
        let store = stack.coordinator.persistentStores[0]
        let url = URL(string: "memory://elsewhere")!
        #expect(stack.coordinator.setURL(url, for: store))
        #expect(store.url == url)
    }

    @Test func anAtomicStoreWritesItsNextSaveAtTheNewURL() throws {
        JSONFileStore.register()
        let folder = try TemporaryFolder()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let first = folder.url.appendingPathComponent("First.json")
        let store = try coordinator.addPersistentStore(ofType: JSONFileStore.storeType, configurationName: nil, at: first)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("a", forKey: "name")
        try context.save()
        let second = folder.url.appendingPathComponent("Second.json")
        #expect(coordinator.setURL(second, for: store))
        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("b", forKey: "name")
        try context.save()
        // The new file has both cars (the store's whole contents); the first only the first.
        let reader = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        try reader.addPersistentStore(ofType: JSONFileStore.storeType, configurationName: nil, at: second)
        let readContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        readContext.persistentStoreCoordinator = reader
        #expect(try carNames(in: readContext) == ["a", "b"])
        let firstReader = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        try firstReader.addPersistentStore(ofType: JSONFileStore.storeType, configurationName: nil, at: first)
        let firstContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        firstContext.persistentStoreCoordinator = firstReader
        #expect(try carNames(in: firstContext) == ["a"])
    }

    @Test func aStoreYouWriteLoadsItsMetadataAgain() throws {
        DictionaryStore.register()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let store = try #require(try coordinator.addPersistentStore(ofType: DictionaryStore.storeType, configurationName: nil,
                                                                     at: URL(string: "dictionary://one")!) as? DictionaryStore)
        #expect(coordinator.setURL(URL(string: "dictionary://two")!, for: store))
        #expect(store.url == URL(string: "dictionary://two")!)
        #expect(store.calls["loadMetadata"] == 2)
    }

    @Test("setURL refuses a path that reaches another store's file through a symbolic link")
    func setURLRefusesAnotherStoresFileByAnotherPath() throws {
        let first = try AtomicStoreTests.Stack()
        let secondURL = first.folder.url.appendingPathComponent("Second.json")
        let second = try first.coordinator.addPersistentStore(ofType: JSONFileStore.storeType, configurationName: nil, at: secondURL)
        let link = first.folder.url.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: first.folder.url)
        #expect(!first.coordinator.setURL(link.appendingPathComponent(first.url.lastPathComponent), for: second))
        #expect(second.url == secondURL)
    }
}
