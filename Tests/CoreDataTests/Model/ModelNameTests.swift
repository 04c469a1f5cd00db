import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Entity, property and fetch index names must be identifiers (names reach the store's SQL), and
/// a property may not take the name of a method of `NSObject` or `NSManagedObject`.
@Suite("Model names")
struct ModelNameTests {
    static let unsafeEntityName = "Car; DROP TABLE Z_METADATA"

    /// A model of one entity `entity` with one string attribute `property`, and a fetch index `index`.
    static func model(entity: String = "Car", property: String = "name", index: String? = nil) -> NSManagedObjectModel {
        let car = NSEntityDescription()
        car.name = entity
        let name = NSAttributeDescription()
        name.name = property
        name.attributeType = .stringAttributeType
        car.properties = [name]
        if let index {
            car.indexes = [NSFetchIndexDescription(name: index, elements: [NSFetchIndexElementDescription(property: name, collationType: .binary)])]
        }
        let model = NSManagedObjectModel()
        model.entities = [car]
        return model
    }

    static func expectRefused(_ model: NSManagedObjectModel, at url: URL, _ fragments: [String],
                              sourceLocation: SourceLocation = #_sourceLocation) {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        do {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
            Issue.record("the store was added", sourceLocation: sourceLocation)
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain, sourceLocation: sourceLocation)
            #expect(error.code == NSPersistentStoreInvalidTypeError, sourceLocation: sourceLocation)
            for fragment in fragments {
                #expect(error.localizedDescription.contains(fragment), "\(error.localizedDescription) should mention \(fragment)",
                        sourceLocation: sourceLocation)
            }
        }
        #expect(coordinator.persistentStores.isEmpty, sourceLocation: sourceLocation)
    }

    @Test func anEntityNameCarryingSQLIsRefusedBeforeTheStoreIsTouched() throws {
        let folder = try TemporaryFolder()
        // A store written with a sound model first: refused, the file stays byte for byte.
        let url = folder.url.appendingPathComponent("Cars.sqlite")
        do {
            let stack = try TestStack(model: Self.model(), directory: folder.url)
            stack.insert("Car", ["name": "Model T"])
            try stack.context.save()
            try stack.coordinator.remove(stack.coordinator.persistentStores[0])
            try FileManager.default.moveItem(at: stack.url, to: url)
        }
        let before = try Data(contentsOf: url)
        Self.expectRefused(Self.model(entity: Self.unsafeEntityName), at: url, ["entity named '\(Self.unsafeEntityName)'", "not a valid name"])
        #expect(try Data(contentsOf: url) == before)
        #expect(try RawSQLite.query(url.path, "SELECT count(*) FROM Z_METADATA") == [["1"]])
        // No file is made for a new store.
        let fresh = folder.url.appendingPathComponent("Fresh.sqlite")
        Self.expectRefused(Self.model(entity: Self.unsafeEntityName), at: fresh, [Self.unsafeEntityName])
        #expect(!FileManager.default.fileExists(atPath: fresh.path))
        // The same model in Xcode's format: the reader refuses it (Broken/SQLInEntityName).
        XcodeModelReaderTests.expectUnreadable(ModelTestSupport.fixture("Broken/SQLInEntityName.xcdatamodel"), code: 259,
                                               fragments: ["entity named '\(Self.unsafeEntityName)'"])
    }

    @Test(arguments: ["first name", "2fast", "_hidden", "näme", "name)", "x-y", "ZNAME, Z_PK"])
    func propertyNamesThatAreNotIdentifiersAreRefused(_ name: String) throws {
        let folder = try TemporaryFolder()
        Self.expectRefused(Self.model(property: name), at: folder.url.appendingPathComponent("S.sqlite"),
                           ["the entity 'Car' has a property named '\(name)'", "not a valid name"])
        let escaped = name.replacingOccurrences(of: "\"", with: "&quot;")
        XcodeModelReaderTests.expectRefused([(#"<entity name="Car"><attribute name="\#(escaped)" attributeType="String"/></entity>"#,
                                              "a property named '\(name)' in the entity 'Car', which is not a valid name")])
    }

    @Test(arguments: ["description", "hash", "isDeleted", "objectID", "entity", "self", "class"])
    func propertyNamesOfNSObjectOrNSManagedObjectMethodsAreRefused(_ name: String) throws {
        let folder = try TemporaryFolder()
        Self.expectRefused(Self.model(property: name), at: folder.url.appendingPathComponent("S.sqlite"),
                           ["property named '\(name)'", "method of NSObject or NSManagedObject"])
        XcodeModelReaderTests.expectRefused([
            (#"<entity name="Car"><attribute name="\#(name)" attributeType="String"/></entity>"#, "a property named '\(name)'"),
            (#"<entity name="Car"><relationship name="\#(name)" maxCount="1" deletionRule="Nullify" destinationEntity="Car"/></entity>"#,
             "cannot name a property"),
            (#"<entity name="Car"><fetchedProperty name="\#(name)"><fetchRequest entity="Car"/></fetchedProperty></entity>"#,
             "cannot name a property"),
        ])
    }

    @Test func entityAndIndexNamesThatAreNotIdentifiersAreRefused() throws {
        let folder = try TemporaryFolder()
        Self.expectRefused(Self.model(entity: "Car Park"), at: folder.url.appendingPathComponent("A.sqlite"), ["entity named 'Car Park'"])
        Self.expectRefused(Self.model(entity: "1Car"), at: folder.url.appendingPathComponent("B.sqlite"), ["entity named '1Car'"])
        Self.expectRefused(Self.model(index: "by name"), at: folder.url.appendingPathComponent("C.sqlite"),
                           ["fetch index named 'by name'", "not a valid name"])
        XcodeModelReaderTests.expectRefused([
            (#"<entity name="Car Park"/>"#, "an entity named 'Car Park', which is not a valid name"),
            (#"<entity name="Car"><attribute name="name" attributeType="String"/><fetchIndex name="by name"><fetchIndexElement property="name" type="Binary" order="ascending"/></fetchIndex></entity>"#,
             "a fetch index named 'by name' in the entity 'Car'"),
        ])
    }

    @Test func namesOfAppleSamplesAreAccepted() throws {
        for name in ["name", "title", "descriptionText", "isDone", "hashValue2", "ID", "zIndex", "snake_case", "URL"] {
            #expect(ModelNames.problem(propertyName: name) == nil, "\(name)")
        }
        for name in ["Car", "CDAccountInfo", "my_entity", "A1"] { #expect(ModelNames.problem(entityName: name) == nil, "\(name)") }
        let stack = try TestStack(model: Self.model(entity: "Car_2", property: "descriptionText", index: "byDescription"))
        stack.insert("Car_2", ["descriptionText": "ok"])
        try stack.context.save()
    }
}
