import Foundation

/// One property value as stores and snapshots hold it: `Sendable`, compact, typed by the
/// attribute's ``NSAttributeType``. Objects keep their attribute values in this form too, so
/// reading a typed property is a switch, not a dynamic cast. `@usableFromInline` for the
/// inlined `@Managed` getters (`Managed.swift`).
@usableFromInline
internal enum StoreValue: Sendable, Hashable {
    case null
    /// Integer 16/32/64 attributes.
    case int(Int64)
    case bool(Bool)
    /// Double and Float attributes.
    case double(Double)
    case string(String)
    case date(Date)
    /// Binary data, and transformable values in their stored (transformed) form.
    case data(Data)
    case uuid(UUID)
    case url(URL)
    case decimal(Decimal)
    /// To-one relationships in snapshots, and object-ID attributes.
    case objectID(NSManagedObjectID)
    /// A transformable or undefined-type value in its in-memory form. Objects only; never
    /// crosses a queue (the box is `@unchecked Sendable` for that reason).
    case object(ObjectBox)

    var isNull: Bool { if case .null = self { return true } else { return false } }
}

/// A non-`Sendable` value held by one object on its context's queue.
@usableFromInline
internal final class ObjectBox: @unchecked Sendable, Hashable {
    let value: Any
    init(_ value: Any) { self.value = value }
    @usableFromInline static func == (lhs: ObjectBox, rhs: ObjectBox) -> Bool {
        if lhs === rhs { return true }
        if let l = lhs.value as? AnyHashable, let r = rhs.value as? AnyHashable { return l == r }
        return false
    }
    @usableFromInline func hash(into hasher: inout Hasher) {
        if let h = value as? AnyHashable { hasher.combine(h) } else { hasher.combine(ObjectIdentifier(self)) }
    }
}

extension StoreValue {
    /// The storage form of a value given through key-value coding (`NSNumber`, `Int`, `String`,
    /// `Date`, `Data`, `UUID`, `URL`, `Decimal`, `NSNull`, `nil`, …) for an attribute of `type`:
    /// `.null` for `nil` and `NSNull`, the value boxed for attributes that hold objects
    /// (transformable, undefined, composite), `nil` when the value has the wrong type.
    static func storage(of value: Any?, for type: NSAttributeType) -> StoreValue? {
        guard let value, !StoreValue.isNull(value) else { return .null }
        if let converted = StoreValue.convert(value, to: type) { return converted }
        switch type {
        case .transformableAttributeType, .undefinedAttributeType, .compositeAttributeType: return .object(ObjectBox(value))
        default: return nil
        }
    }

    /// Reads a trivial value stored inline in an `Any` (an existential container keeps values of up
    /// to three words in place), skipping the general dynamic cast on the `setValue` hot path.
    /// The caller has checked that the dynamic type is exactly `T`.
    @inline(__always)
    static func unboxInline<T: BitwiseCopyable>(_ value: Any, as type: T.Type) -> T {
        assert(MemoryLayout<T>.size <= 3 * MemoryLayout<Int>.size)
        return withUnsafeBytes(of: value) { $0.load(as: T.self) }
    }

    /// The storage form of the commonest values (`Int`, `Int64`, `Double`, `Bool`, `String`,
    /// `Date`) for the commonest attribute kinds, decided on the value's exact dynamic type with
    /// no dynamic cast; `nil` means "take the general path" (``convert(_:to:)``), not "wrong type".
    @inline(__always)
    static func fastConvert(_ value: Any, kind: ManagedStorageKind) -> StoreValue? {
        let type = Swift.type(of: value)
        switch kind {
        case .integer64, .integer32, .integer16:
            let v: Int64
            if type == Int.self { v = Int64(unboxInline(value, as: Int.self)) }
            else if type == Int64.self { v = unboxInline(value, as: Int64.self) }
            else { return nil }
            return integer(v, fitting: kind).map { .int($0) }
        case .double:
            if type == Double.self { return .double(unboxInline(value, as: Double.self)) }
            if type == Int.self { return .double(Double(unboxInline(value, as: Int.self))) }
            return nil
        case .bool:
            return type == Bool.self ? .bool(unboxInline(value, as: Bool.self)) : nil
        case .date:
            return type == Date.self ? .date(Date(timeIntervalSinceReferenceDate: unboxInline(value, as: Double.self))) : nil
        case .string:
            return type == String.self ? .string(value as! String) : nil
        default:
            return nil
        }
    }

