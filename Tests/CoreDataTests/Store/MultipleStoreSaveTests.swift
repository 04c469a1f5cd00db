import Foundation
import Testing
@testable import CoreData
import TestSupport

/// A save that reaches two stores (two configurations) writes both or neither: a store whose
/// writes fail leaves the other as it was, whether it is written first or second, and the
/// context keeps its changes for another try.
@Suite("A save to several stores is all or nothing")
struct MultipleStoreSaveTests {
    enum Kind: String, CaseIterable { case sqlite, inMemory }

    /// A coordinator with a "Music" store (playlists, songs) and a "Garage" store (vehicles,
    /// garages, whose city is unique), of the given kinds, in a fresh folder. A save nests the
    /// stores in the order of their files' paths, stores without a file first (in the order
    /// they were added): with `garageFirst`, the garage's file sorts first and it is added first.
    final class TwoStores {
        private let folder: TemporaryFolder
        var directory: URL { folder.url }
        let coordinator: NSPersistentStoreCoordinator
        let music: NSPersistentStore
        let garage: NSPersistentStore
        let musicURL: URL
        let garageURL: URL

        init(music musicKind: Kind, garage garageKind: Kind, garageFirst: Bool = false) throws {
            let model = TestModel.makeWithConfigurations()
            model.entitiesByName["Garage"]!.uniquenessConstraints = [["city"]]
            folder = try TemporaryFolder()
            let directory = folder.url
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            self.coordinator = coordinator
            musicURL = directory.appendingPathComponent(garageFirst ? "2-Music.sqlite" : "1-Music.sqlite")
            garageURL = directory.appendingPathComponent(garageFirst ? "1-Garage.sqlite" : "2-Garage.sqlite")
            func add(_ kind: Kind, _ configuration: String, _ url: URL) throws -> NSPersistentStore {
                kind == .sqlite
                    ? try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: configuration, at: url, options: nil)
                    : try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: configuration, at: nil, options: nil)
            }
            if garageFirst {
                garage = try add(garageKind, "Garage", garageURL)
                music = try add(musicKind, "Music", musicURL)
            } else {
                music = try add(musicKind, "Music", musicURL)
                garage = try add(garageKind, "Garage", garageURL)
            }
        }

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

    /// Written second, the garage store fails: (sqlite, sqlite, false), (in memory, sqlite, _),
    /// (in memory, in memory, false). Written first: the rest.
    @Test(arguments: [(Kind.sqlite, Kind.sqlite, false), (.sqlite, .sqlite, true), (.inMemory, .sqlite, false),
                      (.inMemory, .sqlite, true), (.sqlite, .inMemory, false), (.inMemory, .inMemory, false),
                      (.inMemory, .inMemory, true)])
    func aStoreThatFailsLeavesTheOtherAsItWas(music: Kind, garage: Kind, garageFirst: Bool) throws {
        let stores = try TwoStores(music: music, garage: garage, garageFirst: garageFirst)
        let context = stores.newContext()
        NSEntityDescription.insertNewObject(forEntityName: "Garage", into: context).setValue("Paris", forKey: "city")
        try context.save()

        // The garage store fails on the unique city, before or after the music store is written:
        // the song is not in the music store.
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
            #expect(try RawSQLite.query(stores.musicURL.path, "SELECT ZTITLE FROM ZSONG") == [["first"]])
        }
    }

    /// The stores are nested in the order of their files' paths, whatever order the save met
    /// them in or the coordinator holds them in: the first is written first and committed last,
    /// after the second, whose commit finds the first's rows not committed yet.
    @Test(arguments: [false, true])
    func storesAreNestedInTheirFilesOrder(garageFirst: Bool) throws {
        let stores = try TwoStores(music: .sqlite, garage: .sqlite, garageFirst: garageFirst)
        let events = LockedEvents()
        let songs = stores.musicURL.path, garages = stores.garageURL.path
        for (store, name) in [(stores.music, "music"), (stores.garage, "garage")] {
            let sqlite = try #require(store as? SQLiteStore)
            sqlite.beforeCommit = {
                // What another connection sees of both files as this store's COMMIT comes.
                let committed = ((try? RawSQLite.query(songs, "SELECT count(*) FROM ZSONG")) ?? [], (try? RawSQLite.query(garages, "SELECT count(*) FROM ZGARAGE")) ?? [])
                events.append("\(name) \(committed.0.first?.first.flatMap { $0 } ?? "?")/\(committed.1.first?.first.flatMap { $0 } ?? "?")")
            }
        }
        for (round, songFirst) in [true, false].enumerated() {
            let context = stores.newContext()
            if songFirst { _ = NSEntityDescription.insertNewObject(forEntityName: "Song", into: context) }
            NSEntityDescription.insertNewObject(forEntityName: "Garage", into: context).setValue("city \(round)", forKey: "city")
            if !songFirst { _ = NSEntityDescription.insertNewObject(forEntityName: "Song", into: context) }
            try context.save()
        }
        // Songs/garages committed, as each store's hook runs: the outer store's rows are never
        // committed before the inner store's COMMIT.
        let expected = garageFirst
            ? ["garage 0/0", "music 0/0", "garage 1/1", "music 1/1"]
            : ["music 0/0", "garage 0/0", "music 1/1", "garage 1/1"]
        #expect(events.all == expected)
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

    /// The store written second read-only: the first store's rows are not committed either.
    @Test func aReadOnlySecondStoreLeavesTheFirstAsItWas() throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} } // the stores' files go with it, at the end
        let directory = folder.url
        let garageURL = directory.appendingPathComponent("2-Garage.sqlite") // its file sorts second
        let model = TestModel.makeWithConfigurations()
        do { // The garage file, made by a writable store first.
            let maker = NSPersistentStoreCoordinator(managedObjectModel: model)
            try maker.remove(try maker.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Garage", at: garageURL, options: nil))
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let musicURL = directory.appendingPathComponent("1-Music.sqlite")
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
