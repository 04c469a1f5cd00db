import Foundation
import Testing
@testable import CoreData

@Suite("Fetched property descriptions")
struct FetchedPropertyDescriptionTests {
    static func library() throws -> NSManagedObjectModel {
        try NSManagedObjectModel(validatingContentsOf: ModelTestSupport.fixture("Library.xcdatamodeld"))
    }

    /// A model folder holding `xml` as its `contents`, in a scratch directory removed by the caller.
    static func writeModel(_ xml: String, in directory: URL, name: String = "Model") throws -> URL {
        let folder = directory.appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(xml.utf8).write(to: folder.appendingPathComponent("contents"))
        return folder
    }

    static func noteModel(fetchedProperty: String, extraAttribute: String = "") -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            <entity name="Note" representedClassName="Note" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>\(extraAttribute)
                \(fetchedProperty)
            </entity>
        </model>
        """
    }

    // MARK: Reading Xcode's XML

    @Test func libraryFixtureHasTheFetchedProperty() throws {
        let model = try Self.library()
        let author = try #require(model.entitiesByName["Author"])
        let property = try #require(author.propertiesByName["recentBooks"] as? NSFetchedPropertyDescription)
        #expect(author.properties.last === property)
        #expect(property.entity === author)
        #expect(property.isOptional && property.isTransient)
        #expect(author.attributesByName["recentBooks"] == nil && author.relationshipsByName["recentBooks"] == nil)
        let request = try #require(property.fetchRequest)
        #expect(request.entity === model.entitiesByName["Book"])
        #expect(request.entityName == "Book")
        #expect(request.predicate?.formatText == "authors CONTAINS $FETCH_SOURCE AND addedAt > $LAST_YEAR")
        // Attributes Xcode did not write keep NSFetchRequest's defaults.
        #expect(request.fetchLimit == 0 && request.fetchBatchSize == 0 && request.resultType == .managedObjectResultType)
        #expect(request.includesSubentities && request.includesPendingChanges && request.includesPropertyValues)
        #expect(request.returnsObjectsAsFaults && !request.returnsDistinctResults)
        #expect(request.sortDescriptors == nil)
        // Read, so no longer a note.
        let notes = try XcodeModelReader.read(at: ModelTestSupport.fixture("Library.xcdatamodeld")).notes
        #expect(!notes.contains { $0.contains("recentBooks") })
    }

    @Test func fetchRequestOptionsAndUserInfoAreRead() throws {
        let directory = try ModelTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try Self.writeModel(Self.noteModel(fetchedProperty: """
            <fetchedProperty name="firstTitles" optional="YES" versionHashModifier="v2">
                <fetchRequest name="fetchedPropertyFetchRequest" entity="Note" predicateString="title BEGINSWITH[c] $FETCHED_PROPERTY.userInfo.letter" fetchLimit="5" fetchBatchSize="20" resultType="1" includeSubentities="NO" includesPendingChanges="NO" returnObjectsAsFaults="NO" returnDistinctResults="YES" includePropertyValues="NO"/>
                <userInfo>
                    <entry key="letter" value="a"/>
                </userInfo>
            </fetchedProperty>
            """), in: directory)
        let model = try NSManagedObjectModel(validatingContentsOf: url)
        let property = try #require(model.entitiesByName["Note"]?.propertiesByName["firstTitles"] as? NSFetchedPropertyDescription)
        #expect(property.userInfo?["letter"] as? String == "a")
        #expect(property.versionHashModifier == "v2")
        let request = try #require(property.fetchRequest)
        #expect(request.fetchLimit == 5 && request.fetchBatchSize == 20 && request.resultType == .managedObjectIDResultType)
        #expect(!request.includesSubentities && !request.includesPendingChanges && !request.returnsObjectsAsFaults)
        #expect(request.returnsDistinctResults && !request.includesPropertyValues)
        #expect(request.predicate?.formatText == "title BEGINSWITH[c] $FETCHED_PROPERTY.userInfo.letter")
    }

    static let brokenFetchedProperties: [XcodeModelReaderTests.BrokenCase] = [
        .init("Broken/BadFetchedPredicate.xcdatamodel", 259, "BadFetchedPredicate.xcdatamodel/contents",
              "invalid predicate for the fetched property 'Note.similarNotes'", "Unable to parse the format string", "line 6"),
        .init("Broken/MissingFetchedDestination.xcdatamodel", 259, "MissingFetchedDestination.xcdatamodel/contents",
              "destination entity 'Folder'", "fetched property 'Note.folders'", "no such entity", "line 5"),
    ]

    /// A predicate that does not parse makes the model unreadable (Xcode's compiler refuses it
    /// too): the load throws, nothing crashes, and `init?(contentsOf:)` returns nil.
    @Test(arguments: brokenFetchedProperties)
    func aBrokenFetchedPropertyMakesTheModelUnreadable(_ broken: XcodeModelReaderTests.BrokenCase) {
        XcodeModelReaderTests.expectUnreadable(ModelTestSupport.fixture(broken.path), code: broken.code, fragments: broken.fragments)
    }

    @Test(arguments: [
        ("<fetchedProperty name=\"x\" optional=\"YES\"/>", "has no <fetchRequest> for the fetched property 'Note.x'"),
        ("<fetchedProperty optional=\"YES\"><fetchRequest name=\"r\" entity=\"Note\"/></fetchedProperty>", "<fetchedProperty> without a name"),
        ("<fetchedProperty name=\"x\"><fetchRequest name=\"r\" predicateString=\"TRUEPREDICATE\"/></fetchedProperty>", "no destination entity for the fetched property 'Note.x'"),
        ("<fetchedProperty name=\"x\"><fetchRequest name=\"r\" entity=\"Note\" fetchLimit=\"-1\"/></fetchedProperty>", "invalid fetchLimit '-1'"),
        ("<fetchedProperty name=\"x\"><fetchRequest name=\"r\" entity=\"Note\" resultType=\"3\"/></fetchedProperty>", "invalid resultType '3'"),
        ("<fetchedProperty name=\"title\"><fetchRequest name=\"r\" entity=\"Note\"/></fetchedProperty>", "two properties named 'title'"),
    ])
    func malformedFetchedPropertiesAreRefused(_ element: String, _ fragment: String) throws {
        let directory = try ModelTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try Self.writeModel(Self.noteModel(fetchedProperty: element), in: directory)
        XcodeModelReaderTests.expectUnreadable(url, code: 259, fragments: [fragment])
    }

    // MARK: Version hashes

    /// Fetched properties are not part of the entity's version hash: Apple's are transient, and
    /// transient properties do not affect persistence.
    @Test func aFetchedPropertyLeavesTheVersionHashesAlone() throws {
        let directory = try ModelTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let withIt = try Self.library()
        let xml = try String(contentsOf: ModelTestSupport.fixture("Library.xcdatamodeld/Library 2.xcdatamodel/contents"), encoding: .utf8)
        let start = try #require(xml.range(of: "<fetchedProperty"))
        let end = try #require(xml.range(of: "</fetchedProperty>"))
        let without = try NSManagedObjectModel(validatingContentsOf: Self.writeModel(xml.replacingCharacters(in: start.lowerBound..<end.upperBound, with: ""), in: directory))
        #expect(without.entitiesByName["Author"]?.propertiesByName["recentBooks"] == nil)
        #expect(withIt.entityVersionHashesByName == without.entityVersionHashesByName)
        #expect(withIt.versionChecksum == without.versionChecksum)

        // Built in code: adding one (with any options) changes nothing either.
        let baseline = VersionHashTests.makeModel()
        let changed = VersionHashTests.makeModel { parts in
            let fetched = NSFetchedPropertyDescription()
            fetched.name = "adults"
            fetched.isOptional = false
            fetched.versionHashModifier = "x"
            fetched.fetchRequest = NSFetchRequest(entityName: "Person")
            parts.person.properties = parts.person.properties + [fetched]
        }
        #expect(changed.entityVersionHashesByName == baseline.entityVersionHashesByName)
        #expect(changed.versionChecksum == baseline.versionChecksum)
    }

    /// The hashes Xcode computed for the shared fixture are unchanged by a fetched property added to its XML.
    @Test(.enabled(if: ModelTestSupport.sharedVersionHashesAvailable, ModelTestSupport.sharedFixturesMissing))
    func sharedFixtureHashesIgnoreAnAddedFetchedProperty() throws {
        let directory = try ModelTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let vectors = try SharedVersionVectors.load()
        let name = "LegacyEcosystemUserDataModel_v12"
        let xml = try String(contentsOf: ModelTestSupport.sharedVersionHashes.appendingPathComponent("\(name).xcdatamodel/contents"), encoding: .utf8)
        let marker = "<entity name=\"CDMetaAccount\" representedClassName=\"CDMetaAccount\" syncable=\"YES\" codeGenerationType=\"class\">"
        #expect(xml.contains(marker))
        let fetched = """
            <fetchedProperty name="otherAccounts" optional="YES">
                <fetchRequest name="fetchedPropertyFetchRequest" entity="CDMetaAccount" predicateString="SELF != $FETCH_SOURCE"/>
            </fetchedProperty>
            """
        let model = try NSManagedObjectModel(validatingContentsOf: Self.writeModel(xml.replacingOccurrences(of: marker, with: marker + fetched), in: directory, name: name))
        #expect(model.entitiesByName["CDMetaAccount"]?.propertiesByName["otherAccounts"] is NSFetchedPropertyDescription)
        #expect(model.versionChecksum == vectors.checksums[name])
        for (entity, expected) in vectors.entityHashes {
            #expect(model.entityVersionHashesByName[entity]?.base64EncodedString() == expected, "versionHash of \(entity)")
        }
    }

    @Test func theDescriptionsOwnHashIsThePropertyHashOfATransientProperty() {
        let fetched = NSFetchedPropertyDescription()
        fetched.name = "recent"
        fetched.isTransient = false // ignored: always transient
        let attribute = NSAttributeDescription()
        attribute.name = "recent"
        attribute.isTransient = true
        #expect(fetched.isTransient)
        #expect(fetched.versionHash == VersionHash.propertyHash(attribute))
    }

    // MARK: Layout

    @Test func storedPropertiesKeepTheirIndexes() throws {
        let model = FetchedPropertyTestModel.make()
        model.freeze()
        let author = try #require(model.entitiesByName["Author"])
        let editor = try #require(model.entitiesByName["Editor"])
        // Attributes and relationships are numbered as if the fetched properties were not there.
        #expect(author.layout.properties.map(\.name) == ["name", "born", "books"])
        #expect(author.layout.properties.map(\.index) == [0, 1, 2])
        #expect(editor.layout.properties.map(\.name) == ["name", "born", "books", "imprint"])
        #expect(editor.layout.properties.map(\.index) == [0, 1, 2, 3])
        #expect(author.layout.rowIndexes == [0, 1])
        // Fetched properties have their own numbers, shared by the sub-entity, and no value index.
        let names = ["booksByMe", "longBooks", "namesakes", "unbound", "malformed", "allBooks", "prolific"]
        #expect(author.layout.fetchedProperties.map(\.name) == names)
        #expect(author.layout.fetchedProperties.map(\.fetchedIndex) == Array(0..<names.count))
        #expect(editor.layout.fetchedProperties.map { ObjectIdentifier($0) } == author.layout.fetchedProperties.map { ObjectIdentifier($0) })
        #expect(author.layout.fetchedProperties.allSatisfy { $0.index == -1 && $0.columnName.isEmpty })
        // Still properties of the entity, as on Apple platforms.
        #expect(author.properties.count == 10)
        #expect(author.propertiesByName["booksByMe"] is NSFetchedPropertyDescription)
        #expect(editor.propertiesByName["longBooks"] is NSFetchedPropertyDescription)
        #expect(author.layout.nameTable.index(of: "booksByMe") == nil)
    }

    // MARK: The description itself

    @Test func copyingCopiesTheRequest() throws {
        let fetched = NSFetchedPropertyDescription()
        fetched.name = "recent"
        fetched.isOptional = false
        fetched.userInfo = ["days": 30]
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Book")
        request.predicate = NSPredicate(format: "addedAt > $FETCH_SOURCE.since")
        request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: false)]
        request.fetchLimit = 3
        request.includesSubentities = false
        fetched.fetchRequest = request
        let copy = try #require(fetched.copy() as? NSFetchedPropertyDescription)
        #expect(copy !== fetched && copy.name == "recent" && !copy.isOptional && copy.userInfo?["days"] as? Int == 30)
        let copied = try #require(copy.fetchRequest)
        #expect(copied !== request)
        #expect(copied.entityName == "Book" && copied.predicate === request.predicate && copied.fetchLimit == 3)
        #expect(!copied.includesSubentities && copied.sortDescriptors?.first?.key == "title")
        #expect(copy.description.contains("recent") && copy.description.contains("Book"))
        #expect(NSFetchedPropertyDescription().fetchRequest == nil)
    }

    @Test func aCopiedModelsRequestsNameTheCopiedEntities() throws {
        let model = try Self.library()
        let copy = try #require(model.copy() as? NSManagedObjectModel)
        let property = try #require(copy.entitiesByName["Author"]?.propertiesByName["recentBooks"] as? NSFetchedPropertyDescription)
        #expect(property.fetchRequest?.entity === copy.entitiesByName["Book"])
        #expect(property.fetchRequest !== (model.entitiesByName["Author"]?.propertiesByName["recentBooks"] as? NSFetchedPropertyDescription)?.fetchRequest)
    }

    @Test func settingTheRequestOfAModelInUseStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            let model = FetchedPropertyTestModel.make()
            model.freeze()
            let fetched = model.entitiesByName["Author"]?.propertiesByName["booksByMe"] as? NSFetchedPropertyDescription
            fetched?.fetchRequest = nil
        }
    }
}
