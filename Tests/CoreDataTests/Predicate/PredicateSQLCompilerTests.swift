import Foundation
import Testing
@testable import CoreData

/// The shape of compiled SQL, what it binds, and what it refuses.
@Suite("Predicate SQL compiler")
struct PredicateSQLCompilerTests {
    private func compile(_ format: String, _ args: [Any] = [], entity: NSEntityDescription,
                         variables: [String: Any] = [:]) throws -> (SQLFragment, [String]) {
        var compiler = PredicateSQLCompiler(entity: entity, variables: variables)
        let fragment = try compiler.compile(try NSPredicate(validatingFormat: format, argumentArray: args).predicateTree())
        return (fragment, compiler.joins)
    }

    @Test("Columns, joins for to-one key paths, one join per relationship")
    func joins() throws {
        let world = try PredicateTestWorld(seed: 1, people: 2, cars: 2, clubs: 1)
        let (simple, none) = try compile("name == 'x'", entity: world.car)
        #expect(simple.sql == "(t0.\"ZNAME\" IS ?)")
        #expect(none.isEmpty)
        let (joined, joins) = try compile("owner.name == 'x' AND owner.age > 3", entity: world.car)
        #expect(joins == ["LEFT JOIN \"ZPERSON\" t1 ON t1.Z_PK = t0.\"ZOWNER\""])
        #expect(joined.sql == "((t1.\"ZNAME\" IS ?) AND (t1.\"ZAGE\" IS NOT NULL AND t1.\"ZAGE\" > ?))")
        let (nullTest, _) = try compile("owner == nil", entity: world.car)
        #expect(nullTest.sql == "(t0.\"ZOWNER\" IS NULL)")
    }

    /// `format`'s predicate compiled in the PostgreSQL dialect.
    private static func postgreSQL(_ format: String, entity: NSEntityDescription) throws -> String {
        var compiler = PredicateSQLCompiler(entity: entity, dialect: .postgreSQL)
        return try compiler.compile(try NSPredicate(validatingFormat: format, argumentArray: []).predicateTree()).sql
    }

    @Test("PostgreSQL: placeholders numbered in order, those inside quoted names and literals left alone")
    func numberedParameters() {
        let number = PredicateSQLCompiler.Dialect.numberedParameters
        #expect(number("SELECT ? WHERE a = ? AND b IN (?, ?)") == "SELECT $1 WHERE a = $2 AND b IN ($3, $4)")
        #expect(number("t0.\"Z?\" = ? AND x = 'it''s ?' AND y = ?") == "t0.\"Z?\" = $1 AND x = 'it''s ?' AND y = $2")
        // Non-ASCII text around them (a quote followed by a combining mark is still a quote).
        #expect(number("\"Zé\u{301}\"\u{301} = ? AND 'ü?' = ?") == "\"Zé\u{301}\"\u{301} = $1 AND 'ü?' = $2")
        #expect(number(String(repeating: "?,", count: 12)).hasSuffix("$11,$12,"))
        #expect(number("") == "")
    }

    @Test("PostgreSQL: equality with a value is `=` an index serves (not IS NOT DISTINCT FROM), never NULL")
    func postgreSQLEqualityUsesIndexes() throws {
        let world = try PredicateTestWorld(seed: 1, people: 2, cars: 2, clubs: 1)
        func sql(_ format: String) throws -> String { try Self.postgreSQL(format, entity: world.car) }
        #expect(try sql("name == 'x'") == "(t0.\"ZNAME\" IS NOT NULL AND t0.\"ZNAME\" = ?)")
        #expect(try sql("name != 'x'") == "(NOT (t0.\"ZNAME\" IS NOT NULL AND t0.\"ZNAME\" = ?))")
        #expect(try sql("name == nil") == "(t0.\"ZNAME\" IS NULL)")
    }

    @Test("PostgreSQL: a [c]/[d] string operator folds its column once (the NULL tests read it unfolded)")
    func postgreSQLFoldsAColumnOnce() throws {
        let world = try PredicateTestWorld(seed: 1, people: 2, cars: 2, clubs: 1)
        func sql(_ format: String) throws -> String { try Self.postgreSQL(format, entity: world.car) }
        for format in ["name BEGINSWITH[cd] 'x'", "name ENDSWITH[c] 'x'", "name CONTAINS[d] 'x'", "name LIKE[cd] 'x*'", "'x' IN[c] name"] {
            let compiled = try sql(format)
            #expect(compiled.components(separatedBy: "cd_fold_v1(").count - 1 == 1, "\(format): \(compiled)")
            #expect(compiled.contains("t0.\"ZNAME\" IS NOT NULL"), "\(format): \(compiled)")
        }
    }

