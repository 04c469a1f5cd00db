import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Staged migration (`NSStagedMigrationManager`), run through its internal entry point
/// `migrateStore(at:options:to:)` on stores of models built in code.
///
/// The versions: V1 `Person(name)`; V2 adds `firstName`, `lastName` (lightweight); V3 drops
/// `name` and adds `initials` (a custom stage: `willMigrate` splits `name` on V2, `didMigrate`
/// fills `initials` on V3).
@Suite struct StagedMigrationTests {
    typealias M = MigrationModels
    typealias L = SQLiteLightweightMigrationTests

    /// A `.xcdatamodeld` named `name` in `folder`, in Xcode's format, with one version per element
    /// of `versions` (the version's name, and the `<attribute>` elements of its `Person` entity),
    /// and those versions read.
    static func versionedModel(_ name: String, in folder: TemporaryFolder, _ versions: [(String, String)]) throws -> [NSManagedObjectModel] {
        let bundle = try XcodeModelFiles.writeBundle(name, in: folder.url, versions: versions.map { version, attributes in
            (version, XcodeModelFiles.entity("Person", [attributes], extra: #" representedClassName="Person""#))
        })
        return try versions.map { try NSManagedObjectModel(validatingContentsOf: bundle.appendingPathComponent("\($0.0).xcdatamodel")) }
    }

    static func string(_ name: String, _ extra: String = "") -> String {
        "<attribute name=\"\(name)\" optional=\"YES\" attributeType=\"String\"\(extra)/>"
    }

    /// `People.xcdatamodeld`: V1 `Person(name)`; V2 adds `firstName`, `lastName` (lightweight); V3
    /// drops `name` and adds `initials` (a custom stage: ``splitStage(_:_:seen:)``).
    static func people(in folder: TemporaryFolder) throws -> (NSManagedObjectModel, NSManagedObjectModel, NSManagedObjectModel) {
        let models = try versionedModel("People", in: folder, [
            ("People", string("name")),
            ("People 2", string("name") + string("firstName") + string("lastName")),
            ("People 3", string("firstName") + string("lastName") + string("initials")),
        ])
        return (models[0], models[1], models[2])
    }

    static func reference(_ model: NSManagedObjectModel) -> NSManagedObjectModelReference {
        NSManagedObjectModelReference(model: model, versionChecksum: model.versionChecksum)
    }

    /// A store of `v1` with Ada Lovelace and Alan Turing.
    static func v1Store(_ v1: NSManagedObjectModel, in folder: TemporaryFolder) throws -> URL {
        try L.makeStore(v1, in: folder) { context in
            for name in ["Ada Lovelace", "Alan Turing"] { _ = L.insert("Person", ["name": name], into: context) }
        }
    }

    /// Runs `body` on a background context of the manager's container and saves it.
    static func change(_ manager: NSStagedMigrationManager, _ body: (NSManagedObjectContext) throws -> Void) throws {
        let context = try #require(manager.container).newBackgroundContext()
        try context.performAndWait {
            try body(context)
            try context.save()
        }
    }

    /// The V2 → V3 stage that splits `name` and fills `initials`, recording in `seen` the model
    /// checksum of the container each handler got.
    static func splitStage(_ v2: NSManagedObjectModel, _ v3: NSManagedObjectModel, seen: Locked<[String]>) -> NSCustomMigrationStage {
        let stage = NSCustomMigrationStage(migratingFrom: reference(v2), to: reference(v3))
        stage.label = "V2 to V3: split name"
        stage.willMigrateHandler = { manager, _ in
            seen.value.append("will " + (manager.container?.managedObjectModel.versionChecksum ?? "none"))
            try change(manager) { context in
                for person in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")) {
                    let parts = (person.value(forKey: "name") as? String ?? "").split(separator: " ").map(String.init)
                    person.setValue(parts.first, forKey: "firstName")
                    person.setValue(parts.dropFirst().joined(separator: " "), forKey: "lastName")
                }
            }
        }
        stage.didMigrateHandler = { manager, _ in
            seen.value.append("did " + (manager.container?.managedObjectModel.versionChecksum ?? "none"))
            try change(manager) { context in
                for person in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")) {
                    let first = (person.value(forKey: "firstName") as? String ?? "").prefix(1)
                    let last = (person.value(forKey: "lastName") as? String ?? "").prefix(1)
                    person.setValue(String(first + last), forKey: "initials")
                }
            }
        }
        return stage
    }

