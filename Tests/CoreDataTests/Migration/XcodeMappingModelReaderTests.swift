import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Reading Xcode's `.xcmappingmodel` folders. `Fixtures/NotesV1ToV2.xcmappingmodel` is written as
/// Xcode writes one: three entity mappings (Person, Note, Attachment with the policy
/// `MyApp.AttachmentPolicy`), an added entity (Tag), a removed one (Draft), the leftover empty
/// mapping Xcode keeps, objects out of `mappingnumber` order, and archived value expressions
/// (made with Python's `plistlib`, a second writer beside the tests' own).
@Suite("Xcode mapping model reader")
struct XcodeMappingModelReaderTests {
    static var fixture: URL { ModelTestSupport.fixture("NotesV1ToV2.xcmappingmodel") }

    typealias Property = XcodeMappingModelFile.Property

    /// Each property mapping's name and its expression as printed (`-` for none).
    static func printed(_ properties: [Property]) -> [String] {
        properties.map { "\($0.name): \($0.valueExpression?.description ?? "-")" }
    }

    @Test func readsEntityMappingsInMappingNumberOrder() throws {
        let file = try XcodeMappingModelReader.read(at: Self.fixture)
        #expect(file.sourceModelPath == "Notes/Notes.xcdatamodeld/Notes.xcdatamodel")
        #expect(file.destinationModelPath == "Notes/Notes.xcdatamodeld/Notes 2.xcdatamodel")
        #expect(file.entityMappings.map(\.name) == ["PersonToPerson", "NoteToNote", "AttachmentToAttachment", "Tag", "Draft"])
        #expect(file.entityMappings.map(\.sourceEntityName) == ["Person", "Note", "Attachment", nil, "Draft"])
        #expect(file.entityMappings.map(\.destinationEntityName) == ["Person", "Note", "Attachment", "Tag", nil])
        #expect(file.entityMappings.map(\.migrationPolicyClassName) == [nil, nil, "MyApp.AttachmentPolicy", nil, nil])
        #expect(file.entityMappings.allSatisfy { $0.mappingTypeName == "Undefined" && $0.sourceFilterPredicate == nil })
    }

