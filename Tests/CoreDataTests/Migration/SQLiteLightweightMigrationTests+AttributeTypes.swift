import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Attribute type changes that lightweight migration infers (numbers and Booleans into each
/// other): the column takes the new declared type and the values are converted, as the store
/// reads them back through the new model.
extension SQLiteLightweightMigrationTests {
    /// `Reading`, with one attribute per `(name, type)`.
    static func readings(_ attributes: [(String, NSAttributeType)], extra: [NSAttributeDescription] = []) -> NSManagedObjectModel {
        M.model([M.entity("Reading", attributes.map { M.attribute($0.0, $0.1) } + extra)])
    }

    /// The attribute types of `Reading` before and after: every change inference allows.
    static let convertedTypes: (before: [(String, NSAttributeType)], after: [(String, NSAttributeType)]) = (
        [("count", .integer32AttributeType), ("ratio", .doubleAttributeType), ("small", .floatAttributeType),
         ("price", .decimalAttributeType), ("half", .doubleAttributeType), ("zero", .integer16AttributeType),
         ("on", .booleanAttributeType), ("level", .integer64AttributeType), ("weight", .doubleAttributeType),
         ("score", .decimalAttributeType), ("wide", .integer16AttributeType)],
        [("count", .doubleAttributeType), ("ratio", .integer64AttributeType), ("small", .integer16AttributeType),
         ("price", .integer32AttributeType), ("half", .booleanAttributeType), ("zero", .booleanAttributeType),
         ("on", .doubleAttributeType), ("level", .decimalAttributeType), ("weight", .decimalAttributeType),
         ("score", .doubleAttributeType), ("wide", .integer64AttributeType)])

    /// `Reading` before: `rank` is an optional Double.
    static func convertedSource() -> NSManagedObjectModel {
        readings(convertedTypes.before, extra: [M.attribute("rank", .doubleAttributeType)])
    }

    /// `Reading` after: `rank` is a non-optional Integer 32 with a default (converted, and filled).
    static func convertedDestination() -> NSManagedObjectModel {
        readings(convertedTypes.after, extra: [M.attribute("rank", .integer32AttributeType, optional: false, defaultValue: 9)])
    }

    /// Two readings of the source model: one with every value, one with none.
    static func fillReadings(_ context: NSManagedObjectContext) {
        _ = insert("Reading", [
            "count": 3, "ratio": -2.7, "small": Float(2.9), "price": NSDecimalNumber(string: "12.75"), "half": 0.5,
            "zero": 0, "on": true, "level": 5, "weight": 0.1, "score": NSDecimalNumber(string: "2.5"), "wide": 300,
            "rank": 4.6,
        ], into: context)
        _ = insert("Reading", [:], into: context)
    }

    /// Checks the two readings once migrated and read through the destination model.
    static func expectConverted(_ rows: [NSManagedObject]) {
        let values = rows[0]
        #expect(values.value(forKey: "count") as? Double == 3)
        #expect(values.value(forKey: "ratio") as? Int64 == -2) // truncated toward zero, as NSNumber.int64Value
        #expect(values.value(forKey: "small") as? Int16 == 2)
        #expect(values.value(forKey: "price") as? Int32 == 12)
        #expect(values.value(forKey: "half") as? Bool == true)
        #expect(values.value(forKey: "zero") as? Bool == false)
        #expect(values.value(forKey: "on") as? Double == 1)
        #expect((values.value(forKey: "level") as? NSDecimalNumber)?.decimalValue == Decimal(5))
        #expect((values.value(forKey: "weight") as? NSDecimalNumber)?.decimalValue == Decimal(string: "0.1"))
        #expect(values.value(forKey: "score") as? Double == 2.5)
        #expect(values.value(forKey: "wide") as? Int64 == 300)
        #expect(values.value(forKey: "rank") as? Int32 == 4)
        // NULLs stay NULL, and the default fills the one made non-optional.
        for (name, _) in convertedTypes.after { #expect(rows[1].value(forKey: name) == nil, "\(name)") }
        #expect(rows[1].value(forKey: "rank") as? Int32 == 9)
    }

    @Test func numbersAndBooleansAreConvertedToTheirNewTypes() throws {
        let folder = try TemporaryFolder()
        let url = try Self.makeStore(Self.convertedSource(), in: folder, Self.fillReadings)
        try Self.migrate(url, from: Self.convertedSource(), to: Self.convertedDestination())
        // The columns have the declared types of a new store of the destination model.
        #expect(try Self.layout(url) == Self.freshLayout(Self.convertedDestination()))
        Self.expectConverted(try Self.fetch("Reading", Self.open(url, Self.convertedDestination())))
        // The declared types are what the raw file says too.
        let types = Dictionary(uniqueKeysWithValues: try RawSQLite.query(url.path, "PRAGMA table_info(ZREADING)").map { ($0[1]!, $0[2]!) })
        #expect(types["ZCOUNT"] == "FLOAT" && types["ZRATIO"] == "INTEGER" && types["ZLEVEL"] == "DECIMAL")
    }

    @Test func aStringMadeANumberIsRefusedAndTheFileUntouched() throws {
        let v2 = M.v1()
        v2.entitiesByName["Person"]!.attributesByName["name"]!.attributeType = .integer64AttributeType
        let (error, untouched) = try Self.refusal(v2)
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSInferredMappingModelError)
        #expect(error?.userInfo["reason"] as? String == "Source and destination attribute types are incompatible")
        #expect(untouched)
    }
}
