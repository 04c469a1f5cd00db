import Foundation
import Testing
@testable import CoreData

/// Fetches through the whole stack: a context, a coordinator and the SQLite (or in-memory) store.
/// Needs the SQLite store to call `PredicateSQLCompiler.registerFunctions(on:)` on its connections.
@Suite("Fetching with predicates and sort descriptors")
struct PredicateFetchTests {
    private func populate(_ stack: TestStack) throws {
        let ada = stack.insert("Person", ["name": "Ada", "age": 36])
        let grace = stack.insert("Person", ["name": "Grace", "age": 85])
        let rows: [(String?, Int, Double?, NSManagedObject?)] = [
            ("Model T", 1908, 850, ada), ("model s", 2012, 79_990, grace), ("Zoë", 2019, nil, ada),
            (nil, 1999, 10, nil), ("Beetle", 1938, 1_000.5, grace), ("émile", 2001, 5, nil),
        ]
        for (name, year, price, owner) in rows {
            let car = stack.insert("Car", ["year": year])
            if let name { car.setValue(name, forKey: "name") }
            if let price { car.setValue(price, forKey: "price") }
            if let owner { car.setValue(owner, forKey: "owner") }
        }
        try stack.context.save()
    }

    @Test("The SQLite store and the in-memory store agree with in-memory evaluation", arguments: [false, true])
    func fetches(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        try populate(stack)
        let all = try stack.fetch("Car")
        let formats = [
            "name == 'Model T'", "name != 'Model T'", "name BEGINSWITH[c] 'model'", "name ==[cd] 'zoe'", "name LIKE '*e'",
            "year BETWEEN {1900, 2000}", "price < 900", "NOT (price < 900)", "owner.name == 'Ada'", "owner == nil",
            "name IN {'Beetle', 'Zoë'}", "name MATCHES '[A-Z].*'", "owner.age > 40 OR name CONTAINS[d] 'e'",
        ]
        for format in formats {
            let predicate = NSPredicate(format: format)
            let fetched = try stack.fetch("Car") { $0.predicate = predicate }
            let expected = all.filter { predicate.evaluate(with: $0) }
            #expect(Set(fetched.map(\.objectID)) == Set(expected.map(\.objectID)), "\(format)")
        }
        let owned = try stack.fetch("Person") { $0.predicate = NSPredicate(format: "ANY cars.year > 2010") }
        #expect(owned.map { $0.value(forKey: "name") as? String }.sorted { ($0 ?? "") < ($1 ?? "") } == ["Ada", "Grace"])
        let people = try stack.fetch("Person")
        for format in ["ANY cars.year > 2010", "ALL cars.year > 1920", "NONE cars.name BEGINSWITH[c] 'm'", "cars.name CONTAINS 'Zoë'"] {
            let predicate = NSPredicate(format: format)
            let fetched = try stack.fetch("Person") { $0.predicate = predicate }
            #expect(Set(fetched.map(\.objectID)) == Set(people.filter { predicate.evaluate(with: $0) }.map(\.objectID)), "\(format)")
        }
        let none = try stack.fetch("Person") { $0.predicate = NSPredicate(format: "ALL cars.year > 1920") }
        #expect(none.compactMap { $0.value(forKey: "name") as? String } == ["Grace"])
        let ada = try #require(try stack.fetch("Person") { $0.predicate = NSPredicate(format: "name == 'Ada'") }.first)
        let adaCars = try stack.fetch("Car") { $0.predicate = NSPredicate(format: "owner == %@", ada) }
        #expect(adaCars.count == 2)
        let byID = try stack.fetch("Car") { $0.predicate = NSPredicate(format: "owner == %@", ada.objectID) }
        #expect(byID.count == 2)
    }

