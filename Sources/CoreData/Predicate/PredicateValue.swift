import Foundation

/// A value as predicates compare it: constants are converted once when parsed, values read from
/// objects when compared. Every kind maps onto exactly one SQLite storage form, which is what lets
/// the SQL store and the in-memory evaluator agree:
///
/// | kind | from | SQLite |
/// | --- | --- | --- |
/// | `int` | `Int…`, `UInt…`, `Bool`, integral `NSNumber` | INTEGER |
/// | `double` | `Double`, `Float`, `Decimal`, `NSDecimalNumber`, floating `NSNumber` | REAL |
/// | `string` | `String`, `NSString`, `Substring`, `Character` | TEXT |
/// | `date` | `Date`, `NSDate` | REAL, seconds since 2001-01-01 |
/// | `data` | `Data`, `NSData`, `[UInt8]` | BLOB |
/// | `uuid` | `UUID`, `NSUUID` | 16-byte BLOB |
/// | `url` | `URL`, `NSURL` | TEXT, `absoluteString` |
/// | `objectID`, `object` | `NSManagedObjectID`, `NSManagedObject` | destination `Z_PK` |
internal enum PredicateValue: Sendable {
    case null
    case int(Int64)
    case double(Double)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case url(URL)
    /// An `NSManagedObjectID`.
    case objectID(ObjectReference)
    /// Any other object: an `NSManagedObject`, an `NSDictionary` standing for one, ….
    case object(ObjectReference)
    /// An array, set or ordered set; an aggregate `{…}`.
    case collection([PredicateValue])
    /// A value of another type (a dictionary, a Swift struct), compared with `AnyHashable` equality.
    case other(ValueBox)

    var isNull: Bool { if case .null = self { return true } else { return false } }

    /// A value that a function, an operator or `TERNARY` computed, as SQL gives it back: NaN
    /// (a number, or a date that many seconds from 2001) is `nil`, because SQLite has no NaN (it
    /// stores and returns NULL for one). So `sqrt:(x) == nil` agrees in SQL and in memory.
    ///
    /// A NaN *constant* stays NaN: it equals nothing and has no order (`n == %@` with NaN matches
    /// no object, `n != %@` every one), and the SQL compiler binds no NaN (``PredicateSQLCompiler``).
    var computed: PredicateValue {
        switch self {
        case .double(let v) where v.isNaN: return .null
        case .date(let d) where d.timeIntervalSinceReferenceDate.isNaN: return .null
        default: return self
        }
    }
}

/// Holds an object a predicate refers to. Predicates are parsed into `Sendable` trees; the objects
/// they name (`%@` with a managed object) are only read on the queue that evaluates them.
internal final class ObjectReference: @unchecked Sendable {
    let object: AnyObject
    init(_ object: AnyObject) { self.object = object }
}

/// Holds a value of a type predicates do not know; compared with `AnyHashable` equality only.
internal final class ValueBox: @unchecked Sendable {
    let value: Any
    init(_ value: Any) { self.value = value }
}

