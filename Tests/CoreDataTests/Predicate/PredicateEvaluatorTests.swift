import Foundation
import Testing
@testable import CoreData

/// In-memory evaluation with Apple's semantics, on dictionaries, plain values and Swift values.
@Suite("In-memory predicate evaluation")
struct PredicateEvaluatorTests {
    private func check(_ format: String, _ args: [Any] = [], _ object: Any?, file: String = #filePath, line: Int = #line) -> Bool {
        NSPredicate(format: format, argumentArray: args).evaluate(with: object)
    }

    @Test("nil: equal only to nil; != is true; ordering is false")
    func nilSemantics() {
        let empty: [String: Any] = [:]
        #expect(check("name == nil", [], empty))
        #expect(check("name != 'x'", [], empty))
        #expect(!check("name == 'x'", [], empty))
        #expect(!check("age < 5", [], empty))
        #expect(!check("age >= 5", [], empty))
        #expect(check("NOT (age < 5)", [], empty))
        #expect(!check("name BEGINSWITH 'a'", [], empty))
        #expect(check("NOT name BEGINSWITH 'a'", [], empty))
        #expect(!check("name IN {'a'}", [], empty))
        #expect(check("name IN {'a', nil}", [], empty))
        #expect(check("name == %@", [NSNull()], ["name": NSNull()]))
        #expect(!check("age BETWEEN {1, 5}", [], empty))
        #expect(!check("age < nil", [], ["age": 3]))
    }

    @Test("Numbers compare by value across Int, Double, NSNumber, Bool and Decimal")
    func numbers() {
        #expect(check("age == 30", [], ["age": 30.0]))
        #expect(check("age == %@", [NSNumber(value: 30)], ["age": Int16(30)]))
        #expect(check("age < 30.5", [], ["age": NSNumber(value: 30)]))
        #expect(check("flag == YES", [], ["flag": true]))
        #expect(check("flag == 1", [], ["flag": NSNumber(value: true)]))
        #expect(check("flag == NO", [], ["flag": false]))
        #expect(check("price == 2.5", [], ["price": Decimal(string: "2.5")!]))
        #expect(check("price > 2", [], ["price": NSDecimalNumber(string: "2.5")]))
        #expect(check("big == %@", [Int64.max], ["big": NSNumber(value: Int64.max)]))
        #expect(!check("big == %@", [Double(Int64.max)], ["big": Int64.max - 1]))
        #expect(check("big < %@", [9.3e18], ["big": Int64.max]))
        #expect(!check("age == 30", [], ["age": "30"]))
        #expect(!check("age < 30", [], ["age": "3"]))
    }

    @Test("Strings: byte order, [c], [d], [cd]")
    func strings() {
        #expect(check("name < 'a'", [], ["name": "B"]))
        #expect(check("name > 'Z'", [], ["name": "a"]))
        #expect(check("name ==[c] 'ADA'", [], ["name": "ada"]))
        #expect(!check("name == 'ADA'", [], ["name": "ada"]))
        #expect(check("name ==[d] 'Zoe'", [], ["name": "Zoë"]))
        #expect(!check("name ==[d] 'zoe'", [], ["name": "Zoë"]))
        #expect(check("name ==[cd] 'ZOE'", [], ["name": "zoë"]))
        #expect(check("name !=[c] 'x'", [], ["name": "y"]))
        #expect(check("name <[c] 'b'", [], ["name": "A"]))
        #expect(check("name == %@", ["Ada"], ["name": NSString(string: "Ada")]))
        // Plain equality is byte equality, as SQLite's BINARY collation.
        #expect(!check("name == %@", ["e\u{301}"], ["name": "\u{E9}"]))
    }

    @Test("BEGINSWITH, ENDSWITH, CONTAINS, LIKE, MATCHES, IN on strings")
    func stringOperators() {
        let row: [String: Any] = ["name": "Grace Hopper"]
        #expect(check("name BEGINSWITH 'Grace'", [], row))
        #expect(!check("name BEGINSWITH 'grace'", [], row))
        #expect(check("name BEGINSWITH[c] 'grace'", [], row))
        #expect(check("name ENDSWITH 'per'", [], row))
        #expect(check("name CONTAINS 'e H'", [], row))
        #expect(check("name CONTAINS[c] 'HOP'", [], row))
        #expect(!check("name CONTAINS ''", [], row))
        #expect(!check("name BEGINSWITH ''", [], row))
        #expect(check("name LIKE 'Grace*'", [], row))
        #expect(check("name LIKE '?race H*r'", [], row))
        #expect(!check("name LIKE 'grace*'", [], row))
        #expect(check("name LIKE[c] 'grace*'", [], row))
        #expect(check("name LIKE 'a\\\\*b'", [], ["name": "a*b"]))
        #expect(!check("name LIKE 'a\\\\*b'", [], ["name": "axb"]))
        #expect(check("name LIKE '*'", [], ["name": ""]))
        #expect(check("name MATCHES 'G.*r'", [], row))
        #expect(!check("name MATCHES 'Grace'", [], row))
        #expect(check("name MATCHES[c] 'grace.*'", [], row))
        #expect(!check("name MATCHES '(unbalanced'", [], row))
        #expect(check("'Hop' IN name", [], row))
        #expect(check("name BEGINSWITH[cd] 'ÉMI'", [], ["name": "emile"]))
        #expect(!check("name BEGINSWITH 'x'", [], ["name": 5]))
    }

