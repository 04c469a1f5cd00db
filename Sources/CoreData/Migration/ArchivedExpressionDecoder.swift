import Foundation

// Xcode stores each custom value expression of a mapping model (`valueexpressiondata` in
// `xcmapping.xml`) as an NSKeyedArchiver archive whose root object is an `NSExpression`. An
// archive is a binary property list: `$archiver` ("NSKeyedArchiver"), `$top` (`root`: a UID),
// and `$objects`, where each object is a plain value (string, number) or a dictionary of its
// encoded keys plus `$class`, a UID of `{$classname, $classes}`; index 0 is `$null` (nil).
//
// Foundation's expression classes encode (keys as Apple's classes write them):
// - `NSConstantValueExpression`: `NSConstantValue` (the value), or `NSConstantValueClassName`
//   (a class, `_NSPredicateUtilities`, the receiver of the built-in functions);
// - `NSSelfExpression`: nothing (`SELF`);
// - `NSVariableExpression`: `NSVariable` (`$source`);
// - `NSKeyPathExpression` (an `NSFunctionExpression` with `valueForKeyPath:`): `NSOperand`
//   (`SELF` or a variable), `NSArguments` = [`NSKeyPathSpecifierExpression` {`NSKeyPath`}];
// - `NSFunctionExpression`: `NSOperand` (the receiver), `NSSelectorName`, `NSArguments`;
// - `NSAggregateExpression`: `NSCollection` (an array of expressions).
// Every one also writes `NSExpressionType`. Anything else is refused by name, as is a malformed
// archive; the problems are `NSFileReadCorruptFileError` (259).

/// Decodes an `NSExpression` from an `NSKeyedArchiver` archive (a binary property list).
internal enum ArchivedExpressionDecoder {
    /// The expression archived in `data`, or an `NSError` 259 saying what is wrong.
    static func expression(from data: Data) throws -> NSExpression {
        do throws(Problem) {
            return try decodedExpression(data)
        } catch {
            throw CoreDataError.make(.fileReadCorruptFile, "The archived expression cannot be read: \(error.reason).")
        }
    }

    /// The expression archived in `data`, or the reason it cannot be read.
    static func decodedExpression(_ data: Data) throws(BinaryPropertyListReader.Problem) -> NSExpression {
        NSExpression(node: try decode(data))
    }

    /// How many archived objects one expression may decode (a guard against archives whose
    /// objects share references so that decoding them would never end).
    static let maximumObjects = 10_000

    private typealias Value = BinaryPropertyListValue
    private typealias Problem = BinaryPropertyListReader.Problem

    private static func decode(_ data: Data) throws(Problem) -> ExpressionNode {
        guard case .dictionary(let archive) = try BinaryPropertyListReader.read(data) else {
            throw Problem("it is not a keyed archive (its top object is not a dictionary)")
        }
        guard case .string("NSKeyedArchiver")? = archive["$archiver"] else {
            throw Problem("it is not a keyed archive (no '$archiver' of 'NSKeyedArchiver')")
        }
        guard case .array(let objects)? = archive["$objects"] else {
            throw Problem("it is not a keyed archive (no '$objects' array)")
        }
        guard case .dictionary(let top)? = archive["$top"], case .uid(let root)? = top["root"] else {
            throw Problem("it has no root object ('$top' has no 'root' UID)")
        }
        var decoder = Decoder(objects: objects)
        guard let node = try decoder.expression(.uid(root), depth: 0) else {
            throw Problem("its root object is nil, not an expression")
        }
        return node
    }

    /// Walks `$objects` from the root.
    private struct Decoder {
        let objects: [Value]
        var decoded = 0

