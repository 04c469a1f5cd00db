import Foundation
import Testing
@testable import CoreData
import TestSupport

@Suite("NSManagedObjectModel(byMerging:)")
struct ModelMergingTests {
    private func person() -> NSManagedObjectModel {
        let person = NSEntityDescription()
        person.name = "Author"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        name.isOptional = false
        person.properties = [name]
        let model = NSManagedObjectModel()
        model.entities = [person]
        return model
    }

    /// Sub-entities come along, and relationships point at the merged model's entities, not at
    /// the originals (the merge copied only root entities, without their sub-entities).
    @Test func mergesWholeModelsWithTheirSubentitiesAndRelationships() throws {
        let original = TestModel.make()
        let merged = try #require(NSManagedObjectModel(byMerging: [original, person()]))
        let names = Set(merged.entities.compactMap(\.name))
        #expect(names == Set(original.entities.compactMap(\.name)).union(["Author"]))
        let truck = try #require(merged.entitiesByName["Truck"])
        #expect(truck.superentity === merged.entitiesByName["Vehicle"])
        let garage = try #require(truck.relationshipsByName["garage"])
        #expect(garage.destinationEntity === merged.entitiesByName["Garage"])
        #expect(garage.inverseRelationship?.entity === merged.entitiesByName["Garage"])
        for entity in merged.entities { #expect(!original.entities.contains { $0 === entity }) }
        #expect(merged.entityVersionHashesByName["Truck"] == original.entityVersionHashesByName["Truck"])

        // The merged model runs a store.
        let stack = try TestStack(model: merged)
        let city = stack.insert("Garage", ["city": "Oslo"])
        stack.insert("Truck", ["load": 2.5]).setValue(city, forKey: "garage")
        stack.insert("Author", ["name": "Ada"])
        try stack.context.save()
        #expect(try stack.context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Vehicle")) == 1)
        #expect(try stack.context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")) == 1)
    }

    @Test func twoEntitiesOfOneNameCannotBeMerged() {
        #expect(NSManagedObjectModel(byMerging: [person(), person()]) == nil)
        #expect(NSManagedObjectModel(byMerging: [])?.entities.isEmpty == true)
        #expect(NSManagedObjectModel(byMerging: nil)?.entities.isEmpty == true)
    }
}

/// `NSManagedObjectModel.mergedModel(from:)`, `mergedModel(from:forStoreMetadata:)` and
/// `init(byMerging:forStoreMetadata:)`: models found in bundles, and the version a store was
/// written with.
@Suite("Merged models from bundles")
struct BundleModelTests {
    /// A folder holding `Library.xcdatamodeld` (two versions) and `Notes.xcdatamodel`, as a bundle.
    private func bundle() throws -> (TemporaryFolder, Bundle) {
        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(at: ModelTestSupport.fixture("Library.xcdatamodeld"),
                                         to: folder.url.appendingPathComponent("Library.xcdatamodeld"))
        try FileManager.default.copyItem(at: ModelTestSupport.fixture("Unversioned.xcdatamodeld/Notes.xcdatamodel"),
                                         to: folder.url.appendingPathComponent("Notes.xcdatamodel"))
        return (folder, try #require(Bundle(url: folder.url)))
    }

    private func version(_ name: String) throws -> NSManagedObjectModel {
        try NSManagedObjectModel(validatingContentsOf: ModelTestSupport.fixture("Library.xcdatamodeld/\(name).xcdatamodel"))
    }

    private func notes() throws -> NSManagedObjectModel {
        try NSManagedObjectModel(validatingContentsOf: ModelTestSupport.fixture("Unversioned.xcdatamodeld/Notes.xcdatamodel"))
    }

    @Test func mergesTheCurrentVersionOfEveryModelInTheBundles() throws {
        let (folder, bundle) = try bundle()
        let merged = try #require(NSManagedObjectModel.mergedModel(from: [bundle]))
        let expected = try version("Library 2").entityVersionHashesByName.merging(try notes().entityVersionHashesByName) { a, _ in a }
        #expect(merged.entityVersionHashesByName == expected)
        withExtendedLifetime(folder) {}
    }

    @Test func nilSearchesWhereTheContainerSearches() throws {
        let (folder, _) = try bundle()
        let saved = NSPersistentContainer.modelSearchDirectories
        defer { NSPersistentContainer.modelSearchDirectories = saved }
        NSPersistentContainer.modelSearchDirectories = [folder.url]
        let merged = try #require(NSManagedObjectModel.mergedModel(from: nil))
        #expect(Set(merged.entitiesByName.keys).isSuperset(of: ["Book", "Chapter", "Note"]))
    }

    @Test func noModelOrADamagedOneGivesNil() throws {
        let empty = try TemporaryFolder()
        #expect(NSManagedObjectModel.mergedModel(from: [try #require(Bundle(url: empty.url))]) == nil)
        let (folder, bundle) = try bundle()
        try FileManager.default.copyItem(at: ModelTestSupport.fixture("Broken/NotXML.xcdatamodel"),
                                         to: folder.url.appendingPathComponent("Broken.xcdatamodel"))
        #expect(NSManagedObjectModel.mergedModel(from: [bundle]) == nil)
    }

    @Test func findsTheVersionAStoreWasWrittenWith() throws {
        let (folder, bundle) = try bundle()
        for name in ["Library", "Library 2"] {
            let written = NSManagedObjectModel(byMerging: [try version(name), try notes()])!
            let metadata = SQLiteStore.makeMetadata(model: written, uuid: UUID().uuidString)
            let found = try #require(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: metadata), "\(name)")
            #expect(found.entityVersionHashesByName == written.entityVersionHashesByName)
        }
        // Only the library's first version: the notes model is no part of the store.
        let libraryOnly = SQLiteStore.makeMetadata(model: try version("Library"), uuid: UUID().uuidString)
        #expect(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: libraryOnly)?.entityVersionHashesByName
                == (try version("Library")).entityVersionHashesByName)
        // A hash no version has.
        var changed = libraryOnly
        var hashes = changed[NSStoreModelVersionHashesKey] as! [String: Data]
        hashes["Book"] = Data(repeating: 7, count: 32)
        changed[NSStoreModelVersionHashesKey] = hashes
        #expect(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: changed) == nil)
        #expect(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: [:]) == nil)
        withExtendedLifetime(folder) {}
    }

