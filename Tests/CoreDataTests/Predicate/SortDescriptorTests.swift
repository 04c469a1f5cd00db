import Foundation
import Testing
@testable import CoreData

/// `NSSortDescriptor(key:…)`, sort key extraction, and `ORDER BY` agreeing with the in-memory order.
@Suite("Sort descriptors")
struct SortDescriptorTests {
    @Test("key, ascending, selector and reversal")
    func properties() throws {
        let byName = NSSortDescriptor(key: "owner.name", ascending: true)
        #expect(byName.key == "owner.name")
        #expect(byName.ascending)
        let key = try byName.sortKey()
        #expect(key.path == ["owner", "name"])
        #expect(key.keyPath == "owner.name")
        #expect(key.comparison == .compare)

        let insensitive = NSSortDescriptor(key: "name", ascending: false, selector: "caseInsensitiveCompare:")
        #expect(try insensitive.sortKey().comparison == .caseInsensitiveCompare)
        #expect(!insensitive.ascending)
        let reversed = insensitive.reversedSortDescriptor as! NSSortDescriptor
        #expect(reversed.key == "name")
        #expect(reversed.ascending)
        #expect(try reversed.sortKey().comparison == .caseInsensitiveCompare)

        #expect(NSSortDescriptor(key: nil, ascending: true).key == nil)
        #expect(try NSSortDescriptor(key: "x", ascending: true, selector: "localizedStandardCompare:").sortKey().comparison == .localizedStandardCompare)
        #expect(try NSSortDescriptor(key: "x", ascending: true, selector: "weird:").sortKey().comparison == .unknownSelector("weird:"))

        struct Thing { var n: Int }
        let swiftKeyPath = NSSortDescriptor(keyPath: \Thing.n, ascending: true)
        #expect(swiftKeyPath.key == nil)
        #expect(throws: NSError.self) { try swiftKeyPath.sortKey() }
        #expect(try PredicateBridge.sortKeys(of: [byName, insensitive]).count == 2)
    }

    @Test("compare(_:to:) on dictionaries: nil first, direction, selectors, comparators")
    func compare() {
        let a: [String: Any] = ["name": "apple", "n": 2]
        let b: [String: Any] = ["name": "Banana", "n": 10]
        let none: [String: Any] = [:]
        let byName = NSSortDescriptor(key: "name", ascending: true)
        #expect(byName.compare(b, to: a) == .orderedAscending) // "B" < "a" by bytes
        #expect(NSSortDescriptor(key: "name", ascending: true, selector: "caseInsensitiveCompare:").compare(a, to: b) == .orderedAscending)
        #expect(byName.compare(none, to: a) == .orderedAscending)
        #expect(NSSortDescriptor(key: "name", ascending: false).compare(none, to: a) == .orderedDescending)
        #expect(NSSortDescriptor(key: "n", ascending: true).compare(a, to: b) == .orderedAscending)
        #expect(NSSortDescriptor(key: "n", ascending: false).compare(a, to: b) == .orderedDescending)
        let byLength = NSSortDescriptor(key: "name", ascending: true) { x, y in
            let (l, r) = ((x as! String).count, (y as! String).count)
            return l < r ? .orderedAscending : (l > r ? .orderedDescending : .orderedSame)
        }
        #expect(byLength.compare(a, to: b) == .orderedAscending)
        let rows = [b, none, a]
        let sorted = rows.sorted { byName.compare($0, to: $1) == .orderedAscending }
        #expect(sorted.map { $0["name"] as? String } == [nil, "Banana", "apple"])
    }

