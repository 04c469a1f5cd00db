import Testing
@testable import CoreData

/// The public predicate classes: what `NSPredicate(format:)` returns, `NSComparisonPredicate`,
/// `NSCompoundPredicate`, `NSExpression`, `predicateFormat`, and functions.
@Suite("NSComparisonPredicate, NSCompoundPredicate and NSExpression")
struct PredicateObjectModelTests {
    @Test("A format comparison is an NSComparisonPredicate with Apple's parts")
    func comparisonParts() throws {
        let predicate = try #require(NSPredicate(format: "ANY cars.name BEGINSWITH[cd] %@", "mo") as? NSComparisonPredicate)
        #expect(predicate.comparisonPredicateModifier == .any)
        #expect(predicate.predicateOperatorType == .beginsWith)
        #expect(predicate.options == [.caseInsensitive, .diacriticInsensitive])
        #expect(predicate.leftExpression.expressionType == .keyPath)
        #expect(predicate.leftExpression.keyPath == "cars.name")
        #expect(predicate.rightExpression.expressionType == .constantValue)
        #expect(predicate.rightExpression.constantValue as? String == "mo")
        #expect(NSComparisonPredicate.Operator.contains.rawValue == 99 && NSComparisonPredicate.Operator.in.rawValue == 10)
        #expect(NSComparisonPredicate.Modifier.any.rawValue == 2 && NSCompoundPredicate.LogicalType.or.rawValue == 2)
    }

    @Test("AND, OR and NOT give NSCompoundPredicates; NONE is NOT ANY")
    func compoundParts() throws {
        let predicate = try #require(NSPredicate(format: "year > 2000 AND (name == 'a' OR NOT owner == nil)") as? NSCompoundPredicate)
        #expect(predicate.compoundPredicateType == .and)
        #expect(predicate.subpredicates.count == 2)
        let or = try #require(predicate.subpredicates[1] as? NSCompoundPredicate)
        #expect(or.compoundPredicateType == .or)
        #expect((or.subpredicates[1] as? NSCompoundPredicate)?.compoundPredicateType == .not)
        let none = try #require(NSPredicate(format: "NONE cars.year > 2000") as? NSCompoundPredicate)
        #expect(none.compoundPredicateType == .not)
        #expect((none.subpredicates.first as? NSComparisonPredicate)?.comparisonPredicateModifier == .any)
        #expect(NSPredicate(format: "TRUEPREDICATE").evaluate(with: nil))
        #expect(!(NSPredicate(format: "FALSEPREDICATE").evaluate(with: nil)))
    }

    @Test("predicateFormat prints the predicate in format syntax, and parses back to the same predicate")
    func predicateFormatRoundTrips() throws {
        let formats = [
            "name == \"Ada\"", "year >= 2000 AND name BEGINSWITH[c] \"a\"", "(year < 5 OR year > 10) AND owner != nil",
            "ANY cars.year > 2000", "ALL cars.name != nil", "NOT name CONTAINS[cd] \"x\"", "year BETWEEN {1, 5}",
            "name IN {\"a\", \"b\"}", "cars.@count > 2", "SUBQUERY(cars, $c, $c.year > 5).@count > 0", "(year + 1) > 5",
            "TRUEPREDICATE", "name LIKE \"a*\"", "name MATCHES \"[a-z]+\"",
        ]
        for format in formats {
            let predicate = NSPredicate(format: format)
            let printed = predicate.formatText
            #expect(printed == format, "\(format) printed as \(printed)")
            let reparsed = try NSPredicate(validatingFormat: printed)
            #expect(reparsed.formatText == printed)
        }
        // A compound from a format prints itself (Foundation's own NSCompoundPredicate prints
        // "FALSEPREDICATE" on Linux, and calling predicateFormat on it warns: docs/PORTING.md).
        let parsed = NSPredicate(format: "year > %d AND name BEGINSWITH %@", 2000, "M")
        #expect(parsed is NSCompoundPredicate)
        #expect(parsed.description == "year > 2000 AND name BEGINSWITH \"M\"")
        let built = NSCompoundPredicate(andPredicateWithSubpredicates: [NSPredicate(format: "year > %d", 2000), NSPredicate(format: "name BEGINSWITH %@", "M")])
        #expect(built.formatText == "year > 2000 AND name BEGINSWITH \"M\"")
        let comparison = try #require(NSPredicate(format: "name == %@", "Ada") as? NSComparisonPredicate)
        #expect(comparison.predicateFormat == "name == \"Ada\"")
    }

