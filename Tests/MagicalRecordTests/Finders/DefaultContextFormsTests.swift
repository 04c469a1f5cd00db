import CoreData
import Foundation
import Testing
@testable import MagicalRecord

extension DefaultStackSuite {
    /// The forms without a context run their `in:` form in the default context.
    @Suite struct DefaultContextFormsTests {
        @Test func findersCountsRequestsAndImportsUseTheDefaultContext() async throws {
            try await withDefaultStack(model: MagicalTestModel.make()) {
                try await MainActor.run {
                    for (make, model, year) in [("Saab", "900", 1990), ("Volvo", "V70", 2000), ("Fiat", "Panda", 1980)] {
                        let car = try #require(Automobile.mr_createEntity())
                        car.setValue(make, forKey: "make")
                        car.setValue(model, forKey: "model")
                        car.setValue(year, forKey: "year")
                    }
                    let context = NSManagedObjectContext.mr_default()
                    let extra = try #require(Automobile.mr_createEntity())
                    #expect(extra.managedObjectContext === context)
                    #expect(Automobile.mr_findAll()?.count == 4)
                    context.delete(extra)
                    context.mr_saveToPersistentStoreAndWait() // the aggregate is a dictionary fetch: from the store
                    #expect(Automobile.mr_countOfEntities() == 3)
                    #expect(Automobile.mr_countOfEntities(with: NSPredicate(format: "year >= 1990")) == 2)
                    #expect(Automobile.mr_numberOfEntities(with: NSPredicate(format: "make == 'Fiat'")).intValue == 1)
                    #expect(Automobile.mr_hasAtLeastOneEntity())
                    #expect(Automobile.mr_findFirst(byAttribute: "model", withValue: "V70")?.value(forKey: "make") as? String == "Volvo")
                    #expect(Automobile.mr_findAllSorted(by: "year", ascending: false, with: NSPredicate(format: "year > 0"))?
                        .map { $0.value(forKey: "model") as? String } == ["V70", "900", "Panda"])
                    #expect(Automobile.mr_findFirstOrdered(byAttribute: "year", ascending: true)?.value(forKey: "model") as? String == "Panda")
                    #expect(Automobile.mr_aggregateOperation("max:", onAttribute: "year", with: nil) as? Int == 2000)
                    #expect(Automobile.mr_requestAll().entityName == "Automobile")
                    #expect(Automobile.mr_entityDescription()?.name == "Automobile")
                    let grouped = Automobile.mr_fetchAllGrouped(by: "make", with: NSPredicate(format: "year > 0"), sortedBy: "make,year", ascending: true)
                    #expect(grouped.sections?.map(\.name) == ["Fiat", "Saab", "Volvo"])
                    #expect(grouped.managedObjectContext === context)

                    let person = Person.mr_import(from: ["personID": 7, "name": "Ada"])
                    #expect(person.managedObjectContext === context)
                    #expect(Person.mr_findFirst(byAttribute: "personID", withValue: 7) === person)
                    #expect(Automobile.mr_deleteAll(matching: NSPredicate(format: "make == 'Fiat'")))
                    context.processPendingChanges()
                    #expect(Automobile.mr_countOfEntities(with: NSPredicate(format: "make == 'Fiat'")) == 0)
                    #expect(Automobile.mr_truncateAll())
                    context.processPendingChanges()
                    #expect(Automobile.mr_countOfEntities() == 0)
                }
            }
        }
    }
}
