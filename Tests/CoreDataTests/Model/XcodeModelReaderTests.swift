import Foundation
import Testing
@testable import CoreData
import TestSupport

@Suite("Xcode model reader")
struct XcodeModelReaderTests {
    static func library() throws -> NSManagedObjectModel {
        try NSManagedObjectModel(validatingContentsOf: ModelTestSupport.fixture("Library.xcdatamodeld"))
    }

    static func attribute(_ model: NSManagedObjectModel, _ entity: String, _ name: String) throws -> NSAttributeDescription {
        try #require(model.entitiesByName[entity]?.attributesByName[name], "\(entity).\(name)")
    }

    static func relationship(_ model: NSManagedObjectModel, _ entity: String, _ name: String) throws -> NSRelationshipDescription {
        try #require(model.entitiesByName[entity]?.relationshipsByName[name], "\(entity).\(name)")
    }

    // MARK: Finding the model

    @Test func versionedModelLoadsItsCurrentVersion() throws {
        let result = try XcodeModelReader.read(at: ModelTestSupport.fixture("Library.xcdatamodeld"))
        #expect(result.contentsURL.deletingLastPathComponent().lastPathComponent == "Library 2.xcdatamodel")
        #expect(result.model.versionIdentifiers == ["2.0"])
        #expect(Set(result.model.entitiesByName.keys) == ["Author", "Book", "Chapter", "LibraryItem", "Loan", "Magazine", "Shelf", "Tag"])
        #expect(result.model.entities.count == 8)
        let failable = try #require(NSManagedObjectModel(contentsOf: ModelTestSupport.fixture("Library.xcdatamodeld")))
        #expect(failable.versionChecksum == result.model.versionChecksum)
    }

    @Test func currentVersionMarkerChoosesTheVersion() throws {
        let directory = try ModelTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bundle = directory.appendingPathComponent("Library.xcdatamodeld")
        try FileManager.default.copyItem(at: ModelTestSupport.fixture("Library.xcdatamodeld"), to: bundle)
        let marker = bundle.appendingPathComponent(".xccurrentversion")
        let plist = try String(contentsOf: marker, encoding: .utf8)
        #expect(plist.contains("<string>Library 2.xcdatamodel</string>"))
        try plist.replacingOccurrences(of: "Library 2.xcdatamodel", with: "Library.xcdatamodel").write(to: marker, atomically: true, encoding: .utf8)
        let result = try XcodeModelReader.read(at: bundle)
        #expect(result.contentsURL.deletingLastPathComponent().lastPathComponent == "Library.xcdatamodel")
        #expect(result.model.versionIdentifiers == ["1.0"])
    }

    @Test func versionFolderAndContentsFileLoadDirectly() throws {
        let v1 = ModelTestSupport.fixture("Library.xcdatamodeld/Library.xcdatamodel")
        let folder = try NSManagedObjectModel(validatingContentsOf: v1)
        #expect(folder.versionIdentifiers == ["1.0"])
        #expect(Set(folder.entitiesByName.keys) == ["Author", "Book"])
        let file = try NSManagedObjectModel(validatingContentsOf: v1.appendingPathComponent("contents"))
        #expect(file.versionChecksum == folder.versionChecksum)
        #expect(folder.versionChecksum != (try Self.library()).versionChecksum)

        let v2 = try NSManagedObjectModel(validatingContentsOf: ModelTestSupport.fixture("Library.xcdatamodeld/Library 2.xcdatamodel"))
        #expect(v2.versionChecksum == (try Self.library()).versionChecksum)
    }

    @Test func bundleWithoutCurrentVersionMarkerUsesLastVersion() throws {
        let result = try XcodeModelReader.read(at: ModelTestSupport.fixture("Unversioned.xcdatamodeld"))
        // "Notes 10" sorts after "Notes 2" in numeric order.
        #expect(result.contentsURL.deletingLastPathComponent().lastPathComponent == "Notes 10.xcdatamodel")
        #expect(result.model.versionIdentifiers == ["Notes 10"])
        #expect(result.model.entitiesByName["Note"]?.versionHashModifier == "Notes 10")
    }

    @Test func carModelOfTheCommandLineTool() throws {
        let url = ModelTestSupport.packageRoot.appendingPathComponent("Sources/CoreDataExamples/Resources/Car.xcdatamodeld")
        let model = try NSManagedObjectModel(validatingContentsOf: url)
        #expect(model.entities.count == 1)
        let car = try #require(model.entitiesByName["Car"])
        #expect(car.managedObjectClassName == "Car")
        #expect(car.properties.count == 1)
        let name = try Self.attribute(model, "Car", "name")
        #expect(name.attributeType == .stringAttributeType)
        #expect(name.isOptional)
        #expect(!name.isTransient)
        #expect(name.defaultValue == nil)
    }

    // MARK: Everything in the Library model