    @Test("ORDER BY gives the in-memory order", arguments: [
        ("name", "compare:"), ("name", "caseInsensitiveCompare:"), ("name", "localizedCompare:"),
        ("name", "localizedCaseInsensitiveCompare:"), ("name", "localizedStandardCompare:"),
        ("year", "compare:"), ("score", "compare:"), ("flag", "compare:"), ("born", "compare:"), ("uid", "compare:"),
        ("blob", "compare:"), ("link", "compare:"), ("link", "caseInsensitiveCompare:"), ("price", "compare:"),
        ("owner.name", "compare:"), ("owner.age", "compare:"), ("owner.name", "caseInsensitiveCompare:"),
    ])
    func orderBy(key: String, selector: String) throws {
        let world = try PredicateTestWorld(seed: 21, cars: 80)
        for ascending in [true, false] {
            let descriptor = NSSortDescriptor(key: key, ascending: ascending, selector: selector)
            let sortKey = try descriptor.sortKey()
            var compiler = PredicateSQLCompiler(entity: world.car)
            let term = try compiler.orderBy(sortKey)
            #expect(term.bindings.isEmpty)
            let sql = "SELECT t0.Z_PK FROM ZCAR t0 \(compiler.joins.joined(separator: " ")) ORDER BY \(term.sql), t0.Z_PK"
            let fromSQL = try world.database.query(sql, []).map { $0[0].int! }
            let inMemory = world.cars.enumerated().sorted { x, y in
                switch descriptor.compare(x.element, to: y.element) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: return x.element.pk < y.element.pk
                }
            }.map(\.element.pk)
            #expect(fromSQL == inMemory, "\(key) \(selector) ascending \(ascending): \(term.sql)")
        }
    }

    @Test("Stores refuse what they cannot order by")
    func refused() throws {
        let world = try PredicateTestWorld(seed: 1, people: 2, cars: 2, clubs: 1)
        var compiler = PredicateSQLCompiler(entity: world.person)
        let comparator = NSSortDescriptor(key: "name", ascending: true) { _, _ in .orderedSame }
        for descriptor in [comparator, NSSortDescriptor(key: "cars.name", ascending: true), NSSortDescriptor(key: "missing", ascending: true),
                           NSSortDescriptor(key: "name", ascending: true, selector: "weird:"), NSSortDescriptor(key: nil, ascending: true)] {
            #expect(throws: NSError.self, "\(descriptor)") { try compiler.orderBy(try descriptor.sortKey()) }
        }
        var carCompiler = PredicateSQLCompiler(entity: world.car)
        #expect(throws: NSError.self) { try carCompiler.orderBy(SortKey(path: ["owner"], ascending: true)) }
        #expect(throws: NSError.self) { try carCompiler.orderBy(SortKey(path: ["extra"], ascending: true)) }
        let term = try carCompiler.orderBy(SortKey(path: ["owner", "name"], ascending: false))
        #expect(term.sql == "t1.\"ZNAME\" DESC")
        #expect(carCompiler.joins == ["LEFT JOIN \"ZPERSON\" t1 ON t1.Z_PK = t0.\"ZOWNER\""])
    }

    @Test("Bridges for the context and the in-memory store")
    func bridges() throws {
        let keys = [SortKey(path: ["age"], ascending: false), SortKey(path: ["name"], ascending: true)]
        let a: [String: Any] = ["name": "a", "age": 3]
        let b: [String: Any] = ["name": "b", "age": 3]
        let c: [String: Any] = ["name": "c", "age": 5]
        #expect(InMemoryEvaluation.orderedBefore(c, a, keys: keys, tieBreak: false))
        #expect(InMemoryEvaluation.orderedBefore(a, b, keys: keys, tieBreak: false))
        #expect(InMemoryEvaluation.orderedBefore(a, a, keys: keys, tieBreak: true))
        #expect(!InMemoryEvaluation.orderedBefore(a, a, keys: keys, tieBreak: false))
        let tree = try PredicateBridge.tree(of: NSPredicate(format: "age > 4"))
        #expect(try InMemoryEvaluation.matches(tree, record: c))
        #expect(!(try InMemoryEvaluation.matches(tree, record: a)))
    }

    @Test("A store orders by a string's length and case-mapped value as memory does", arguments: ["SQLite", "in-memory", "PostgreSQL"])
    func orderingByAStringKey(_ kind: String) throws {
        if kind == "PostgreSQL" && PostgreSQLTestDatabase.server == nil { return }
        let stack = kind == "in-memory" ? try TestStack(inMemory: true)
            : try TestStack(database: kind == "PostgreSQL" ? try PostgreSQLTestDatabase() : nil)
        for name in ["ccc", "a", "bb"] { stack.insert("Car", ["name": name]) }
        try stack.context.save()
        for (key, ascending, expected) in [("name.length", true, ["a", "bb", "ccc"]), ("name.length", false, ["ccc", "bb", "a"]),
                                            ("name.uppercaseString", true, ["a", "bb", "ccc"])] {
            let context = stack.newContext()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            request.sortDescriptors = [NSSortDescriptor(key: key, ascending: ascending)]
            #expect(try context.fetch(request).map { $0.value(forKey: "name") as? String } == expected, "\(key) \(ascending)")
            let names = NSFetchRequest<NSDictionary>(entityName: "Car")
            names.resultType = .dictionaryResultType
            names.propertiesToFetch = ["name"]
            names.sortDescriptors = request.sortDescriptors
            #expect(try context.fetch(names).map { $0["name"] as? String } == expected, "\(key) \(ascending), dictionaries")
        }
    }
}