    @Test func readsPropertyMappingsAndTheirExpressions() throws {
        let mappings = try XcodeMappingModelReader.read(at: Self.fixture).entityMappings
        let person = mappings[0], note = mappings[1], attachment = mappings[2], tag = mappings[3], draft = mappings[4]
        #expect(Self.printed(person.attributeMappings) == [
            "name: $source.name",
            #"bonusPoints: FUNCTION($entityPolicy, "toInt16WithValue:" , $source.bonusPoints)"#,
        ])
        #expect(Self.printed(person.relationshipMappings) == ["notes: -"])
        // `createdAt` names its entity mapping without being listed by it: it comes after the listed ones.
        #expect(Self.printed(note.attributeMappings) == ["title: $source.title", "ownerName: $source.owner.name", "createdAt: -"])
        #expect(Self.printed(note.relationshipMappings) == [
            #"previousOwners: FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:" , "PersonToPerson", $source.owner)"#,
            "owner: -",
        ])
        #expect(Self.printed(attachment.attributeMappings) == ["data: $source.data", #"fileName: FUNCTION($entityPolicy, "fileNameFor:" , $source)"#])
        #expect(Self.printed(attachment.relationshipMappings) == ["note: -"])
        #expect(Self.printed(tag.attributeMappings) == ["label: -"])
        #expect(tag.relationshipMappings.isEmpty && draft.attributeMappings.isEmpty && draft.relationshipMappings.isEmpty)
    }

    @Test func readsTheXMLFileItself() throws {
        let folder = try XcodeMappingModelReader.read(at: Self.fixture)
        let file = try XcodeMappingModelReader.read(at: Self.fixture.appendingPathComponent("xcmapping.xml"))
        #expect(file.entityMappings.map(\.name) == folder.entityMappings.map(\.name))
        #expect(Self.printed(file.entityMappings[1].relationshipMappings) == Self.printed(folder.entityMappings[1].relationshipMappings))
    }

    // MARK: Documents written here

    /// An `xcmapping.xml` document holding `objects` (after Xcode's `<databaseInfo>`).
    static func document(_ objects: String) -> Data {
        Data("""
        <?xml version="1.0" standalone="yes"?>
        <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">
        <database>
            <databaseInfo>
                <version>134481920</version>
                <nextObjectID>110</nextObjectID>
            </databaseInfo>
        \(objects)</database>

        """.utf8)
    }

    /// A mapping model (z101) with one entity mapping (z102, `Item` to `Item`), which has one
    /// attribute mapping (z103 `title`); `entity` and `attribute` add lines to those objects, `more` objects.
    static func model(entity: String = "", attribute: String = "", number: String = "1", more: String = "") -> Data {
        document("""
            <object type="XDDEVMAPPINGMODEL" id="z101">
                <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z102"></relationship>
            </object>
            <object type="XDDEVENTITYMAPPING" id="z102">
                <attribute name="sourcename" type="string">Item</attribute>
                <attribute name="destinationname" type="string">Item</attribute>
                <attribute name="mappingnumber" type="int16">\(number)</attribute>
                <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z101"></relationship>
                <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="z103"></relationship>
        \(entity)    </object>
            <object type="XDDEVATTRIBUTEMAPPING" id="z103">
                <attribute name="name" type="string">title</attribute>
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z102"></relationship>
        \(attribute)    </object>
        \(more)
        """)
    }

    static let file = URL(fileURLWithPath: "/nonexistent/Items.xcmappingmodel/xcmapping.xml")

    static func base64(_ node: ExpressionArchive.Node) -> String { ExpressionArchive.data(node).base64EncodedString(options: .lineLength76Characters) }

    @Test func aNamedMappingWithAFilterAndAnExpression() throws {
        let data = Self.model(entity: """
                    <attribute name="name" type="string">ItemsToKeep</attribute>
                    <attribute name="sourcefilterpredicatestring" type="string">archived == NO</attribute>

            """, attribute: """
                    <attribute name="valueexpressiondata" type="binary">\(Self.base64(.keyPath(.variable("source"), "title")))</attribute>

            """)
        let mapping = try #require(try XcodeMappingModelReader.parse(data, file: Self.file).entityMappings.first)
        #expect(mapping.name == "ItemsToKeep")
        #expect(mapping.sourceFilterPredicate == "archived == NO")
        #expect(mapping.migrationPolicyClassName == nil)
        #expect(Self.printed(mapping.attributeMappings) == ["title: $source.title"])
    }

    @Test func theSmallestDocumentReads() throws {
        let file = try XcodeMappingModelReader.parse(Self.model(), file: Self.file)
        #expect(file.entityMappings.map(\.name) == ["ItemToItem"])
        #expect(file.sourceModelPath == nil && file.destinationModelPath == nil)
    }

    // MARK: Malformed documents

    typealias Broken = BrokenInput

    static let broken: [Broken] = [
        .init("empty", ["is empty"]) { Data("  \n".utf8) },
        .init("not XML", ["is not valid XML", "(line 1)"]) { Data("XDDEVMAPPINGMODEL z101".utf8) },
        .init("unclosed element", ["is not valid XML"]) { Data("<database><object type=\"XDDEVMAPPINGMODEL\" id=\"z1\">".utf8) },
        .init("wrong root", ["not an Xcode mapping model", "<model>"]) { Data("<model></model>".utf8) },
        .init("no mapping model", ["has no XDDEVMAPPINGMODEL object"]) { document("") },
        .init("two mapping models", ["has 2 mapping model objects (z101, z104)", "(line "]) {
            model(more: "<object type=\"XDDEVMAPPINGMODEL\" id=\"z104\"></object>")
        },
        .init("unknown object type", ["the object z104 of unknown type 'XDDEVFETCHMAPPING'", "(line "]) {
            model(more: "<object type=\"XDDEVFETCHMAPPING\" id=\"z104\"></object>")
        },
        .init("object without an id", ["an <object> without an id"]) { model(more: "<object type=\"XDDEVMAPPINGMODEL\"></object>") },
        .init("object without a type", ["the object z104 without a type"]) { model(more: "<object id=\"z104\"></object>") },
        .init("duplicate id", ["two objects with the id z103"]) {
            model(more: "<object type=\"XDDEVATTRIBUTEMAPPING\" id=\"z103\"></object>")
        },
        .init("unexpected element", ["an unexpected <comment> element", "(line "]) { model(attribute: "<comment>hi</comment>\n") },
        .init("idref to no object", ["names the object z999 in the relationship 'relationshipmappings' of the entity mapping 'Item' (object z102)", "(line "]) {
            model(entity: "<relationship name=\"relationshipmappings\" type=\"0/0\" destination=\"XDDEVRELATIONSHIPMAPPING\" idrefs=\"z999\"></relationship>\n")
        },
        .init("idref to an object of another type", ["names the attribute mapping 'title' (object z103) in the relationship 'relationshipmappings'", "relationship mapping is expected"]) {
            model(entity: "<relationship name=\"relationshipmappings\" type=\"0/0\" destination=\"XDDEVRELATIONSHIPMAPPING\" idrefs=\"z103\"></relationship>\n")
        },
        .init("entity mapping without a mapping model", ["the entity mapping 'Note' (object z104), which belongs to no mapping model", "(line "]) {
            model(more: """
            <object type="XDDEVENTITYMAPPING" id="z104">
                <attribute name="sourcename" type="string">Note</attribute>
            </object>
            """)
        },
        .init("entity mapping without entities", ["the entity mapping 'Loose' (object z104) with neither a source nor a destination entity"]) {
            model(more: """
            <object type="XDDEVENTITYMAPPING" id="z104">
                <attribute name="name" type="string">Loose</attribute>
                <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z101"></relationship>
            </object>
            """)
        },
        .init("attribute mapping of no entity mapping", ["the attribute mapping 'subtitle' (object z104), which belongs to no entity mapping", "(line "]) {
            model(more: """
            <object type="XDDEVATTRIBUTEMAPPING" id="z104">
                <attribute name="name" type="string">subtitle</attribute>
            </object>
            """)
        },
        .init("relationship mapping of no entity mapping", ["the relationship mapping 'owner' (object z104), which belongs to no entity mapping"]) {
            model(more: """
            <object type="XDDEVRELATIONSHIPMAPPING" id="z104">
                <attribute name="name" type="string">owner</attribute>
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING"></relationship>
            </object>
            """)
        },
        .init("object named twice in a relationship", ["names the object z103 twice in the relationship 'attributemappings'", "(line "]) {
            model().replacingIdrefs("z103", with: "z103 z103")
        },
        .init("property mapping in two entity mappings", ["the attribute mapping 'title' (object z103) in two entity mappings (objects z102 and z104)"]) {
            model(more: """
            <object type="XDDEVENTITYMAPPING" id="z104">
                <attribute name="sourcename" type="string">Note</attribute>
                <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z101"></relationship>
                <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="z103"></relationship>
            </object>
            """)
        },
        .init("two entity mappings of one name", ["two entity mappings named 'ItemToItem'", "(line "]) {
            model(more: """
            <object type="XDDEVENTITYMAPPING" id="z104">
                <attribute name="sourcename" type="string">Item</attribute>
                <attribute name="destinationname" type="string">Item</attribute>
                <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z101"></relationship>
            </object>
            """)
        },
        .init("two property mappings of one name", ["two property mappings named 'title' in the entity mapping 'ItemToItem'", "(line "]) {
            model(more: """
            <object type="XDDEVRELATIONSHIPMAPPING" id="z104">
                <attribute name="name" type="string">title</attribute>
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z102"></relationship>
            </object>
            """)
        },
        .init("property mapping without a name", ["the attribute mapping object z104 of the entity mapping 'ItemToItem' without a name"]) {
            model(more: """
            <object type="XDDEVATTRIBUTEMAPPING" id="z104">
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z102"></relationship>
            </object>
            """)
        },
        .init("invalid mapping number", ["an invalid mappingnumber 'first'"]) {
            model(number: "first")
        },
        .init("two values for one attribute", ["two attributes 'name' in the object z103"]) {
            model(attribute: "<attribute name=\"name\" type=\"string\">subtitle</attribute>\n")
        },
        .init("expression that is not base64", ["the value expression of the attribute mapping 'title' of the entity mapping 'ItemToItem', which is not base64 data"]) {
            model(attribute: "<attribute name=\"valueexpressiondata\" type=\"binary\">%%%</attribute>\n")
        },
        .init("expression that cannot be decoded", ["the value expression of the attribute mapping 'title' of the entity mapping 'ItemToItem', which cannot be read",
                                                    "'NSSubqueryExpression'", "(line "]) {
            model(attribute: "<attribute name=\"valueexpressiondata\" type=\"binary\">\(base64(.object("NSSubqueryExpression", [])))</attribute>\n")
        },
    ]

    @Test(arguments: broken)
    func refusesMalformedDocuments(_ testCase: Broken) {
        do {
            let file = try XcodeMappingModelReader.parse(testCase.data(), file: Self.file)
            Issue.record("read \(file.entityMappings.map(\.name)) from a malformed document")
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == NSFileReadCorruptFileError)
            #expect(error.localizedDescription.hasPrefix("The Xcode mapping model file '\(Self.file.path)' "))
            #expect(error.userInfo[NSFilePathErrorKey] as? String == Self.file.path)
            for fragment in testCase.fragments {
                #expect(error.localizedDescription.contains(fragment), "\(error.localizedDescription) lacks \(fragment)")
            }
        }
    }

    // MARK: Files

    func expectError(_ url: URL, code: Int, _ fragments: String..., sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try XcodeMappingModelReader.read(at: url)
            Issue.record("read a mapping model from \(url.path)", sourceLocation: sourceLocation)
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain && error.code == code, sourceLocation: sourceLocation)
            for fragment in fragments {
                #expect(error.localizedDescription.contains(fragment), "\(error.localizedDescription) lacks \(fragment)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func missingFilesAndCompiledMappingModels() throws {
        let folder = try TemporaryFolder()
        expectError(folder.url.appendingPathComponent("Absent.xcmappingmodel"), code: NSFileReadNoSuchFileError, "Absent.xcmappingmodel' does not exist")
        let empty = folder.url.appendingPathComponent("Empty.xcmappingmodel")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        expectError(empty, code: NSFileReadNoSuchFileError, "Empty.xcmappingmodel/xcmapping.xml' does not exist", "no 'xcmapping.xml'")
        let compiled = folder.url.appendingPathComponent("V1ToV2.cdm")
        try Data("bplist00".utf8).write(to: compiled)
        expectError(compiled, code: NSFileReadCorruptFileError, "is a compiled mapping model")
    }
}

private extension Data {
    /// The document with an `idrefs="old"` replaced.
    func replacingIdrefs(_ old: String, with new: String) -> Data {
        Data(String(decoding: self, as: UTF8.self).replacingOccurrences(of: "idrefs=\"\(old)\"", with: "idrefs=\"\(new)\"").utf8)
    }
}
