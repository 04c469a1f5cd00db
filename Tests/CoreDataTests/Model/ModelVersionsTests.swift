import Foundation
import Testing
@testable import CoreData
import TestSupport

/// The versions of a `.xcdatamodeld` (`Fixtures/Garage.xcdatamodeld`: three versions, "1.0" to
/// "3.0"; `Mechanic` is the same in all of them, `Car` changes in each, `Owner` comes in 3).
@Suite("Model versions")
struct ModelVersionsTests {
    static let garage = ModelTestSupport.fixture("Garage.xcdatamodeld")

    static func version(_ name: String, in bundle: URL = garage) throws -> NSManagedObjectModel {
        try NSManagedObjectModel(validatingContentsOf: bundle.appendingPathComponent("\(name).xcdatamodel"))
    }

    /// A copy of the Garage bundle in `folder`, which no model search looks in.
    static func garageCopy(in folder: TemporaryFolder) throws -> URL {
        let copy = folder.url.appendingPathComponent("Garage.xcdatamodeld")
        try FileManager.default.copyItem(at: garage, to: copy)
        return copy
    }

    /// The metadata of a SQLite store written with `model` (one `Car` saved).
    static func storeMetadata(writtenWith model: NSManagedObjectModel) throws -> [String: Any] {
        let stack = try TestStack(model: model)
        stack.insert("Car", ["name": "Beetle"])
        try stack.context.save()
        return try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: stack.url)
    }

    // MARK: Each version on its own

    @Test func eachVersionLoadsOnItsOwn() throws {
        let expected: [(name: String, identifier: String, entities: Set<String>)] = [
            ("Garage", "1.0", ["Car", "Mechanic"]), ("Garage 2", "2.0", ["Car", "Mechanic"]), ("Garage 3", "3.0", ["Car", "Mechanic", "Owner"]),
        ]
        var checksums = Set<String>()
        for (name, identifier, entities) in expected {
            let url = Self.garage.appendingPathComponent("\(name).xcdatamodel")
            let model = try #require(NSManagedObjectModel(contentsOf: url), "\(name)")
            #expect(model.versionIdentifiers == [identifier], "\(name)")
            #expect(Set(model.entitiesByName.keys) == entities, "\(name)")
            #expect(model.versionedModelURL?.standardizedFileURL == Self.garage.standardizedFileURL, "\(name)")
            let fromContents = try NSManagedObjectModel(validatingContentsOf: url.appendingPathComponent("contents"))
            #expect(fromContents.versionChecksum == model.versionChecksum && fromContents.versionedModelURL != nil, "\(name)")
            checksums.insert(model.versionChecksum)
        }
        #expect(checksums.count == 3)
        #expect(try Self.version("Garage 2").entitiesByName["Car"]?.attributesByName["color"] != nil)
        #expect(try Self.version("Garage").entitiesByName["Car"]?.attributesByName["color"] == nil)
        #expect(try Self.version("Garage 3").configurations == ["Cars", "Workshop"])

        let current = try NSManagedObjectModel(validatingContentsOf: Self.garage)
        #expect(current.versionIdentifiers == ["3.0"])
        #expect(current.versionedModelURL?.standardizedFileURL == Self.garage.standardizedFileURL)
        #expect((current.copy() as! NSManagedObjectModel).versionedModelURL == current.versionedModelURL)
    }

    @Test func aModelOutsideABundleHasNoVersionedModel() throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let lone = folder.url.appendingPathComponent("Garage 2.xcdatamodel")
        try FileManager.default.copyItem(at: Self.garage.appendingPathComponent("Garage 2.xcdatamodel"), to: lone)
        let model = try NSManagedObjectModel(validatingContentsOf: lone)
        #expect(model.versionIdentifiers == ["2.0"])
        #expect(model.versionedModelURL == nil)
        #expect(NSManagedObjectModel(byMerging: [model])?.versionedModelURL == nil)
    }

    // MARK: Checksums

    @Test func checksumsForVersionedModelNameEveryVersion() throws {
        let checksums = try NSManagedObjectModel.checksumsForVersionedModel(at: Self.garage)
        #expect(checksums == [
            "Garage": try Self.version("Garage").versionChecksum,
            "Garage 2": try Self.version("Garage 2").versionChecksum,
            "Garage 3": try Self.version("Garage 3").versionChecksum,
        ])
        // What the store records as NSPersistentStoreModelVersionChecksumKey names its version.
        let metadata = try Self.storeMetadata(writtenWith: Self.version("Garage 2"))
        let written = try #require(metadata[NSPersistentStoreModelVersionChecksumKey] as? String)
        #expect(checksums.filter { $0.value == written }.map(\.key) == ["Garage 2"])
    }

    @Test func checksumsOfACompiledModelComeFromItsVersionInfo() throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let momd = folder.url.appendingPathComponent("Garage.momd")
        try FileManager.default.createDirectory(at: momd, withIntermediateDirectories: true)
        let info: [String: Any] = [
            "NSManagedObjectModel_CurrentVersionName": "Garage 2",
            "NSManagedObjectModel_VersionChecksums": ["Garage": "AAAA", "Garage 2": "BBBB"],
        ]
        try PropertyListSerialization.data(fromPropertyList: info, format: .xml, options: 0)
            .write(to: momd.appendingPathComponent("VersionInfo.plist"))
        #expect(try NSManagedObjectModel.checksumsForVersionedModel(at: momd) == ["Garage": "AAAA", "Garage 2": "BBBB"])

        try Data("not a plist".utf8).write(to: momd.appendingPathComponent("VersionInfo.plist"))
        Self.expectError(259, "VersionInfo.plist") { try NSManagedObjectModel.checksumsForVersionedModel(at: momd) }
        try FileManager.default.removeItem(at: momd.appendingPathComponent("VersionInfo.plist"))
        Self.expectError(260, "VersionInfo.plist") { try NSManagedObjectModel.checksumsForVersionedModel(at: momd) }
    }

    @Test func checksumsRefuseWhatIsNotAReadableVersionedModel() throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        Self.expectError(260, "does not exist") {
            try NSManagedObjectModel.checksumsForVersionedModel(at: folder.url.appendingPathComponent("Missing.xcdatamodeld"))
        }
        Self.expectError(259, "is not a versioned model") {
            try NSManagedObjectModel.checksumsForVersionedModel(at: Self.garage.appendingPathComponent("Garage 2.xcdatamodel"))
        }
        let empty = folder.url.appendingPathComponent("Empty.xcdatamodeld")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        Self.expectError(259, "holds no model version") { try NSManagedObjectModel.checksumsForVersionedModel(at: empty) }

        let copy = try Self.garageCopy(in: folder)
        try Data("<model><entity".utf8).write(to: copy.appendingPathComponent("Garage 2.xcdatamodel/contents"))
        Self.expectError(259, "Garage 2.xcdatamodel") { try NSManagedObjectModel.checksumsForVersionedModel(at: copy) }
    }

    static func expectError(_ code: Int, _ text: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Any) {
        do {
            _ = try body()
            Issue.record("no error thrown", sourceLocation: sourceLocation)
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain && error.code == code, "\(error)", sourceLocation: sourceLocation)
            #expect(error.localizedDescription.contains(text), "\(error.localizedDescription)", sourceLocation: sourceLocation)
        }
    }

    // MARK: Compatibility with a store

    @Test func configurationCompatibilityFollowsTheConfigurationsEntities() throws {
        let v1 = try Self.version("Garage"), v3 = try Self.version("Garage 3")
        let metadata = try Self.storeMetadata(writtenWith: try Self.version("Garage"))
        #expect(v1.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(v1.isConfiguration(withName: "Default", compatibleWithStoreMetadata: metadata))
        #expect(!v3.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        // Mechanic did not change: a Workshop store written by version 1 fits version 3.
        #expect(v3.isConfiguration(withName: "Workshop", compatibleWithStoreMetadata: metadata))
        #expect(!v3.isConfiguration(withName: "Cars", compatibleWithStoreMetadata: metadata))
        #expect(!v3.isConfiguration(withName: "NoSuchConfiguration", compatibleWithStoreMetadata: metadata))
        #expect(!v1.isConfiguration(withName: nil, compatibleWithStoreMetadata: [:]))

        // A store that holds an entity the model has not is not the whole model's.
        var hashes = try #require(metadata[NSStoreModelVersionHashesKey] as? [String: Any])
        hashes["Garage"] = Data([1, 2, 3])
        let extra = [NSStoreModelVersionHashesKey: hashes]
        #expect(!v1.isConfiguration(withName: nil, compatibleWithStoreMetadata: extra))
        #expect(v3.isConfiguration(withName: "Workshop", compatibleWithStoreMetadata: extra))
        // A changed hash.
        hashes["Garage"] = nil
        hashes["Mechanic"] = Data([1, 2, 3])
        #expect(!v1.isConfiguration(withName: nil, compatibleWithStoreMetadata: [NSStoreModelVersionHashesKey: hashes]))
    }

    // MARK: Finding a store's source model

    @Test func sourceModelIsFoundAmongTheVersionsOfTheDestinationsBundle() throws {
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let bundle = try Self.garageCopy(in: folder)
        let metadata = try Self.storeMetadata(writtenWith: try Self.version("Garage", in: bundle))
        let destination = try Self.version("Garage 2", in: bundle)

        let source = try #require(ModelSearch.sourceModel(forStoreMetadata: metadata, destination: destination))
        #expect(source.versionIdentifiers == ["1.0"])
        #expect(source.entityVersionHashesByName == (try Self.version("Garage")).entityVersionHashesByName)
        #expect(source.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        // The bundle's current version as destination finds it too.
        let current = try NSManagedObjectModel(validatingContentsOf: bundle)
        #expect(ModelSearch.sourceModel(forStoreMetadata: metadata, destination: current)?.versionIdentifiers == ["1.0"])
        // So does the model a container found by name (the destination of its migrations).
        let container = NSPersistentContainer(name: "Garage", modelDirectory: folder.url)
        #expect(container.managedObjectModel.versionIdentifiers == ["3.0"])
        #expect(ModelSearch.sourceModel(forStoreMetadata: metadata, destination: container.managedObjectModel)?.versionIdentifiers == ["1.0"])

        // The bundle is in no search folder: a destination from elsewhere finds no source.
        let elsewhere = try #require(NSManagedObjectModel(byMerging: [destination]))
        #expect(ModelSearch.sourceModel(forStoreMetadata: metadata, destination: elsewhere) == nil)
        // Nor does the bundle once version 1 is gone.
        try FileManager.default.removeItem(at: bundle.appendingPathComponent("Garage.xcdatamodel"))
        #expect(ModelSearch.sourceModel(forStoreMetadata: metadata, destination: destination) == nil)
    }
}
