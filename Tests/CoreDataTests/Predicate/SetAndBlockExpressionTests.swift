import Foundation
import Testing
@testable import CoreData

/// Foundation's set expressions (`forUnionSet`, `forIntersectSet`, `forMinusSet`) and block
/// expressions, which CoreData's `NSExpression` provides on Linux.
@Suite("Set and block expressions")
struct SetAndBlockExpressionTests {
    private typealias Expression = CoreData.NSExpression

    private func constant(_ value: Any) -> Expression { Expression(forConstantValue: value) }

    @Test("Union, intersection and difference in memory, with Apple's accessors")
    func setsInMemory() throws {
        let union = Expression(forUnionSet: constant(["a", "b"]), with: constant(["b", "c"]))
        #expect(union.expressionType == .unionSet)
        #expect(union.expressionValue(with: nil, context: nil) as? [String] == ["a", "b", "c"])
        #expect(union.left.constantValue as? [String] == ["a", "b"])
        #expect(union.right.constantValue as? [String] == ["b", "c"])
        #expect(union.function.isEmpty && union.arguments == nil)
        let both = Expression(forIntersectSet: constant([1, 2, 3, 2]), with: constant([2, 3, 4]))
        #expect(both.expressionType == .intersectSet)
        #expect(both.expressionValue(with: nil, context: nil) as? [Int] == [2, 3])
        let rest = Expression(forMinusSet: constant([1, 2, 3]), with: constant([2]))
        #expect(rest.expressionType == .minusSet)
        #expect(rest.expressionValue(with: nil, context: nil) as? [Int] == [1, 3])
        // A single value is a set of one; nil an empty set.
        let one = Expression(forUnionSet: Expression(forConstantValue: nil), with: constant(7))
        #expect(one.expressionValue(with: nil, context: nil) as? [Int] == [7])
        #expect(union.description == #"({"a", "b"} UNION {"b", "c"})"#)
        // As Foundation: a nil right operand leaves the left one; a dictionary stands for its values.
        let keep = Expression(forIntersectSet: constant([1, 2, 2]), with: Expression(forConstantValue: nil))
        #expect(keep.expressionValue(with: nil, context: nil) as? [Int] == [1, 2])
        let values = Expression(forMinusSet: constant([1, 2, 3]), with: constant(["a": 1, "b": 3]))
        #expect(values.expressionValue(with: nil, context: nil) as? [Int] == [2])
        // Large operands: hashed membership (1 and 1.0 are one element).
        let big = Expression(forUnionSet: constant(Array(0..<20_000)), with: constant(Array(10_000..<30_000).map(Double.init)))
        #expect((big.expressionValue(with: nil, context: nil) as? [Any])?.count == 30_000)
        // The internal names are not functions a format can call.
        #expect(throws: NSError.self) { try Expression(validatingFormat: "FUNCTION($x, 'unionSet:with:', {1})", argumentArray: []) }
        // Key paths: the values of the evaluated object's collections.
        let tags = Expression(forUnionSet: Expression(forKeyPath: "first"), with: Expression(forKeyPath: "second"))
        #expect(NSPredicate(format: "'x' IN %@ AND 'y' IN %@", tags, tags).evaluate(with: ["first": ["x"], "second": ["y"]]))
    }

    @Test("A set of constants in a fetch; of stored values, an error", arguments: ["SQLite", "in-memory"] + (TestStoreKind.available.contains(.postgreSQL) ? ["PostgreSQL"] : []))
    func setsInFetches(kind: String) throws {
        let stack = try kind == "PostgreSQL" ? TestStack(.postgreSQL) : TestStack(inMemory: kind == "in-memory")
        try withExtendedLifetime(stack) {
            for name in ["Beetle", "Model T", "Zoë", "Trabant"] { stack.insert("Car", ["name": name]) }
            try stack.context.save()
            let wanted = Expression(forMinusSet: Expression(forUnionSet: constant(["Beetle", "Zoë"]), with: constant(["Trabant"])),
                                    with: constant(["Zoë"]))
            let names = try stack.fetch("Car") { $0.predicate = NSPredicate(format: "name IN %@", wanted) }
                .compactMap { $0.value(forKey: "name") as? String }.sorted()
            #expect(names == ["Beetle", "Trabant"])
            if kind != "in-memory" {
                let stored = Expression(forUnionSet: Expression(forKeyPath: "name"), with: constant(["x"]))
                let error = try #require(throws: NSError.self) {
                    try stack.fetch("Car") { $0.predicate = NSPredicate(format: "'x' IN %@", stored) }
                }
                #expect(error.code == 134091)
                #expect(error.localizedDescription.contains("set expressions"))
            }
        }
    }

    @Test("A block expression: the object, its arguments' values and the variables")
    func blocks() throws {
        let doubled = Expression(block: { object, args, variables in
            let year = args[0] as? Int ?? 0
            let bonus = variables?["BONUS"] as? Int ?? 0
            return year * 2 + bonus + ((object as? [String: Any])?["extra"] as? Int ?? 0)
        }, arguments: [Expression(forKeyPath: "year")])
        #expect(doubled.expressionType == .block)
        #expect(doubled.arguments?.map(\.keyPath) == ["year"])
        #expect(doubled.expressionValue(with: ["year": 2000, "extra": 1], context: nil) as? Int == 4001)
        let predicate = NSPredicate(format: "%@ > 4000", doubled)
        #expect(predicate.evaluate(with: ["year": 2000], substitutionVariables: ["BONUS": 1]))
        #expect(!predicate.evaluate(with: ["year": 2000], substitutionVariables: ["BONUS": 0]))
        #expect(doubled.expressionBlock(nil, [10], nil) as? Int == 20)
        // The caller's dictionary reaches the block as it is, and arguments as read.
        let context = NSMutableDictionary(dictionary: ["BONUS": 5])
        let writes = Expression(block: { _, args, variables in
            variables?["SEEN"] = true
            return (args[0] as? Decimal) == Decimal(string: "0.1")
        }, arguments: [Expression(forKeyPath: "cost")])
        #expect(writes.expressionValue(with: ["cost": Decimal(string: "0.1")!], context: context) as? Bool == true)
        #expect(context["SEEN"] as? Bool == true)
        // A missing argument value reaches the block as NSNull.
        let isNull = Expression(block: { _, args, _ in args[0] is NSNull }, arguments: [Expression(forKeyPath: "missing")])
        #expect(isNull.expressionValue(with: ["year": 1], context: nil) as? Bool == true)
    }

    @Test("Every store's fetch refuses a block expression, as Apple's SQLite store does; in memory it is evaluated", arguments: [false, true])
    func blocksInFetches(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        try withExtendedLifetime(stack) {
            stack.insert("Car", ["name": "Saved", "year": 1990])
            try stack.context.save()
            let old = NSPredicate(format: "%@ == YES", Expression(block: { object, _, _ in
                ((object as? NSManagedObject)?.value(forKey: "year") as? Int ?? 0) < 2000
            }, arguments: nil))
            let error = try #require(throws: NSError.self) { try stack.fetch("Car") { $0.predicate = old } }
            #expect(error.code == 134091)
            #expect(error.localizedDescription.contains("block expressions"))
            let car = try #require(try stack.fetch("Car").first)
            #expect(old.evaluate(with: car))
            let update = NSBatchUpdateRequest(entityName: "Car")
            update.predicate = old
            update.propertiesToUpdate = ["name": "Updated"]
            #expect(throws: NSError.self) { try stack.context.execute(update) }
            #expect(car.value(forKey: "name") as? String == "Saved")
        }
    }
}
