import Foundation
import Testing
@testable import CoreData

/// The parser: every construct, precedence, keywords in any case, format arguments of every
/// kind, and errors (never traps) that name the position.
@Suite("Predicate format parser")
struct PredicateParserTests {
    private func parse(_ format: String, _ args: [Any?] = []) throws -> PredicateNode {
        try PredicateParser.parse(format, arguments: args)
    }

    private func comparison(_ format: String, _ args: [Any?] = []) throws -> ComparisonNode {
        guard case .comparison(let comparison) = try parse(format, args) else {
            Issue.record("\(format) is not a comparison")
            return ComparisonNode(lhs: .evaluatedObject, op: .equalTo, rhs: .evaluatedObject)
        }
        return comparison
    }

    @Test("Comparison operators and their spellings", arguments: [
        ("=", ComparisonOperator.equalTo), ("==", .equalTo), ("!=", .notEqualTo), ("<>", .notEqualTo),
        ("<", .lessThan), ("<=", .lessThanOrEqualTo), ("=<", .lessThanOrEqualTo), (">", .greaterThan),
        (">=", .greaterThanOrEqualTo), ("=>", .greaterThanOrEqualTo), ("BEGINSWITH", .beginsWith),
        ("endswith", .endsWith), ("Contains", .contains), ("LIKE", .like), ("matches", .matches), ("in", .in),
    ])
    func operators(spelling: String, op: ComparisonOperator) throws {
        let node = try comparison("name \(spelling) 'x'")
        #expect(node.op == op)
        guard case .keyPath(["name"]) = node.lhs, case .constant(.string("x")) = node.rhs else {
            Issue.record("unexpected operands \(node)")
            return
        }
    }

    @Test("Options [c] [d] [cd] [n] on any operator")
    func options() throws {
        #expect(try comparison("name BEGINSWITH[c] 'x'").options == [.caseInsensitive])
        #expect(try comparison("name ==[d] 'x'").options == [.diacriticInsensitive])
        #expect(try comparison("name LIKE[cd] 'x'").options == [.caseInsensitive, .diacriticInsensitive])
        #expect(try comparison("name contains[CD] 'x'").options == [.caseInsensitive, .diacriticInsensitive])
        #expect(try comparison("name IN[n] {'x'}").options == [.normalized])
        #expect(throws: NSError.self) { try parse("name ==[q] 'x'") }
    }

    @Test("BETWEEN takes an aggregate")
    func between() throws {
        let node = try comparison("age BETWEEN {18, 65}")
        #expect(node.op == .between)
        guard case .constant(.collection(let bounds)) = node.rhs, bounds.count == 2,
              case .int(18) = bounds[0], case .int(65) = bounds[1] else {
            Issue.record("bounds \(node.rhs)")
            return
        }
        let withKeys = try comparison("age BETWEEN {minimum, 65}")
        guard case .aggregate(let items) = withKeys.rhs, items.count == 2 else {
            Issue.record("aggregate \(withKeys.rhs)")
            return
        }
    }

    @Test("Precedence: NOT binds tighter than AND, AND tighter than OR")
    func precedence() throws {
        #expect(try parse("a == 1 OR b == 2 AND c == 3").description == "a == 1 OR (b == 2 AND c == 3)")
        #expect(try parse("a == 1 AND b == 2 OR c == 3").description == "(a == 1 AND b == 2) OR c == 3")
        #expect(try parse("NOT a == 1 AND b == 2").description == "NOT a == 1 AND b == 2")
        #expect(try parse("(a == 1 OR b == 2) AND c == 3").description == "(a == 1 OR b == 2) AND c == 3")
        #expect(try parse("!(a == 1 || b == 2) && c == 3").description == "NOT (a == 1 OR b == 2) AND c == 3")
        #expect(try parse("a == 1 OR b == 2 OR c == 3").description == "a == 1 OR b == 2 OR c == 3")
        #expect(try parse("NOT NOT a == 1").description == "NOT NOT a == 1")
        #expect(try parse("((a == 1))").description == "a == 1")
    }