extension PredicateValue {
    /// The predicate form of a value read from an object or given as a format argument.
    init(_ any: Any?) {
        guard let any else { self = .null; return }
        // What key-value coding hands out most, by exact type first: each failed cast of the
        // cascade below costs a conformance lookup or a bridging attempt. An integral `NSNumber`
        // (an integer attribute's value) becomes what the cascade's `as Int` would make of it.
        let dynamicType = Swift.type(of: any)
        if dynamicType == NSNumber.self, let number = any as? NSNumber {
            switch UInt8(bitPattern: number.objCType.pointee) {
            case UInt8(ascii: "f"), UInt8(ascii: "d"): break
            default: self = PredicateValue.number(number); return
            }
        }
        if dynamicType == Date.self, let date = any as? Date { self = .date(date); return }
        switch any {
        case is NSNull: self = .null
        case let v as PredicateValue: self = v
        case let v as String: self = .string(v)
        case let v as Substring: self = .string(String(v))
        case let v as Character: self = .string(String(v))
        case let v as NSManagedObjectID: self = .objectID(ObjectReference(v))
        case let v as NSManagedObject: self = .object(ObjectReference(v))
        case let v as PredicateKeyValueCoding: self = .object(ObjectReference(v))
        // Before the number casts: a decimal bridges `as Double` through `doubleValue`, which is
        // off by an ulp for most fractions (``Decimal/nearestDouble``).
        case let v as NSDecimalNumber: self = .double(v.decimalValue.nearestDouble)
        case let v as Decimal: self = .double(v.nearestDouble)
        case let v as Bool where !(any is NSNumber): self = .int(v ? 1 : 0)
        case let v as Int: self = .int(Int64(v))
        case let v as Int64: self = .int(v)
        case let v as Int32: self = .int(Int64(v))
        case let v as Int16: self = .int(Int64(v))
        case let v as Int8: self = .int(Int64(v))
        case let v as UInt: self = v <= UInt(Int64.max) ? .int(Int64(v)) : .double(Double(v))
        case let v as UInt64: self = v <= UInt64(Int64.max) ? .int(Int64(v)) : .double(Double(v))
        case let v as UInt32: self = .int(Int64(v))
        case let v as UInt16: self = .int(Int64(v))
        case let v as UInt8: self = .int(Int64(v))
        case let v as Double: self = .double(v)
        case let v as Float: self = .double(Double(v))
        case let v as NSNumber: self = PredicateValue.number(v)
        case let v as NSString: self = .string(v as String)
        case let v as Date: self = .date(v)
        case let v as NSDate: self = .date(v as Date)
        case let v as Data: self = .data(v)
        case let v as NSData: self = .data(v as Data)
        case let v as UUID: self = .uuid(v)
        case let v as NSUUID: self = .uuid(v as UUID)
        case let v as URL: self = .url(v)
        case let v as NSURL: self = .url(v as URL)
        case let v as NSOrderedSet: self = .collection(v.array.map { PredicateValue($0) })
        case let v as NSArray: self = .collection(v.map { PredicateValue($0) })
        case let v as NSSet: self = .collection(v.allObjects.map { PredicateValue($0) })
        case let v as [Any]: self = .collection(v.map { PredicateValue($0) })
        case let v as Set<AnyHashable>: self = .collection(v.map { PredicateValue($0.base) })
        case let v as [String: Any]: self = .other(ValueBox(v))
        case let v as NSDictionary: self = .other(ValueBox(v))
        default:
            let mirror = Mirror(reflecting: any)
            if mirror.displayStyle == .optional {
                // An optional in an `Any` (`[parent as Any]`): nil is nil, as Apple's bridging
                // makes it `NSNull`; a value is that value. (Every cast above fails only for nil.)
                self = mirror.children.first.map { PredicateValue($0.value) } ?? .null
            } else if let collection = PredicateValue.genericCollection(any) {
                self = .collection(collection)
            } else if type(of: any) is AnyClass {
                self = .object(ObjectReference(any as AnyObject))
            } else {
                self = .other(ValueBox(any))
            }
        }
    }

    /// A dictionary as the collection of its values, as `IN` takes it (Apple's format syntax:
    /// "in the case of a dictionary, its values are used"); any other value as it is.
    var dictionaryValues: PredicateValue {
        dictionary.map { .collection($0.values.map { PredicateValue($0) }) } ?? self
    }

    /// The dictionary this value holds (a Swift dictionary or an `NSDictionary`), if it is one.
    var dictionary: [AnyHashable: Any]? {
        guard case .other(let box) = self else { return nil }
        if let dictionary = box.value as? [AnyHashable: Any] { return dictionary }
        guard let dictionary = box.value as? NSDictionary else { return nil }
        var result: [AnyHashable: Any] = [:]
        for (key, value) in dictionary {
            // (An `NSString` key as a `String`, so that a lookup by a `String` finds it.)
            if let text = key as? String { result[text] = value } else if let key = key as? AnyHashable { result[key] = value }
        }
        return result
    }

    /// An `NSNumber` as an integer when it holds one, else as a double.
    private static func number(_ number: NSNumber) -> PredicateValue {
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "f"), UInt8(ascii: "d"): return .double(number.doubleValue)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"):
            let value = number.uint64Value
            return value <= UInt64(Int64.max) ? .int(Int64(value)) : .double(Double(value))
        default: return .int(number.int64Value)
        }
    }

    /// Sets of any element type and other sequences bridged as collections.
    private static func genericCollection(_ any: Any) -> [PredicateValue]? {
        if let sequence = any as? any Sequence, !(any is String), !(any is Data) {
            return sequence.map { PredicateValue($0 as Any) }
        }
        return nil
    }

    /// The value in a form key-value coding can walk (for key paths on constants and variables).
    var walkable: Any? {
        switch self {
        case .null: return nil
        case .int(let v): return NSNumber(value: v)
        case .double(let v): return NSNumber(value: v)
        case .string(let v): return v
        case .date(let v): return v
        case .data(let v): return v
        case .uuid(let v): return v
        case .url(let v): return v
        case .objectID(let ref), .object(let ref): return ref.object
        case .collection(let items): return items.map { $0.walkable as Any }
        case .other(let box): return box.value
        }
    }

    /// The value written as a format-string literal.
    var formatDescription: String {
        switch self {
        case .null: return "nil"
        case .int(let v): return String(v)
        case .double(let v): return String(v)
        case .string(let v): return "\"" + v.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case .date(let v): return "CAST(\(v.timeIntervalSinceReferenceDate), \"NSDate\")"
        case .data(let v): return "<\(v.map { String(format: "%02x", $0) }.joined())>"
        case .uuid(let v): return v.uuidString
        case .url(let v): return v.absoluteString
        case .objectID(let ref), .object(let ref): return String(describing: ref.object)
        case .collection(let items): return "{" + items.map(\.formatDescription).joined(separator: ", ") + "}"
        case .other(let box): return String(describing: box.value)
        }
    }
}