    @Test("Predicates built from the classes fetch what the equivalent format fetches")
    func builtPredicatesFetch() throws {
        let stack = try TestStack()
        for (name, year) in [("Model T", 1908), ("Beetle", 1938), ("Golf", 1974), ("Model S", 2012)] {
            stack.insert("Car", ["name": name, "year": year])
        }
        try stack.context.save()
        let built = NSCompoundPredicate(type: .or, subpredicates: [
            NSComparisonPredicate(leftExpression: NSExpression(forKeyPath: "name"), rightExpression: NSExpression(forConstantValue: "model"),
                                  modifier: .direct, type: .beginsWith, options: [.caseInsensitive]),
            NSCompoundPredicate(notPredicateWithSubpredicate: NSComparisonPredicate(
                leftExpression: NSExpression(forKeyPath: "year"), rightExpression: NSExpression(forConstantValue: 1950),
                modifier: .direct, type: .greaterThan)),
        ])
        let format = NSPredicate(format: "name BEGINSWITH[c] 'model' OR NOT year > 1950")
        let a = try stack.fetch("Car") { $0.predicate = built }.map { $0.value(forKey: "name") as! String }
        let b = try stack.fetch("Car") { $0.predicate = format }.map { $0.value(forKey: "name") as! String }
        #expect(Set(a) == ["Model T", "Beetle", "Model S"])
        #expect(Set(a) == Set(b))
        // Foundation's own NSCompoundPredicate is understood too.
        let foundation = Foundation.NSCompoundPredicate(andPredicateWithSubpredicates: [format, NSPredicate(format: "year < 2000")])
        #expect(try stack.fetch("Car") { $0.predicate = foundation }.count == 2)
    }