    @Test("Keywords are case-insensitive")
    func keywordCase() throws {
        let node = try parse("name beginswith[C] 'a' and NoT age BeTwEeN {1, 2} oR TruePredicate || falsepredicate")
        #expect(node.description == "(name BEGINSWITH[c] \"a\" AND NOT age BETWEEN {1, 2}) OR TRUEPREDICATE OR FALSEPREDICATE")
        #expect(try parse("any cars.name == 'x'").description == "ANY cars.name == \"x\"")
        #expect(try parse("some cars.name == 'x'").description == "ANY cars.name == \"x\"")
        #expect(try parse("All cars.name == 'x'").description == "ALL cars.name == \"x\"")
        #expect(try parse("none cars.name == 'x'").description == "NONE cars.name == \"x\"")
    }

    @Test("Literals: nil, booleans, SELF, numbers, strings")
    func literals() throws {
        func rhs(_ literal: String) throws -> PredicateValue? {
            if case .constant(let value) = try comparison("x == \(literal)").rhs { return value }
            return nil
        }
        for word in ["nil", "NIL", "null", "NULL"] { #expect(try rhs(word)?.isNull == true) }
        for word in ["TRUE", "true", "YES", "yes"] { if case .int(1)? = try rhs(word) {} else { Issue.record("\(word)") } }
        for word in ["FALSE", "false", "NO", "no"] { if case .int(0)? = try rhs(word) {} else { Issue.record("\(word)") } }
        let numbers: [(String, PredicateValue)] = [
            ("42", .int(42)), ("-7", .int(-7)), ("3.25", .double(3.25)), ("-0.5", .double(-0.5)), ("0x1F", .int(31)),
            ("0XfF", .int(255)), ("0o17", .int(15)), ("0b101", .int(5)), ("1e3", .double(1000)), ("2.5E-1", .double(0.25)),
            ("9223372036854775807", .int(Int64.max)), ("- 3", .int(-3)), ("--3", .int(3)),
        ]
        for (text, expected) in numbers {
            let value = try rhs(text)
            #expect(value.map { PredicateValue.equal($0, expected) } == true, "\(text) → \(String(describing: value))")
            if case .int = expected, case .double? = value { Issue.record("\(text) should be an integer") }
        }
        if case .string("it's") = try rhs("'it\\'s'") {} else { Issue.record("escaped quote") }
        if case .string("say \"hi\"") = try rhs("\"say \\\"hi\\\"\"") {} else { Issue.record("double quotes") }
        if case .string("a\nb\tc\\d") = try rhs("'a\\nb\\tc\\\\d'") {} else { Issue.record("escapes") }
        if case .string("é") = try rhs("'\\u00e9'") {} else { Issue.record("unicode escape") }
        if case .string("%@ and %K and $x") = try rhs("'%@ and %K and $x'") {} else { Issue.record("quoted specifiers stay literal") }
        if case .evaluatedObject = try comparison("SELF == 'x'").lhs {} else { Issue.record("SELF") }
        if case .keyPath(["name"]) = try comparison("self.name == 'x'").lhs {} else { Issue.record("SELF.name") }
    }

    @Test("Key paths, escaped keywords, variables")
    func keyPaths() throws {
        if case .keyPath(["owner", "address", "city"]) = try comparison("owner.address.city == 'x'").lhs {} else { Issue.record("dotted") }
        if case .keyPath(["in"]) = try comparison("#in == 1").lhs {} else { Issue.record("#in") }
        if case .keyPath(["owner", "size"]) = try comparison("owner.size == 1").lhs {} else { Issue.record("size after a dot") }
        if case .variable("NAME") = try comparison("name == $NAME").rhs {} else { Issue.record("variable") }
        if case .keyPathFrom(.variable("car"), ["name"]) = try comparison("$car.name == 'x'").lhs {} else { Issue.record("variable key path") }
        if case .keyPath(["cars", "@count"]) = try comparison("cars.@count > 1").lhs {} else { Issue.record("@count") }
        #expect(throws: NSError.self) { try parse("AND == 1") }
        #expect(throws: NSError.self) { try parse("owner. == 1") }
    }

    @Test("Arithmetic and functions parse into function expressions")
    func arithmetic() throws {
        #expect(try parse("age + 1 > 5 * 2").description == "(age + 1) > (5 * 2)")
        #expect(try parse("(age + 1) * 2 == 10").description == "((age + 1) * 2) == 10")
        #expect(try parse("a - b - c == 0").description == "(a - b - c) == 0")
        #expect(try parse("a - (b - c) == 0").description == "(a - (b - c)) == 0")
        #expect(try parse("a * b / c + d - e * f == 0").description == "((a * b / c) + d - (e * f)) == 0")
        #expect(try parse("2 ** 3 ** 2 == x").description == "(2 ** (3 ** 2)) == x")
        #expect(try parse("-age < 0").description == "-age < 0")
        #expect(try parse("born < now()").description.contains("now"))
        #expect(try parse("SUBQUERY(cars, $c, $c.year > 2000).@count > 0").description == "SUBQUERY(cars, $c, $c.year > 2000).@count > 0")
        #expect(PredicateEvaluator.evaluate(try parse("age + 1 > 5 * 2"), object: ["age": 10]))
        #expect(!PredicateEvaluator.evaluate(try parse("age + 1 > 5 * 2"), object: ["age": 9]))
    }

    @Test("Format arguments of every kind")
    func formatArguments() throws {
        func constant(_ format: String, _ args: [Any?]) throws -> PredicateValue? {
            if case .constant(let value) = try comparison(format, args).rhs { return value }
            return nil
        }
        let date = Date(timeIntervalSinceReferenceDate: 12345)
        let uuid = UUID()
        let url = URL(string: "https://example.com")!
        let cases: [(String, Any?, PredicateValue)] = [
            ("x == %@", "text", .string("text")), ("x == %@", NSString(string: "ns"), .string("ns")),
            ("x == %@", 5, .int(5)), ("x == %@", 2.5, .double(2.5)), ("x == %@", true, .int(1)),
            ("x == %@", NSNumber(value: 7), .int(7)), ("x == %@", NSNumber(value: 1.5), .double(1.5)),
            ("x == %@", NSNumber(value: false), .int(0)), ("x == %@", Decimal(string: "2.5")!, .double(2.5)),
            ("x == %@", date, .date(date)), ("x == %@", NSDate(timeIntervalSinceReferenceDate: 12345), .date(date)),
            ("x == %@", Data([1, 2]), .data(Data([1, 2]))), ("x == %@", uuid, .uuid(uuid)), ("x == %@", url, .url(url)),
            ("x == %@", NSNull(), .null), ("x == %@", nil, .null), ("x IN %@", ["a", "b"], .collection([.string("a"), .string("b")])),
            ("x IN %@", [1, 2] as NSArray, .collection([.int(1), .int(2)])), ("x IN %@", Set(["s"]), .collection([.string("s")])),
            ("x == %d", 42, .int(42)), ("x == %i", Int32(-3), .int(-3)), ("x == %ld", 9, .int(9)), ("x == %lld", Int64.max, .int(Int64.max)),
            ("x == %u", UInt(8), .int(8)), ("x == %lu", UInt64(9), .int(9)), ("x == %f", 1.5, .double(1.5)), ("x == %lf", 2, .double(2)),
            ("x == %s", "cstr", .string("cstr")), ("x == %c", 65, .string("A")),
        ]
        for (format, argument, expected) in cases {
            let value = try constant(format, [argument])
            #expect(value.map { PredicateValue.equal($0, expected) } == true, "\(format) with \(String(describing: argument)) → \(String(describing: value))")
        }
        if case .keyPath(["owner", "name"]) = try comparison("%K == 'x'", ["owner.name"]).lhs {} else { Issue.record("%K") }
        let both = try comparison("%K BEGINSWITH %@", ["name", "A"])
        guard case .keyPath(["name"]) = both.lhs, case .constant(.string("A")) = both.rhs else {
            Issue.record("%K and %@ in order: \(both)")
            return
        }
        #expect(throws: NSError.self) { try parse("%K == 1", [5]) }
        #expect(throws: NSError.self) { try parse("x == %d", ["five"]) }
        #expect(throws: NSError.self) { try parse("x == %@ AND y == %@", ["only one"]) }
    }

    @Test("Variadic and array initializers accept the same arguments as on Apple platforms")
    func clientCode() throws {
        let names = ["Ada", "Grace"]
        let date = Date()
        let number = NSNumber(value: 3)
        let predicates: [NSPredicate] = [
            NSPredicate(format: "name IN %@", names), NSPredicate(format: "born < %@", date as NSDate),
            NSPredicate(format: "age == %@", number), NSPredicate(format: "%K == %@", "name", "Ada"),
            NSPredicate(format: "uid == %@", UUID()), NSPredicate(format: "blob == %@", Data()),
            NSPredicate(format: "link == %@", URL(string: "https://x.y")!), NSPredicate(format: "price > %@", Decimal(1)),
            NSPredicate(format: "tags IN %@", Set(["a"])), NSPredicate(format: "age > %d AND score < %f", 5, 2.5),
            NSPredicate(format: "name == %@", argumentArray: ["Ada"]),
        ]
        for predicate in predicates { _ = try predicate.predicateTree() }
        #expect(NSPredicate(format: "name IN %@", names).evaluate(with: ["name": "Grace"]))
    }

    @Test("Malformed formats throw NSFormattingError naming the position", arguments: [
        ("name ==", 7, "expected an expression"), ("== 'x'", 0, "expected an expression"),
        ("name 'x'", 5, "expected a comparison operator"), ("name == 'x' AND", 15, "expected an expression"),
        ("(name == 'x'", 12, "')'"), ("name == 'x')", 11, "expected AND, OR or the end"),
        ("name == 'unterminated", 8, "unterminated string"), ("name BETWEEN {1, 2", 18, "'}'"),
        ("name == 0x", 8, "malformed number"), ("name == 12abc", 10, "after the number"), ("name ==[x] 'a'", 8, "options"),
        ("name == %", 8, "format specifier"), ("name == %%", 8, "only allowed inside a quoted string"),
        ("name == %@", 8, "has no argument"), ("name == ^", 8, "unexpected character"), ("$ == 1", 0, "variable name"),
        ("ANY == 1", 4, "expected an expression"), ("name == {1,", 11, "expected an expression"),
        ("", 0, "expected an expression"), ("   ", 3, "expected an expression"), ("name == 'a' OR OR x == 1", 15, "expected an expression"),
        ("name IN", 7, "expected an expression"), ("SUBQUERY(cars, c, c.x == 1).@count > 0", 15, "$variable"),
    ])
    func malformed(format: String, position: Int, expected: String) {
        do {
            _ = try NSPredicate(validatingFormat: format, argumentArray: [])
            Issue.record("\(format) parsed")
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == 2048)
            #expect(error.userInfo[PredicateErrors.positionKey] as? Int == position, "\(format): \(error.localizedDescription)")
            #expect(error.localizedDescription.contains(expected), "\(format): \(error.localizedDescription)")
            #expect(error.localizedDescription.contains("position \(position)"), "\(format): \(error.localizedDescription)")
        }
    }