    @Test("Values are bound in Core Data's column encoding")
    func bindings() throws {
        let world = try PredicateTestWorld(seed: 1, people: 2, cars: 2, clubs: 1)
        let date = Date(timeIntervalSinceReferenceDate: 1234.5)
        let uuid = UUID(uuidString: "12345678-9ABC-DEF0-1234-56789ABCDEF0")!
        let cases: [(String, Any, StoreValue)] = [
            ("year == %@", 5, .int(5)), ("year == %@", true, .int(1)), ("score == %@", 2.5, .double(2.5)),
            ("flag == %@", NSNumber(value: true), .int(1)), ("name == %@", "x", .string("x")),
            ("name ==[c] %@", "ÀB", .string("àb")), ("name ==[cd] %@", "ÀB", .string("ab")),
            ("born == %@", date, .double(1234.5)), ("uid == %@", uuid, .data(withUnsafeBytes(of: uuid.uuid) { Data($0) })),
            ("blob == %@", Data([1]), .data(Data([1]))), ("link == %@", URL(string: "https://a.b/c?d")!, .string("https://a.b/c?d")),
            ("price == %@", Decimal(string: "1.25")!, .double(1.25)),
        ]
        for (format, argument, expected) in cases {
            let (fragment, _) = try compile(format, [argument], entity: world.car)
            #expect(fragment.bindings == [expected], "\(format)")
            #expect(fragment.sql.filter { $0 == "?" }.count == fragment.bindings.count)
        }
    }

    @Test("NULL-safe forms: every condition is 0 or 1")
    func nullSafety() throws {
        let world = try PredicateTestWorld(seed: 1, people: 2, cars: 2, clubs: 1)
        #expect(try compile("name != 'x'", entity: world.car).0.sql == "(NOT (t0.\"ZNAME\" IS ?))")
        #expect(try compile("year < 3", entity: world.car).0.sql == "(t0.\"ZYEAR\" IS NOT NULL AND t0.\"ZYEAR\" < ?)")
        #expect(try compile("name BEGINSWITH[c] 'a'", entity: world.car).0.sql == "cd_strop(1, t0.\"ZNAME\", ?, 1)")
        #expect(try compile("name IN {'a', nil}", entity: world.car).0.sql == "((t0.\"ZNAME\" IS NULL) OR (t0.\"ZNAME\" IS NOT NULL AND t0.\"ZNAME\" IN (?)))")
        // Constant folding: mismatched kinds and constants.
        #expect(try compile("year == 'five'", entity: world.car).0.sql == "0")
        #expect(try compile("year != 'five'", entity: world.car).0.sql == "1")
        #expect(try compile("blob < %@", [Data()], entity: world.car).0.sql == "0")
        #expect(try compile("1 == 1 AND name == 'x'", entity: world.car).0.sql == "(t0.\"ZNAME\" IS ?)")
        #expect(try compile("TRUEPREDICATE", entity: world.car).0.sql == "1")
        #expect(try compile("name IN {}", entity: world.car).0.sql == "0")
    }

    @Test("To-many key paths compile to EXISTS subqueries")
    func toMany() throws {
        let world = try PredicateTestWorld(seed: 1, people: 2, cars: 2, clubs: 1)
        let (any, _) = try compile("ANY cars.name == 'x'", entity: world.person)
        #expect(any.sql == "EXISTS (SELECT 1 FROM \"ZCAR\" t1 WHERE t1.\"ZOWNER\" = t0.Z_PK AND (t1.\"ZNAME\" IS ?))")
        let (all, _) = try compile("ALL cars.year > 3", entity: world.person)
        #expect(all.sql == "(NOT EXISTS (SELECT 1 FROM \"ZCAR\" t1 WHERE t1.\"ZOWNER\" = t0.Z_PK AND (NOT (t1.\"ZYEAR\" IS NOT NULL AND t1.\"ZYEAR\" > ?))))")
        let clubs = (world.person.propertiesByName["clubs"] as! NSRelationshipDescription).joinTable!
        let (many, _) = try compile("NONE clubs.title == 'x'", entity: world.person)
        #expect(many.sql == "(NOT EXISTS (SELECT 1 FROM \"\(clubs.name)\" t2 JOIN \"ZCLUB\" t1 ON t1.Z_PK = t2.\"\(clubs.destinationColumn)\" WHERE t2.\"\(clubs.sourceColumn)\" = t0.Z_PK AND (t1.\"ZTITLE\" IS ?)))")
    }