    @Test("Dates, UUIDs, data, URLs")
    func otherTypes() {
        let date = Date(timeIntervalSinceReferenceDate: 1000)
        let uuid = UUID()
        let row: [String: Any] = ["born": date, "uid": uuid, "blob": Data([1, 2]), "link": URL(string: "https://a.b/c")!]
        #expect(check("born == %@", [date], row))
        #expect(check("born < %@", [Date(timeIntervalSinceReferenceDate: 1001)], row))
        #expect(check("born > %@", [NSDate(timeIntervalSinceReferenceDate: 999)], row))
        #expect(check("uid == %@", [uuid], row))
        #expect(check("uid == %@", [NSUUID(uuidString: uuid.uuidString)!], row))
        #expect(check("blob == %@", [Data([1, 2])], row))
        #expect(!check("blob < %@", [Data([9])], row))
        #expect(check("link == %@", [URL(string: "https://a.b/c")!], row))
        #expect(!check("link == 'https://a.b/c'", [], row))
        #expect(!check("born == 1000", [], row))
    }

    @Test("IN, CONTAINS on collections, BETWEEN")
    func collections() {
        #expect(check("name IN %@", [["a", "b"]], ["name": "b"]))
        #expect(check("name IN[c] {'A', 'B'}", [], ["name": "b"]))
        #expect(!check("name IN {}", [], ["name": "b"]))
        #expect(check("age IN {1, 2.0, 3}", [], ["age": 2]))
        #expect(check("tags CONTAINS 'x'", [], ["tags": ["x", "y"]]))
        #expect(!check("tags CONTAINS 'z'", [], ["tags": ["x", "y"]]))
        #expect(check("tags CONTAINS[c] 'X'", [], ["tags": Set(["x"])]))
        #expect(check("age BETWEEN {18, 65}", [], ["age": 18]))
        #expect(check("age BETWEEN {18, 65}", [], ["age": 65]))
        #expect(!check("age BETWEEN {18, 65}", [], ["age": 66]))
        #expect(check("age BETWEEN %@", [[1, 5]], ["age": 3]))
        #expect(check("born BETWEEN %@", [[Date.distantPast, Date.distantFuture]], ["born": Date()]))
    }

    @Test("Key paths through to-one values and ANY/ALL/NONE over to-many values")
    func keyPaths() {
        let ada: [String: Any] = ["name": "Ada", "age": 36]
        let car: [String: Any] = ["name": "Model T", "owner": ada]
        #expect(check("owner.name == 'Ada'", [], car))
        #expect(check("owner.age > 30", [], car))
        #expect(check("owner.missing == nil", [], car))
        #expect(check("owner.name == nil", [], ["name": "no owner"]))
        let person: [String: Any] = ["name": "Ada", "cars": [["year": 1999], ["year": 2020], ["year": NSNull()]]]
        #expect(check("ANY cars.year > 2000", [], person))
        #expect(!check("ALL cars.year > 1990", [], person))
        #expect(check("ANY cars.year == nil", [], person))
        #expect(!check("NONE cars.year > 2000", [], person))
        #expect(check("NONE cars.year > 2100", [], person))
        #expect(check("SOME cars.year BETWEEN {2000, 2030}", [], person))
        #expect(check("cars.year CONTAINS 1999", [], person))
        #expect(check("1999 IN cars.year", [], person))
        let nobody: [String: Any] = ["cars": [Any]()]
        #expect(!check("ANY cars.year > 0", [], nobody))
        #expect(check("ALL cars.year > 0", [], nobody))
        #expect(check("NONE cars.year > 0", [], nobody))
        #expect(check("ALL cars.year > 0", [], [String: Any]()))
        let nested: [String: Any] = ["clubs": [["members": [["name": "a"], ["name": "b"]]], ["members": [["name": "c"]]]]]
        #expect(check("ANY clubs.members.name == 'c'", [], nested))
        #expect(!check("ALL clubs.members.name < 'c'", [], nested))
        #expect(check("ALL clubs.members.name <= 'c'", [], nested))
        #expect(check("clubs.@count == 2", [], nested))
    }

