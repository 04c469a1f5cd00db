import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// Every attribute type's values, limits included, saved and fetched back by another coordinator
/// (each type's decoding).
@Suite("PostgreSQL: attribute values", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLAttributeValuesTests {
    private func model() -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "Sample"
        let types: [(String, NSAttributeType)] = [
            ("i16", .integer16AttributeType), ("i32", .integer32AttributeType), ("i64", .integer64AttributeType),
            ("double", .doubleAttributeType), ("float", .floatAttributeType), ("date", .dateAttributeType),
            ("decimal", .decimalAttributeType), ("flag", .booleanAttributeType), ("text", .stringAttributeType),
            ("uuid", .UUIDAttributeType), ("url", .URIAttributeType), ("data", .binaryDataAttributeType),
            ("extras", .transformableAttributeType), ("order", .integer64AttributeType),
        ]
        entity.properties = types.map { name, type in
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    private static var samples: [[String: Any]] { [
        ["i16": Int16.max, "i32": Int32.max, "i64": Int64.max, "double": 0.1, "float": Float(2.5),
         "date": Date(timeIntervalSinceReferenceDate: 123_456_789.123_456), "decimal": Decimal(string: "12345678901234567890.125")!,
         "flag": true, "text": "é 😀 'q' \\", "uuid": UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
         "url": URL(string: "https://example.com/a%20b?c=d#e")!, "data": Data((0...255).map(UInt8.init)),
         "extras": ["a", "b"] as NSArray],
        ["i16": Int16.min, "i32": Int32.min, "i64": Int64.min, "double": -Double.greatestFiniteMagnitude, "float": -Float.leastNonzeroMagnitude,
         "date": Date(timeIntervalSinceReferenceDate: -978_307_200), "decimal": Decimal(string: "-0.000001")!,
         "flag": false, "text": "", "data": Data()],
        ["double": Double.infinity, "decimal": Decimal(0), "i64": 0],
        [:],
    ] }

    @Test func everyTypeReadsBackAsSaved() throws {
        let database = try TemporaryDatabase()
        let model = model()
        let writer = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        writer.persistentStoreCoordinator = try database.coordinator(model)
        try writer.performAndWait {
            for (index, values) in Self.samples.enumerated() {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Sample", into: writer)
                for (key, value) in values { object.setValue(value, forKey: key) }
                object.setValue(Int64(index), forKey: "order")
            }
            try writer.save()
        }
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = try database.coordinator(model)
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Sample")
            request.sortDescriptors = [NSSortDescriptor(key: "order", ascending: true)]
            let objects = try reader.fetch(request)
            #expect(objects.count == Self.samples.count)
            for (object, values) in zip(objects, Self.samples) {
                for property in model.entities[0].properties where property.name != "order" {
                    let read = object.value(forKey: property.name)
                    guard let expected = values[property.name] else {
                        #expect(read == nil, "\(property.name)")
                        continue
                    }
                    #expect((read as? NSObject)?.isEqual(expected) == true, "\(property.name): \(String(describing: read)) is not \(expected)")
                }
            }
        }
    }
}