    @Test("Object comparisons use primary keys; temporary IDs match nothing")
    func objects() throws {
        let world = try PredicateTestWorld(seed: 1, people: 2, cars: 2, clubs: 1)
        let unsaved = NSManagedObject(entity: world.person, insertInto: nil)
        #expect(unsaved.objectID.primaryKey == nil)
        #expect(try compile("owner == %@", [unsaved], entity: world.car).0.sql == "0")
        #expect(try compile("owner != %@", [unsaved.objectID], entity: world.car).0.sql == "1")
        #expect(try compile("owner IN %@", [[unsaved]], entity: world.car).0.sql == "0")
        #expect(try compile("SELF == %@", [unsaved], entity: world.person).0.sql == "0")
        let otherEntity = NSManagedObject(entity: world.club, insertInto: nil)
        #expect(try compile("owner == %@", [otherEntity], entity: world.car).0.sql == "0")
        #expect(try compile("ANY cars == %@", [NSManagedObject(entity: world.car, insertInto: nil)], entity: world.person).0.sql == "0")
    }

    @Test("Variables are bound from the compiler's substitution variables")
    func variables() throws {
        let world = try PredicateTestWorld(seed: 1, people: 2, cars: 2, clubs: 1)
        let (fragment, _) = try compile("name == $NAME", entity: world.car, variables: ["NAME": "Ada"])
        #expect(fragment.bindings == [.string("Ada")])
        #expect(throws: NSError.self) { try compile("name == $NAME", entity: world.car) }
        let substituted = NSPredicate(format: "name == $NAME").withSubstitutionVariables(["NAME": "Grace"])
        var compiler = PredicateSQLCompiler(entity: world.car)
        #expect(try compiler.compile(try substituted.predicateTree()).bindings == [.string("Grace")])
    }

    @Test("What cannot be compiled exactly is refused with a clear error", arguments: [
        ("cars.name == 'x'", "to-many key not allowed here"), ("extra == 'x'", "Car.extra"), ("missing == 1", "keypath missing not found in entity Car"),
        ("name.first == 1", "continues past the attribute"), ("SUBQUERY(owner.cars, $c, $c.year > 1).@sum > 0", "only SUBQUERY(…).@count"),
        ("born + 1 > 2", "needs number values"), ("owner.cars.@count.name > 1", "nothing may follow @count"), ("cars.@sum.name > 1", "needs a number attribute"),
        ("cars[FIRST].year > 1", "only [SIZE] of a to-many relationship"), ("TERNARY(year > 1, name, year) == 1", "of different kinds"),
    ])
    func refused(format: String, message: String) throws {
        let world = try PredicateTestWorld(seed: 1, people: 2, cars: 2, clubs: 1)
        let entity = format.hasPrefix("cars") ? world.person : world.car
        do {
            _ = try compile(format, entity: entity)
            Issue.record("\(format) compiled")
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == NSPersistentStoreUnsupportedRequestTypeError)
            #expect(error.localizedDescription.contains("unimplemented SQL generation for predicate"), "\(error.localizedDescription)")
            #expect(error.localizedDescription.contains(message), "\(error.localizedDescription)")
        }
    }

    @Test("Block predicates and malformed formats reach the fetch as errors")
    func unusablePredicates() throws {
        #expect(throws: NSError.self) { try PredicateBridge.tree(of: NSPredicate { _, _ in true }) }
        do {
            _ = try PredicateBridge.tree(of: NSPredicate(format: "name == 'x"))
            Issue.record("parsed")
        } catch let error as NSError {
            #expect(error.code == 2048)
        }
        let compound = NSCompoundPredicate(andPredicateWithSubpredicates: [NSPredicate(format: "a == 1"), NSPredicate { _, _ in true }])
        #expect(throws: NSError.self) { try PredicateBridge.tree(of: compound) }
    }
}
