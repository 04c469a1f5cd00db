import Foundation
import Testing
@testable import CoreData

/// Runs generated predicates both ways — compiled to SQL against a real SQLite database, and
/// evaluated in memory on the same rows — and requires the same rows from both.
@Suite("SQL agrees with in-memory evaluation")
struct PredicateSQLDifferentialTests {
    /// Generates random format strings with arguments over the test model.
    struct Generator {
        var random: PredicateTestRandom

        enum Kind { case string, int, double, bool, date, uuid, data, url, decimal }

        static let carAttributes: [(String, Kind)] = [
            ("name", .string), ("year", .int), ("score", .double), ("flag", .bool), ("born", .date),
            ("uid", .uuid), ("blob", .data), ("link", .url), ("price", .decimal),
            ("owner.name", .string), ("owner.age", .int),
        ]
        static let likePatterns = ["a*", "*b", "?d?", "A*", "*", "a\\*b", "", "*ë", "z?e", "*?*", "a?b", "日*"]
        static let regexPatterns = ["a.*", "[A-Z].*", "(invalid", ".*ë", "z.e", "", ".*"]
        static let extraStrings = ["a", "A", "Zo", "e", "ë", "ad", "AB", "b", "naive", "NAÏVE", "ss", "ß", "x"]

        mutating func value(_ kind: Kind) -> Any {
            if random.chance(7) { return NSNull() }
            if random.chance(6) { return random.pick(["text", 7, 2.5, Date(timeIntervalSinceReferenceDate: 0), Data([1])] as [Any]) }
            switch kind {
            case .string: return random.chance(70) ? (random.pick(PredicateTestWorld.names) ?? "Ada") : random.pick(Self.extraStrings)
            case .int:
                return random.chance(75) ? (random.pick(PredicateTestWorld.years) ?? 3) as Any : random.pick([2.5, -0.5, 41.99, 1e19, 5, Double.nan] as [Any])
            case .double: return random.chance(70) ? (random.pick(PredicateTestWorld.scores) ?? 1) as Any : random.pick([2, 0, -1, 42, Double.nan] as [Any])
            case .bool: return random.pick([true, false, 1, 0, 2] as [Any])
            case .date: return random.pick(PredicateTestWorld.dates) ?? Date(timeIntervalSinceReferenceDate: 1)
            case .uuid: return random.pick(PredicateTestWorld.uuids) ?? UUID(uuidString: "00000000-0000-0000-0000-000000000002")!
            case .data: return random.pick(PredicateTestWorld.blobs) ?? Data([9])
            case .url: return random.pick(PredicateTestWorld.links) ?? URL(string: "https://example.com/zzz")!
            case .decimal: return random.pick(PredicateTestWorld.prices.compactMap { $0 } + [Decimal(2), Decimal(string: "1.50")!] as [Any]
                                              + [1.5, 100, 0.1] as [Any])
            }
        }

        mutating func options() -> String { random.pick(["", "", "[c]", "[d]", "[cd]"]) }

