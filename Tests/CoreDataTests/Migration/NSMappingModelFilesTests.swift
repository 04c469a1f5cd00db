import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `NSMappingModel(contentsOf:)` and `NSMappingModel(from:forSourceModel:destinationModel:)` on
/// Xcode's `.xcmappingmodel` folders (`Fixtures/NotesV1ToV2.xcmappingmodel`: Person, Note,
/// Attachment with `MyApp.AttachmentPolicy`, Tag added, Draft removed; recorded between
/// `Notes.xcdatamodel` and `Notes 2.xcdatamodel` of `Notes.xcdatamodeld`).
@Suite("Mapping models from Xcode's files")
struct NSMappingModelFilesTests {
    static var fixture: URL { ModelTestSupport.fixture("NotesV1ToV2.xcmappingmodel") }

    /// `Notes.xcdatamodeld` in `folder`, its versions `Notes` (Person, Note, Attachment, Draft),
    /// `Notes 2` (Person, Note, Attachment, Tag) and `Notes 3` (all five), and the mapping model
    /// beside it.
    static func writeNotes(in folder: URL) throws -> URL {
        let entities = { (names: [String]) in
            names.map { XcodeModelFiles.entity($0, [#"<attribute name="title" optional="YES" attributeType="String"/>"#]) }.joined()
        }
        let bundle = try XcodeModelFiles.writeBundle("Notes", in: folder, versions: [
            ("Notes", entities(["Person", "Note", "Attachment", "Draft"])), ("Notes 2", entities(["Person", "Note", "Attachment", "Tag"])),
            ("Notes 3", entities(["Person", "Note", "Attachment", "Draft", "Tag"])),
        ])
        try FileManager.default.copyItem(at: fixture, to: folder.appendingPathComponent("NotesV1ToV2.xcmappingmodel"))
        return bundle
    }

    @Test func contentsOfReadsTheEntityMappingsWithTheirTypesAndPolicies() throws {
        let mapping = try #require(NSMappingModel(contentsOf: Self.fixture))
        #expect(mapping.entityMappings.map(\.name) == ["PersonToPerson", "NoteToNote", "AttachmentToAttachment", "Tag", "Draft"])
        #expect(mapping.entityMappings.map(\.mappingType) == [.transformEntityMappingType, .transformEntityMappingType, .customEntityMappingType,
                                                               .addEntityMappingType, .removeEntityMappingType])
        #expect(mapping.entityMappingsByName["AttachmentToAttachment"]?.entityMigrationPolicyClassName == "MyApp.AttachmentPolicy")
        let person = try #require(mapping.entityMappingsByName["PersonToPerson"])
        #expect(person.attributeMappings?.map { "\($0.name ?? ""): \($0.valueExpression?.description ?? "-")" } == [
            "name: $source.name", #"bonusPoints: FUNCTION($entityPolicy, "toInt16WithValue:" , $source.bonusPoints)"#,
        ])
        #expect(person.relationshipMappings?.map(\.name) == ["notes"])
        // Not yet matched to models: no version hashes.
        #expect(mapping.entityMappings.allSatisfy { $0.sourceEntityVersionHash == nil && $0.destinationEntityVersionHash == nil })
    }

    @Test func contentsOfIsNilForWhatIsNotAMappingModel() throws {
        let folder = try TemporaryFolder()
        #expect(NSMappingModel(contentsOf: nil) == nil)
        #expect(NSMappingModel(contentsOf: folder.url.appendingPathComponent("Missing.xcmappingmodel")) == nil)
        try Data("<database><object".utf8).write(to: folder.url.appendingPathComponent("xcmapping.xml"))
        #expect(NSMappingModel(contentsOf: folder.url) == nil)
    }

    @Test func fromBundlesFindsTheMappingBesideTheDestinationsModelAndGivesItTheirHashes() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeNotes(in: folder.url)
        let v1 = try #require(NSManagedObjectModel(contentsOf: bundle.appendingPathComponent("Notes.xcdatamodel")))
        let v2 = try #require(NSManagedObjectModel(contentsOf: bundle.appendingPathComponent("Notes 2.xcdatamodel")))
        let mapping = try #require(NSMappingModel(from: nil, forSourceModel: v1, destinationModel: v2))
        let person = try #require(mapping.entityMappingsByName["PersonToPerson"])
        #expect(person.sourceEntityVersionHash == v1.entitiesByName["Person"]?.versionHash)
        #expect(person.destinationEntityVersionHash == v2.entitiesByName["Person"]?.versionHash)
        #expect(mapping.entityMappingsByName["Tag"]?.sourceEntityVersionHash == nil)
        #expect(mapping.entityMappingsByName["Draft"]?.destinationEntityVersionHash == nil)
        // Given as a bundle of its own, too.
        let resources = try #require(Bundle(path: folder.path))
        #expect(NSMappingModel(from: [resources], forSourceModel: v1, destinationModel: v2) != nil)
    }

    @Test func fromBundlesIsNilForOtherModels() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeNotes(in: folder.url)
        let v1 = try #require(NSManagedObjectModel(contentsOf: bundle.appendingPathComponent("Notes.xcdatamodel")))
        let v2 = try #require(NSManagedObjectModel(contentsOf: bundle.appendingPathComponent("Notes 2.xcdatamodel")))
        // The other way round: Tag is no entity of version 1.
        #expect(NSMappingModel(from: nil, forSourceModel: v2, destinationModel: v1) == nil)
        // Version 3 has every entity the mapping maps from, but Xcode recorded it from `Notes.xcdatamodel`.
        let v3 = try #require(NSManagedObjectModel(contentsOf: bundle.appendingPathComponent("Notes 3.xcdatamodel")))
        #expect(NSMappingModel(from: nil, forSourceModel: v3, destinationModel: v2) == nil)
        // A model of no version of the bundle is compared with the version Xcode recorded, by the
        // version hashes of the entities the mapping maps (as a compiled mapping model's are).
        let edited = try #require(NSManagedObjectModel(contentsOf: bundle.appendingPathComponent("Notes 3.xcdatamodel")))
        edited.entities = edited.entities.filter { $0.name != "Tag" }
        edited.entitiesByName["Note"]?.properties = []
        #expect(NSMappingModel(from: nil, forSourceModel: edited, destinationModel: v2) == nil)
        #expect(NSMappingModel(from: nil, forSourceModel: nil, destinationModel: v2) == nil)
        // Merged models (no `.xcdatamodeld` of their own, as MagicalRecord's default): version 1
        // takes the mapping; a model whose Person differs from version 1's does not.
        let resources = try #require(Bundle(path: folder.path))
        let merged1 = try #require(NSManagedObjectModel(byMerging: [v1])), merged2 = try #require(NSManagedObjectModel(byMerging: [v2]))
        #expect(merged1.versionedModelURL == nil)
        #expect(NSMappingModel(from: [resources], forSourceModel: merged1, destinationModel: merged2) != nil)
        let fresh1 = try #require(NSManagedObjectModel(contentsOf: bundle.appendingPathComponent("Notes.xcdatamodel")))
        let changed = try #require(NSManagedObjectModel(byMerging: [fresh1]))
        let age = NSAttributeDescription(); age.name = "age"; age.attributeType = .integer16AttributeType
        changed.entitiesByName["Person"]!.properties += [age]
        #expect(NSMappingModel(from: [resources], forSourceModel: changed, destinationModel: merged2) == nil)
    }
}