// MARK: - Comparing values

extension PredicateValue {
    /// Apple's equality for `==`, `!=`, `IN`, `CONTAINS` on collections: `nil` equals only `nil`;
    /// numbers compare by value across `Int`/`Double`/`Bool`; strings compare by their UTF-8 bytes
    /// (as SQLite's BINARY collation), after folding for `[c]`/`[d]`; a managed object equals its
    /// object ID; values of different kinds are never equal.
    static func equal(_ a: PredicateValue, _ b: PredicateValue, options: ComparisonOptions = []) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.int, .int), (.int, .double), (.double, .int), (.double, .double):
            return compareNumbers(a, b) == .orderedSame
        case (.string(let x), .string(let y)):
            return PredicateStrings.equal(x, y, options: options)
        case (.date(let x), .date(let y)): return x.timeIntervalSinceReferenceDate == y.timeIntervalSinceReferenceDate
        case (.data(let x), .data(let y)): return x == y
        case (.uuid(let x), .uuid(let y)): return x == y
        case (.url(let x), .url(let y)): return x.absoluteString == y.absoluteString
        case (.objectID, .objectID), (.objectID, .object), (.object, .objectID), (.object, .object):
            return objectsEqual(a, b)
        case (.collection(let x), .collection(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1, options: options) }
        case (.other(let x), .other(let y)):
            if let l = x.value as? AnyHashable, let r = y.value as? AnyHashable { return l == r }
            return false
        default: return false
        }
    }

    /// The ordering of two values for `<`, `<=`, `>`, `>=`, `BETWEEN`, or `nil` when they have no
    /// order (a `nil` operand, different kinds, data, URLs, objects): such comparisons are false.
    static func order(_ a: PredicateValue, _ b: PredicateValue, options: ComparisonOptions = []) -> ComparisonResult? {
        switch (a, b) {
        case (.int, .int), (.int, .double), (.double, .int), (.double, .double):
            return compareNumbers(a, b)
        case (.string(let x), .string(let y)):
            return PredicateStrings.compare(PredicateStrings.fold(x, options), PredicateStrings.fold(y, options))
        case (.date(let x), .date(let y)):
            return compareDoubles(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
        case (.uuid(let x), .uuid(let y)):
            return PredicateStrings.compareBytes(PredicateValue.bytes(of: x), PredicateValue.bytes(of: y))
        default: return nil
        }
    }

    private static func objectsEqual(_ a: PredicateValue, _ b: PredicateValue) -> Bool {
        func id(_ value: PredicateValue) -> NSManagedObjectID? {
            switch value {
            case .objectID(let ref): return ref.object as? NSManagedObjectID
            case .object(let ref):
                if let coding = ref.object as? PredicateKeyValueCoding { return coding.predicateObjectID }
                return (ref.object as? NSManagedObject)?.objectID
            default: return nil
            }
        }
        if case .object(let x) = a, case .object(let y) = b, x.object === y.object { return true }
        if let x = id(a), let y = id(b) { return x == y }
        if case .object(let x) = a, case .object(let y) = b, let l = x.object as? NSObject { return l.isEqual(y.object) }
        return false
    }

    /// Numbers ordered exactly, as SQLite orders INTEGER against REAL (no rounding of large integers).
    static func compareNumbers(_ a: PredicateValue, _ b: PredicateValue) -> ComparisonResult? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        case (.double(let x), .double(let y)): return compareDoubles(x, y)
        case (.int(let x), .double(let y)): return compareIntToDouble(x, y)
        case (.double(let x), .int(let y)):
            guard let result = compareIntToDouble(y, x) else { return nil }
            return result == .orderedAscending ? .orderedDescending : (result == .orderedDescending ? .orderedAscending : .orderedSame)
        default: return nil
        }
    }

    static func compareDoubles(_ x: Double, _ y: Double) -> ComparisonResult? {
        if x.isNaN || y.isNaN { return nil }
        return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    }

    private static func compareIntToDouble(_ i: Int64, _ d: Double) -> ComparisonResult? {
        if d.isNaN { return nil }
        if d >= 9223372036854775808.0 { return .orderedAscending }
        if d < -9223372036854775808.0 { return .orderedDescending }
        let floor = d.rounded(.down)
        let whole = Int64(floor)
        if i < whole { return .orderedAscending }
        if i > whole { return .orderedDescending }
        return d > floor ? .orderedAscending : .orderedSame
    }

    /// The 16 bytes of a UUID, as the SQLite store writes them.
    static func bytes(of uuid: UUID) -> [UInt8] {
        let u = uuid.uuid
        return [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
    }
}