    static func values(_ url: URL, _ model: NSManagedObjectModel, _ keys: [String]) throws -> [[String]] {
        try L.fetch("Person", L.open(url, model)).map { person in keys.map { person.value(forKey: $0) as? String ?? "nil" } }
    }

    static func expectError(_ code: Int, _ text: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        let error = L.error(body)
        #expect(error?.domain == NSCocoaErrorDomain, sourceLocation: sourceLocation)
        #expect(error?.code == code, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.localizedDescription.contains(text) == true, "\(String(describing: error?.localizedDescription))", sourceLocation: sourceLocation)
    }

    // MARK: Chains

    @Test func lightweightThenCustomStageChainsV1ToV3InOneRun() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Self.people(in: folder)
        let url = try Self.v1Store(v1, in: folder)
        let seen = Locked<[String]>([])
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum]), Self.splitStage(v2, v3, seen: seen)])
        try manager.migrateStore(at: url, options: nil, to: v3)

        #expect(try Self.values(url, v3, ["firstName", "lastName", "initials"]) == [["Ada", "Lovelace", "AL"], ["Alan", "Turing", "AT"]])
        #expect(seen.value == ["will " + v2.versionChecksum, "did " + v3.versionChecksum])
        #expect(manager.container == nil)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(v3.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }

    /// Two staged migrations of one file at once (two coordinators, or an app and its extension):
    /// the second read the version while the first was in its handlers, and ran the stage's
    /// handlers (and steps) again. It now waits, then finds the store migrated.
    @Test func aSecondStagedMigrationOfTheFileWaitsForTheFirst() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Self.people(in: folder)
        let url = try Self.v1Store(v1, in: folder)
        let seen = Locked<[String]>([])
        let firstInHandler = DispatchSemaphore(value: 0)
        let first = Self.splitStage(v2, v3, seen: seen)
        let split = first.willMigrateHandler!
        first.willMigrateHandler = { manager, stage in
            firstInHandler.signal()
            Thread.sleep(forTimeInterval: 0.3)
            try split(manager, stage)
        }
        let errors = Locked<[Error]>([])
        let group = DispatchGroup()
        nonisolated(unsafe) let firstManager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum]), first])
        DispatchQueue.global().async(group: group) {
            do {
                try firstManager.migrateStore(at: url, options: nil, to: v3)
            } catch { errors.value.append(error) }
        }
        firstInHandler.wait()
        do {
            try NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum]), Self.splitStage(v2, v3, seen: seen)])
                .migrateStore(at: url, options: nil, to: v3)
        } catch { errors.value.append(error) }
        group.wait()
        #expect(errors.value.isEmpty, "\(errors.value)")
        #expect(seen.value == ["will " + v2.versionChecksum, "did " + v3.versionChecksum])
        #expect(try Self.values(url, v3, ["firstName", "lastName", "initials"]) == [["Ada", "Lovelace", "AL"], ["Alan", "Turing", "AT"]])
    }

    /// A handler that migrates another store of the same folder (a container it loads) does not
    /// wait for the lock its own migration holds.
    @Test func aHandlerMayMigrateAnotherStoreOfTheFolder() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Self.people(in: folder)
        let url = try Self.v1Store(v1, in: folder)
        let other = folder.url.appendingPathComponent("Other.sqlite")
        try NSPersistentStoreCoordinator(managedObjectModel: v1).replacePersistentStore(at: other, withPersistentStoreFrom: url, ofType: NSSQLiteStoreType)
        let seen = Locked<[String]>([])
        let outer = Self.splitStage(v2, v3, seen: seen)
        let split = outer.willMigrateHandler!
        outer.willMigrateHandler = { manager, stage in
            try NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum]), Self.splitStage(v2, v3, seen: Locked([]))])
                .migrateStore(at: other, options: nil, to: v3)
            try split(manager, stage)
        }
        try NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum]), outer]).migrateStore(at: url, options: nil, to: v3)
        for store in [url, other] {
            #expect(try Self.values(store, v3, ["initials"]) == [["AL"], ["AT"]])
        }
    }

    /// Through Apple's entry point: the manager under `NSPersistentStoreStagedMigrationManagerOptionKey`
    /// of a container's store description migrates the store when it is loaded.
    @Test func theOptionOfAStoreDescriptionRunsTheStages() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Self.people(in: folder)
        let url = try Self.v1Store(v1, in: folder)
        let seen = Locked<[String]>([])
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum]), Self.splitStage(v2, v3, seen: seen)])
        let container = NSPersistentContainer(name: "People", managedObjectModel: v3)
        let description = NSPersistentStoreDescription(url: url)
        description.setOption(manager, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
        container.persistentStoreDescriptions = [description]
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil, "\(String(describing: loadError))")
        #expect(seen.value == ["will " + v2.versionChecksum, "did " + v3.versionChecksum])
        let context = container.newBackgroundContext()
        let initials = try context.performAndWait {
            Set(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).compactMap { $0.value(forKey: "initials") as? String })
        }
        #expect(initials == ["AL", "AT"])
    }

    /// Lightweight stages chain one version at a time (Apple's framework does not chain
    /// lightweight-only stages): V2 adds a non-optional `nickname` whose default, "none", fills the
    /// rows; V3 renames `name` to `displayName` and changes that default to "?", which a direct
    /// V1 → V3 migration would have used. V2, named only by its checksum, is found among the
    /// versions of the coordinator model's `.xcdatamodeld`.
    @Test func lightweightStagesChainThroughIntermediateVersions() throws {
        let folder = try TemporaryFolder()
        let nickname = { (value: String) in
            "<attribute name=\"nickname\" attributeType=\"String\" defaultValueString=\"\(value)\"/>"
        }
        let models = try Self.versionedModel("Renames", in: folder, [
            ("Renames", Self.string("name")),
            ("Renames 2", Self.string("name") + nickname("none")),
            ("Renames 3", Self.string("displayName", " elementID=\"name\"") + nickname("?")),
        ])
        let (v1, v2, v3) = (models[0], models[1], models[2])
        let url = try Self.v1Store(v1, in: folder)
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum, v2.versionChecksum]),
                                                NSLightweightMigrationStage([v3.versionChecksum])])
        try manager.migrateStore(at: url, options: nil, to: v3)
        #expect(try Self.values(url, v3, ["displayName", "nickname"]) == [["Ada Lovelace", "none"], ["Alan Turing", "none"]])
    }

    /// A store this package recorded with its earlier hash of a derived attribute (before it
    /// hashed them as Apple does) starts at the stage of the model it matches.
    @Test func aStoreWithTheEarlierHashOfADerivedAttributeIsMigrated() throws {
        let folder = try TemporaryFolder()
        let upper = "<attribute name=\"loud\" optional=\"YES\" attributeType=\"String\" derived=\"YES\" derivationExpression=\"uppercase:(name)\"/>"
        let models = try Self.versionedModel("Derived", in: folder, [
            ("Derived", Self.string("name") + upper),
            ("Derived 2", Self.string("name") + upper + Self.string("nickname")),
        ])
        let (v1, v2) = (models[0], models[1])
        let url = try Self.v1Store(v1, in: folder)
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        metadata[NSStoreModelVersionHashesKey] = v1.entities.reduce(into: [String: Data]()) { $0[$1.name!] = VersionHash.entityHash($1, legacy: true) }
        try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSSQLiteStoreType, at: url)
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum, v2.versionChecksum])])
        try manager.migrateStore(at: url, options: nil, to: v2)
        #expect(try Self.values(url, v2, ["name", "loud"]) == [["Ada Lovelace", "ADA LOVELACE"], ["Alan Turing", "ALAN TURING"]])
    }

    // MARK: Model references

    @Test func referencesResolveByModelFileNameInABundleAndVersionHashes() throws {
        let folder = try TemporaryFolder()
        let (_, v2, _) = try Self.people(in: folder)
        let v2URL = folder.url.appendingPathComponent("People.xcdatamodeld/People 2.xcdatamodel")
        let checksum = v2.versionChecksum
        let bundle = try #require(Bundle(path: folder.path))

        let model = NSManagedObjectModelReference(model: v2, versionChecksum: checksum)
        #expect(model.resolvedModel === v2)
        #expect(model.versionChecksum == checksum)
        let file = NSManagedObjectModelReference(fileURL: v2URL, versionChecksum: checksum)
        #expect(file.resolvedModel.entityVersionHashesByName == v2.entityVersionHashesByName)
        let named = NSManagedObjectModelReference(name: "People", in: bundle, versionChecksum: checksum)
        #expect(named.resolvedModel.entitiesByName["Person"]?.attributesByName["firstName"] != nil)
        let hashes = NSManagedObjectModelReference(entityVersionHashes: v2.entityVersionHashesByName, in: bundle, versionChecksum: checksum)
        #expect(hashes.resolvedModel.versionChecksum == checksum)

        Self.expectError(NSManagedObjectModelReferenceNotFoundError, "could not be found in the bundle at \(bundle.bundlePath)") {
            _ = try NSManagedObjectModelReference(name: "Garage", in: bundle, versionChecksum: checksum).resolve()
        }
        Self.expectError(NSManagedObjectModelReferenceNotFoundError, "A model with version hashes") {
            _ = try NSManagedObjectModelReference(entityVersionHashes: ["Car": Data(count: 32)], in: bundle, versionChecksum: checksum).resolve()
        }
        let wrong = L.error { _ = try NSManagedObjectModelReference(name: "People", in: bundle, versionChecksum: "bm90IGEgbW9kZWw=").resolve() }
        #expect(wrong?.code == NSManagedObjectModelReferenceNotFoundError)
        let mismatch = L.error { _ = try NSManagedObjectModelReference(fileURL: v2URL, versionChecksum: "bm90IGEgbW9kZWw=").resolve() }
        #expect(mismatch?.code == NSPersistentStoreIncompatibleVersionHashError)
        #expect(mismatch?.userInfo["reason"] as? String == "The version hash (and associated hashes) are incompatible with the current Core Data version.")
        #expect(mismatch?.userInfo["versionHash"] as? String == checksum)
        #expect(mismatch?.userInfo["checksum"] as? String == "bm90IGEgbW9kZWw=")
    }

    /// Custom stages follow each other from the version the previous one ended with (V1 → V2,
    /// V2 → V3), each with its handlers, in one run.
    @Test func customStagesChainFromTheVersionThePreviousOneEndedWith() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Self.people(in: folder)
        let url = try Self.v1Store(v1, in: folder)
        let seen = Locked<[String]>([])
        let first = NSCustomMigrationStage(migratingFrom: Self.reference(v1), to: Self.reference(v2))
        first.didMigrateHandler = { manager, _ in
            seen.value.append("first did " + (manager.container?.managedObjectModel.versionChecksum ?? "none"))
        }
        let manager = NSStagedMigrationManager([first, Self.splitStage(v2, v3, seen: seen)])
        try manager.migrateStore(at: url, options: nil, to: v3)
        #expect(try Self.values(url, v3, ["firstName", "lastName", "initials"]) == [["Ada", "Lovelace", "AL"], ["Alan", "Turing", "AT"]])
        #expect(seen.value == ["first did " + v2.versionChecksum, "will " + v2.versionChecksum, "did " + v3.versionChecksum])
    }

    /// The handlers' container adds the store with the store's options, less the migration ones.
    @Test func theHandlersContainerHasTheStoresOptionsWithoutTheMigrationOnes() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, _) = try Self.people(in: folder)
        let url = try Self.v1Store(v1, in: folder)
        let keys = Locked<[String]>([])
        let stage = NSCustomMigrationStage(migratingFrom: Self.reference(v1), to: Self.reference(v2))
        stage.willMigrateHandler = { manager, _ in
            let options = manager.container?.persistentStoreCoordinator.persistentStores.first?.options ?? [:]
            keys.value = options.keys.compactMap { $0 as? String }.sorted()
        }
        let manager = NSStagedMigrationManager([stage])
        let options: [AnyHashable: Any] = [NSSQLitePragmasOption: ["secure_delete": "1"], NSMigratePersistentStoresAutomaticallyOption: true,
                                           NSInferMappingModelAutomaticallyOption: true, NSPersistentStoreStagedMigrationManagerOptionKey: manager]
        try manager.migrateStore(at: url, options: options, to: v2)
        #expect(keys.value == [NSSQLitePragmasOption])
    }

    /// Reading `resolvedModel` of a reference that cannot be resolved is a programmer error (Apple
    /// raises): the process stops.
    @Test func resolvedModelOfAnUnresolvableReferenceTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = NSManagedObjectModelReference(fileURL: URL(fileURLWithPath: "/nonexistent/Model.xcdatamodel"), versionChecksum: "x").resolvedModel
        }
    }

    @Test func aStoreAtTheCoordinatorsVersionOrWithNoFileIsLeftAlone() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, _) = try Self.people(in: folder)
        let url = try Self.v1Store(v1, in: folder)
        let before = try Data(contentsOf: url)
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum, v2.versionChecksum])])
        try manager.migrateStore(at: url, options: nil, to: v1)
        #expect(try Data(contentsOf: url) == before)
        let missing = folder.url.appendingPathComponent("Missing.sqlite")
        try manager.migrateStore(at: missing, options: nil, to: v2)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    @Test func aStoreInTheMiddleStartsThere() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Self.people(in: folder)
        let url = try L.makeStore(v2, in: folder) { context in
            _ = L.insert("Person", ["name": "Grace Hopper"], into: context)
        }
        let seen = Locked<[String]>([])
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum]), Self.splitStage(v2, v3, seen: seen)])
        try manager.migrateStore(at: url, options: nil, to: v3)
        #expect(try Self.values(url, v3, ["firstName", "lastName", "initials"]) == [["Grace", "Hopper", "GH"]])
    }

    // MARK: Handlers that throw

    struct HandlerFailure: Error, Equatable {}

    @Test func aThrowingWillMigrateHandlerLeavesTheLastCompleteVersionWithWhatItSaved() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Self.people(in: folder)
        let url = try Self.v1Store(v1, in: folder)
        let stage = NSCustomMigrationStage(migratingFrom: Self.reference(v2), to: Self.reference(v3))
        stage.willMigrateHandler = { manager, _ in
            try Self.change(manager) { context in
                for person in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")) { person.setValue("X", forKey: "firstName") }
            }
            throw HandlerFailure()
        }
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum]), stage])
        #expect(throws: HandlerFailure()) { try manager.migrateStore(at: url, options: nil, to: v3) }
        #expect(manager.container == nil)
        // V1 → V2 completed; the store opens with V2 and keeps what the handler saved.
        #expect(try Self.values(url, v2, ["name", "firstName"]) == [["Ada Lovelace", "X"], ["Alan Turing", "X"]])

        // Run again with a handler that succeeds: it resumes at V2.
        stage.willMigrateHandler = nil
        try manager.migrateStore(at: url, options: nil, to: v3)
        #expect(try Self.values(url, v3, ["firstName"]) == [["X"], ["X"]])
    }

    @Test func aThrowingDidMigrateHandlerLeavesTheMigratedVersion() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Self.people(in: folder)
        let url = try Self.v1Store(v1, in: folder)
        let stage = NSCustomMigrationStage(migratingFrom: Self.reference(v2), to: Self.reference(v3))
        stage.didMigrateHandler = { _, _ in throw NSError(domain: "App", code: 7) }
        let manager = NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum]), stage])
        let error = L.error { try manager.migrateStore(at: url, options: nil, to: v3) }
        #expect(error?.domain == "App" && error?.code == 7)
        #expect(try Self.values(url, v3, ["firstName"]) == [["nil"], ["nil"]])
    }

    // MARK: Refused before the store is touched

    /// `body` throws `code` with `text`, and the store at `url` is byte for byte what it was.
    static func expectRefused(_ url: URL, _ code: Int, _ text: String, sourceLocation: SourceLocation = #_sourceLocation,
                              _ body: () throws -> Void) throws {
        let before = try Data(contentsOf: url)
        expectError(code, text, sourceLocation: sourceLocation, body)
        #expect(try Data(contentsOf: url) == before, sourceLocation: sourceLocation)
    }

    @Test func invalidStageListsAreRefused() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Self.people(in: folder)
        let url = try Self.v1Store(v1, in: folder)
        let (c1, c2, c3) = (v1.versionChecksum, v2.versionChecksum, v3.versionChecksum)
        func run(_ stages: [NSMigrationStage]) throws { try NSStagedMigrationManager(stages).migrateStore(at: url, options: nil, to: v3) }

        try Self.expectRefused(url, NSMigrationError, "Duplicate version checksums detected.") {
            try run([NSLightweightMigrationStage([c1, c2, c1, c3])])
        }
        try Self.expectRefused(url, NSMigrationError, "The current model reference and the next model reference cannot be equal.") {
            try run([NSLightweightMigrationStage([c1, c2, c3]), NSCustomMigrationStage(migratingFrom: Self.reference(v3), to: Self.reference(v3))])
        }
        try Self.expectRefused(url, NSMigrationError, "Duplicate version checksums across stages detected.") {
            try run([NSLightweightMigrationStage([c1, c2]), NSCustomMigrationStage(migratingFrom: Self.reference(v1), to: Self.reference(v3))])
        }
        let stage = NSLightweightMigrationStage([c1, c2, c3])
        stage.label = "all"
        try Self.expectRefused(url, NSMigrationError, "Duplicate lightweight migration stages detected. (stage 0 'all')") {
            try run([stage, stage])
        }
        try Self.expectRefused(url, NSMigrationError, "must be an NSLightweightMigrationStage or an NSCustomMigrationStage") {
            try run([NSLightweightMigrationStage([c1, c2, c3]), NSMigrationStage()])
        }
    }

    @Test func unknownCoordinatorOrStoreModelsAndBackwardMigrationAreRefused() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Self.people(in: folder)
        let url = try Self.v1Store(v1, in: folder)
        try Self.expectRefused(url, NSManagedObjectModelReferenceNotFoundError, "Cannot use staged migration with an unknown coordinator model version.") {
            try NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum, v2.versionChecksum])]).migrateStore(at: url, options: nil, to: v3)
        }
        try Self.expectRefused(url, NSMigrationMissingSourceModelError, "is in none of the stages") {
            try NSStagedMigrationManager([NSLightweightMigrationStage([v2.versionChecksum, v3.versionChecksum])]).migrateStore(at: url, options: nil, to: v3)
        }
        let v3Folder = try TemporaryFolder()
        let v3Store = try L.makeStore(v3, in: v3Folder) { _ in }
        try Self.expectRefused(v3Store, NSStagedMigrationBackwardMigrationError, "A store file cannot be migrated backwards with staged migration.") {
            try NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum, v2.versionChecksum, v3.versionChecksum])])
                .migrateStore(at: v3Store, options: nil, to: v2)
        }
    }

    @Test func aStoreWithoutVersionHashesIsRefused() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, _) = try Self.people(in: folder)
        let url = try Self.v1Store(v1, in: folder)
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        metadata[NSStoreModelVersionHashesKey] = nil
        try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSSQLiteStoreType, at: url)
        try Self.expectRefused(url, NSStagedMigrationFrameworkVersionMismatchError, "has no model version hashes") {
            try NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum, v2.versionChecksum])]).migrateStore(at: url, options: nil, to: v2)
        }
    }

    @Test func unresolvableReferencesAndUninferableStepsAreRefusedBeforeAnyStep() throws {
        let folder = try TemporaryFolder()
        let (v1, v2, v3) = try Self.people(in: folder)
        let url = try Self.v1Store(v1, in: folder)
        let lightweight = NSLightweightMigrationStage([v1.versionChecksum])
        // A model whose checksum is not the one given.
        try Self.expectRefused(url, NSPersistentStoreIncompatibleVersionHashError, "has the version checksum") {
            let wrong = NSManagedObjectModelReference(model: v1, versionChecksum: v2.versionChecksum)
            try NSStagedMigrationManager([lightweight, NSCustomMigrationStage(migratingFrom: wrong, to: Self.reference(v3))])
                .migrateStore(at: url, options: nil, to: v3)
        }
        // A model file that is not there.
        try Self.expectRefused(url, NSManagedObjectModelReferenceNotFoundError, "could not be read at") {
            let missing = NSManagedObjectModelReference(fileURL: folder.url.appendingPathComponent("Missing.xcdatamodel"), versionChecksum: v2.versionChecksum)
            try NSStagedMigrationManager([lightweight, NSCustomMigrationStage(migratingFrom: missing, to: Self.reference(v3))])
                .migrateStore(at: url, options: nil, to: v3)
        }
        // A lightweight version no model has.
        try Self.expectRefused(url, NSManagedObjectModelReferenceNotFoundError, "could not be found") {
            try NSStagedMigrationManager([NSLightweightMigrationStage([v1.versionChecksum, "bm90IGEgbW9kZWw="]), NSLightweightMigrationStage([v3.versionChecksum])])
                .migrateStore(at: url, options: nil, to: v3)
        }
        // The custom stage changes `name` from String to Integer 64, which lightweight migration
        // does not infer: nothing runs, V1 → V2 included.
        let strict = M.model([M.entity("Person", [M.attribute("name", .integer64AttributeType)])])
        try Self.expectRefused(url, NSInferredMappingModelError, "Can't infer a mapping model for Person.name") {
            try NSStagedMigrationManager([NSCustomMigrationStage(migratingFrom: Self.reference(v1), to: Self.reference(v2)),
                                          NSCustomMigrationStage(migratingFrom: Self.reference(v2), to: Self.reference(strict))])
                .migrateStore(at: url, options: nil, to: strict)
        }
    }
}