    @Test("The non-throwing initializer keeps the error for the fetch")
    func storedError() throws {
        let predicate = NSPredicate(format: "name == ")
        #expect(!predicate.evaluate(with: ["name": ""]))
        #expect(throws: NSError.self) { try predicate.predicateTree() }
        do {
            _ = try predicate.predicateTree()
        } catch let error as NSError {
            #expect(error.code == 2048)
            #expect(error.localizedDescription.contains("position 8"))
        }
        let array = NSPredicate(format: "name == %@ AND age > %@", argumentArray: ["x"])
        #expect(throws: NSError.self) { try array.predicateTree() }
    }

    @Test("Hostile input never traps")
    func neverTraps() throws {
        let valid = [
            "name BEGINSWITH[cd] 'a' AND (age BETWEEN {1, 5} OR NOT owner.name IN {'x', \"y\"}) || ANY cars.year > -0x10",
            "SUBQUERY(cars, $c, $c.name LIKE[c] '*a?') .@count > 2 AND $X == %@ AND %K != nil",
            "(((a + 1) * 2) ** 3 > now()) AND TRUEPREDICATE",
        ]
        var count = 0
        for format in valid {
            let scalars = Array(format.unicodeScalars)
            for cut in 0...scalars.count {
                var prefix = ""
                prefix.unicodeScalars.append(contentsOf: scalars[0..<cut])
                _ = try? PredicateParser.parse(prefix, arguments: ["x", "name"])
                var suffix = ""
                suffix.unicodeScalars.append(contentsOf: scalars[cut...])
                _ = try? PredicateParser.parse(suffix, arguments: [])
                count += 2
            }
        }
        var random = PredicateTestRandom(seed: 3)
        let alphabet = Array("abc ()[]{}'\"\\%@K$#=!<>&|+-*/.,0x1e9cdANDORNOTINLIKEANYALL\u{0}é😀")
        for _ in 0..<3000 {
            let length = Int(random.next() % 40)
            let format = String((0..<length).map { _ in random.pick(alphabet) })
            _ = try? PredicateParser.parse(format, arguments: [1, "k", NSNull()])
            _ = NSPredicate(format: format, argumentArray: ["k"]).evaluate(with: ["k": 1])
            count += 1
        }
        #expect(count > 3000)
        // Deep nesting is refused, not a stack overflow.
        let deep = String(repeating: "(", count: 20_000) + "a == 1" + String(repeating: ")", count: 20_000)
        #expect(throws: NSError.self) { try PredicateParser.parse(deep) }
        let deepNot = String(repeating: "NOT ", count: 20_000) + "a == 1"
        #expect(throws: NSError.self) { try PredicateParser.parse(deepNot) }
        let deepMinus = "a == " + String(repeating: "-", count: 20_000) + "1"
        #expect(throws: NSError.self) { try PredicateParser.parse(deepMinus) }
        // Long flat chains are fine.
        let chain = Array(repeating: "a == 1", count: 5_000).joined(separator: " AND ")
        guard case .and(let parts) = try PredicateParser.parse(chain) else {
            Issue.record("chain")
            return
        }
        #expect(parts.count == 5_000)
        // Nested parentheses that open expressions stay fast.
        let parens = String(repeating: "(", count: 60) + "a" + String(repeating: " + 1)", count: 60) + " > 2"
        #expect((try? PredicateParser.parse(parens)) != nil)
    }

