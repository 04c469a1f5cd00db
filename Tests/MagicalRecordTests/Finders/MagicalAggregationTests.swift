import CoreData
import Foundation
import MagicalRecord
import Testing

/// `NSManagedObject (MagicalAggregation)`: counts and aggregate functions.
@Suite struct MagicalAggregationTests {
    @Test func countFormsCountSavedAndUnsavedObjects() throws {
        let stack = try MagicalTestStack()
        #expect(Automobile.mr_countOfEntities(with: stack.context) == 0)
        #expect(Automobile.mr_hasAtLeastOneEntity(in: stack.context) == false)
        stack.insertCars()
        try stack.save()
        stack.insert("Automobile", ["make": "Lada", "price": 2000.0, "year": 1980])
        let saab = NSPredicate(format: "make == 'Saab'")
        #expect(Automobile.mr_countOfEntities(with: stack.context) == 5)
        #expect(Automobile.mr_countOfEntities(with: saab, in: stack.context) == 2)
        #expect(Automobile.mr_countOfEntities(with: nil as NSPredicate?, in: stack.context) == 5)
        #expect(Automobile.mr_numberOfEntities(with: stack.context) == NSNumber(value: 5))
        #expect(Automobile.mr_numberOfEntities(with: saab, in: stack.context).intValue == 2)
        #expect(Automobile.mr_hasAtLeastOneEntity(in: stack.context))
        #expect(Person.mr_hasAtLeastOneEntity(in: stack.context) == false)
    }

    @Test func aggregateOperationsRunInTheStore() throws {
        let stack = try MagicalTestStack()
        stack.insertCars()
        try stack.save()
        let context = stack.context
        #expect(Automobile.mr_aggregateOperation("sum:", onAttribute: "price", with: nil, in: context) as? Double == 19000)
        #expect(Automobile.mr_aggregateOperation("max:", onAttribute: "price", with: nil, in: context) as? Double == 9000)
        #expect(Automobile.mr_aggregateOperation("min:", onAttribute: "year", with: nil, in: context) as? Int32 == 1980)
        #expect(Automobile.mr_aggregateOperation("average:", onAttribute: "price", with: NSPredicate(format: "make == 'Saab'"), in: context) as? Double == 6000)
        #expect(Automobile.mr_aggregateOperation("count:", onAttribute: "price", with: NSPredicate(format: "year == 2004"), in: context) != nil)
    }

    @Test func aggregateOperationGroupedByAKeyPath() throws {
        let stack = try MagicalTestStack()
        stack.insertCars()
        try stack.save()
        let rows = Automobile.mr_aggregateOperation("sum:", onAttribute: "price", with: nil, groupBy: "make", in: stack.context)
        let sums = (rows ?? []).compactMap { $0 as? [String: Any] }.reduce(into: [String: Double]()) { result, row in
            if let make = row["make"] as? String { result[make] = (row["result"] as? NSNumber)?.doubleValue ?? row["result"] as? Double }
        }
        #expect(sums == ["Saab": 12000, "Volvo": 6000, "Fiat": 1000])
    }

    @Test func anAggregateOfAnUnknownAttributeIsNil() throws {
        let stack = try MagicalTestStack()
        stack.insertCars()
        try stack.save()
        #expect(Automobile.mr_aggregateOperation("sum:", onAttribute: "colour", with: nil, in: stack.context) == nil)
    }
}