    @Test("A block predicate is refused by a fetch without being called")
    func blockPredicateIsNotCalled() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "Golf"])
        try stack.context.save()
        let block = NSPredicate { object, _ in (object as! String).isEmpty } // traps if called with a Car
        let error = #expect(throws: NSError.self) { _ = try stack.fetch("Car") { $0.predicate = block } }
        #expect(error?.code == NSPersistentStoreUnsupportedRequestTypeError)
        let inCompound = NSCompoundPredicate(andPredicateWithSubpredicates: [NSPredicate(format: "year > 1"), block])
        #expect(throws: NSError.self) { _ = try stack.fetch("Car") { $0.predicate = inCompound } }
    }

    @Test("NSExpression: kinds, properties and values")
    func expressions() throws {
        #expect(NSExpression(format: "2 + 3 * 4").expressionValue(with: nil, context: nil) as? NSNumber == 14)
        #expect(NSExpression(format: "%K * 2", "price").expressionValue(with: ["price": 21], context: nil) as? NSNumber == 42)
        #expect(NSExpression(forKeyPath: "owner.name").expressionValue(with: ["owner": ["name": "Ada"]], context: nil) as? String == "Ada")
        let variables = NSMutableDictionary(dictionary: ["X": 5])
        #expect(NSExpression(forVariable: "X").expressionValue(with: nil, context: variables) as? NSNumber == 5)
        let sum = NSExpression(forFunction: "sum:", arguments: [NSExpression(forConstantValue: [1, 2, 3.5])])
        #expect(sum.expressionType == .function && sum.function == "sum:" && sum.arguments?.count == 1)
        #expect(sum.expressionValue(with: nil, context: nil) as? NSNumber == 6.5)
        let aggregate = NSExpression(forAggregate: [NSExpression(forConstantValue: 1), NSExpression(forKeyPath: "x")])
        #expect(aggregate.expressionType == .aggregate && (aggregate.collection as? [NSExpression])?.count == 2)
        #expect(NSExpression.expressionForEvaluatedObject().expressionType == .evaluatedObject)
        let subquery = NSExpression(forSubquery: NSExpression(forKeyPath: "items"), usingIteratorVariable: "i",
                                    predicate: NSPredicate(format: "$i > 2"))
        #expect(subquery.expressionType == .subquery && subquery.variable == "i")
        #expect(subquery.expressionValue(with: ["items": [1, 2, 3, 4]], context: nil) as? [NSNumber] == [3, 4])
        let conditional = NSExpression(forConditional: NSPredicate(format: "SELF > 2"), trueExpression: NSExpression(forConstantValue: "big"),
                                       falseExpression: NSExpression(forConstantValue: "small"))
        #expect(conditional.expressionValue(with: 3, context: nil) as? String == "big")
        #expect(conditional.true.constantValue as? String == "big")
        #expect(throws: NSError.self) { try NSExpression(validatingFormat: "1 +", argumentArray: []) }
    }

    @Test("Apple's functions evaluate in memory", arguments: [
        ("sum:({1, 2, 3})", 6.0), ("count:({1, 2, nil})", 3.0), ("min:({4, 2, 9})", 2.0), ("max({4, 2, 9})", 9.0),
        ("average:({1, 2})", 1.5), ("median:({5, 1, 3, 2})", 2.5), ("stddev:({2, 4, 4, 4, 5, 5, 7, 9})", 2.0),
        ("FUNCTION(7, 'modulus:by:', 3)", 1.0), ("sqrt:(16)", 4.0), ("log:(1000)", 3.0), ("ln:(1)", 0.0), ("exp:(0)", 1.0),
        ("ceiling:(1.2)", 2.0), ("floor:(1.8)", 1.0), ("abs:(-3)", 3.0), ("trunc:(-1.7)", -1.0), ("2 ** 10", 1024.0),
        ("FUNCTION(6, 'bitwiseAnd:with:', 3)", 2.0), ("FUNCTION(6, 'bitwiseOr:with:', 3)", 7.0), ("FUNCTION(6, 'bitwiseXor:with:', 3)", 5.0),
        ("FUNCTION(1, 'leftshift:by:', 4)", 16.0), ("FUNCTION(16, 'rightshift:by:', 2)", 4.0), ("onesComplement:(0)", -1.0),
        ("length:('héllo')", 5.0), ("noindex:(8)", 8.0), ("7 / 2", 3.5), ("7 - 10", -3.0),
    ] as [(String, Double)])
    func functions(format: String, expected: Double) throws {
        let value = try NSExpression(validatingFormat: format, argumentArray: []).expressionValue(with: nil, context: nil)
        #expect((value as? NSNumber)?.doubleValue == expected, "\(format) = \(String(describing: value))")
    }

    /// `mode:` gives every most frequent value, in an array, as Apple's does.
    @Test func modeGivesAnArrayOfTheMostFrequentValues() throws {
        func mode(_ format: String) -> [Int]? {
            (NSExpression(format: format).expressionValue(with: nil, context: nil) as? [Any])?.compactMap { ($0 as? NSNumber)?.intValue }
        }
        #expect(mode("mode:({1, 2, 2, 3})") == [2])
        #expect(mode("mode:({3, 1, 3, 1, 2})") == [3, 1])
    }

    @Test("String functions, now() and random")
    func otherFunctions() throws {
        #expect(NSExpression(format: "uppercase:('straße')").expressionValue(with: nil, context: nil) as? String == "STRASSE")
        #expect(NSExpression(format: "lowercase:('ÉMILE')").expressionValue(with: nil, context: nil) as? String == "émile")
        let now = try #require(NSExpression(format: "now()").expressionValue(with: nil, context: nil) as? Date)
        #expect(abs(now.timeIntervalSinceNow) < 5)
        let random = try #require(NSExpression(format: "random()").expressionValue(with: nil, context: nil) as? NSNumber)
        #expect((0..<1).contains(random.doubleValue))
        #expect(NSPredicate(format: "date < now()").evaluate(with: ["date": Date(timeIntervalSince1970: 0)]))
    }

    @Test("Unknown functions and wrong argument counts are parse errors naming the position")
    func unknownFunctions() {
        for format in ["frobnicate(1) > 0", "sqrt:(1, 2) > 0", "FUNCTION(SELF, 'doSomething:', 1) == 1", "abs(1, 2) > 0"] {
            let error = #expect(throws: NSError.self, "\(format)") { try NSPredicate(validatingFormat: format) }
            #expect(error?.code == 2048)
            #expect(error?.localizedDescription.contains("position") == true, "\(error?.localizedDescription ?? "")")
        }
    }

    @Test("Aggregates, SUBQUERY and functions run in SQLite and agree with unsaved objects")
    func aggregatesThroughTheStack() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada", "age": 36])
        let grace = stack.insert("Person", ["name": "Grace", "age": 85])
        stack.insert("Person", ["name": "Linus", "age": 20])
        for (year, price, owner) in [(1908, 850.0, ada), (2012, 79_990, grace), (2019, 12, ada), (1938, 1_000.5, grace), (2001, 5, ada)] {
            stack.insert("Car", ["year": year, "price": price, "owner": owner])
        }
        try stack.context.save()
        let formats = [
            "cars.@count == 3", "cars.@count == 0", "cars.@sum.price > 2000", "cars.@avg.year > 1970", "cars.@min.year < 1910",
            "cars.@max.price > 1000", "SUBQUERY(cars, $c, $c.year > 2000 AND $c.price < 100).@count == 2", "age * 2 > 100",
            "abs:(age - 40) < 10", "uppercase:(name) == 'GRACE'", "sum:(cars.price) < 1000", "count:(cars) == 2",
        ]
        let all = try stack.fetch("Person")
        for format in formats {
            let predicate = NSPredicate(format: format)
            let fetched = try stack.fetch("Person") { $0.predicate = predicate }
            let expected = all.filter { predicate.evaluate(with: $0) }
            #expect(Set(fetched.map(\.objectID)) == Set(expected.map(\.objectID)), "\(format)")
            #expect(!fetched.isEmpty || format.hasSuffix("== 0"), "\(format) matched nothing")
        }
        // Unsaved changes are taken into account the same way.
        let linus = try #require(try stack.fetch("Person") { $0.predicate = NSPredicate(format: "name == 'Linus'") }.first)
        stack.insert("Car", ["year": 2020, "price": 1.0, "owner": linus])
        let busy = try stack.fetch("Person") { $0.predicate = NSPredicate(format: "cars.@count >= 1") }
        #expect(busy.count == 3)
    }
}