        /// An archived object: its class name and keys, or a plain value (`className` nil);
        /// `nil` for `$null`.
        private mutating func object(_ reference: Value, depth: Int) throws(Problem) -> (className: String?, value: Value)? {
            guard case .uid(let index) = reference else {
                throw Problem("a reference is \(reference.kind), not a UID")
            }
            guard index < objects.count else {
                throw Problem("a UID refers to object \(index), but '$objects' has \(objects.count)")
            }
            decoded += 1
            guard decoded <= ArchivedExpressionDecoder.maximumObjects, depth <= BinaryPropertyListReader.maximumDepth else {
                throw Problem("it nests too deeply or has too many objects (does it refer to itself?)")
            }
            let value = objects[index]
            if case .string("$null") = value { return nil }
            guard case .dictionary(let keys) = value, let classReference = keys["$class"] else { return (nil, value) }
            guard case .uid(let classIndex) = classReference, classIndex < objects.count,
                  case .dictionary(let classInfo) = objects[classIndex], case .string(let className)? = classInfo["$classname"] else {
                throw Problem("object \(index) has a '$class' that is not a class description")
            }
            return (className, value)
        }

        private func keys(_ value: Value) -> [String: Value] {
            if case .dictionary(let keys) = value { return keys }
            return [:]
        }

        /// The string under `key` of an object of `className`.
        private mutating func string(_ keys: [String: Value], _ key: String, of className: String, depth: Int) throws(Problem) -> String {
            guard let reference = keys[key] else { throw Problem("an \(className) has no '\(key)'") }
            guard let decoded = try object(reference, depth: depth + 1) else { throw Problem("an \(className) has a nil '\(key)'") }
            switch (decoded.className, decoded.value) {
            case (nil, .string(let string)): return string
            case ("NSString"?, let value), ("NSMutableString"?, let value):
                if case .string(let string)? = self.keys(value)["NS.string"] { return string }
            default: break
            }
            throw Problem("an \(className) has a '\(key)' that is not a string")
        }

        /// The elements of an archived array or set (`NS.objects`).
        private mutating func elements(_ reference: Value, of what: String, depth: Int) throws(Problem) -> [Value]? {
            guard let decoded = try object(reference, depth: depth + 1) else { return nil }
            guard let className = decoded.className,
                  ["NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet"].contains(className),
                  case .array(let elements)? = keys(decoded.value)["NS.objects"] else {
                throw Problem("\(what) is not an archived array")
            }
            return elements
        }

        /// The expressions of an `NSArguments` or `NSCollection` array.
        private mutating func expressions(_ keys: [String: Value], _ key: String, of className: String, depth: Int) throws(Problem) -> [ExpressionNode] {
            guard let reference = keys[key], let elements = try elements(reference, of: "the '\(key)' of an \(className)", depth: depth) else {
                return []
            }
            var nodes: [ExpressionNode] = []
            for element in elements {
                guard let node = try expression(element, depth: depth + 2) else {
                    throw Problem("the '\(key)' of an \(className) holds nil, not an expression")
                }
                nodes.append(node)
            }
            return nodes
        }

        mutating func expression(_ reference: Value, depth: Int) throws(Problem) -> ExpressionNode? {
            guard let decoded = try object(reference, depth: depth) else { return nil }
            guard let className = decoded.className else {
                throw Problem("an expression is expected where the archive holds \(decoded.value.kind)")
            }
            let keys = self.keys(decoded.value)
            switch className {
            case "NSConstantValueExpression":
                if keys["NSConstantValue"] == nil, keys["NSConstantValueClassName"] != nil {
                    throw Problem("an NSConstantValueExpression holds a class, which only a built-in function may have as its receiver")
                }
                return .constant(try constant(keys["NSConstantValue"], depth: depth + 1))
            case "NSSelfExpression":
                return .evaluatedObject
            case "NSVariableExpression":
                return .variable(try string(keys, "NSVariable", of: className, depth: depth))
            case "NSKeyPathSpecifierExpression":
                return .keyPath(try string(keys, "NSKeyPath", of: className, depth: depth).components(separatedBy: "."))
            case "NSAggregateExpression":
                return .aggregate(try expressions(keys, "NSCollection", of: className, depth: depth))
            case "NSKeyPathExpression":
                return try keyPath(keys, depth: depth)
            case "NSFunctionExpression":
                return try function(keys, depth: depth)
            default:
                throw Problem("it holds an expression of class '\(className)', which is not supported")
            }
        }

