import Foundation
import Testing
@testable import CoreData

/// A save that reaches two stores (two configurations) writes both or neither: a store whose
/// writes fail leaves the other as it was, whichever of them the coordinator holds first (and
/// so writes first), and the context keeps its changes for another try.
@Suite("A save to several stores is all or nothing")
struct MultipleStoreSaveTests {
    enum Kind: String, CaseIterable { case sqlite, inMemory }

    /// A coordinator with a "Music" store (playlists, songs) and a "Garage" store (vehicles,
    /// garages, whose city is unique), of the given kinds, added in the given order, in a fresh folder.
    final class TwoStores {
        let directory: URL
        let coordinator: NSPersistentStoreCoordinator
        let music: NSPersistentStore
        let garage: NSPersistentStore

        init(music musicKind: Kind, garage garageKind: Kind, garageFirst: Bool = false) throws {
            let model = TestModel.make()
            let byName = model.entitiesByName
            byName["Garage"]!.uniquenessConstraints = [["city"]]
            model.setEntities([byName["Playlist"]!, byName["Song"]!], forConfigurationName: "Music")
            model.setEntities([byName["Vehicle"]!, byName["Truck"]!, byName["Bike"]!, byName["Garage"]!], forConfigurationName: "Garage")
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-tests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            self.coordinator = coordinator
            let directory = self.directory
            func add(_ kind: Kind, _ configuration: String) throws -> NSPersistentStore {
                kind == .sqlite
                    ? try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: configuration,
                                                         at: directory.appendingPathComponent("\(configuration).sqlite"), options: nil)
                    : try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: configuration, at: nil, options: nil)
            }
            if garageFirst {
                garage = try add(garageKind, "Garage")
                music = try add(musicKind, "Music")
            } else {
                music = try add(musicKind, "Music")
                garage = try add(garageKind, "Garage")
            }
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func newContext() -> NSManagedObjectContext {
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            return context
        }

