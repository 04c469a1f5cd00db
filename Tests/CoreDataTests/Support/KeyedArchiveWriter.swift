import Foundation

/// A value to write into a binary property list.
indirect enum PlistObject {
    case string(String)
    case int(Int64)
    case real(Double)
    case bool(Bool)
    case data(Data)
    case uid(Int)
    case array([PlistObject])
    /// Keys in the order written.
    case dictionary([(String, PlistObject)])
}

/// Writes the binary property list format (`bplist00`), each value as an object of its own, so
/// that tests can make the archives Xcode stores in mapping models without a Mac.
enum BinaryPropertyListWriter {
    static func data(_ root: PlistObject) -> Data {
        var writer = Writer(referenceSize: count(root) < 256 ? 1 : 2)
        _ = writer.add(root)
        return writer.finish()
    }

    private static func count(_ object: PlistObject) -> Int {
        switch object {
        case .array(let items): return 1 + items.reduce(0) { $0 + count($1) }
        case .dictionary(let pairs): return 1 + pairs.reduce(0) { $0 + 1 + count($1.1) }
        default: return 1
        }
    }

    private struct Writer {
        let referenceSize: Int
        var bodies: [[UInt8]] = []

        static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
            (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }

        /// A marker with its count in the low nibble, or 0xF and an integer after it.
        static func header(_ kind: UInt8, _ count: Int) -> [UInt8] {
            if count < 15 { return [kind << 4 | UInt8(count)] }
            if count < 256 { return [kind << 4 | 0x0F, 0x10, UInt8(count)] }
            return [kind << 4 | 0x0F, 0x11] + bigEndian(UInt64(count), size: 2)
        }

        mutating func add(_ object: PlistObject) -> Int {
            let index = bodies.count
            bodies.append([])
            var body: [UInt8]
            switch object {
            case .string(let string):
                if string.utf8.allSatisfy({ $0 < 0x80 }) {
                    body = Self.header(0x5, string.utf8.count) + Array(string.utf8)
                } else {
                    let units = Array(string.utf16)
                    body = Self.header(0x6, units.count) + units.flatMap { Self.bigEndian(UInt64($0), size: 2) }
                }
            case .int(let value):
                if value >= 0 && value < 256 { body = [0x10, UInt8(value)] }
                else if value >= 0 && value < 65536 { body = [0x11] + Self.bigEndian(UInt64(value), size: 2) }
                else { body = [0x13] + Self.bigEndian(UInt64(bitPattern: value), size: 8) }
            case .real(let value):
                body = [0x23] + Self.bigEndian(value.bitPattern, size: 8)
            case .bool(let flag):
                body = [flag ? 0x09 : 0x08]
            case .data(let data):
                body = Self.header(0x4, data.count) + Array(data)
            case .uid(let value):
                body = value < 256 ? [0x80, UInt8(value)] : [0x81] + Self.bigEndian(UInt64(value), size: 2)
            case .array(let items):
                let references = items.map { add($0) }
                body = Self.header(0xA, items.count) + references.flatMap { Self.bigEndian(UInt64($0), size: referenceSize) }
            case .dictionary(let pairs):
                let keys = pairs.map { add(.string($0.0)) }
                let values = pairs.map { add($0.1) }
                body = Self.header(0xD, pairs.count) + (keys + values).flatMap { Self.bigEndian(UInt64($0), size: referenceSize) }
            }
            bodies[index] = body
            return index
        }

        func finish() -> Data {
            var bytes = Array("bplist00".utf8)
            var offsets: [Int] = []
            for body in bodies {
                offsets.append(bytes.count)
                bytes += body
            }
            let tableOffset = bytes.count
            let offsetSize = tableOffset < 256 ? 1 : (tableOffset < 65536 ? 2 : 4)
            for offset in offsets { bytes += Self.bigEndian(UInt64(offset), size: offsetSize) }
            bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
            bytes += Self.bigEndian(UInt64(bodies.count), size: 8) + Self.bigEndian(0, size: 8) + Self.bigEndian(UInt64(tableOffset), size: 8)
            return Data(bytes)
        }
    }
}

/// Builds `NSKeyedArchiver` archives of expressions as Foundation writes them: `$objects` with
/// `$null` first, each expression a dictionary of its keys, `NSExpressionType` and a `$class`.
enum ExpressionArchive {
    /// An archived value.
    indirect enum Node {
        /// `NSConstantValueExpression` of a value: a string, integer, double, Boolean, `nil`, or
        /// an array of them.
        case constant(Any?)
        case variable(String)
        case evaluatedObject
        /// `NSKeyPathExpression`: an operand and a key path.
        case keyPath(Node, String)
        /// `NSFunctionExpression`: `FUNCTION(receiver, "selector", arguments…)`.
        case function(Node, String, [Node])
        /// A built-in function (its receiver the class `_NSPredicateUtilities`).
        case builtIn(String, [Node])
        case aggregate([Node])
        /// Any object: a class name and its keys, for archives Foundation would not write.
        case object(String, [(String, Node)])
        /// A plain value in `$objects` (a string, a number).
        case plain(PlistObject)
        /// `$null`.
        case null
    }