    @Test("Sorted fetches", arguments: [false, true])
    func sorted(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        try populate(stack)
        let names = { (objects: [NSManagedObject]) in objects.map { $0.value(forKey: "name") as? String ?? "-" } }
        let plain = try stack.fetch("Car") { $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)] }
        #expect(names(plain) == ["-", "Beetle", "Model T", "Zoë", "model s", "émile"])
        let insensitive = try stack.fetch("Car") {
            $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: false, selector: "caseInsensitiveCompare:")]
        }
        #expect(names(insensitive) == ["émile", "Zoë", "Model T", "model s", "Beetle", "-"])
        let byOwner = try stack.fetch("Car") {
            $0.predicate = NSPredicate(format: "owner != nil")
            $0.sortDescriptors = [NSSortDescriptor(key: "owner.name", ascending: false), NSSortDescriptor(key: "year", ascending: true)]
        }
        #expect(names(byOwner) == ["Beetle", "model s", "Model T", "Zoë"])
    }

    @Test("Malformed and block predicates make the fetch throw")
    func refused() throws {
        let stack = try TestStack()
        try populate(stack)
        #expect(throws: NSError.self) { try stack.fetch("Car") { $0.predicate = NSPredicate(format: "name == ") } }
        #expect(throws: NSError.self) { try stack.fetch("Car") { $0.predicate = NSPredicate { _, _ in true } } }
        #expect(throws: NSError.self) { try stack.fetch("Person") { $0.predicate = NSPredicate(format: "cars.name == 'x'") } }
    }
}

/// SQLite allows at most 32,766 parameters in a statement (by default) and 1,000 levels of
/// expression: long lists are bound as one JSON array, `ANY {…} == x` compiles as `x IN {…}`.
@Suite("Fetching with IN lists longer than SQLite's parameter limit")
struct LongInListTests {
    @Test func longListsAreOneBoundValue() throws {
        let stack = try TestStack()
        let vins = (0..<6).map { UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", $0))! }
        for (offset, name) in ["Model T", "model s", "Zoë", "Beetle", "émile", "a\"b\\c"].enumerated() {
            stack.insert("Car", ["name": name, "year": 1990 + offset, "price": Double(offset) + 0.5, "vin": vins[offset],
                                 "built": Date(timeIntervalSinceReferenceDate: Double(offset) * 1e6)])
        }
        try stack.context.save()
        let all = try stack.fetch("Car")
        func names(_ format: String, _ argument: Any) throws -> [String] {
            let predicate = NSPredicate(format: format, argumentArray: [argument])
            let fetched = try stack.fetch("Car") { $0.predicate = predicate }.compactMap { $0.value(forKey: "name") as? String }
            let evaluated = all.filter { predicate.evaluate(with: $0) }.compactMap { $0.value(forKey: "name") as? String }
            #expect(fetched == evaluated, "\(format)")
            return fetched
        }
        let years = Array(100_000..<133_000) + [1991, 1993]
        #expect(try names("year IN %@", years) == ["model s", "Beetle"])
        #expect(try names("NOT (year IN %@)", years).count == 4)
        #expect(try names("ANY %@ == year", years) == ["model s", "Beetle"])
        #expect(try names("NONE %@ == year", years).count == 4)
        let strings = (0..<33_000).map { "name \($0)" } + ["ZOE", "A\"B\\C"]
        #expect(try names("name IN %@", strings).isEmpty)
        #expect(try names("name IN[cd] %@", strings) == ["Zoë", "a\"b\\c"])
        let prices = (0..<33_000).map { Double($0) + 0.25 } + [2.5, .infinity]
        #expect(try names("price IN %@", prices) == ["Zoë"])
        let uuids = (0..<33_000).map { _ in UUID() } + [vins[4]]
        #expect(try names("vin IN %@", uuids) == ["émile"])
        let dates = (0..<33_000).map { Date(timeIntervalSinceReferenceDate: Double($0) + 0.5) } + [Date(timeIntervalSinceReferenceDate: 3e6)]
        #expect(try names("built IN %@", dates) == ["Beetle"])
        let withNil: [Any] = Array(100_000..<133_000) + [NSNull()]
        #expect(try names("year IN %@", withNil).isEmpty)
    }
}
