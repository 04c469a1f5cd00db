import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `addPersistentStore` migrating a store written with an earlier model version, with models in
/// Xcode's format on disk (where the source model is searched for:
/// `NSPersistentContainer.modelSearchDirectories`).
@Suite(.serialized) struct AutomaticMigrationTests {
    static func contents(_ entities: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22757" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift">
        \(entities)
        </model>
        """
    }

    static let v1 = contents("""
        <entity name="Person" representedClassName="Person" syncable="YES">
            <attribute name="name" optional="YES" attributeType="String"/>
        </entity>
        <entity name="Note" representedClassName="Note" syncable="YES">
            <attribute name="text" optional="YES" attributeType="String"/>
        </entity>
        """)
    /// Person gains a non-optional age with a default; Note is gone; Tag is new.
    static let v2 = contents("""
        <entity name="Person" representedClassName="Person" syncable="YES">
            <attribute name="name" optional="YES" attributeType="String"/>
            <attribute name="age" attributeType="Integer 16" defaultValueString="18" usesScalarValueType="YES"/>
        </entity>
        <entity name="Tag" representedClassName="Tag" syncable="YES">
            <attribute name="label" optional="YES" attributeType="String"/>
        </entity>
        """)
    /// Person's name became an integer: not inferable.
    static let v3 = contents("""
        <entity name="Person" representedClassName="Person" syncable="YES">
            <attribute name="name" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
        </entity>
        """)
    /// Person's name became unique.
    static let v4 = contents("""
        <entity name="Person" representedClassName="Person" syncable="YES">
            <attribute name="name" optional="YES" attributeType="String"/>
            <uniquenessConstraints>
                <uniquenessConstraint>
                    <constraint value="name"/>
                </uniquenessConstraint>
            </uniquenessConstraints>
        </entity>
        <entity name="Note" representedClassName="Note" syncable="YES">
            <attribute name="text" optional="YES" attributeType="String"/>
        </entity>
        """)

    /// Writes `contents` as `<name>.xcdatamodel` in `folder` and reads it.
    static func model(_ name: String, _ contents: String, in folder: URL) throws -> NSManagedObjectModel {
        let url = folder.appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: url.appendingPathComponent("contents"))
        return try #require(NSManagedObjectModel(contentsOf: url))
    }

    /// A store of version 1 (two people, one note) in `folder`, the version 1 model in `models`.
    static func v1Store(in folder: TemporaryFolder, models: URL) throws -> URL {
        let model = try Self.model("V1", v1, in: models)
        return try SQLiteLightweightMigrationTests.makeStore(model, in: folder) { context in
            _ = SQLiteLightweightMigrationTests.insert("Person", ["name": "Ann"], into: context)
            _ = SQLiteLightweightMigrationTests.insert("Person", ["name": "Bo"], into: context)
            _ = SQLiteLightweightMigrationTests.insert("Note", ["text": "hi"], into: context)
        }
    }

    /// Runs `body` with `folder` among the places source models are searched for.
    static func searching<T>(_ folder: URL, _ body: () throws -> T) rethrows -> T {
        let saved = NSPersistentContainer.modelSearchDirectories
        NSPersistentContainer.modelSearchDirectories = saved + [folder]
        defer { NSPersistentContainer.modelSearchDirectories = saved }
        return try body()
    }

    static var migrate: [AnyHashable: Any] {
        [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true]
    }

    static func add(_ url: URL, _ model: NSManagedObjectModel, options: [AnyHashable: Any]?) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    static func error(_ body: () throws -> Void) -> NSError? { SQLiteLightweightMigrationTests.error(body) }

    @Test func theOptionsMigrateTheStoreInPlace() throws {
        let folder = try TemporaryFolder(), models = try TemporaryFolder(), current = try TemporaryFolder()
        let url = try Self.v1Store(in: folder, models: models.url)
        let v2 = try Self.model("V2", Self.v2, in: current.url)
        let context = try Self.searching(models.url) { try Self.add(url, v2, options: Self.migrate) }
        let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        #expect(Set(people.compactMap { $0.value(forKey: "name") as? String }) == ["Ann", "Bo"])
        #expect(people.allSatisfy { $0.value(forKey: "age") as? Int == 18 })
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first)
        let hashes = store.metadata?[NSStoreModelVersionHashesKey] as? [String: Data]
        #expect(hashes == v2.entityVersionHashesByName)
        #expect(try SQLiteStore.readMetadata(at: url)[NSStoreModelVersionHashesKey] as? [String: Data] == v2.entityVersionHashesByName)
        // And it opens without the options now.
        #expect(try Self.add(url, try NSManagedObjectModel(validatingContentsOf: current.url.appendingPathComponent("V2.xcdatamodel")), options: nil)
            .count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 2)
    }

    /// Adds a version 1 store with the model `contents` and `options`, the version 1 model
    /// searched for if `findable`: the error, and whether the file is still byte for byte as it was.
    static func refusal(_ contents: String, options: [AnyHashable: Any]?, findable: Bool = true) throws -> (error: NSError?, untouched: Bool) {
        let folder = try TemporaryFolder(), models = try TemporaryFolder(), current = try TemporaryFolder()
        let url = try v1Store(in: folder, models: models.url)
        let before = try Data(contentsOf: url)
        let model = try Self.model("Current", contents, in: current.url)
        let error = searching(findable ? models.url : current.url) { Self.error { _ = try add(url, model, options: options) } }
        return (error, try Data(contentsOf: url) == before)
    }

    @Test(arguments: [nil, [NSMigratePersistentStoresAutomaticallyOption: true], [NSInferMappingModelAutomaticallyOption: true],
                      [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: false]] as [[String: Bool]?])
    func withoutBothOptionsTheStoreIsRefusedAndUntouched(_ options: [String: Bool]?) throws {
        let (error, untouched) = try Self.refusal(Self.v2, options: options)
        // Automatic migration without inference needs a mapping model the app ships (134140
        // without one, as Apple's); without automatic migration the store is incompatible.
        let automatic = options?[NSMigratePersistentStoresAutomaticallyOption] == true
        #expect(error?.code == (automatic ? NSMigrationMissingMappingModelError : NSPersistentStoreIncompatibleVersionHashError))
        #expect(untouched)
    }

    @Test func aMissingSourceModelIsRefusedAndUntouched() throws {
        let (error, untouched) = try Self.refusal(Self.v2, options: Self.migrate, findable: false)
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSMigrationMissingSourceModelError)
        #expect(untouched)
    }

    @Test func aChangeThatCantBeInferredIsRefusedAndUntouched() throws {
        let (error, untouched) = try Self.refusal(Self.v3, options: Self.migrate)
        // Apple's coordinator: 134140 (no mapping model found or inferred), the inference's 134190 underneath.
        #expect(error?.code == NSMigrationMissingMappingModelError)
        let inference = error?.userInfo[NSUnderlyingErrorKey] as? NSError
        #expect(inference?.code == NSInferredMappingModelError)
        #expect(inference?.userInfo["entity"] as? String == "Person" && inference?.userInfo["property"] as? String == "name")
        #expect(inference?.userInfo["reason"] as? String == "Source and destination attribute types are incompatible")
        #expect(untouched)
    }

    @Test func aFailureHalfWayRollsBack() throws {
        let folder = try TemporaryFolder(), models = try TemporaryFolder(), current = try TemporaryFolder()
        let url = try Self.v1Store(in: folder, models: models.url)
        let v1 = try NSManagedObjectModel(validatingContentsOf: models.url.appendingPathComponent("V1.xcdatamodel"))
        // Two people named Ann: the unique index of version 4 fails after the tables are rewritten.
        let context = try Self.add(url, v1, options: nil)
        _ = SQLiteLightweightMigrationTests.insert("Person", ["name": "Ann"], into: context)
        try context.save()
        try context.persistentStoreCoordinator!.remove(context.persistentStoreCoordinator!.persistentStores[0])
        let v4 = try Self.model("V4", Self.v4, in: current.url)
        let error = Self.searching(models.url) { Self.error { _ = try Self.add(url, v4, options: Self.migrate) } }
        #expect(error?.code == NSMigrationConstraintViolationError)
        let reopened = try Self.add(url, v1, options: nil)
        #expect(try reopened.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 3)
        #expect(try reopened.count(for: NSFetchRequest<NSManagedObject>(entityName: "Note")) == 1)
    }

    @Test func aContainerMigratesByDefault() throws {
        let folder = try TemporaryFolder(), models = try TemporaryFolder(), current = try TemporaryFolder()
        let url = try Self.v1Store(in: folder, models: models.url)
        let v2 = try Self.model("V2", Self.v2, in: current.url)
        // The description's switches are the options: inference off, the store is refused (no
        // mapping model maps the versions).
        let refusing = NSPersistentContainer(name: "Test", managedObjectModel: v2)
        let off = NSPersistentStoreDescription(url: url)
        off.shouldInferMappingModelAutomatically = false
        refusing.persistentStoreDescriptions = [off]
        var loadError: Error?
        Self.searching(models.url) { refusing.loadPersistentStores { _, error in loadError = error } }
        #expect((loadError as NSError?)?.code == NSMigrationMissingMappingModelError)
        let container = NSPersistentContainer(name: "Test", managedObjectModel: v2)
        container.persistentStoreDescriptions = [NSPersistentStoreDescription(url: url)]
        Self.searching(models.url) { container.loadPersistentStores { _, error in loadError = error } }
        #expect(loadError == nil)
        let context = container.newBackgroundContext()
        let count = try context.performAndWait { try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) }
        #expect(count == 2)
    }

    @Test func twoCoordinatorsAddingTheOldStoreAtOnceBothOpenIt() throws {
        let folder = try TemporaryFolder(), models = try TemporaryFolder(), current = try TemporaryFolder()
        let url = try Self.v1Store(in: folder, models: models.url)
        let v2 = try Self.model("V2", Self.v2, in: current.url)
        let coordinators = [NSPersistentStoreCoordinator(managedObjectModel: v2), NSPersistentStoreCoordinator(managedObjectModel: v2)]
        let failures = CoreData.Locked<[String]>([])
        Self.searching(models.url) {
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                do {
                    try coordinators[index].addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                                                               options: [NSMigratePersistentStoresAutomaticallyOption: true,
                                                                         NSInferMappingModelAutomaticallyOption: true])
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        for coordinator in coordinators {
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 2)
        }
    }
}
