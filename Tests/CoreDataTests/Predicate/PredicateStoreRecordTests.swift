import Foundation
import Testing
@testable import CoreData

/// Records as the in-memory store keeps them, with related objects as IDs.
@Suite("Store records")
struct PredicateStoreRecordTests {
    @Test("Relationships are followed through the resolver")
    func resolver() throws {
        let world = try PredicateTestWorld(seed: 1, people: 1, cars: 1, clubs: 1)
        let ada = NSManagedObjectID(temporaryFor: world.person)
        let car1 = NSManagedObjectID(temporaryFor: world.car)
        let car2 = NSManagedObjectID(temporaryFor: world.car)
        let records: [NSManagedObjectID: [String: Any]] = [
            ada: ["self": ada, "name": "Ada", "cars": [car1, car2]],
            car1: ["self": car1, "name": "T", "year": 1908, "owner": ada],
            car2: ["self": car2, "name": "Z", "year": 2019, "owner": ada],
        ]
        let resolve = { (id: NSManagedObjectID) in records[id] }
        func matches(_ format: String, _ id: NSManagedObjectID, _ args: [Any] = []) throws -> Bool {
            try InMemoryEvaluation.matches(try PredicateBridge.tree(of: NSPredicate(format: format, argumentArray: args)), record: records[id]!, resolve: resolve)
        }
        #expect(try matches("owner.name == 'Ada'", car1))
        #expect(try matches("ANY cars.year > 2000", ada))
        #expect(!(try matches("ALL cars.year > 2000", ada)))
        #expect(try matches("SELF == %@", car2, [car2]))
        #expect(try matches("owner == %@", car2, [ada]))
        #expect(try matches("owner.name == 'Ada'", car2))
        #expect(!(try InMemoryEvaluation.matches(try PredicateBridge.tree(of: NSPredicate(format: "owner.name == 'Ada'")), record: records[car1]!)))
        let keys = [SortKey(path: ["owner", "name"], ascending: true), SortKey(path: ["year"], ascending: false)]
        #expect(InMemoryEvaluation.orderedBefore(records[car2]!, records[car1]!, keys: keys, tieBreak: false, resolve: resolve))
    }
}