        /// One comparison on a Car, with its arguments.
        mutating func carComparison() -> (String, [Any]) {
            let (key, kind) = random.pick(Self.carAttributes)
            switch random.next() % 100 {
            case 0..<50:
                var ops = ["==", "!=", "<", "<=", ">", ">=", "=", "<>", "=<", "=>"]
                if kind == .string { ops += ["BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "==", "BEGINSWITH", "CONTAINS"] }
                let op = random.pick(ops)
                let opts = kind == .string || random.chance(10) ? options() : ""
                var argument = value(kind)
                if op == "LIKE", random.chance(80) { argument = random.pick(Self.likePatterns) }
                if op == "MATCHES", random.chance(80) { argument = random.pick(Self.regexPatterns) }
                if random.chance(15), ["==", "!=", "<", ">", "<=", ">="].contains(op) {
                    return ("%@ \(op)\(opts) \(key)", [argument])
                }
                return ("\(key) \(op)\(opts) %@", [argument])
            case 50..<60:
                let items = (0..<Int(random.next() % 4)).map { _ in value(kind) }
                return (random.chance(70) ? "\(key) IN\(kind == .string ? options() : "") %@" : "%@ CONTAINS\(options()) \(key)", [items])
            case 60..<67:
                return ("\(key) BETWEEN %@", [[value(kind), value(kind)]])
            case 67..<74:
                let other = random.pick(Self.carAttributes.filter { random.chance(60) ? $0.1 == kind : true })
                let op = random.pick(["==", "!=", "<", "<=", ">", ">=", "BEGINSWITH", "CONTAINS", "ENDSWITH", "LIKE", "IN"])
                return ("\(key) \(op)\(options()) \(other.0)", [])
            case 74..<80:
                let text = random.pick(Self.extraStrings + ["Ada", "zoë", "abcd", "a*b"])
                let op = random.pick(["IN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE"])
                return ("%@ \(op)\(options()) \(kind == .string ? key : "name")", [text])
            case 80..<86:
                let modifier = random.pick(["ANY", "ALL", "NONE", "SOME"])
                let op = random.pick(["==", "!=", "<", ">", "BEGINSWITH"])
                return ("\(modifier) \(key) \(op)\(options()) %@", [value(kind)])
            case 86..<94:
                let modifier = random.pick(["ANY", "ALL", "NONE"])
                let path = random.pick(["owner.cars.name", "owner.cars.year", "owner.clubs.title", "owner.clubs.members.name", "owner.cars.score"])
                let pathKind: Kind = path.hasSuffix("year") ? .int : (path.hasSuffix("score") ? .double : .string)
                let op = random.pick(["==", "!=", "<", ">=", "BEGINSWITH", "LIKE", "IN"])
                let argument: Any = op == "IN" ? [value(pathKind), value(pathKind)] : value(pathKind)
                if random.chance(20) { return ("\(modifier) \(path) \(op)\(options()) name", []) }
                return ("\(modifier) \(path) \(op)\(options()) %@", [argument])
            case 94..<97:
                let path = random.pick(["owner.cars.name", "owner.clubs.title"])
                return random.chance(50) ? ("\(path) CONTAINS\(options()) %@", [value(.string)]) : ("%@ IN\(options()) \(path)", [value(.string)])
            default:
                let key = random.pick(["name", "owner", "price", "born", "uid", "owner.name", "extra"])
                return ("\(key) \(random.pick(["==", "!="])) nil", [])
            }
        }

        /// One comparison on a Person (to-many relationships), with its arguments.
        mutating func personComparison() -> (String, [Any]) {
            let modifier = random.pick(["ANY", "ALL", "NONE", "ANY", "SOME"])
            let (path, kind): (String, Kind) = random.pick([
                ("cars.name", .string), ("cars.year", .int), ("cars.score", .double), ("cars.flag", .bool), ("cars.born", .date),
                ("clubs.title", .string), ("clubs.members.name", .string), ("clubs.members.age", .int),
                ("cars.owner.name", .string), ("name", .string), ("age", .int),
            ])
            if random.chance(10) { return ("cars.name CONTAINS %@", [value(.string)]) }
            if random.chance(8) { return ("\(modifier) \(path) == name", []) }
            if random.chance(8) { return ("\(modifier) \(path) > age", []) }
            let ops = kind == .string ? ["==", "!=", "<", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE"] : ["==", "!=", "<", "<=", ">", ">="]
            let op = random.pick(ops)
            var argument = value(kind)
            if op == "LIKE" { argument = random.pick(Self.likePatterns) }
            return ("\(modifier) \(path) \(op)\(kind == .string ? options() : "") %@", [argument])
        }

        /// A compound of comparisons, up to `depth` levels deep.
        mutating func predicate(depth: Int, person: Bool) -> (String, [Any]) {
            if depth == 0 || random.chance(45) {
                if random.chance(3) { return (random.pick(["TRUEPREDICATE", "FALSEPREDICATE"]), []) }
                return person ? personComparison() : carComparison()
            }
            switch random.next() % 3 {
            case 0:
                let (inner, args) = predicate(depth: depth - 1, person: person)
                return ("\(random.pick(["NOT", "!", "not"])) (\(inner))", args)
            default:
                let (a, aArgs) = predicate(depth: depth - 1, person: person)
                let (b, bArgs) = predicate(depth: depth - 1, person: person)
                let op = random.pick(["AND", "OR", "&&", "||", "and", "or"])
                return ("(\(a)) \(op) (\(b))", aArgs + bArgs)
            }
        }
    }

    /// Runs `count` predicates on `entity` and reports every disagreement.
    private func differential(world: PredicateTestWorld, entity: NSEntityDescription, seed: UInt64, count: Int, person: Bool) throws {
        var generator = Generator(random: PredicateTestRandom(seed: seed))
        var compiled = 0
        var refused: [String] = []
        for _ in 0..<count {
            let (format, args) = generator.predicate(depth: 3, person: person)
            let predicate = try NSPredicate(validatingFormat: format, argumentArray: args)
            let memory = world.memoryMatches(predicate, entity: entity)
            do {
                let (sql, fragment) = try world.sqlMatches(predicate, entity: entity)
                compiled += 1
                #expect(sql == memory, """
                    \(format) \(args)
                    SQL: \(fragment)
                    only SQL: \(sql.subtracting(memory).sorted()) only memory: \(memory.subtracting(sql).sorted())
                    """)
            } catch let error as NSError where error.code == NSPersistentStoreUnsupportedRequestTypeError {
                refused.append("\(format): \(error.localizedDescription)")
            }
        }
        // Only the transformable attribute and to-many keys without a modifier are refused.
        for message in refused {
            #expect(message.contains("extra") || message.contains("to-many key not allowed"), "\(message)")
        }
        #expect(compiled > count * 8 / 10)
    }

    @Test("Car predicates: attributes, to-one joins, to-many through to-one", arguments: [1, 2, 3] as [UInt64])
    func carPredicates(seed: UInt64) throws {
        let world = try PredicateTestWorld(seed: seed)
        try differential(world: world, entity: world.car, seed: seed * 101, count: 150, person: false)
    }

    @Test("Person predicates: ANY/ALL/NONE over one-to-many, many-to-many and nested to-many", arguments: [4, 5] as [UInt64])
    func personPredicates(seed: UInt64) throws {
        let world = try PredicateTestWorld(seed: seed)
        try differential(world: world, entity: world.person, seed: seed * 101, count: 100, person: true)
    }

    /// Hand-picked predicates on cars (also run on every store, `PredicateStoresDifferentialTests`).
    static var edgeCases: [(String, [Any])] {
        [
            ("name != 'Ada'", []), ("NOT (name == 'Ada')", []), ("NOT (year < 5)", []), ("NOT (name BEGINSWITH 'a')", []),
            ("name ==[c] 'ADA'", []), ("name ==[cd] 'zoe'", []), ("name LIKE[c] 'a*'", []), ("name LIKE 'a\\\\*b'", []),
            ("name CONTAINS ''", []), ("name BEGINSWITH ''", []), ("name LIKE ''", []), ("name == ''", []),
            ("year == %@", [Int64.max]), ("year > %@", [9.2e18]), ("year == %@", [9007199254740992.0]),
            ("year < %@", [Double(Int64.min)]), ("score == 2", []), ("score == %@", [NSNumber(value: 2)]),
            ("flag == YES", []), ("flag == TRUE", []), ("flag != NO", []), ("flag == 1", []), ("flag < 1", []),
            ("price == 1.5", []), ("price == %@", [Decimal(string: "0.1")!]), ("price > 0.1", []), ("price == 100", []),
            ("born == %@", [Date(timeIntervalSinceReferenceDate: 86_400.5)]), ("born > %@", [Date(timeIntervalSinceReferenceDate: 0)]),
            ("uid == %@", [UUID(uuidString: "F0000000-0000-0000-0000-000000000000")!]), ("uid > %@", [UUID(uuidString: "00000000-0000-0000-0000-000000000001")!]),
            ("blob == %@", [Data([1, 2, 3])]), ("blob < %@", [Data([9])]), ("link == %@", [URL(string: "https://example.com/a")!]),
            ("link == 'https://example.com/a'", []), ("name == year", []), ("name == born", []), ("year > score", []),
            ("owner == nil", []), ("owner != nil", []), ("owner.name == nil", []), ("owner.name != nil", []),
            ("owner.name ==[c] name", []), ("ALL owner.cars.name != nil", []), ("NONE owner.cars.year > 0", []),
            ("ANY owner.clubs.members.name ==[cd] 'ADA'", []), ("owner.cars.name CONTAINS[c] 'ada'", []),
            ("'ab' IN name", []), ("%@ IN name", ["b"]), ("name IN {'Ada', nil, 'zoe'}", []), ("name IN {}", []),
            ("name IN[c] {'ADA', 'ZOE'}", []), ("{'Ada', 'b'} CONTAINS name", []), ("year BETWEEN {0, 2000}", []),
            ("year BETWEEN {2000, 0}", []), ("name BETWEEN[c] {'a', 'b'}", []), ("name MATCHES '[a-z]+'", []),
            ("name MATCHES[c] 'ada'", []), ("name MATCHES '(bad'", []), ("name == 'x\\u0301'", []), ("name == %@", ["x\u{301}"]),
            ("name == %@", ["\u{E9}mile"]), ("name ==[d] 'emile'", []), ("name < 'b'", []), ("name <[c] 'b'", []),
            ("name > %@", ["😀"]), ("name ENDSWITH[c] 'S'", []), ("name ==[c] 'ss'", []), ("ANY name == 'Ada'", []),
            ("ALL name == 'Ada'", []), ("NONE name == 'Ada'", []), ("ALL year > 0", []), ("-year > 0", []), ("year + 1 > 5", []),
            // NaN equals nothing and has no order (SQLite would bind it as NULL, matching nil rows).
            ("score == %@", [Double.nan]), ("score != %@", [Double.nan]), ("%@ == score", [Double.nan]), ("%@ != score", [Double.nan]),
            ("score < %@", [Double.nan]), ("score >= %@", [Double.nan]), ("year == %@", [Double.nan]), ("year != %@", [Double.nan]),
            ("NOT (score == %@)", [Double.nan]), ("score IN %@", [[Double.nan, 2.0]]), ("score IN %@", [[Double.nan]]),
            ("score BETWEEN %@", [[Double.nan, 50.0]]), ("born == %@", [Date(timeIntervalSinceReferenceDate: .nan)]),
            ("born != %@", [Date(timeIntervalSinceReferenceDate: .nan)]), ("ANY owner.cars.score == %@", [Double.nan]),
            ("ALL owner.cars.score != %@", [Double.nan]), ("NONE owner.cars.score < %@", [Double.nan]),
            // The keys key-value coding gives values (PredicateValueKeys), computed in SQL.
            ("name.length > 3", []), ("name.length == 0", []), ("name.length == nil", []), ("name.uppercaseString == 'ADA'", []),
            ("name.lowercaseString BEGINSWITH 'z'", []), ("blob.length == 3", []), ("blob.length < 2", []),
            ("born.timeIntervalSinceReferenceDate > 0", []), ("born.timeIntervalSinceReferenceDate == nil", []),
            ("born.timeIntervalSince1970 > 978307200", []), ("owner.name.length >= 3", []), ("ANY owner.cars.name.length == 3", []),
        ]
    }

    @Test("Hand-picked edge cases agree")
    func edgeCases() throws {
        let world = try PredicateTestWorld(seed: 11)
        for (format, args) in Self.edgeCases {
            let predicate = try NSPredicate(validatingFormat: format, argumentArray: args)
            let memory = world.memoryMatches(predicate, entity: world.car)
            do {
                let (sql, fragment) = try world.sqlMatches(predicate, entity: world.car)
                #expect(sql == memory, "\(format) \(args) — SQL: \(fragment); only SQL \(sql.subtracting(memory).sorted()), only memory \(memory.subtracting(sql).sorted())")
            } catch {
                Issue.record("\(format) was refused: \(error)")
            }
        }
    }

    @Test("Collection operators, SUBQUERY and functions agree, on people and on cars")
    func aggregatesAndFunctions() throws {
        let world = try PredicateTestWorld(seed: 13, people: 20, cars: 80)
        let people: [(String, [Any])] = [
            ("cars.@count > 2", []), ("cars.@count == 0", []), ("clubs.@count >= 1", []), ("cars.@count > clubs.@count", []),
            ("cars.@sum.year > 4000", []), ("cars.@sum.year == 0", []), ("cars.@avg.score > 1", []), ("cars.@avg.score == nil", []),
            ("cars.@min.year < 0", []), ("cars.@max.year >= 2024", []), ("cars.@max.name == 'b'", []), ("cars.@min.born < %@", [Date(timeIntervalSinceReferenceDate: 1)]),
            ("cars.@max.score > age", []), ("clubs.@count >= 1 AND cars.@count >= 1", []),
            ("SUBQUERY(cars, $c, $c.year > 1999).@count > 0", []), ("SUBQUERY(cars, $c, $c.name BEGINSWITH[c] 'a').@count == 0", []),
            ("SUBQUERY(cars, $c, $c.year > age).@count >= 1", []), ("SUBQUERY(cars, $c, $c.owner.name == name AND $c.flag == YES).@count > 0", []),
            ("SUBQUERY(clubs, $k, ANY $k.members.age > 30).@count > 0", []), ("SUBQUERY(cars, $c, $c.score > %@).@count == cars.@count", [0.0]),
            ("sum:(cars.year) > 2000", []), ("count:(cars) > 1", []), ("max:(cars.score) > 2", []), ("average:(cars.year) > 100", []),
            ("age * 2 > 40", []), ("age * 9223372036854775807 > 1", []), ("age + 9223372036854775807 < 0", []), ("age + 1 == 43", []), ("age - age == 0", []), ("age / 2 > 10", []), ("FUNCTION(age, 'modulus:by:', 2) == 0", []),
            ("abs:(age - 50) < 10", []), ("uppercase:(name) == 'ADA'", []), ("lowercase:(name) BEGINSWITH 'z'", []), ("length:(name) > 3", []),
            ("sqrt:(age) > 3", []), ("floor:(age / 3) >= 3", []), ("FUNCTION(age, 'bitwiseAnd:with:', 1) == 1", []),
            ("cars[SIZE] > 2", []), ("clubs[size] == 0", []), ("{1, 2, 3}[SIZE] == FUNCTION(age, 'modulus:by:', 4)", []),
        ]
        let cars: [(String, [Any])] = [
            ("year + 1 > 5", []), ("-year > 0", []), ("year * 2 == 4000", []), ("score * 2 > year", []), ("year / 0 > 1", []),
            ("owner.cars.@count > 3", []), ("owner.age + year > 2030", []), ("abs:(score) > 1", []), ("ceiling:(score) == 1", []),
            ("trunc:(score) == 0", []), ("uppercase:(owner.name) == 'ADA'", []), ("length:(name) == 0", []),
            ("TERNARY(year > 2000, score, 0) > 1", []), ("TERNARY(flag == YES, name, owner.name) BEGINSWITH[cd] 'a'", []),
            ("TERNARY(score == nil, -1, year) < 0", []), ("TERNARY(born > %@, born, nil) != nil", [Date(timeIntervalSinceReferenceDate: 0)]),
            ("TERNARY(name == nil, 'none', name) == 'none'", []), ("TERNARY(year > 2000, 1, 2.5) == 2.5", []),
            ("CAST(0, 'NSDate') < born", []), ("born < now()", []), ("born < FUNCTION(now(), 'castObject:toType:', 'NSDate')", []),
            ("CAST('1999', 'NSNumber') == year", []), ("FUNCTION(name, 'uppercase:') == 'ADA'", []), ("{5, 1999, 0}[LAST] == year", []),
            ("{5, 1999, 0}[FIRST] == year", []), ("{5, 1999, 0}[1] == year", []),
            // A computed NaN is nil, in memory as in SQL (SQLite turns NaN into NULL).
            ("sqrt:(score) == nil", []), ("ln:(score) != nil", []), ("score / 0 == nil", []), ("score - score == nil", []),
            ("TERNARY(year > 2000, %@, score) == nil", [Double.nan]), ("TERNARY(year > 2000, 1, %@) != nil", [Double.nan]),
            ("FUNCTION(score, 'add:to:', %@) == nil", [Double.nan]), ("CAST('nan', 'NSNumber') == nil", []),
        ]
        for (entity, cases) in [(world.person, people), (world.car, cars)] {
            for (format, args) in cases {
                let predicate = try NSPredicate(validatingFormat: format, argumentArray: args)
                let memory = world.memoryMatches(predicate, entity: entity)
                do {
                    let (sql, fragment) = try world.sqlMatches(predicate, entity: entity)
                    #expect(sql == memory, "\(format) — SQL: \(fragment); only SQL \(sql.subtracting(memory).sorted()), only memory \(memory.subtracting(sql).sorted())")
                    #expect(!sql.isEmpty || !memory.isEmpty || format.contains("== 0") || format.contains("/ 0"), "\(format) matched nothing: a weak case")
                } catch {
                    Issue.record("\(format) was refused: \(error)")
                }
            }
        }
    }

    @Test("What a fetch cannot compute is refused with 134091, not answered wrongly")
    func refusedAggregates() throws {
        let world = try PredicateTestWorld(seed: 13)
        for format in ["cars.@sum.name > 1", "cars.@avg.born > 1", "cars.@count.year > 1", "SUBQUERY(cars, $c, $c.year > 1).@sum > 1",
                       "uppercase:(age) == 'A'", "age + name > 0", "cars.@sum.owner.cars.year > 1"] {
            let predicate = try NSPredicate(validatingFormat: format)
            #expect(throws: NSError.self, "\(format)") { _ = try world.sqlMatches(predicate, entity: world.person) }
        }
    }
}