    /// ``fastConvert(_:kind:)`` for the `Any?` that `setValue(_:forKey:)` receives, read in place:
    /// an `Optional<Any>` is an existential container (three words of inline value, then the
    /// value's type metadata; no metadata for `nil`), so an `Int`, `Int64`, `Double` or `Bool`
    /// is recognized and read without copying the container (a `String` or `Date` is copied out
    /// of its inline buffer). Anything else: `nil`.
    @inline(__always)
    static func fastConvert(borrowing value: borrowing Any?, kind: ManagedStorageKind) -> StoreValue? {
        readingContainer(of: value) { bytes, metadata -> StoreValue? in
            switch kind {
            case .integer64, .integer32, .integer16:
                return fastInteger(bytes, metadata: metadata, kind: kind).map { .int($0) }
            case .double:
                if metadata == Metadata.double { return .double(bytes.load(as: Double.self)) }
                if metadata == Metadata.int { return .double(Double(bytes.load(as: Int.self))) }
                if metadata == Metadata.number { return withNumber(bytes) { .double($0.doubleValue) } }
                return nil
            case .bool:
                if metadata == Metadata.bool { return .bool(bytes.load(as: Bool.self)) }
                if metadata == Metadata.number { return withNumber(bytes) { .bool($0.boolValue) } }
                return nil
            case .string:
                // A string fits the container's inline buffer: copied out (retained), not unboxed.
                return metadata == Metadata.string ? .string(bytes.load(as: String.self)) : nil
            case .date:
                return metadata == Metadata.date ? .date(bytes.load(as: Date.self)) : nil
            default:
                return nil
            }
        }
    }

    /// The integer an `Int` or `Int64` in `value` holds, if `kind` is an integer kind whose range
    /// it fits; `nil` means "take another path". Read in place, as ``fastConvert(borrowing:kind:)``
    /// does, and without making a `StoreValue` (whose destruction is a call).
    @inline(__always)
    static func fastInteger(borrowing value: borrowing Any?, kind: ManagedStorageKind) -> Int64? {
        readingContainer(of: value) { bytes, metadata in fastInteger(bytes, metadata: metadata, kind: kind) }
    }

    /// Calls `body` with the bytes of `value`'s existential container and the type metadata of
    /// what it holds, read in place; `nil` without calling it for `nil` (the general path then
    /// stores `.null`).
    @inline(__always)
    private static func readingContainer<R>(of value: borrowing Any?,
                                            _ body: (UnsafeRawBufferPointer, _ metadata: UInt) -> R?) -> R? {
        withUnsafeBytes(of: value) { bytes -> R? in
            guard bytes.count == 4 * MemoryLayout<Int>.size else { return nil }
            let metadata = bytes.load(fromByteOffset: 3 * MemoryLayout<Int>.size, as: UInt.self)
            return metadata == 0 ? nil : body(bytes, metadata)
        }
    }

    @inline(__always)
    private static func fastInteger(_ bytes: UnsafeRawBufferPointer, metadata: UInt, kind: ManagedStorageKind) -> Int64? {
        let v: Int64
        if metadata == Metadata.int { v = Int64(bytes.load(as: Int.self)) }
        else if metadata == Metadata.int64 { v = bytes.load(as: Int64.self) }
        else if metadata == Metadata.number, let exact = withNumber(bytes, exactInteger) { v = exact }
        else { return nil }
        return integer(v, fitting: kind)
    }

    /// Calls `body` with the `NSNumber` an existential container holds (its first word), without
    /// a retain: the container, borrowed by the caller, keeps it.
    @inline(__always)
    private static func withNumber<R>(_ bytes: UnsafeRawBufferPointer, _ body: (NSNumber) -> R) -> R {
        bytes.load(as: Unmanaged<NSNumber>.self)._withUnsafeGuaranteedRef(body)
    }