    /// The archive of `root`.
    static func data(_ root: Node) -> Data {
        let archiver = Archiver()
        let rootReference = archiver.add(root)
        return BinaryPropertyListWriter.data(.dictionary([
            ("$version", .int(100000)),
            ("$archiver", .string("NSKeyedArchiver")),
            ("$top", .dictionary([("root", .uid(rootReference))])),
            ("$objects", .array(archiver.objects)),
        ]))
    }

    /// Foundation's class chains and expression types.
    static let classes: [String: (chain: [String], type: Int64?)] = [
        "NSConstantValueExpression": (["NSConstantValueExpression", "NSExpression", "NSObject"], 0),
        "NSSelfExpression": (["NSSelfExpression", "NSExpression", "NSObject"], 1),
        "NSVariableExpression": (["NSVariableExpression", "NSExpression", "NSObject"], 2),
        "NSKeyPathExpression": (["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"], 4),
        "NSFunctionExpression": (["NSFunctionExpression", "NSExpression", "NSObject"], 4),
        "NSKeyPathSpecifierExpression": (["NSKeyPathSpecifierExpression", "NSExpression", "NSObject"], 10),
        "NSAggregateExpression": (["NSAggregateExpression", "NSExpression", "NSObject"], 14),
        "NSArray": (["NSArray", "NSObject"], nil),
        "NSDate": (["NSDate", "NSObject"], nil),
    ]

    private final class Archiver {
        var objects: [PlistObject] = [.string("$null")]
        var classReferences: [String: Int] = [:]

        func classReference(_ name: String) -> Int {
            if let reference = classReferences[name] { return reference }
            let chain = ExpressionArchive.classes[name]?.chain ?? [name, "NSObject"]
            objects.append(.dictionary([("$classname", .string(name)), ("$classes", .array(chain.map { .string($0) }))]))
            classReferences[name] = objects.count - 1
            return objects.count - 1
        }

        /// An object of `className` with `keys` (each value already a reference or a plain value).
        func instance(_ className: String, _ keys: [(String, PlistObject)]) -> Int {
            let index = objects.count
            objects.append(.string("placeholder"))
            var entries = keys
            if let type = ExpressionArchive.classes[className]?.type { entries.append(("NSExpressionType", .int(type))) }
            entries.append(("$class", .uid(classReference(className))))
            objects[index] = .dictionary(entries)
            return index
        }

        func plain(_ object: PlistObject) -> Int {
            objects.append(object)
            return objects.count - 1
        }

        func array(_ references: [Int]) -> Int {
            instance("NSArray", [("NS.objects", .array(references.map { .uid($0) }))])
        }

        func value(_ value: Any?) -> Int {
            switch value {
            case nil: return 0
            case let string as String: return plain(.string(string))
            case let flag as Bool: return plain(.bool(flag))
            case let number as Int: return plain(.int(Int64(number)))
            case let number as Double: return plain(.real(number))
            case let date as Date: return instance("NSDate", [("NS.time", .real(date.timeIntervalSinceReferenceDate))])
            case let items as [Any?]: return array(items.map { self.value($0) })
            default: preconditionFailure("no archived form for \(String(describing: value))")
            }
        }

        func add(_ node: Node) -> Int {
            switch node {
            case .null:
                return 0
            case .plain(let object):
                return plain(object)
            case .constant(let value):
                return instance("NSConstantValueExpression", value == nil ? [] : [("NSConstantValue", .uid(self.value(value)))])
            case .variable(let name):
                return instance("NSVariableExpression", [("NSVariable", .uid(plain(.string(name))))])
            case .evaluatedObject:
                return instance("NSSelfExpression", [])
            case .keyPath(let operand, let path):
                let specifier = instance("NSKeyPathSpecifierExpression", [("NSKeyPath", .uid(plain(.string(path))))])
                return instance("NSKeyPathExpression", [
                    ("NSOperand", .uid(add(operand))), ("NSSelectorName", .uid(plain(.string("valueForKeyPath:")))),
                    ("NSArguments", .uid(array([specifier]))),
                ])
            case .function(let receiver, let selector, let arguments):
                return instance("NSFunctionExpression", [
                    ("NSOperand", .uid(add(receiver))), ("NSSelectorName", .uid(plain(.string(selector)))),
                    ("NSArguments", .uid(array(arguments.map(add)))),
                ])
            case .builtIn(let name, let arguments):
                let utilities = instance("NSConstantValueExpression", [("NSConstantValueClassName", .uid(plain(.string("_NSPredicateUtilities"))))])
                return instance("NSFunctionExpression", [
                    ("NSOperand", .uid(utilities)), ("NSSelectorName", .uid(plain(.string(name)))),
                    ("NSArguments", .uid(array(arguments.map(add)))),
                ])
            case .aggregate(let items):
                return instance("NSAggregateExpression", [("NSCollection", .uid(array(items.map(add))))])
            case .object(let className, let keys):
                return instance(className, keys.map { ($0.0, .uid(add($0.1))) })
            }
        }
    }
}
