import Foundation
import Testing
@testable import CoreData
import TestSupport

/// The deprecated property, reached through a protocol (using it directly would warn).
protocol DeprecatedCompoundIndexes: AnyObject {
    var compoundIndexes: [[Any]] { get set }
}

extension NSEntityDescription: DeprecatedCompoundIndexes {}

/// `NSEntityDescription.compoundIndexes` (deprecated): `indexes` under their old name.
@Suite struct CompoundIndexesTests {
    @Test func compoundIndexesAreIndexesInTheStore() throws {
        let model = TestModel.make()
        let car = model.entitiesByName["Car"]!
        let year = try #require(car.propertiesByName["year"])
        let entity: any DeprecatedCompoundIndexes = car
        entity.compoundIndexes = [["name", year], ["price"]]
        #expect(car.indexes.map(\.name) == ["Car_compoundIndex_1", "Car_compoundIndex_2"])
        let read = entity.compoundIndexes
        #expect(read.count == 2)
        #expect((read[0][0] as? NSPropertyDescription)?.name == "name")
        #expect(read[0][1] as? NSPropertyDescription === year)
        let stack = try TestStack(model: model)
        let sql = try RawSQLite.query(stack.url.path, "SELECT sql FROM sqlite_master WHERE type = 'index' AND name LIKE '%compoundIndex%' ORDER BY name")
            .map { $0[0] ?? "" }
        #expect(sql.count == 2)
        #expect(sql.first?.contains("ZNAME") == true && sql.first?.contains("ZYEAR") == true)
        #expect(sql.last?.contains("ZPRICE") == true)
        stack.insert("Car", ["name": "Indexed", "year": 1999])
        try stack.context.save()
        #expect(try stack.fetch("Car") { $0.predicate = NSPredicate(format: "name == 'Indexed' AND year == 1999") }.count == 1)
    }
}