    /// The integer an `NSNumber` holds, if it was made from an integer (its `objCType`), so
    /// that `int64Value` is exact; `nil` otherwise (a floating-point number, an unsigned one
    /// past `Int64.max`: the general path decides, as ``integer(exactly:)`` does). The
    /// `setValue(NSNumber(value: i), forKey:)` of much Core Data code, without a dynamic cast.
    @inline(__always)
    private static func exactInteger(_ number: NSNumber) -> Int64? {
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "c"), UInt8(ascii: "C"), UInt8(ascii: "s"), UInt8(ascii: "S"), UInt8(ascii: "i"), UInt8(ascii: "I"),
             UInt8(ascii: "l"), UInt8(ascii: "q"):
            return number.int64Value
        default:
            return nil
        }
    }

    /// `v` if `kind` is an integer kind whose range it fits, else `nil` (the general path
    /// reports it).
    @inline(__always)
    static func integer(_ v: Int64, fitting kind: ManagedStorageKind) -> Int64? {
        switch kind {
        case .integer64: return v
        case .integer32: return v >= Int64(Int32.min) && v <= Int64(Int32.max) ? v : nil
        case .integer16: return v >= Int64(Int16.min) && v <= Int64(Int16.max) ? v : nil
        default: return nil
        }
    }

    /// Type metadata addresses of the types ``fastConvert(borrowing:kind:)`` reads in place.
    /// (Computed: the standard library's metadata are constants; a `static let` costs a
    /// `swift_once` check per read.)
    private enum Metadata {
        static var int: UInt { address(of: Int.self) }
        static var int64: UInt { address(of: Int64.self) }
        static var double: UInt { address(of: Double.self) }
        static var bool: UInt { address(of: Bool.self) }
        static var string: UInt { address(of: String.self) }
        static var date: UInt { address(of: Date.self) }
        /// `NSNumber` as the static type of the value (`NSNumber(value:)`; a subclass passed as
        /// an `NSNumber` answers through its own overrides).
        static var number: UInt { address(of: NSNumber.self) }
        @inline(__always)
        private static func address(of type: Any.Type) -> UInt { UInt(bitPattern: unsafeBitCast(type, to: UnsafeRawPointer.self)) }
    }

    /// Whether a value is `NSNull`, tested on its dynamic type so that Swift values are not
    /// bridged to Foundation objects just to be checked.
    @inline(__always)
    static func isNull(_ value: Any) -> Bool { type(of: value) is NSNull.Type }

    /// The storage form of `value` for an attribute type, or `nil` if it has the wrong type.
    static func convert(_ value: Any, to type: NSAttributeType) -> StoreValue? {
        if Swift.type(of: value) is NSNumber.Type { return convert(number: value as! NSNumber, to: type) }
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            guard let v = integer(value) else { return nil }
            switch type {
            case .integer16AttributeType: guard v >= Int64(Int16.min) && v <= Int64(Int16.max) else { return nil }
            case .integer32AttributeType: guard v >= Int64(Int32.min) && v <= Int64(Int32.max) else { return nil }
            default: break
            }
            return .int(v)
        case .booleanAttributeType:
            if let b = value as? Bool { return .bool(b) }
            if let n = value as? NSNumber { return .bool(n.boolValue) }
            return nil
        case .doubleAttributeType, .floatAttributeType:
            if Swift.type(of: value) == Double.self { return .double(unboxInline(value, as: Double.self)) }
            if let d = value as? Double { return .double(d) }
            if let f = value as? Float { return .double(Double(f)) }
            if let i = integer(value) { return .double(Double(i)) }
            if let n = value as? NSNumber { return .double(n.doubleValue) }
            if let d = value as? Decimal { return .double(d.nearestDouble) }
            return nil
        case .decimalAttributeType:
            if let d = value as? Decimal { return .decimal(d) }
            if let d = value as? NSDecimalNumber { return .decimal(d.decimalValue) }
            if let i = integer(value) { return .decimal(Decimal(i)) }
            if let d = value as? Double { return .decimal(Decimal(storing: d)) }
            if let n = value as? NSNumber { return .decimal(Decimal(storing: n)) }
            return nil
        case .stringAttributeType:
            if Swift.type(of: value) == String.self { return .string(value as! String) }
            if let s = value as? String { return .string(s) }
            if let s = value as? NSString { return .string(s as String) }
            if let s = value as? Substring { return .string(String(s)) }
            return nil
        case .dateAttributeType:
            if let d = value as? Date { return .date(d) }
            if let d = value as? NSDate { return .date(d as Date) }
            return nil
        case .binaryDataAttributeType:
            if let d = value as? Data { return .data(d) }
            if let d = value as? NSData { return .data(d as Data) }
            if let b = value as? [UInt8] { return .data(Data(b)) }
            return nil
        case .UUIDAttributeType:
            if let u = value as? UUID { return .uuid(u) }
            if let u = value as? NSUUID { return .uuid(u as UUID) }
            return nil
        case .URIAttributeType:
            if let u = value as? URL { return .url(u) }
            if let u = value as? NSURL { return .url(u as URL) }
            return nil
        case .objectIDAttributeType:
            if let id = value as? NSManagedObjectID { return .objectID(id) }
            return nil
        case .transformableAttributeType, .undefinedAttributeType, .compositeAttributeType:
            return nil
        }
    }

    /// ``convert(_:to:)`` for an `NSNumber` (what key-value coding hands out, and so what a
    /// `validateValue(_:forKey:)` override passes back): no bridging casts.
    private static func convert(number: NSNumber, to type: NSAttributeType) -> StoreValue? {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            guard let v = integer(exactly: number) else { return nil }
            switch type {
            case .integer16AttributeType: guard v >= Int64(Int16.min) && v <= Int64(Int16.max) else { return nil }
            case .integer32AttributeType: guard v >= Int64(Int32.min) && v <= Int64(Int32.max) else { return nil }
            default: break
            }
            return .int(v)
        case .booleanAttributeType: return .bool(number.boolValue)
        case .doubleAttributeType, .floatAttributeType: return .double(number.doubleValue)
        case .decimalAttributeType:
            if let decimal = number as? NSDecimalNumber { return .decimal(decimal.decimalValue) }
            if let v = integer(exactly: number) { return .decimal(Decimal(v)) }
            return .decimal(Decimal(storing: number.doubleValue))
        default: return nil
        }
    }

    /// An integer from any Swift integer type or an integral `NSNumber`.
    static func integer(_ value: Any) -> Int64? {
        // Exact type matches first: a failed cast costs protocol-conformance lookups.
        let type = Swift.type(of: value)
        if type == Int.self { return Int64(unboxInline(value, as: Int.self)) }
        if type == Int64.self { return unboxInline(value, as: Int64.self) }
        if type == Int32.self { return Int64(unboxInline(value, as: Int32.self)) }
        if type == Int16.self { return Int64(unboxInline(value, as: Int16.self)) }
        if type is NSNumber.Type {
            // What value(forKey:) hands out (and so what validateValue(_:forKey:) receives):
            // checked before the Swift integer casts, which would each try to bridge it.
            return integer(exactly: value as! NSNumber)
        }
        switch value {
        case let v as Int: return Int64(v)
        case let v as Int64: return v
        case let v as Int32: return Int64(v)
        case let v as Int16: return Int64(v)
        case let v as Int8: return Int64(v)
        case let v as UInt8: return Int64(v)
        case let v as UInt16: return Int64(v)
        case let v as UInt32: return Int64(v)
        case let v as UInt: return v <= UInt(Int64.max) ? Int64(v) : nil
        case let v as UInt64: return v <= UInt64(Int64.max) ? Int64(v) : nil
        case let v as Bool: return v ? 1 : 0
        case let n as NSNumber: return integer(exactly: n)
        default: return nil
        }
    }

    /// An `NSNumber`'s value if it is integral and fits in 64 bits.
    private static func integer(exactly number: NSNumber) -> Int64? {
        let d = number.doubleValue
        guard d == d.rounded(), abs(d) < 9.3e18 else { return nil }
        return number.int64Value
    }

    /// The value as key-value coding returns it: `NSNumber` for numbers and Booleans (as on Apple
    /// platforms), `String`, `Date`, `Data`, `UUID`, `URL`, `NSDecimalNumber`, or `nil`.
    var objectValue: Any? {
        switch self {
        case .null: return nil
        case .int(let v): return NSNumber(value: v)
        case .bool(let v): return NSNumber(value: v)
        case .double(let v): return NSNumber(value: v)
        case .string(let v): return v
        case .date(let v): return v
        case .data(let v): return v
        case .uuid(let v): return v
        case .url(let v): return v
        case .decimal(let v): return NSDecimalNumber(decimal: v)
        case .objectID(let v): return v
        case .object(let box): return box.value
        }
    }
}

extension UUID {
    /// The UUID whose 16 bytes the SQLite store wrote (`nil` for any other length).
    init?(storedBytes data: Data) {
        guard data.count == 16 else { return nil }
        self = data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }
}

extension Decimal {
    /// `value` as a decimal, or NaN for an infinity, which a decimal cannot hold (Foundation's
    /// conversion stops the process on one): a value set, read from a store another tool wrote,
    /// or computed.
    init(storing value: Double) {
        self = value.isFinite ? Decimal(value) : .nan
    }

    /// `number` as a decimal, or NaN for an infinity (``init(storing:)``).
    init(storing number: NSNumber) {
        self = number.doubleValue.isFinite ? number.decimalValue : .nan
    }

    /// A decimal as a store writes it (its `description`, `"NaN"` for NaN; PostgreSQL's infinities
    /// read as NaN); `nil` for other text.
    init?(storedText text: String) {
        if let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) {
            self = value
        } else if text == "NaN" || text == "Infinity" || text == "-Infinity" { // (PostgreSQL's numeric has infinities)
            self = .nan
        } else {
            return nil
        }
    }
}