        /// `$source.name` (a variable operand), `name` (`SELF`), `FUNCTION(…).name` (another operand).
        private mutating func keyPath(_ keys: [String: Value], depth: Int) throws(Problem) -> ExpressionNode {
            let className = "NSKeyPathExpression"
            let arguments = try expressions(keys, "NSArguments", of: className, depth: depth)
            guard arguments.count == 1, case .keyPath(let path) = arguments[0] else {
                throw Problem("an NSKeyPathExpression does not have one NSKeyPathSpecifierExpression as its argument")
            }
            guard let operandReference = keys["NSOperand"], let operand = try expression(operandReference, depth: depth + 1) else {
                throw Problem("an NSKeyPathExpression has no 'NSOperand'")
            }
            switch operand {
            case .evaluatedObject: return .keyPath(path)
            case .keyPath(let base): return .keyPath(base + path)
            case .keyPathFrom(let base, let start): return .keyPathFrom(base, start + path)
            default: return .keyPathFrom(operand, path)
            }
        }

        /// A built-in function (its receiver is the class `_NSPredicateUtilities`), or a method
        /// invoked on the receiver, `FUNCTION(receiver, "selector:", arguments…)`: the receiver
        /// becomes the first argument, as ``PredicateParser`` reads `FUNCTION`.
        private mutating func function(_ keys: [String: Value], depth: Int) throws(Problem) -> ExpressionNode {
            let className = "NSFunctionExpression"
            let selector = try string(keys, "NSSelectorName", of: className, depth: depth)
            let arguments = try expressions(keys, "NSArguments", of: className, depth: depth)
            guard let operandReference = keys["NSOperand"], let operand = try object(operandReference, depth: depth + 1) else {
                throw Problem("the NSFunctionExpression '\(selector)' has no 'NSOperand'")
            }
            if operand.className == "NSConstantValueExpression", let name = self.keys(operand.value)["NSConstantValueClassName"] {
                guard case .string("_NSPredicateUtilities")? = try object(name, depth: depth + 2).map({ $0.value }) else {
                    throw Problem("the NSFunctionExpression '\(selector)' has a class receiver other than _NSPredicateUtilities")
                }
                guard PredicateFunctions.isKnown(selector, argumentCount: arguments.count) else {
                    throw Problem("it calls the function '\(selector)' with \(arguments.count) argument(s), which is not a built-in function")
                }
                return .function(selector, arguments)
            }
            guard let receiver = try expression(operandReference, depth: depth + 1) else {
                throw Problem("the NSFunctionExpression '\(selector)' has a nil 'NSOperand'")
            }
            return .function(selector, [receiver] + arguments)
        }

        /// The value of a constant: a string, number, date, data, nil, or an array or set of them.
        private mutating func constant(_ reference: Value?, depth: Int) throws(Problem) -> PredicateValue {
            guard let reference, let decoded = try object(reference, depth: depth) else { return .null }
            switch (decoded.className, decoded.value) {
            case (nil, .string(let string)): return .string(string)
            case (nil, .int(let number)): return .int(number)
            case (nil, .real(let number)): return .double(number)
            case (nil, .bool(let flag)): return .int(flag ? 1 : 0)
            case (nil, .data(let data)): return .data(data)
            case (nil, let value): throw Problem("a constant is \(value.kind), which is not an archived value")
            default: break
            }
            let className = decoded.className ?? ""
            let keys = self.keys(decoded.value)
            switch className {
            case "NSNull":
                return .null
            case "NSString", "NSMutableString":
                guard case .string(let string)? = keys["NS.string"] else { throw Problem("an \(className) constant has no 'NS.string'") }
                return .string(string)
            case "NSDate":
                guard let time = keys["NS.time"], case .real(let seconds) = time else { throw Problem("an NSDate constant has no 'NS.time'") }
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case "NSData", "NSMutableData":
                guard case .data(let data)? = keys["NS.data"] else { throw Problem("an \(className) constant has no 'NS.data'") }
                return .data(data)
            case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet":
                var items: [PredicateValue] = []
                for element in try elements(reference, of: "an \(className) constant", depth: depth - 1) ?? [] {
                    items.append(try constant(element, depth: depth + 1))
                }
                return .collection(items)
            default:
                throw Problem("it holds a constant of class '\(className)', which is not supported")
            }
        }
    }
}
