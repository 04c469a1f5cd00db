import Foundation
import Testing
@testable import CoreData

/// Format arguments as Apple's bridging hands them to a predicate: a nil optional in an `Any` is
/// nil, a `[UInt8]` is a list of numbers, a dictionary after `IN` is its values. In memory and
/// in a fetch alike.
@Suite struct PredicateArgumentBridgingTests {
    private func people(_ stack: TestStack, _ predicate: NSPredicate) throws -> (fetched: [String], evaluated: [String]) {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let all = try stack.context.fetch(request)
        request.predicate = predicate
        let names = { (objects: [NSManagedObject]) in objects.map { $0.value(forKey: "name") as? String ?? "?" } }
        return (names(try stack.context.fetch(request)), names(all.filter { predicate.evaluate(with: $0) }))
    }

    private func stack() throws -> TestStack {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada", "age": 30])
        stack.insert("Person", ["name": "Bob", "age": 41])
        stack.insert("Car", ["name": "owned", "owner": ada])
        stack.insert("Car", ["name": "free"])
        try stack.context.save()
        return stack
    }

    @Test func aNilOptionalInAnArgumentArrayIsNil() throws {
        let stack = try stack()
        let nobody: NSManagedObject? = nil
        let predicate = NSPredicate(format: "owner == %@", argumentArray: [nobody as Any])
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.predicate = predicate
        #expect(try stack.context.fetch(request).map { $0.value(forKey: "name") as? String } == ["free"])
        let cars = try stack.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
        #expect(cars.filter { predicate.evaluate(with: $0) }.map { $0.value(forKey: "name") as? String } == ["free"])
        let substituted = NSPredicate(format: "owner == $OWNER").withSubstitutionVariables(["OWNER": nobody as Any])
        request.predicate = substituted
        #expect(try stack.context.fetch(request).map { $0.value(forKey: "name") as? String } == ["free"])
        #expect(cars.filter { substituted.evaluate(with: $0) }.map { $0.value(forKey: "name") as? String } == ["free"])
        let constant = NSComparisonPredicate(leftExpression: NSExpression(forKeyPath: "owner"), rightExpression: NSExpression(forConstantValue: nobody as Any),
                                             modifier: .direct, type: .equalTo)
        #expect(cars.filter { constant.evaluate(with: $0) }.map { $0.value(forKey: "name") as? String } == ["free"])
        let named: String? = "Ada"
        #expect(try people(stack, NSPredicate(format: "name == %@", argumentArray: [named as Any])).fetched == ["Ada"])
    }

    @Test func aByteArrayIsAListOfNumbers() throws {
        let stack = try stack()
        let ages: [UInt8] = [30, 99]
        let result = try people(stack, NSPredicate(format: "age IN %@", ages))
        #expect(result.fetched == ["Ada"] && result.evaluated == ["Ada"])
    }

    @Test func aDictionaryAfterINIsItsValues() throws {
        let stack = try stack()
        let result = try people(stack, NSPredicate(format: "name IN %@", ["first": "Bob", "second": "Cy"]))
        #expect(result.fetched == ["Bob"] && result.evaluated == ["Bob"])
    }
}

/// Block predicates inside expressions, and with variables substituted: evaluated in memory, as
/// Apple's are; a fetch still refuses them.
@Suite struct BlockPredicateExpressionTests {
    @Test func aBlockPredicateInAConditionalOrASubqueryIsEvaluated() throws {
        let big = NSPredicate { object, _ in ((object as? NSNumber)?.intValue ?? 0) > 10 }
        let label = NSExpression(forConditional: big, trueExpression: NSExpression(forConstantValue: "big"),
                                 falseExpression: NSExpression(forConstantValue: "small"))
        #expect(label.expressionValue(with: NSNumber(value: 11), context: nil) as? String == "big")
        #expect(label.expressionValue(with: NSNumber(value: 3), context: nil) as? String == "small")
        let even = NSPredicate { object, _ in ((object as? NSNumber)?.intValue ?? 1) % 2 == 0 }
        let evens = NSExpression(forSubquery: NSExpression(forConstantValue: [1, 2, 3, 4]), usingIteratorVariable: "x", predicate: even)
        #expect((evens.expressionValue(with: nil, context: nil) as? [Any])?.count == 2)
        // With a context of the caller's, each element still reaches the block.
        #expect((evens.expressionValue(with: nil, context: NSMutableDictionary()) as? [Any])?.count == 2)
        // The predicate read back evaluates an object alone.
        #expect(evens.predicate.evaluate(with: NSNumber(value: 2)))
    }