    @Test("SELF on plain values, variables, aggregate constants")
    func selfAndVariables() {
        #expect(NSPredicate(format: "SELF BEGINSWITH 'a'").evaluate(with: "abc"))
        #expect(NSPredicate(format: "SELF IN %@", ["x", "y"]).evaluate(with: "y"))
        #expect(NSPredicate(format: "SELF > 3").evaluate(with: 4))
        #expect(NSPredicate(format: "SELF == nil").evaluate(with: nil))
        let startsWithA = NSPredicate(format: "SELF BEGINSWITH[c] 'a'")
        let fruits: [String] = ["apple", "Avocado", "banana"]
        let filtered = fruits.filter { startsWithA.evaluate(with: $0) }
        #expect(filtered == ["apple", "Avocado"])
        let template = NSPredicate(format: "name == $NAME AND age > $MIN")
        #expect(template.evaluate(with: ["name": "Ada", "age": 40], substitutionVariables: ["NAME": "Ada", "MIN": 30]))
        #expect(!template.evaluate(with: ["name": "Ada", "age": 20], substitutionVariables: ["NAME": "Ada", "MIN": 30]))
        let substituted = template.withSubstitutionVariables(["NAME": "Ada", "MIN": 30])
        #expect(substituted.evaluate(with: ["name": "Ada", "age": 40]))
        #expect(NSPredicate(format: "SUBQUERY(cars, $c, $c.year > 2000).@count == 1").evaluate(with: ["cars": [["year": 2001], ["year": 1990]]]))
    }

    @Test("Foundation's compound and value predicates combine with format predicates")
    func compound() throws {
        let a = NSPredicate(format: "age > 18")
        let b = NSPredicate(format: "name BEGINSWITH 'A'")
        let row: [String: Any] = ["age": 20, "name": "Ada"]
        #expect(NSCompoundPredicate(andPredicateWithSubpredicates: [a, b]).evaluate(with: row))
        #expect(!NSCompoundPredicate(notPredicateWithSubpredicate: a).evaluate(with: row))
        #expect(NSCompoundPredicate(orPredicateWithSubpredicates: [NSPredicate(value: false), b]).evaluate(with: row))
        #expect(NSPredicate(format: "TRUEPREDICATE").evaluate(with: nil))
        #expect(!NSPredicate(format: "FALSEPREDICATE").evaluate(with: nil))
        let tree = try NSCompoundPredicate(andPredicateWithSubpredicates: [a, NSCompoundPredicate(orPredicateWithSubpredicates: [b, NSPredicate(value: true)])]).predicateTree()
        #expect(tree.description == "age > 18 AND (name BEGINSWITH \"A\" OR TRUEPREDICATE)")
        #expect(try NSPredicate(value: false).predicateTree().description == "FALSEPREDICATE")
        #expect(throws: NSError.self) { try NSPredicate(block: { _, _ in true }).predicateTree() }
    }

    struct Swifty { var name: String; var rank: Int?; var tags: [String] }

    @Test("Swift values are read through Mirror")
    func mirror() {
        #expect(NSPredicate(format: "name == 'x' AND rank == 3").evaluate(with: Swifty(name: "x", rank: 3, tags: [])))
        #expect(NSPredicate(format: "rank == nil").evaluate(with: Swifty(name: "x", rank: nil, tags: [])))
        #expect(NSPredicate(format: "ANY tags == 'b'").evaluate(with: Swifty(name: "x", rank: nil, tags: ["a", "b"])))
    }

    @Test("Managed objects: value(forKey:), SELF equals the object ID, unknown keys are nil")
    func managedObjects() throws {
        let world = try PredicateTestWorld(seed: 1, people: 1, cars: 1, clubs: 1)
        let car = NSManagedObject(entity: world.car, insertInto: nil)
        car.setValue("Ada", forKey: "name")
        car.setValue(1999, forKey: "year")
        #expect(NSPredicate(format: "name == 'Ada' AND year < 2000").evaluate(with: car))
        #expect(NSPredicate(format: "SELF == %@", car.objectID).evaluate(with: car))
        #expect(NSPredicate(format: "SELF == %@", car).evaluate(with: car))
        #expect(NSPredicate(format: "noSuchKey == nil").evaluate(with: car))
        #expect(NSPredicate(format: "owner == nil").evaluate(with: car))
    }
}