    /// A chain of arithmetic operators prints flat, so `predicateFormat` parses again however
    /// long the chain; every operator is a level of nesting, so a chain longer than
    /// ``PredicateParser/maximumDepth`` is an error, never a stack overflow when the tree is
    /// evaluated, compiled or printed.
    @Test("Long arithmetic chains print and parse again; overlong ones are an error")
    func longArithmeticChains() throws {
        for (terms, symbol) in [(100, "+"), (100, "-"), (100, "*"), (900, "+")] {
            let format = "age == " + Array(repeating: "1", count: terms).joined(separator: " \(symbol) ")
            let predicate = try NSPredicate(validatingFormat: format)
            let printed = predicate.formatText
            let again = try NSPredicate(validatingFormat: printed)
            #expect(again.formatText == printed, "\(terms) terms of \(symbol)")
            let value = symbol == "+" ? terms : (symbol == "-" ? 2 - terms : 1)
            #expect(again.evaluate(with: ["age": value]), "\(terms) terms of \(symbol)")
            #expect(!again.evaluate(with: ["age": value + 1]))
            let expression = try NSExpression(validatingFormat: Array(repeating: "2", count: terms).joined(separator: " \(symbol) "), argumentArray: [])
            #expect(try NSExpression(validatingFormat: expression.description, argumentArray: []).description == expression.description)
        }
        let mixed = try NSPredicate(validatingFormat: "a * 2 * 3 - 4 + 5 / 6 ** 2 ** 1 - -1 == (b - (c + d)) * e")
        #expect(try NSPredicate(validatingFormat: mixed.formatText).formatText == mixed.formatText)

        for format in ["age == " + Array(repeating: "1", count: 10_000).joined(separator: " + "),
                       "age == " + Array(repeating: "2", count: 10_000).joined(separator: " * "),
                       "age == " + Array(repeating: "1", count: 10_000).joined(separator: " + 2 * "),
                       "age == x" + String(repeating: "[0]", count: 10_000)] {
            #expect(throws: NSError.self) { try PredicateParser.parse(format) }
            let error = try #require(NSPredicate(format: format) as? MalformedPredicate).error as NSError
            #expect(error.localizedDescription.contains("nested more than \(PredicateParser.maximumDepth) levels"))
        }
    }
}
