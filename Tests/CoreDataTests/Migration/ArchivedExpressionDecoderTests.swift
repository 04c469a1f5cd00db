import Foundation
import Testing
@testable import CoreData

/// Value expressions of Xcode's mapping models, archived as Foundation's `NSKeyedArchiver`
/// writes them (`Support/KeyedArchiveWriter.swift`), decoded and printed as Apple prints them.
@Suite("Archived expression decoder")
struct ArchivedExpressionDecoderTests {
    typealias Node = ExpressionArchive.Node

    struct Case: Sendable, CustomTestStringConvertible {
        let build: @Sendable () -> Node
        let format: String
        init(_ format: String, _ build: @escaping @Sendable () -> Node) { self.format = format; self.build = build }
        var testDescription: String { format }
    }

    static var source: Node { .variable("source") }

    static let cases: [Case] = [
        .init("$source.name") { .keyPath(source, "name") },
        .init("$source.owner.name") { .keyPath(source, "owner.name") },
        .init("$source.owner.name") { .keyPath(.keyPath(source, "owner"), "name") },
        .init("name") { .keyPath(.evaluatedObject, "name") },
        .init("SELF") { .evaluatedObject },
        .init(#"FUNCTION($entityPolicy, "toInt16WithValue:" , $source.bonusPoints)"#) {
            .function(.variable("entityPolicy"), "toInt16WithValue:", [.keyPath(source, "bonusPoints")])
        },
        .init(#"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:" , "PersonToPerson", $source.owner)"#) {
            .function(.variable("manager"), "destinationInstancesForEntityMappingNamed:sourceInstances:",
                      [.constant("PersonToPerson"), .keyPath(source, "owner")])
        },
        .init(#"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:" , "cars", $source.cars)"#) {
            .function(.variable("manager"), "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
                      [.constant("cars"), .keyPath(source, "cars")])
        },
        .init(#"FUNCTION($manager, "sourceContext")"#) { .function(.variable("manager"), "sourceContext", []) },
        .init(#"FUNCTION($source, "valueForKey:" , "name")"#) { .function(source, "valueForKey:", [.constant("name")]) },
        .init(#"FUNCTION(SELF, "_prependExternalBlobToken:" , $source.photo)"#) {
            .function(.evaluatedObject, "_prependExternalBlobToken:", [.keyPath(source, "photo")])
        },
        .init(#"FUNCTION($entityPolicy, "_nonNilValueOrDefaultValueForAttribute:source:destination:" , "title", $source, $destination)"#) {
            .function(.variable("entityPolicy"), "_nonNilValueOrDefaultValueForAttribute:source:destination:",
                      [.constant("title"), source, .variable("destination")])
        },
        .init("$manager") { .variable("manager") },
        .init("$entityPolicy") { .variable("entityPolicy") },
        .init("$entityMapping") { .variable("entityMapping") },
        .init("$propertyMapping") { .variable("propertyMapping") },
        .init("$destination") { .variable("destination") },
        .init(#""Untitled""#) { .constant("Untitled") },
        .init("42") { .constant(42) },
        .init("2.5") { .constant(2.5) },
        .init("1") { .constant(true) },
        .init("nil") { .constant(nil) },
        .init("nil") { .object("NSConstantValueExpression", [("NSConstantValue", .object("NSNull", []))]) },
        .init(#"{1, "a", nil}"#) { .constant([1, "a", nil] as [Any?]) },
        .init(#"CAST(0.0, "NSDate")"#) { .constant(Date(timeIntervalSinceReferenceDate: 0)) },
        .init(#"{1, $source.count}"#) { .aggregate([.constant(1), .keyPath(source, "count")]) },
        .init("uppercase:($source.name)") { .builtIn("uppercase:", [.keyPath(source, "name")]) },
        .init("sum:($source.items.price)") { .builtIn("sum:", [.keyPath(source, "items.price")]) },
        .init("now()") { .builtIn("now", []) },
        .init(#"uppercase:(FUNCTION($entityPolicy, "nameFor:" , $source))"#) {
            .builtIn("uppercase:", [.function(.variable("entityPolicy"), "nameFor:", [source])])
        },
    ]

    @Test(arguments: cases)
    func decodesAndPrintsAsApple(_ testCase: Case) throws {
        let expression = try ArchivedExpressionDecoder.expression(from: ExpressionArchive.data(testCase.build()))
        #expect(expression.description == testCase.format)
    }

    @Test func decodedExpressionsHaveApplesTypesAndParts() throws {
        let keyPath = try ArchivedExpressionDecoder.expression(from: ExpressionArchive.data(.keyPath(Self.source, "owner.name")))
        #expect(keyPath.expressionType == .keyPath)
        #expect(keyPath.keyPath == "owner.name")
        #expect(keyPath.operand.description == "$source")

        let function = try ArchivedExpressionDecoder.expression(from: ExpressionArchive.data(
            .function(.variable("entityPolicy"), "toInt16WithValue:", [.keyPath(Self.source, "bonusPoints")])))
        #expect(function.expressionType == .function)
        #expect(function.function == "toInt16WithValue:")
        #expect(function.operand.description == "$entityPolicy")
        #expect(function.arguments?.map(\.description) == ["$source.bonusPoints"])

        let builtIn = try ArchivedExpressionDecoder.expression(from: ExpressionArchive.data(.builtIn("uppercase:", [.keyPath(Self.source, "name")])))
        #expect(builtIn.function == "uppercase:")
        #expect(builtIn.arguments?.map(\.description) == ["$source.name"])

        let constant = try ArchivedExpressionDecoder.expression(from: ExpressionArchive.data(.constant("PersonToPerson")))
        #expect(constant.expressionType == .constantValue)
        #expect(constant.constantValue as? String == "PersonToPerson")
    }

    @Test func aKeyPathOnAVariableEvaluatesAgainstTheVariable() throws {
        let expression = try ArchivedExpressionDecoder.expression(from: ExpressionArchive.data(.keyPath(Self.source, "owner.name")))
        let context = NSMutableDictionary(dictionary: ["source": ["owner": ["name": "Ada"]]])
        #expect(expression.expressionValue(with: nil, context: context) as? String == "Ada")
    }

    // MARK: Malformed archives

    typealias Broken = BrokenInput

    /// A keyed archive of raw `$objects` with `root` at `root`.
    static func archive(_ objects: [PlistObject], root: Int = 1) -> Data {
        BinaryPropertyListWriter.data(.dictionary([
            ("$archiver", .string("NSKeyedArchiver")), ("$top", .dictionary([("root", .uid(root))])), ("$objects", .array(objects)),
        ]))
    }

    static let functionClass = PlistObject.dictionary([("$classname", .string("NSFunctionExpression")),
                                                        ("$classes", .array([.string("NSFunctionExpression"), .string("NSObject")]))])

    /// An aggregate whose collection holds the same inner aggregate twice, `levels` deep: 2^levels
    /// expressions to decode if shared references were followed without limit.
    static func sharedReferences(levels: Int) -> Data {
        var objects: [PlistObject] = [.string("$null"),
                                      .dictionary([("$classname", .string("NSAggregateExpression")), ("$classes", .array([.string("NSAggregateExpression")]))]),
                                      .dictionary([("$classname", .string("NSArray")), ("$classes", .array([.string("NSArray")]))])]
        // Level i: an aggregate at 3 + 2i, its array at 4 + 2i naming level i + 1 twice.
        for level in 0..<levels {
            let aggregate = 3 + 2 * level, next = level + 1 < levels ? aggregate + 2 : 0
            objects.append(.dictionary([("NSCollection", .uid(aggregate + 1)), ("$class", .uid(1))]))
            objects.append(.dictionary([("NS.objects", .array(next == 0 ? [] : [.uid(next), .uid(next)])), ("$class", .uid(2))]))
        }
        return archive(objects, root: 3)
    }

    /// A binary property list whose only object is an array that contains itself.
    static let arrayContainingItself: Data = {
        var bytes = Array("bplist00".utf8) + [0xA1, 0x00] // object 0 at offset 8: an array of [object 0]
        let table = bytes.count
        bytes += [8]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        return Data(bytes)
    }()

    static let broken: [Broken] = [
        .init("not a property list", ["not a binary property list"]) { Data("not a plist at all, just some text".utf8) },
        .init("truncated", []) { ExpressionArchive.data(.variable("source")).prefix(60) },
        .init("not a keyed archive", ["not a keyed archive"]) { BinaryPropertyListWriter.data(.array([.string("a")])) },
        .init("no $archiver", ["no '$archiver'"]) { BinaryPropertyListWriter.data(.dictionary([("$objects", .array([]))])) },
        .init("no root", ["no root object"]) {
            BinaryPropertyListWriter.data(.dictionary([("$archiver", .string("NSKeyedArchiver")), ("$objects", .array([.string("$null")])), ("$top", .dictionary([]))]))
        },
        .init("nil root", ["root object is nil"]) { archive([.string("$null")], root: 0) },
        .init("UID past $objects", ["refers to object 99"]) { archive([.string("$null")], root: 99) },
        .init("plain value as root", ["an expression is expected", "a string"]) { ExpressionArchive.data(.plain(.string("source"))) },
        .init("unknown expression class", ["'NSSubqueryExpression'", "not supported"]) { ExpressionArchive.data(.object("NSSubqueryExpression", [])) },
        .init("unknown constant class", ["constant of class 'NSURL'"]) {
            ExpressionArchive.data(.object("NSConstantValueExpression", [("NSConstantValue", .object("NSURL", []))]))
        },
        .init("variable without a name", ["NSVariableExpression has no 'NSVariable'"]) { ExpressionArchive.data(.object("NSVariableExpression", [])) },
        .init("variable named by a number", ["'NSVariable' that is not a string"]) {
            ExpressionArchive.data(.object("NSVariableExpression", [("NSVariable", .plain(.int(7)))]))
        },
        .init("function without a selector", ["has no 'NSSelectorName'"]) {
            ExpressionArchive.data(.object("NSFunctionExpression", [("NSOperand", .variable("manager"))]))
        },
        .init("function without a receiver", ["'sourceContext' has no 'NSOperand'"]) {
            ExpressionArchive.data(.object("NSFunctionExpression", [("NSSelectorName", .plain(.string("sourceContext")))]))
        },
        .init("arguments that are not an array", ["'NSArguments' of an NSFunctionExpression is not an archived array"]) {
            ExpressionArchive.data(.object("NSFunctionExpression", [("NSOperand", .variable("manager")), ("NSSelectorName", .plain(.string("a:"))),
                                                                    ("NSArguments", .plain(.string("x")))]))
        },
        .init("unknown built-in function", ["'frobnicate:'", "not a built-in function"]) { ExpressionArchive.data(.builtIn("frobnicate:", [.constant(1)])) },
        .init("key path without a specifier", ["does not have one NSKeyPathSpecifierExpression"]) {
            ExpressionArchive.data(.object("NSKeyPathExpression", [("NSOperand", .evaluatedObject)]))
        },
        .init("expression that is its own operand", ["nests too deeply or has too many objects"]) {
            archive([.string("$null"), .dictionary([("NSOperand", .uid(1)), ("NSSelectorName", .uid(3)), ("$class", .uid(2))]), functionClass, .string("a:")])
        },
        .init("shared references 60 levels deep", ["nests too deeply or has too many objects"]) { sharedReferences(levels: 60) },
        .init("array containing itself", ["contains itself"]) { arrayContainingItself },
    ]

    @Test(arguments: broken)
    func refusesMalformedArchives(_ testCase: Broken) {
        do {
            let expression = try ArchivedExpressionDecoder.expression(from: testCase.data())
            Issue.record("decoded \(expression) from a malformed archive")
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == NSFileReadCorruptFileError)
            #expect(error.localizedDescription.hasPrefix("The archived expression cannot be read: "))
            for fragment in testCase.fragments {
                #expect(error.localizedDescription.contains(fragment), "\(error.localizedDescription) lacks \(fragment)")
            }
        }
    }

    @Test func sharedReferencesWithinTheLimitDecode() throws {
        let expression = try ArchivedExpressionDecoder.expression(from: Self.sharedReferences(levels: 6))
        #expect(expression.expressionType == .aggregate)
        #expect(expression.description.filter { $0 == "{" }.count == 63)
    }
}
