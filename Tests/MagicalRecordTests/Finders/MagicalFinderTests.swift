import CoreData
import Foundation
import MagicalRecord
import Testing

/// `NSManagedObject (MagicalFinders)`: every finder form, on saved and unsaved objects.
@Suite struct MagicalFinderTests {
    /// A stack holding the four cars of `insertCars()`, saved, plus an unsaved Lada.
    private func carStack() throws -> MagicalTestStack {
        let stack = try MagicalTestStack()
        stack.insertCars()
        try stack.save()
        stack.insert("Automobile", ["make": "Lada", "model": "Niva", "price": 2000.0, "year": 1980])
        return stack
    }

    @Test func findAllForms() throws {
        let stack = try carStack()
        let context = stack.context
        #expect(Automobile.mr_findAll(in: context)?.count == 5)
        #expect(stack.values(Automobile.mr_findAll(with: NSPredicate(format: "year == 1980"), in: context), "model").sorted() == ["Niva", "Panda"])
        #expect(stack.values(Automobile.mr_findAll(with: nil, in: context), "model").count == 5)
        #expect(stack.values(Automobile.mr_findAllSorted(by: "price", ascending: true, in: context), "model")
                == ["Panda", "Niva", "900", "V70", "9-3"])
        #expect(stack.values(Automobile.mr_findAllSorted(by: "year,price", ascending: false, in: context), "model")
                == ["9-3", "V70", "900", "Niva", "Panda"])
        #expect(stack.values(Automobile.mr_findAllSorted(by: "make:YES,price:NO", ascending: true, in: context), "model")
                == ["Panda", "Niva", "9-3", "900", "V70"])
        #expect(stack.values(Automobile.mr_findAllSorted(by: "price", ascending: false, with: NSPredicate(format: "make == 'Saab'"), in: context), "model")
                == ["9-3", "900"])
        #expect(Automobile.mr_findAll(in: context) is [Automobile])
    }

    @Test func findFirstForms() throws {
        let stack = try carStack()
        let context = stack.context
        let any = Automobile.mr_findFirst(in: context)
        #expect(any != nil)
        let fiat: Automobile? = Automobile.mr_findFirst(with: NSPredicate(format: "make == 'Fiat'"), in: context)
        #expect(stack.values(fiat.map { [$0] }, "model") == ["Panda"])
        #expect(Automobile.mr_findFirst(with: NSPredicate(format: "make == 'Tesla'"), in: context) == nil)
        let cheapest = Automobile.mr_findFirst(with: nil, sortedBy: "price", ascending: true, in: context)
        #expect(stack.values(cheapest.map { [$0] }, "model") == ["Panda"])
        let dearestSaab = Automobile.mr_findFirst(with: NSPredicate(format: "make == 'Saab'"), sortedBy: "price", ascending: false, in: context)
        #expect(stack.values(dearestSaab.map { [$0] }, "model") == ["9-3"])
        let retrieved = Automobile.mr_findFirst(with: NSPredicate(format: "model == 'V70'"), andRetrieveAttributes: ["model"], in: context)
        #expect(stack.values(retrieved.map { [$0] }, "model") == ["V70"])
        let byAttribute = Automobile.mr_findFirst(byAttribute: "model", withValue: "Niva", in: context)
        #expect(stack.values(byAttribute.map { [$0] }, "make") == ["Lada"])
        #expect(Automobile.mr_findFirst(byAttribute: "model", withValue: "Golf", in: context) == nil)
        let newest = Automobile.mr_findFirstOrdered(byAttribute: "year", ascending: false, in: context)
        #expect(stack.values(newest.map { [$0] }, "year") == ["2004"])
        let oldest = Automobile.mr_findFirstOrdered(byAttribute: "year", ascending: true, in: context)
        #expect(stack.values(oldest.map { [$0] }, "year") == ["1980"])
    }

    @Test func findFirstOrCreateFindsOrInsertsWithTheValue() throws {
        let stack = try carStack()
        let context = stack.context
        let panda = stack.run { Automobile.mr_findFirstOrCreate(byAttribute: "model", withValue: "Panda", in: context) }
        #expect(stack.values([panda], "make") == ["Fiat"])
        let golf = stack.run { Automobile.mr_findFirstOrCreate(byAttribute: "model", withValue: "Golf", in: context) }
        stack.run {
            #expect(golf.isInserted)
            #expect(golf.value(forKey: "model") as? String == "Golf")
        }
        #expect(Automobile.mr_countOfEntities(with: context) == 6)
        // Found now, not made again.
        #expect(stack.run { Automobile.mr_findFirstOrCreate(byAttribute: "model", withValue: "Golf", in: context) } === golf)
    }

    @Test func findByAttributeForms() throws {
        let stack = try carStack()
        let context = stack.context
        #expect(stack.values(Automobile.mr_find(byAttribute: "make", withValue: "Saab", in: context), "model").sorted() == ["9-3", "900"])
        #expect(Automobile.mr_find(byAttribute: "make", withValue: "Tesla", in: context)?.isEmpty == true)
        #expect(stack.values(Automobile.mr_find(byAttribute: "year", withValue: 1980, andOrderBy: "price", ascending: false, in: context), "model")
                == ["Niva", "Panda"])
        #expect(stack.values(Automobile.mr_find(byAttribute: "year", withValue: 2004, andOrderBy: nil, ascending: true, in: context), "model").sorted()
                == ["9-3", "V70"])
    }

    @Test func executeFetchRequestForms() throws {
        let stack = try carStack()
        let context = stack.context
        let request = Automobile.mr_requestAllSorted(by: "price", ascending: false, in: context)
        #expect(stack.values(Automobile.mr_executeFetchRequest(request, in: context), "model").first == "9-3")
        let first = Automobile.mr_executeFetchRequestAndReturnFirstObject(Automobile.mr_requestAllSorted(by: "price", ascending: true, in: context), in: context)
        #expect(stack.values(first.map { [$0] }, "model") == ["Panda"])
    }

    @Test func aFetchThatFailsIsNilNotACrash() throws {
        let stack = try carStack()
        let bad = NSPredicate(format: "colour == 'red'")
        #expect(Automobile.mr_findAll(with: bad, in: stack.context) == nil)
        #expect(Automobile.mr_findFirst(with: bad, in: stack.context) == nil)
        #expect(Automobile.mr_findAllSorted(by: "colour", ascending: true, in: stack.context) == nil)
        #expect(Automobile.mr_countOfEntities(with: bad, in: stack.context) == 0)
        #expect(Automobile.mr_deleteAll(matching: bad, in: stack.context) == false)
    }
}