    /// A compound holding a malformed format keeps its parse error through substitution: a fetch
    /// reports it, not a block.
    @Test func aMalformedPartIsNotTakenForABlock() throws {
        let template = NSCompoundPredicate(andPredicateWithSubpredicates: [NSPredicate(format: "name == $N"), NSPredicate(format: "year >")])
        let stack = try TestStack()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.predicate = template.withSubstitutionVariables(["N": "a"])
        let error = #expect(throws: NSError.self) { try stack.context.fetch(request) }
        #expect(error?.code == 2048)
    }

    @Test func aBlockPredicateGetsTheSubstitutedVariables() throws {
        let template = NSPredicate { _, bindings in (bindings?["LIMIT"] as? Int) == 1 }
        #expect(template.withSubstitutionVariables(["LIMIT": 1]).evaluate(with: nil))
        #expect(!template.withSubstitutionVariables(["LIMIT": 2]).evaluate(with: nil))
        let stack = try TestStack()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.predicate = template.withSubstitutionVariables(["LIMIT": 1])
        let error = #expect(throws: NSError.self) { try stack.context.fetch(request) }
        #expect(error?.code == NSPersistentStoreUnsupportedRequestTypeError)
    }
}

/// `MATCHES` with a pattern that is not a regular expression matches nothing, in memory and in
/// a fetch, rather than a pattern its anchoring changed the meaning of.
@Suite struct MatchesPatternTests {
    @Test func anUnbalancedPatternMatchesNothing() throws {
        #expect(!NSPredicate(format: "SELF MATCHES %@", "a)|(b").evaluate(with: "axyz"))
        #expect(!NSPredicate(format: "SELF MATCHES %@", "x)|(.*").evaluate(with: "anything"))
        #expect(NSPredicate(format: "SELF MATCHES %@", "a|ab").evaluate(with: "ab"))
        #expect(NSPredicate(format: "SELF MATCHES[c] %@", "A.C").evaluate(with: "abc"))
        let stack = try TestStack()
        stack.insert("Car", ["name": "axyz"])
        try stack.context.save()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.predicate = NSPredicate(format: "name MATCHES %@", "a)|(b")
        #expect(try stack.context.fetch(request).isEmpty)
        request.predicate = NSPredicate(format: "name MATCHES %@", "a.*")
        #expect(try stack.context.fetch(request).count == 1)
    }
}

/// The string escapes of Apple's format syntax: three octal digits, `\x`/`\X` with two hex
/// digits, `\u`/`\U` with four.
@Suite struct PredicateStringEscapeTests {
    @Test func octalAndUppercaseHexEscapes() throws {
        func constant(_ format: String) throws -> String? {
            let predicate = try NSPredicate(validatingFormat: format)
            return (predicate as? CoreData.NSComparisonPredicate)?.rightExpression.constantValue as? String
        }
        #expect(try constant(#"name == '\101da'"#) == "Ada")
        #expect(try constant(#"name == '\012'"#) == "\n")
        #expect(try constant(#"name == '\0'"#) == "\0")
        #expect(try constant(#"name == '\U00E9'"#) == "é")
        #expect(try constant(#"name == '\X41'"#) == "A")
        #expect(throws: NSError.self) { try NSPredicate(validatingFormat: #"name == '\19'"#) }
    }
}

/// A dictionary subscripted by a key in a format (`SELF['color']`) gives its value for the key.
@Suite struct DictionarySubscriptTests {
    @Test func aDictionarySubscriptGivesTheKeysValue() {
        #expect(NSPredicate(format: "SELF['color'] == 'red'").evaluate(with: ["color": "red"]))
        #expect(!NSPredicate(format: "SELF['color'] == 'red'").evaluate(with: ["color": "blue"]))
        #expect(NSPredicate(format: "SELF['size'] == nil").evaluate(with: ["color": "red"]))
        #expect(NSPredicate(format: "SELF[0] == 'a'").evaluate(with: ["a", "b"]))
    }
}