    @Test func mergingModelsForStoreMetadataTakesTheMatchingVersions() throws {
        let first = try version("Library"), second = try version("Library 2"), notes = try notes()
        let metadata = SQLiteStore.makeMetadata(model: NSManagedObjectModel(byMerging: [second, notes])!, uuid: "u")
        let merged = try #require(NSManagedObjectModel(byMerging: [first, notes, second, try version("Library 2")], forStoreMetadata: metadata))
        #expect(merged.entityVersionHashesByName == (metadata[NSStoreModelVersionHashesKey] as! [String: Data]))
        #expect(NSManagedObjectModel(byMerging: [first, notes], forStoreMetadata: metadata) == nil)
    }

    /// A merged model owns copies of its entities' fetch indexes and uniqueness constraints (they
    /// pointed at the originals' properties, and it trapped once those were let go), and keeps
    /// its models' configurations (an app merging its models could not add a store by one).
    @Test func aMergedModelOwnsItsIndexesConstraintsAndConfigurations() throws {
        func merged() -> NSManagedObjectModel {
            let model = TestModel.makeWithConfigurations()
            let car = model.entitiesByName["Car"]!
            car.indexes = [NSFetchIndexDescription(name: "byName", elements: [
                NSFetchIndexElementDescription(property: car.propertiesByName["name"]!, collationType: .binary)])]
            car.uniquenessConstraints = [[car.propertiesByName["vin"]!]]
            return NSManagedObjectModel(byMerging: [model])!
        }
        let model = merged() // the originals are gone
        let car = try #require(model.entitiesByName["Car"])
        #expect(car.indexes.first?.elements.first?.property === car.propertiesByName["name"])
        #expect((car.uniquenessConstraints.first?.first as? NSPropertyDescription) === car.propertiesByName["vin"])
        #expect(!model.entityVersionHashesByName.isEmpty)
        #expect(model.configurations == ["Garage", "Music"])
        #expect(Set(model.entities(forConfigurationName: "Music")?.compactMap(\.name) ?? []) == ["Playlist", "Song"])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: "Music", at: nil)
        let folder = try TemporaryFolder()
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Garage", at: folder.url.appendingPathComponent("G.sqlite"))
        #expect((model.copy() as! NSManagedObjectModel).configurations == ["Garage", "Music"])
    }

    /// A relationship whose destination was left out of the model: `addPersistentStore` throws
    /// the model's error (making the coordinator trapped while it laid the model out).
    @Test func aDestinationOutsideTheModelIsAnErrorNotATrap() throws {
        let person = NSEntityDescription(); person.name = "Person"
        let tag = NSEntityDescription(); tag.name = "Tag"
        let tags = NSRelationshipDescription(); tags.name = "tags"; tags.destinationEntity = tag; tags.maxCount = 0
        let people = NSRelationshipDescription(); people.name = "people"; people.destinationEntity = person; people.maxCount = 0
        tags.inverseRelationship = people; people.inverseRelationship = tags
        person.properties = [tags]
        tag.properties = [people]
        let model = NSManagedObjectModel()
        model.entities = [person] // Tag forgotten
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        #expect {
            try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        } throws: { error in
            (error as NSError).localizedDescription.contains("Person.tags")
        }
        withExtendedLifetime(tag) {}
    }

    /// A model in use cannot change: these setters stop the process with the message the others
    /// give, as Apple raises (they changed the hashes of a model in use, or were ignored).
    @Test(arguments: ["isReadOnly", "isIndexed", "defaultValue", "valueTransformerName", "deleteRule"])
    func settersOfAModelInUseStopTheProcess(_ setter: String) async {
        await #expect(processExitsWith: .failure) { [setter = setter as String] in
            let stack = try TestStack(inMemory: true)
            let city = stack.model.entitiesByName["Garage"]!.attributesByName["city"]!
            switch setter {
            case "isReadOnly": city.isReadOnly = true
            case "isIndexed": city.isIndexed = true
            case "defaultValue": city.defaultValue = "Paris"
            case "valueTransformerName": city.valueTransformerName = "X"
            default: stack.model.entitiesByName["Person"]!.relationshipsByName["cars"]!.deleteRule = .denyDeleteRule
            }
        }
    }
}