    @Test func entitiesAndInheritance() throws {
        let model = try Self.library()
        let item = try #require(model.entitiesByName["LibraryItem"])
        let book = try #require(model.entitiesByName["Book"])
        let magazine = try #require(model.entitiesByName["Magazine"])
        #expect(item.isAbstract)
        #expect(!book.isAbstract)
        #expect(item.superentity == nil)
        #expect(book.superentity === item)
        #expect(magazine.superentity === item)
        #expect(Set(item.subentities.map { $0.name! }) == ["Book", "Magazine"])
        #expect(book.isKindOf(entity: item))
        #expect(item.versionHashModifier == "2024-split")
        #expect(book.managedObjectClassName == "Book")
        #expect(model.entitiesByName["Tag"]?.managedObjectClassName == "NSManagedObject")
        for entity in model.entities { #expect(entity.managedObjectModel === model) }

        // Inherited properties first, then the entity's own, in the file's order.
        #expect(magazine.properties.map(\.name) == ["addedAt", "isbnCode", "itemID", "title", "loans", "shelf", "tags", "issueNumber", "publishedOn"])
        #expect(book.attributesByName["itemID"] === item.attributesByName["itemID"])
        #expect(book.properties.count == 7 + 15)
        for property in book.ownProperties { #expect(property.entity === book) }
    }

    struct ExpectedAttribute: Sendable, CustomTestStringConvertible {
        let entity: String
        let name: String
        let type: NSAttributeType
        let optional: Bool
        let transient: Bool
        let defaultValue: String?
        var testDescription: String { "\(entity).\(name)" }
        init(_ entity: String, _ name: String, _ type: NSAttributeType, optional: Bool, transient: Bool = false, default defaultValue: String? = nil) {
            self.entity = entity
            self.name = name
            self.type = type
            self.optional = optional
            self.transient = transient
            self.defaultValue = defaultValue
        }
    }

    /// Every attribute of the current Library model: type, optionality, transience and the default
    /// value (described as `Type:value`).
    static let expectedAttributes: [ExpectedAttribute] = [
        .init("Author", "address", .compositeAttributeType, optional: true),
        .init("Author", "born", .dateAttributeType, optional: true),
        .init("Author", "name", .stringAttributeType, optional: false),
        .init("Author", "penName", .stringAttributeType, optional: true),
        .init("Book", "coverImage", .binaryDataAttributeType, optional: true),
        .init("Book", "draft", .undefinedAttributeType, optional: true, transient: true),
        .init("Book", "isbnNumber", .integer64AttributeType, optional: false, default: "Int64:9780000000000"),
        .init("Book", "isHardcover", .booleanAttributeType, optional: false, default: "Bool:true"),
        .init("Book", "metadata", .transformableAttributeType, optional: true),
        .init("Book", "pageCount", .integer16AttributeType, optional: false, default: "Int16:100"),
        .init("Book", "price", .decimalAttributeType, optional: true, default: "Decimal:9.99"),
        .init("Book", "rating", .doubleAttributeType, optional: false, default: "Double:2.5"),
        .init("Book", "searchText", .stringAttributeType, optional: true, transient: true),
        .init("Book", "sourceObject", .objectIDAttributeType, optional: true, transient: true),
        .init("Book", "website", .URIAttributeType, optional: true, default: "URL:https://example.com/books"),
        .init("Book", "weight", .floatAttributeType, optional: true, default: "Float:0.5"),
        .init("Book", "wordCount", .integer32AttributeType, optional: true, default: "Int32:0"),
        .init("Chapter", "number", .integer16AttributeType, optional: false, default: "Int16:1"),
        .init("Chapter", "title", .stringAttributeType, optional: true, default: "String:"),
        .init("LibraryItem", "addedAt", .dateAttributeType, optional: false, default: "Date:694224000.0"),
        .init("LibraryItem", "isbnCode", .stringAttributeType, optional: true),
        .init("LibraryItem", "itemID", .UUIDAttributeType, optional: false, default: "UUID:3F2504E0-4F89-11D3-9A0C-0305E82C3301"),
        .init("LibraryItem", "title", .stringAttributeType, optional: false),
        .init("Loan", "borrower", .stringAttributeType, optional: false),
        .init("Loan", "dueDate", .dateAttributeType, optional: false),
        .init("Loan", "returned", .booleanAttributeType, optional: false, default: "Bool:false"),
        .init("Magazine", "issueNumber", .integer32AttributeType, optional: false, default: "Int32:1"),
        .init("Magazine", "publishedOn", .dateAttributeType, optional: true),
        .init("Shelf", "capacity", .integer16AttributeType, optional: false, default: "Int16:50"),
        .init("Shelf", "code", .stringAttributeType, optional: false),
        .init("Tag", "name", .stringAttributeType, optional: false),
    ]

    static func describeDefault(_ value: Any?, _ type: NSAttributeType) -> String? {
        guard let value else { return nil }
        switch (type, value) {
        case (.integer16AttributeType, let n as NSNumber): return "Int16:\(n.int16Value)"
        case (.integer32AttributeType, let n as NSNumber): return "Int32:\(n.int32Value)"
        case (.integer64AttributeType, let n as NSNumber): return "Int64:\(n.int64Value)"
        case (.booleanAttributeType, let n as NSNumber): return "Bool:\(n.boolValue)"
        case (.doubleAttributeType, let n as NSNumber): return "Double:\(n.doubleValue)"
        case (.floatAttributeType, let n as NSNumber): return "Float:\(n.floatValue)"
        case (.decimalAttributeType, let n as NSDecimalNumber): return "Decimal:\(n.decimalValue)"
        case (.stringAttributeType, let s as String): return "String:\(s)"
        case (.dateAttributeType, let d as Date): return "Date:\(d.timeIntervalSinceReferenceDate)"
        case (.UUIDAttributeType, let u as UUID): return "UUID:\(u.uuidString)"
        case (.URIAttributeType, let u as URL): return "URL:\(u.absoluteString)"
        default: return "unexpected \(Swift.type(of: value)): \(value)"
        }
    }

    @Test func everyAttributeOfTheLibraryModelIsListed() throws {
        let model = try Self.library()
        var own: Set<String> = []
        for entity in model.entities {
            for case let attribute as NSAttributeDescription in entity.ownProperties { own.insert("\(entity.name!).\(attribute.name)") }
        }
        #expect(own == Set(Self.expectedAttributes.map(\.testDescription)))
        let types = Set(Self.expectedAttributes.map(\.type.rawValue))
        #expect(types.count == 16, "every attribute type is used")
    }

    @Test(arguments: expectedAttributes)
    func attributeTypeOptionalityAndDefault(_ expected: ExpectedAttribute) throws {
        let model = try Self.library()
        let attribute = try Self.attribute(model, expected.entity, expected.name)
        #expect(attribute.attributeType == expected.type)
        #expect(attribute.isOptional == expected.optional)
        #expect(attribute.isTransient == expected.transient)
        #expect(Self.describeDefault(attribute.defaultValue, expected.type) == expected.defaultValue)
        // A default the reader produces is one the store layer accepts.
        if let value = attribute.defaultValue {
            #expect(StoreValue.convert(value, to: attribute.attributeType) != nil)
        }
    }

    @Test func attributeDetails() throws {
        let model = try Self.library()
        let title = try Self.attribute(model, "LibraryItem", "title")
        #expect(title.minimum == 1)
        #expect(title.maximum == 200)
        #expect(title.versionHashModifier == "trimmed")
        #expect(title.userInfo?["maxDisplayLength"] as? String == "40")
        #expect(try Self.attribute(model, "LibraryItem", "isbnCode").regularExpression == "[0-9X-]{10,17}")
        let pageCount = try Self.attribute(model, "Book", "pageCount")
        #expect(pageCount.minimum == 1)
        #expect(pageCount.maximum == 10000)
        #expect(pageCount.usesScalarValueType)
        let rating = try Self.attribute(model, "Book", "rating")
        #expect(rating.minimum == 0)
        #expect(rating.maximum == 5)
        let born = try Self.attribute(model, "Author", "born")
        #expect(born.minimum == -31_622_400_000)
        #expect(born.maximum == 1_577_836_800)
        #expect(!born.usesScalarValueType)

        let name = try Self.attribute(model, "Author", "name")
        #expect(name.isIndexed)
        #expect(name.isIndexedBySpotlight)
        #expect(try Self.attribute(model, "Author", "penName").renamingIdentifier == "pseudonym")
        #expect(try Self.attribute(model, "Book", "coverImage").allowsExternalBinaryDataStorage)
        let borrower = try Self.attribute(model, "Loan", "borrower")
        #expect(borrower.preservesValueInHistoryOnDeletion)
        #expect(borrower.allowsCloudEncryption)
        #expect(!borrower.allowsExternalBinaryDataStorage)
        let metadata = try Self.attribute(model, "Book", "metadata")
        #expect(metadata.valueTransformerName == "NSSecureUnarchiveFromDataTransformer")
        #expect(metadata.attributeValueClassName == "[String: String]")
        #expect(try Self.attribute(model, "Book", "price").attributeValueClassName == "NSDecimalNumber")
    }

    @Test func relationships() throws {
        let model = try Self.library()
        let entities = model.entitiesByName
        func check(_ entity: String, _ name: String, to destination: String, inverse: String?, rule: NSDeleteRule,
                   min: Int, max: Int, ordered: Bool = false, optional: Bool = true) throws {
            let r = try Self.relationship(model, entity, name)
            #expect(r.destinationEntity === entities[destination], "\(entity).\(name) destination")
            #expect(r.destinationEntityName == destination)
            #expect(r.inverseName == inverse)
            if let inverse {
                let expected = entities[destination]?.relationshipsByName[inverse]
                #expect(expected != nil && r.inverseRelationship === expected, "\(entity).\(name) inverse")
            } else {
                #expect(r.inverseRelationship == nil)
            }
            #expect(r.deleteRule == rule, "\(entity).\(name) delete rule")
            #expect(r.minCount == min, "\(entity).\(name) minCount")
            #expect(r.maxCount == max, "\(entity).\(name) maxCount")
            #expect(r.isToMany == (max != 1))
            #expect(r.isOrdered == ordered)
            #expect(r.isOptional == optional)
        }
        try check("Author", "books", to: "Book", inverse: "authors", rule: .nullifyDeleteRule, min: 0, max: 0)
        try check("Author", "collaborators", to: "Author", inverse: "collaborators", rule: .nullifyDeleteRule, min: 0, max: 0)
        try check("Book", "authors", to: "Author", inverse: "books", rule: .nullifyDeleteRule, min: 0, max: 0)
        try check("Book", "chapters", to: "Chapter", inverse: "book", rule: .cascadeDeleteRule, min: 1, max: 500, ordered: true, optional: false)
        try check("Chapter", "book", to: "Book", inverse: "chapters", rule: .nullifyDeleteRule, min: 0, max: 1, optional: false)
        try check("LibraryItem", "loans", to: "Loan", inverse: "item", rule: .cascadeDeleteRule, min: 0, max: 0)
        try check("LibraryItem", "shelf", to: "Shelf", inverse: "items", rule: .nullifyDeleteRule, min: 0, max: 1)
        try check("LibraryItem", "tags", to: "Tag", inverse: "items", rule: .nullifyDeleteRule, min: 0, max: 5)
        try check("Loan", "item", to: "LibraryItem", inverse: "loans", rule: .nullifyDeleteRule, min: 0, max: 1, optional: false)
        try check("Loan", "renewedFrom", to: "Loan", inverse: nil, rule: .noActionDeleteRule, min: 0, max: 1)
        try check("Shelf", "items", to: "LibraryItem", inverse: "shelf", rule: .denyDeleteRule, min: 0, max: 0)
        try check("Tag", "items", to: "LibraryItem", inverse: "tags", rule: .noActionDeleteRule, min: 0, max: 0)

        let collaborators = try Self.relationship(model, "Author", "collaborators")
        #expect(collaborators.inverseRelationship === collaborators)
        // Inherited relationships are the parent's objects.
        #expect(try Self.relationship(model, "Book", "shelf") === (try Self.relationship(model, "LibraryItem", "shelf")))
        #expect(try Self.relationship(model, "LibraryItem", "shelf").userInfo?["note"] as? String == "where to find it")
    }

    @Test func constraintsIndexesUserInfoAndConfigurations() throws {
        let model = try Self.library()
        let author = try #require(model.entitiesByName["Author"])
        let item = try #require(model.entitiesByName["LibraryItem"])
        #expect(author.uniquenessConstraints.map { $0.compactMap { $0 as? String } } == [["name", "born"]])
        #expect(item.uniquenessConstraints.map { $0.compactMap { $0 as? String } } == [["itemID"]])
        #expect(model.entitiesByName["Book"]?.uniquenessConstraints.isEmpty == true)

        #expect(author.indexes.map(\.name) == ["byNameAndBirth"])
        let index = try #require(author.indexes.first)
        #expect(index.entity === author)
        #expect(index.elements.map { $0.propertyName ?? "" } == ["name", "born"])
        #expect(index.elements.map(\.isAscending) == [true, false])
        #expect(index.elements.map(\.collationType) == [.binary, .binary])
        #expect(index.elements.first?.property === author.attributesByName["name"])
        #expect(item.indexes.map(\.name) == ["byTitle"])

        #expect(model.entitiesByName["Book"]?.userInfo?["displayName"] as? String == "Printed book")
        #expect(author.userInfo == nil)

        #expect(model.configurations == ["Catalog", "Circulation"])
        #expect(model.entities(forConfigurationName: "Circulation")?.map { $0.name! } == ["Loan"])
        #expect(Set(model.entities(forConfigurationName: "Catalog")?.map { $0.name! } ?? []) == ["Author", "Book", "Chapter", "LibraryItem", "Magazine", "Shelf", "Tag"])
        #expect(model.entities(forConfigurationName: "Catalog")?.first === author)
        #expect(model.entities(forConfigurationName: nil)?.count == 8)
    }

    @Test func aCompositeAttributeTakesTheElementsOfTheDefinitionItNames() throws {
        let result = try XcodeModelReader.read(at: ModelTestSupport.fixture("Library.xcdatamodeld"))
        #expect(result.notes.isEmpty)
        let address = try #require(result.model.entitiesByName["Author"]?.propertiesByName["address"] as? NSCompositeAttributeDescription)
        #expect(address.elements.map(\.name) == ["city", "postcode"])
        #expect(address.elements.allSatisfy { $0.attributeType == .stringAttributeType && $0.isOptional })
        // The definition's attributes did not become properties of the entity.
        #expect(result.model.entitiesByName["Author"]?.propertiesByName["city"] == nil)
    }

    @Test func nestedCompositesAndTheirErrors() throws {
        let result = try Self.parse("""
            <entity name="Person" syncable="YES">
                <attribute name="home" optional="YES" attributeType="Composite" composite="Address"/>
            </entity>
            <compositeAttribute name="Address">
                <attribute name="city" optional="YES" attributeType="String"/>
                <attribute name="position" optional="YES" attributeType="Composite" composite="Point"/>
            </compositeAttribute>
            <compositeAttribute name="Point">
                <attribute name="latitude" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
            </compositeAttribute>
        """)
        let home = try #require(result.model.entitiesByName["Person"]?.propertiesByName["home"] as? NSCompositeAttributeDescription)
        #expect(home.elements.map(\.name) == ["city", "position"])
        #expect((home.elements[1] as? NSCompositeAttributeDescription)?.elements.map(\.name) == ["latitude"])
        #expect((home.elements[1] as? NSCompositeAttributeDescription)?.elements.first?.defaultValue as? Double == 0)

        #expect { try Self.parse("""
            <entity name="Person" syncable="YES">
                <attribute name="home" optional="YES" attributeType="Composite" composite="Nowhere"/>
            </entity>
        """) } throws: { "\($0)".contains("has no <compositeAttribute> named 'Nowhere', which the composite attribute 'Person.home' names") }
        #expect { try Self.parse("""
            <entity name="Person" syncable="YES">
                <attribute name="home" optional="YES" attributeType="Composite"/>
            </entity>
        """) } throws: { "\($0)".contains("does not say which composite defines the composite attribute 'Person.home'") }
        #expect { try Self.parse("""
            <entity name="Person" syncable="YES">
                <attribute name="home" optional="YES" attributeType="Composite" composite="A"/>
            </entity>
            <compositeAttribute name="A">
                <attribute name="b" optional="YES" attributeType="Composite" composite="A"/>
            </compositeAttribute>
        """) } throws: { "\($0)".contains("composite attributes that contain each other ('A')") }
    }

    @Test func modelIsUsableFrozenAndCopied() throws {
        let model = try Self.library()
        let checksum = model.versionChecksum
        let hashes = model.entityVersionHashesByName
        try model.validateForUse()
        let copy = try #require(model.copy() as? NSManagedObjectModel)
        #expect(copy.versionChecksum == checksum)
        #expect(try Self.attribute(copy, "LibraryItem", "title").maximum == 200)
        #expect(try Self.attribute(copy, "Book", "pageCount").usesScalarValueType)
        model.freeze()
        #expect(model.versionChecksum == checksum)
        #expect(model.entityVersionHashesByName == hashes)
    }

    @Test func concurrentReadsAgree() async throws {
        let url = ModelTestSupport.fixture("Library.xcdatamodeld")
        let expected = try Self.library().versionChecksum
        let checksums = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0 ..< 16 {
                group.addTask { try NSManagedObjectModel(validatingContentsOf: url).versionChecksum }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(checksums.count == 16)
        #expect(Set(checksums) == [expected])
    }

    // MARK: Details of Xcode's XML

    static func parse(_ body: String) throws -> XcodeModelReader.Result {
        let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22757" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
        \(body)
        </model>
        """
        return try XcodeModelReader.parse(Data(xml.utf8), file: URL(fileURLWithPath: "/inline/Test.xcdatamodel/contents"))
    }

    @Test func xmlDefaultsAndSpellings() throws {
        let result = try Self.parse("""
            <entity name="A" representedClassName="MyModule.A" elementID="OldA" renamingIdentifier="PreviousA" syncable="YES" codeGenerationType="category">
                <attribute name="plain" attributeType="String"/>
                <attribute name="when" optional="YES" attributeType="Date" defaultDateTimeInterval="-1.5" usesScalarValueType="NO"/>
                <attribute name="flag" attributeType="Boolean" defaultValueString="true" usesScalarValueType="YES"/>
                <attribute name="blob" optional="YES" attributeType="Binary" defaultValueString="ignored"/>
                <relationship name="one" optional="YES" deletionRule="Nullify" destinationEntity="B"/>
                <relationship name="many" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="B"/>
                <relationship name="some" optional="YES" toMany="YES" minCount="2" maxCount="7" deletionRule="Deny" destinationEntity="B" inverseName="as" inverseEntity="B"/>
                <futureElement name="x"><nested/></futureElement>
                <compoundIndexes>
                    <compoundIndex>
                        <index value="plain"/>
                        <index value="when"/>
                    </compoundIndex>
                </compoundIndexes>
            </entity>
            <entity name="B" syncable="YES">
                <relationship name="as" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="A" inverseName="some" inverseEntity="A"/>
            </entity>
            <elements>
                <element name="A" positionX="0" positionY="0" width="128" height="44"/>
            </elements>
        """)
        let model = result.model
        #expect(model.versionIdentifiers.isEmpty)
        let a = try #require(model.entitiesByName["A"])
        #expect(a.managedObjectClassName == "MyModule.A")
        #expect(a.renamingIdentifier == "PreviousA")
        let plain = try Self.attribute(model, "A", "plain")
        #expect(!plain.isOptional)
        #expect(plain.defaultValue == nil)
        #expect(try Self.attribute(model, "A", "when").defaultValue as? Date == Date(timeIntervalSinceReferenceDate: -1.5))
        #expect((try Self.attribute(model, "A", "flag").defaultValue as? NSNumber)?.boolValue == true)
        #expect(try Self.attribute(model, "A", "blob").defaultValue == nil)
        #expect(try Self.relationship(model, "A", "one").maxCount == 1)
        #expect(try Self.relationship(model, "A", "many").maxCount == 0)
        let some = try Self.relationship(model, "A", "some")
        #expect(some.minCount == 2)
        #expect(some.maxCount == 7)
        #expect(some.deleteRule == .denyDeleteRule)
        #expect(some.inverseRelationship === (try Self.relationship(model, "B", "as")))
        #expect(a.indexes.count == 1)
        #expect(a.indexes.first?.elements.map { $0.propertyName ?? "" } == ["plain", "when"])
        #expect(a.properties.count == 7)
        // An element this reader does not know (from a newer Xcode) is skipped with its contents, and noted.
        #expect(result.notes.count == 1)
        #expect(result.notes.first?.contains("<futureElement>") == true)
    }

    /// Loading a model dropped what the reader noted without a word: it is logged as a warning.
    @Test func notesAreLoggedWhenAModelLoads() throws {
        let folder = try TemporaryFolder()
        let model = folder.url.appendingPathComponent("Noted.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            <entity name="Place" representedClassName="Place" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <fetchIndex name="byNameLength"><fetchIndexElement expression="length:(name)" expressionType="Integer 64" type="Binary" order="descending"/></fetchIndex>
            </entity>
            </model>
            """.utf8).write(to: model.appendingPathComponent("contents"))
        _ = try #require(NSManagedObjectModel(contentsOf: model))
        #expect(CoreDataLog.recent.withLock { $0 }.contains { $0.contains("Noted.xcdatamodel") && $0.contains("byNameLength") })
    }

    @Test func indexElementsExternalRecordsAndModelUserInfo() throws {
        let result = try Self.parse("""
            <entity name="Place" representedClassName="Place" syncable="YES">
                <attribute name="latitude" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES" storedInTruthFile="YES"/>
                <attribute name="longitude" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                <fetchIndex name="byLocation">
                    <fetchIndexElement property="latitude" type="RTree" order="ascending"/>
                    <fetchIndexElement property="longitude" type="RTree" order="ascending"/>
                    <fetchIndexElement expression="length:(name)" expressionType="Integer 64" type="Binary" order="descending"/>
                </fetchIndex>
            </entity>
            <userInfo>
                <entry key="owner" value="maps team"/>
            </userInfo>
        """)
        let place = try #require(result.model.entitiesByName["Place"])
        #expect(place.attributesByName["latitude"]?.isStoredInExternalRecord == true)
        #expect(place.attributesByName["longitude"]?.isStoredInExternalRecord == false)
        let index = try #require(place.indexes.first)
        #expect(index.elements.map(\.collationType) == [.rTree, .rTree])
        #expect(index.elements.map { $0.propertyName ?? "" } == ["latitude", "longitude"])
        #expect(result.notes.count == 2)
        #expect(result.notes.contains { $0.contains("expression element of the fetch index 'byLocation'") })
        #expect(result.notes.contains { $0.contains("user info entry 'owner'") })
    }

    @Test func hashesOfRelationshipsReadFromXMLDoNotDependOnResolution() throws {
        let model = try Self.library()
        for entity in model.entities {
            for case let relationship as NSRelationshipDescription in entity.ownProperties {
                let byName = NSRelationshipDescription()
                byName.name = relationship.name
                byName.isOptional = relationship.isOptional
                byName.maxCount = relationship.maxCount
                byName.minCount = relationship.minCount
                byName.isOrdered = relationship.isOrdered
                byName.destinationEntityName = relationship.destinationEntityName
                byName.inverseName = relationship.inverseRelationship === relationship ? nil : relationship.inverseName
                #expect(byName.versionHash == relationship.versionHash, "\(entity.name!).\(relationship.name)")
            }
        }
    }

    // MARK: Models that cannot be read

    struct BrokenCase: Sendable, CustomTestStringConvertible {
        let path: String
        let code: Int
        let fragments: [String]
        var testDescription: String { path }
        init(_ path: String, _ code: Int = 259, _ fragments: String...) {
            self.path = path
            self.code = code
            self.fragments = fragments
        }
    }

    static let brokenModels: [BrokenCase] = [
        .init("Broken/Empty.xcdatamodel", 259, "Empty.xcdatamodel/contents", "is empty"),
        .init("Broken/NotXML.xcdatamodel", 259, "NotXML.xcdatamodel/contents", "not valid XML", "line 1"),
        .init("Broken/MalformedXML.xcdatamodel", 259, "MalformedXML.xcdatamodel/contents", "not valid XML", "end tag", "line 5"),
        .init("Broken/Truncated.xcdatamodel", 259, "Truncated.xcdatamodel/contents", "not valid XML"),
        .init("Broken/WrongRoot.xcdatamodel", 259, "WrongRoot.xcdatamodel/contents", "not a Core Data model", "<plist>"),
        .init("Broken/UnknownAttributeType.xcdatamodel", 259, "UnknownAttributeType.xcdatamodel/contents", "unknown attributeType 'Integer 128'", "'Note.score'", "line 5"),
        .init("Broken/BadDefaultValue.xcdatamodel", 259, "BadDefaultValue.xcdatamodel/contents", "invalid default value 'high'", "'Note.priority'", "line 4"),
        .init("Broken/MissingDestination.xcdatamodel", 259, "MissingDestination.xcdatamodel/contents", "destination entity 'Folder'", "'Note.folder'", "no such entity", "line 5"),
        .init("Broken/MissingInverse.xcdatamodel", 259, "MissingInverse.xcdatamodel/contents", "inverse relationship 'Folder.notes'", "'Note.folder'", "line 7"),
        .init("Broken/MissingParent.xcdatamodel", 259, "MissingParent.xcdatamodel/contents", "parent entity 'Document'", "'Note'", "no such entity", "line 3"),
        .init("Broken/ParentCycle.xcdatamodel", 259, "ParentCycle.xcdatamodel/contents", "hierarchy that loops"),
        .init("Broken/DuplicateEntity.xcdatamodel", 259, "DuplicateEntity.xcdatamodel/contents", "two entities named 'Note'", "line 6"),
        .init("Broken/SQLInEntityName.xcdatamodel", 259, "SQLInEntityName.xcdatamodel/contents", "an entity named 'Car; DROP TABLE Z_METADATA'",
              "not a valid name", "line 3"),
        .init("Broken/NestedEntity.xcdatamodel", 259, "NestedEntity.xcdatamodel/contents", "an element <entity> inside <entity>", "line 5"),
        .init("Broken/BadCurrentVersion.xcdatamodeld", 260, "BadCurrentVersion.xcdatamodeld/Notes 3.xcdatamodel", "does not exist", ".xccurrentversion"),
        .init("Broken/NoSuchModel.xcdatamodeld", 260, "NoSuchModel.xcdatamodeld", "does not exist"),
    ]

    static func expectUnreadable(_ url: URL, code: Int, fragments: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(NSManagedObjectModel(contentsOf: url) == nil, sourceLocation: sourceLocation)
        do {
            _ = try NSManagedObjectModel(validatingContentsOf: url)
            Issue.record("\(url.path) was read", sourceLocation: sourceLocation)
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain, sourceLocation: sourceLocation)
            #expect(error.code == code, sourceLocation: sourceLocation)
            let message = error.localizedDescription
            for fragment in fragments {
                #expect(message.contains(fragment), "\(message) should mention \(fragment)", sourceLocation: sourceLocation)
            }
            #expect(error.userInfo[NSFilePathErrorKey] is String, sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: brokenModels)
    func brokenModelIsRefusedWithAUsefulError(_ broken: BrokenCase) {
        Self.expectUnreadable(ModelTestSupport.fixture(broken.path), code: broken.code, fragments: broken.fragments)
    }

    @Test func foldersWithoutAModel() throws {
        let directory = try ModelTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let emptyVersion = directory.appendingPathComponent("Empty.xcdatamodel")
        try FileManager.default.createDirectory(at: emptyVersion, withIntermediateDirectories: true)
        Self.expectUnreadable(emptyVersion, code: 260, fragments: ["Empty.xcdatamodel/contents", "does not exist"])

        let emptyBundle = directory.appendingPathComponent("Empty.xcdatamodeld")
        try FileManager.default.createDirectory(at: emptyBundle, withIntermediateDirectories: true)
        Self.expectUnreadable(emptyBundle, code: 260, fragments: ["Empty.xcdatamodeld", "no '.xcdatamodel' version"])

        let badMarker = directory.appendingPathComponent("Marker.xcdatamodeld")
        try FileManager.default.createDirectory(at: badMarker.appendingPathComponent("Marker.xcdatamodel"), withIntermediateDirectories: true)
        try Data("not a plist".utf8).write(to: badMarker.appendingPathComponent(".xccurrentversion"))
        Self.expectUnreadable(badMarker, code: 259, fragments: [".xccurrentversion", "property list"])

        let compiled = directory.appendingPathComponent("Model.momd")
        try FileManager.default.createDirectory(at: compiled, withIntermediateDirectories: true)
        Self.expectUnreadable(compiled, code: 259, fragments: ["Model.momd", "compiled model"])
    }

    @Test func invalidDetailsInlineAreRefused() {
        let cases: [(String, String)] = [
            (#"<entity name="A"><attribute name="x" attributeType="String"/><attribute name="x" attributeType="String"/></entity>"#, "two properties named 'x'"),
            (#"<entity name="A"><attribute attributeType="String"/></entity>"#, "without a name"),
            (#"<entity><attribute name="x" attributeType="String"/></entity>"#, "<entity> without a name"),
            (#"<entity name="A"><attribute name="x"/></entity>"#, "no attributeType"),
            (#"<entity name="A"><relationship name="r" maxCount="1" deletionRule="Explode" destinationEntity="A"/></entity>"#, "unknown deletionRule 'Explode'"),
            (#"<entity name="A"><relationship name="r" maxCount="one" deletionRule="Nullify" destinationEntity="A"/></entity>"#, "invalid maxCount 'one'"),
            (#"<entity name="A"><relationship name="r" maxCount="1" deletionRule="Nullify"/></entity>"#, "no destinationEntity"),
            (#"<entity name="A"><attribute name="x" attributeType="String"/><uniquenessConstraints><uniquenessConstraint><constraint value="y"/></uniquenessConstraint></uniquenessConstraints></entity>"#, "uniqueness constraint on 'y'"),
            (#"<entity name="A"><attribute name="x" attributeType="String"/><fetchIndex name="i"><fetchIndexElement property="y" type="Binary" order="ascending"/></fetchIndex></entity>"#, "fetch index 'i' on 'y'"),
            (#"<entity name="A"/><configuration name="C"><memberEntity name="B"/></configuration>"#, "entity 'B' in the configuration 'C'"),
            (#"<entity name="A"><attribute name="n" attributeType="Integer 16" defaultValueString="70000"/></entity>"#, "invalid default value '70000'"),
            (#"<entity name="A"><attribute name="u" attributeType="UUID" defaultValueString="not-a-uuid"/></entity>"#, "invalid default value 'not-a-uuid'"),
            (#"<entity name="A"><attribute name="d" attributeType="Double" minValueString="low"/></entity>"#, "invalid minValueString 'low'"),
            (#"<entity name="P"><attribute name="x" attributeType="String"/></entity><entity name="C" parentEntity="P"><attribute name="x" attributeType="String"/></entity>"#, "redeclare the inherited property 'x'"),
        ]
        Self.expectRefused(cases)
    }

    /// Each `(body, fragment)`: the model `body` is refused with an error (259) whose message
    /// names the inline file and contains `fragment`.
    static func expectRefused(_ cases: [(String, String)], sourceLocation: SourceLocation = #_sourceLocation) {
        for (body, fragment) in cases {
            do {
                _ = try parse(body)
                Issue.record("accepted: \(body)", sourceLocation: sourceLocation)
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain, sourceLocation: sourceLocation)
                #expect(error.code == 259, sourceLocation: sourceLocation)
                #expect(error.localizedDescription.contains(fragment), "\(error.localizedDescription) should mention \(fragment)",
                        sourceLocation: sourceLocation)
                #expect(error.localizedDescription.contains("/inline/Test.xcdatamodel/contents"), sourceLocation: sourceLocation)
            }
        }
    }
}

extension XcodeModelReaderTests {
    /// Elements out of the places Xcode writes them, text inside elements, flags that are not
    /// YES or NO, and names given twice: each is an error naming the problem, never skipped.
    @Test func structuralMistakesAreRefused() {
        let cases: [(String, String)] = [
            (#"<entity name="A"><entity name="B"/></entity>"#, "an element <entity> inside <entity>"),
            (#"<attribute name="x" attributeType="String"/>"#, "an element <attribute> inside <model>"),
            (#"<entity name="A"><attribute name="x" attributeType="String"><relationship name="r" destinationEntity="A"/></attribute></entity>"#,
             "an element <relationship> inside <attribute>"),
            (#"<entity name="A"><configuration name="C"/></entity>"#, "an element <configuration> inside <entity>"),
            (#"<configuration name="C"><entity name="A"/></configuration>"#, "an element <entity> inside <configuration>"),
            (#"<entity name="A"><userInfo><entry key="k" value="v"><entry key="l" value="w"/></entry></userInfo></entity>"#,
             "an element <entry> inside <entry>"),
            (#"<entity name="A"><uniquenessConstraint><constraint value="x"/></uniquenessConstraint></entity>"#,
             "an element <uniquenessConstraint> inside <entity>"),
            (#"<entity name="A"><attribute name="x" attributeType="String">text</attribute></entity>"#, "the text 'text' inside <attribute>"),
            (#"<entity name="A"><![CDATA[x]]></entity>"#, "a CDATA section inside <entity>"),
            (#"<entity name="A"><attribute name="x" optional="MAYBE" attributeType="String"/></entity>"#, "invalid value 'MAYBE' for optional"),
            (#"<entity name="A" isAbstract="2"/>"#, "invalid value '2' for isAbstract"),
            (#"<entity name="A"/><configuration name="C"/><configuration name="C"/>"#, "two configurations named 'C'"),
            (#"<entity name="A"/><configuration name="C"><memberEntity name="A"/><memberEntity name="A"/></configuration>"#,
             "the entity 'A' twice in the configuration 'C'"),
            (#"<entity name="A"><attribute name="x" attributeType="String"/><fetchIndex name="i"><fetchIndexElement property="x" type="Binary" order="ascending"/></fetchIndex><fetchIndex name="i"><fetchIndexElement property="x" type="Binary" order="ascending"/></fetchIndex></entity>"#,
             "two fetch indexes named 'i'"),
            (#"<entity name="A"><fetchedProperty name="f"><fetchRequest entity="A"/><fetchRequest entity="A"/></fetchedProperty></entity>"#,
             "a second <fetchRequest> for the fetched property 'f'"),
            (#"<entity name="A"><compoundIndexes><compoundIndex><index/></compoundIndex></compoundIndexes></entity>"#, "an <index> without a value"),
        ]
        Self.expectRefused(cases)
    }

    /// An inverse removed in code from a model read from Xcode's file: gone from the version
    /// hash, and not put back by its name when the model is used (a coordinator hung, the model's
    /// lock taken twice while it was put back).
    @Test func anInverseRemovedInCodeStaysRemoved() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: ModelTestSupport.fixture("Library.xcdatamodeld"))
        let books = try #require(model.entitiesByName["Author"]?.relationshipsByName["books"])
        let authors = try #require(model.entitiesByName["Book"]?.relationshipsByName["authors"])
        let before = model.entityVersionHashesByName["Author"]
        books.inverseRelationship = nil
        authors.inverseRelationship = nil
        #expect(model.entityVersionHashesByName["Author"] != before)
        _ = NSPersistentStoreCoordinator(managedObjectModel: model)
        #expect(books.inverseRelationship == nil)
    }

    /// Unset, a renaming identifier is the name, as Apple documents; set, it is kept by copies.
    @Test func anUnsetRenamingIdentifierIsTheName() throws {
        let title = NSAttributeDescription(); title.name = "title"
        #expect(title.renamingIdentifier == "title")
        title.renamingIdentifier = "heading"
        #expect((title.copy() as? NSAttributeDescription)?.renamingIdentifier == "heading")
        let entity = NSEntityDescription(); entity.name = "Note"
        #expect(entity.renamingIdentifier == "Note")
        let copy = try #require(entity.copy() as? NSEntityDescription)
        copy.name = "Memo"
        #expect(copy.renamingIdentifier == "Memo") // unset: follows the name, not the original's
    }
}