        /// The values of `key` of the stored objects of `entity`, sorted, read by a fresh context.
        func stored(_ entity: String, _ key: String) throws -> [String] {
            try newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: entity))
                .map { $0.value(forKey: key) as? String ?? "nil" }.sorted()
        }
    }

    @Test(arguments: [(Kind.sqlite, Kind.sqlite, false), (.sqlite, .sqlite, true), (.sqlite, .inMemory, false),
                      (.inMemory, .sqlite, false), (.sqlite, .inMemory, true)])
    func aStoreThatFailsLeavesTheOtherAsItWas(music: Kind, garage: Kind, garageFirst: Bool) throws {
        let stores = try TwoStores(music: music, garage: garage, garageFirst: garageFirst)
        let context = stores.newContext()
        NSEntityDescription.insertNewObject(forEntityName: "Garage", into: context).setValue("Paris", forKey: "city")
        try context.save()

        // The garage store fails on the unique city, before or after the music store is written
        // (the order the coordinator holds them in): the song is not in the music store.
        let song = NSEntityDescription.insertNewObject(forEntityName: "Song", into: context)
        song.setValue("first", forKey: "title")
        let again = NSEntityDescription.insertNewObject(forEntityName: "Garage", into: context)
        again.setValue("Paris", forKey: "city")
        #expect(throws: NSError.self) { try context.save() }
        #expect(try stores.stored("Song", "title").isEmpty)
        #expect(try stores.stored("Garage", "city") == ["Paris"])
        #expect(context.hasChanges && song.isInserted && again.isInserted)
        #expect(song.objectID.isTemporaryID && again.objectID.isTemporaryID)

        // The same, with the objects inserted the other way round.
        let other = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        other.persistentStoreCoordinator = stores.coordinator
        NSEntityDescription.insertNewObject(forEntityName: "Garage", into: other).setValue("Paris", forKey: "city")
        NSEntityDescription.insertNewObject(forEntityName: "Song", into: other).setValue("second", forKey: "title")
        #expect(throws: NSError.self) { try other.save() }
        #expect(try stores.stored("Song", "title").isEmpty)

        // Mended, the first context's save writes both stores.
        again.setValue("Lyon", forKey: "city")
        try context.save()
        #expect(try stores.stored("Song", "title") == ["first"])
        #expect(try stores.stored("Garage", "city") == ["Lyon", "Paris"])
        #expect(song.objectID.persistentStore === stores.music && again.objectID.persistentStore === stores.garage)
        if music == .sqlite {
            let rows = try RawSQLite.query(stores.directory.appendingPathComponent("Music.sqlite").path, "SELECT ZTITLE FROM ZSONG")
            #expect(rows == [["first"]])
        }
    }

    /// The stores are nested in the order the coordinator holds them, whatever order the save
    /// met them in: the first is the outer transaction, written first and committed last.
    @Test(arguments: [false, true])
    func storesAreNestedInTheCoordinatorsOrder(garageFirst: Bool) throws {
        let stores = try TwoStores(music: .sqlite, garage: .sqlite, garageFirst: garageFirst)
        let events = LockedEvents()
        for (store, name) in [(stores.music, "music"), (stores.garage, "garage")] {
            let sqlite = try #require(store as? SQLiteStore)
            sqlite.beforeCommit = { events.append(name) }
        }
        for songFirst in [true, false] {
            let context = stores.newContext()
            if songFirst { _ = NSEntityDescription.insertNewObject(forEntityName: "Song", into: context) }
            NSEntityDescription.insertNewObject(forEntityName: "Garage", into: context).setValue(songFirst ? "Paris" : "Lyon", forKey: "city")
            if !songFirst { _ = NSEntityDescription.insertNewObject(forEntityName: "Song", into: context) }
            try context.save()
        }
        let pair = garageFirst ? ["garage", "music"] : ["music", "garage"]
        #expect(events.all == pair + pair)
    }

    /// An optimistic-locking conflict in the second store: the error policy writes neither
    /// store; a trumping policy resolves it and writes both.
    @Test func aConflictInTheSecondStoreWritesNeitherUntilResolved() throws {
        let stores = try TwoStores(music: .sqlite, garage: .sqlite)
        let setup = stores.newContext()
        NSEntityDescription.insertNewObject(forEntityName: "Song", into: setup).setValue("song", forKey: "title")
        NSEntityDescription.insertNewObject(forEntityName: "Garage", into: setup).setValue("Paris", forKey: "city")
        try setup.save()

        let context = stores.newContext()
        let song = try #require(context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Song")).first)
        let garage = try #require(context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Garage")).first)
        _ = garage.value(forKey: "city") // fired: its version is the one read now
        let elsewhere = stores.newContext()
        try #require(elsewhere.fetch(NSFetchRequest<NSManagedObject>(entityName: "Garage")).first).setValue("Lyon", forKey: "city")
        try elsewhere.save()

        song.setValue("song, edited", forKey: "title")
        garage.setValue("Oslo", forKey: "city")
        #expect(throws: NSError.self) { try context.save() }
        #expect(try stores.stored("Song", "title") == ["song"])
        #expect(try stores.stored("Garage", "city") == ["Lyon"])

        context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try context.save()
        #expect(try stores.stored("Song", "title") == ["song, edited"])
        #expect(try stores.stored("Garage", "city") == ["Oslo"])
    }

    /// The second store read-only: the first store's rows are not committed either.
    @Test func aReadOnlySecondStoreLeavesTheFirstAsItWas() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let garageURL = directory.appendingPathComponent("Garage.sqlite")
        let model = TestModel.make()
        let byName = model.entitiesByName
        model.setEntities([byName["Playlist"]!, byName["Song"]!], forConfigurationName: "Music")
        model.setEntities([byName["Vehicle"]!, byName["Truck"]!, byName["Bike"]!, byName["Garage"]!], forConfigurationName: "Garage")
        do { // The garage file, made by a writable store first.
            let maker = NSPersistentStoreCoordinator(managedObjectModel: model)
            try maker.remove(try maker.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Garage", at: garageURL, options: nil))
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let musicURL = directory.appendingPathComponent("Music.sqlite")
        _ = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Music", at: musicURL, options: nil)
        _ = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Garage", at: garageURL,
                                               options: [NSReadOnlyPersistentStoreOption: true])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        NSEntityDescription.insertNewObject(forEntityName: "Song", into: context).setValue("lost?", forKey: "title")
        NSEntityDescription.insertNewObject(forEntityName: "Garage", into: context).setValue("Oslo", forKey: "city")
        #expect(throws: NSError.self) { try context.save() }
        #expect(try RawSQLite.query(musicURL.path, "SELECT count(*) FROM ZSONG") == [["0"]])
        #expect(try RawSQLite.query(garageURL.path, "SELECT count(*) FROM ZGARAGE") == [["0"]])
    }
}

/// Names recorded from any thread.
private final class LockedEvents: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [String] = []
    func append(_ event: String) { lock.withLock { events.append(event) } }
    var all: [String] { lock.withLock { events } }
}
