import Foundation
import Testing
@testable import CoreData

/// Hostile values are bound, never spliced: the SQL text never contains them, the statements
/// run, the tables survive, and the answers still match the in-memory evaluator.
@Suite("SQL injection")
struct PredicateSQLInjectionTests {
    static let hostile = [
        "'; DROP TABLE ZCAR; --", "\" OR 1=1 --", "') OR ('1'='1", "x' OR 'x'='x", "%", "_", "*", "?", "\\", "\\'",
        "Robert'); DELETE FROM ZPERSON; --", "t0.ZNAME", "ZCAR", "1; SELECT 1", "a\u{0}b", ":name", "$x", "@x", "😀'",
    ]

    @Test("Every operator binds hostile strings", arguments: hostile)
    func hostileValues(value: String) throws {
        let world = try PredicateTestWorld(seed: 5, people: 4, cars: 12, clubs: 2)
        try world.database.run("UPDATE ZCAR SET ZNAME = ? WHERE Z_PK = 1", [.string(value)])
        world.cars[0].values["name"] = value
        let before = try world.database.query("SELECT count(*) FROM ZCAR", [])
        let formats = [
            "name == %@", "name != %@", "name < %@", "name <= %@", "name > %@", "name >= %@", "name BEGINSWITH %@",
            "name ENDSWITH %@", "name CONTAINS %@", "name LIKE %@", "name MATCHES %@", "name IN %@", "name BETWEEN %@",
            "%@ IN name", "%@ CONTAINS name", "owner.name == %@", "ANY owner.cars.name == %@", "ALL owner.clubs.title != %@",
            "NOT (name == %@)", "owner.cars.name CONTAINS %@",
        ]
        for format in formats {
            for options in ["", "[c]", "[cd]"] {
                let withOptions = format.replacingOccurrences(of: " %@", with: "\(options) %@", options: [], range: format.range(of: " %@", options: .backwards))
                let argument: Any
                if format.hasSuffix("IN %@") && !format.hasPrefix("%@") {
                    argument = [value, "x"]
                } else if format.contains("BETWEEN") {
                    argument = [value, value + "z"]
                } else {
                    argument = value
                }
                let predicate = try NSPredicate(validatingFormat: withOptions, argumentArray: [argument])
                let (rows, fragment) = try world.sqlMatches(predicate, entity: world.car)
                if value.contains("'") || value.contains(";") || value.contains("\"") {
                    #expect(!fragment.sql.contains(value), "\(withOptions): \(fragment.sql)")
                }
                let folded = PredicateStrings.fold(value, options == "" ? [] : [.caseInsensitive, .diacriticInsensitive])
                let bound = fragment.bindings.contains { if case .string(let s) = $0 { return s == value || s == folded } else { return false } }
                #expect(bound || fragment.sql == "0" || fragment.sql == "1", "\(withOptions): \(fragment)")
                #expect(rows == world.memoryMatches(predicate, entity: world.car), "\(withOptions) with \(value): \(fragment)")
            }
        }
        #expect(try world.database.query("SELECT count(*) FROM ZCAR", []) == before)
        #expect(try world.database.query("SELECT count(*) FROM ZPERSON", []) == [[.int(4)]])
        let found = try world.sqlMatches(NSPredicate(format: "name == %@", value), entity: world.car).0
        #expect(found.contains(1))
    }

    @Test("Hostile key names are refused before any SQL is built")
    func hostileKeys() throws {
        let world = try PredicateTestWorld(seed: 5, people: 2, cars: 2, clubs: 1)
        for key in ["name; DROP TABLE ZCAR", "ZNAME", "name) OR (1", "t0.Z_PK", "owner.name = 1 --"] {
            let predicate = NSPredicate(format: "%K == %@", key, "x")
            var compiler = PredicateSQLCompiler(entity: world.car)
            #expect(throws: NSError.self, "\(key)") { try compiler.compile(try predicate.predicateTree()) }
        }
        #expect(try world.database.query("SELECT count(*) FROM ZCAR", []) == [[.int(2)]])
    }
}

/// Hostile strings in the other places a fetch carries values: a dictionary fetch's HAVING clause
/// and expressions, long IN lists (bound as one JSON array), and names (which must name the model).
@Suite("SQL injection: dictionary fetches, long IN lists, names")
struct FetchInjectionTests {
    @Test func hostileValuesAndNames() throws {
        let stack = try TestStack()
        for value in PredicateSQLInjectionTests.hostile { stack.insert("Car", ["name": value, "year": 2000]) }
        try stack.context.save()
        let total = PredicateSQLInjectionTests.hostile.count
        for value in PredicateSQLInjectionTests.hostile {
            let request = NSFetchRequest<NSDictionary>(entityName: "Car")
            request.resultType = .dictionaryResultType
            let count = NSExpressionDescription()
            count.name = "count"
            count.expression = NSExpression(format: "count:(name)")
            request.propertiesToFetch = ["name", count]
            request.propertiesToGroupBy = ["name"]
            request.havingPredicate = NSPredicate(format: "name == %@ OR uppercase:(name) == %@", value, value)
            let rows = try stack.context.fetch(request)
            #expect(rows.map { $0["name"] as? String } == [value], "\(value)")
            let long = (0..<100).map { "\(value)\($0)" } + [value]
            let matched = try stack.fetch("Car") { $0.predicate = NSPredicate(format: "name IN %@", long) }
            #expect(matched.map { $0.value(forKey: "name") as? String } == [value], "\(value)")
            // A hostile string as a key path or column name is not a property: refused, nothing run.
            request.havingPredicate = nil
            request.propertiesToGroupBy = nil
            request.propertiesToFetch = [value]
            #expect(throws: NSError.self) { try stack.context.fetch(request) }
        }
        #expect(try stack.context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == total)
        // Hundreds of strings holding NUL (past SQLite's 500 terms of a compound SELECT).
        let nul = (0..<600).map { "x\u{0}\($0)" } + ["a\u{0}b"]
        let found = try stack.fetch("Car") { $0.predicate = NSPredicate(format: "name IN %@", nul) }
        #expect(found.map { $0.value(forKey: "name") as? String } == ["a\u{0}b"])
    }
}
