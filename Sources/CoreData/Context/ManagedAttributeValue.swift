import Foundation

/// A Swift type that `@Managed` properties read and write in the attribute's own storage, with
/// no `Any` box and no dynamic cast: `Int`, `Int8`, `Int16`, `Int32`, `Int64`, `Int128`,
/// `Double`, `Float`, `Bool`, `String`, `Date`, `Data`, `UUID`, `URL` and `Decimal`.
///
/// ```swift
/// final class Car: NSManagedObject {
///     @Managed var year: Int16     // managedValue(for:as:) with Value == Int16
///     @Managed var name: String?   // managedValue(for:as:) with Value? == String?
/// }
/// ```
///
/// `managedValue(for:as:)` and `setManagedValue(_:for:)` of ``NSManagedObject`` are generic over
/// this protocol, and each conformance says how its type reads from and stores into an object's
/// value slot: the accessors are specialized and inlined per type in the caller, as if written
/// out by hand. The requirements are that runtime, not API to call. Another signed integer type
/// is stored as an integer attribute once it conforms with an empty extension
/// (`extension MyInteger: ManagedAttributeValue {}`); a type that does not conform (a
/// transformable value, `NSNumber?`) takes the general path, ``NSManagedObject/value(forKey:)``
/// and a cast.
public protocol ManagedAttributeValue {
    /// The value at `index` of `object`'s values (its fault fired), nil when the value is nil.
    /// A value of another type converts as `NSNumber` does, or stops the process when no
    /// conversion exists (a string read as `Int`).
    static func _managedValue(in object: NSManagedObject, at index: Int) -> Self?

    /// What a non-optional property reads when the value is nil (as Apple's scalar accessors read
    /// a nil number as 0); nil when the type has none, and such a read stops the process.
    static var _managedValueForNil: Self? { get }

    /// Sets the property at `index` of `object` (named `key`) to `self`, with change notifications:
    /// in place when the attribute stores this type, else converted as `setValue(_:forKey:)` does.
    func _setManagedValue(in object: NSManagedObject, at index: Int, key: String)
}

// MARK: Integers

extension ManagedAttributeValue where Self: FixedWidthInteger & SignedInteger {
    /// Reads an integer attribute (`Integer 16/32/64`); other numbers convert.
    @inlinable @inline(__always)
    public static func _managedValue(in object: NSManagedObject, at index: Int) -> Self? {
        switch object._values[index] {
        case .int(let value): return Self(truncatingIfNeeded: value)
        case .null: return nil
        default: return object._managedIntegerSlow(at: index).map { Self(truncatingIfNeeded: $0) }
        }
    }

    /// `0`.
    @inlinable @inline(__always)
    public static var _managedValueForNil: Self? { 0 }

    /// Stores an integer; one out of the attribute's range is kept as given and fails validation at
    /// save, as with `setValue(_:forKey:)`.
    @inlinable @inline(__always)
    public func _setManagedValue(in object: NSManagedObject, at index: Int, key: String) {
        if let value = Int64(exactly: self) {
            object._setManagedInteger(value, original: self, at: index, key: key)
        } else {
            object._setManagedOutOfRange(self, at: index, key: key)
        }
    }
}

extension Int: ManagedAttributeValue {}
extension Int8: ManagedAttributeValue {}
extension Int16: ManagedAttributeValue {}
extension Int32: ManagedAttributeValue {}
extension Int64: ManagedAttributeValue {}
extension Int128: ManagedAttributeValue {}

// MARK: Numbers and Booleans

extension Double: ManagedAttributeValue {
    /// Reads a `Double` or `Float` attribute; other numbers convert.
    @inlinable @inline(__always)
    public static func _managedValue(in object: NSManagedObject, at index: Int) -> Double? {
        switch object._values[index] {
        case .double(let value): return value
        case .null: return nil
        default: return object._managedDoubleSlow(at: index)
        }
    }

    /// `0`.
    @inlinable @inline(__always)
    public static var _managedValueForNil: Double? { 0 }

    /// Stores a `Double`.
    public func _setManagedValue(in object: NSManagedObject, at index: Int, key: String) {
        object._setManagedStoreValue(.double(self), kind: .double, original: self, at: index, key: key)
    }
}

extension Float: ManagedAttributeValue {
    /// Reads a `Float` or `Double` attribute (both are stored as `Double`); other numbers convert.
    @inlinable @inline(__always)
    public static func _managedValue(in object: NSManagedObject, at index: Int) -> Float? {
        Double._managedValue(in: object, at: index).map { Float($0) }
    }

    /// `0`.
    @inlinable @inline(__always)
    public static var _managedValueForNil: Float? { 0 }

    /// Stores a `Float` (as a `Double`).
    public func _setManagedValue(in object: NSManagedObject, at index: Int, key: String) {
        object._setManagedStoreValue(.double(Double(self)), kind: .double, original: self, at: index, key: key)
    }
}

extension Bool: ManagedAttributeValue {
    /// Reads a `Boolean` attribute; numbers convert (non-zero is `true`).
    @inlinable @inline(__always)
    public static func _managedValue(in object: NSManagedObject, at index: Int) -> Bool? {
        switch object._values[index] {
        case .bool(let value): return value
        case .null: return nil
        default: return object._managedBoolSlow(at: index)
        }
    }

    /// `false`.
    @inlinable @inline(__always)
    public static var _managedValueForNil: Bool? { false }

    /// Stores a `Bool`.
    public func _setManagedValue(in object: NSManagedObject, at index: Int, key: String) {
        object._setManagedStoreValue(.bool(self), kind: .bool, original: self, at: index, key: key)
    }
}

extension Decimal: ManagedAttributeValue {
    /// Reads a `Decimal` attribute; other numbers convert.
    @inlinable @inline(__always)
    public static func _managedValue(in object: NSManagedObject, at index: Int) -> Decimal? {
        switch object._values[index] {
        case .decimal(let value): return value
        case .null: return nil
        default: return object._managedDecimalSlow(at: index)
        }
    }

    /// `0`.
    @inlinable @inline(__always)
    public static var _managedValueForNil: Decimal? { 0 }

    /// Stores a `Decimal`.
    public func _setManagedValue(in object: NSManagedObject, at index: Int, key: String) {
        object._setManagedStoreValue(.decimal(self), kind: .decimal, original: self, at: index, key: key)
    }
}

// MARK: Objects' values (no conversion: another type stops the process)

extension String: ManagedAttributeValue {
    /// Reads a `String` attribute.
    @inlinable @inline(__always)
    public static func _managedValue(in object: NSManagedObject, at index: Int) -> String? {
        switch object._values[index] {
        case .string(let value): return value
        case .null: return nil
        default: return object._managedStringSlow(at: index)
        }
    }

    /// `""`.
    @inlinable @inline(__always)
    public static var _managedValueForNil: String? { "" }

    /// Stores a `String`.
    public func _setManagedValue(in object: NSManagedObject, at index: Int, key: String) {
        object._setManagedStoreValue(.string(self), kind: .string, original: self, at: index, key: key)
    }
}

extension Date: ManagedAttributeValue {
    /// Reads a `Date` attribute.
    @inlinable @inline(__always)
    public static func _managedValue(in object: NSManagedObject, at index: Int) -> Date? {
        switch object._values[index] {
        case .date(let value): return value
        case .null: return nil
        default: return object._managedDateSlow(at: index)
        }
    }

    /// The reference date, `Date(timeIntervalSinceReferenceDate: 0)`.
    @inlinable @inline(__always)
    public static var _managedValueForNil: Date? { Date(timeIntervalSinceReferenceDate: 0) }

    /// Stores a `Date`.
    public func _setManagedValue(in object: NSManagedObject, at index: Int, key: String) {
        object._setManagedStoreValue(.date(self), kind: .date, original: self, at: index, key: key)
    }
}

extension Data: ManagedAttributeValue {
    /// Reads a `Binary Data` attribute (or a transformable one's value, when it is `Data`).
    @inlinable @inline(__always)
    public static func _managedValue(in object: NSManagedObject, at index: Int) -> Data? {
        switch object._values[index] {
        // A transformable attribute holds its stored (encoded) form as `.data` until first read.
        case .data(let value) where object.layout.storageKinds[index] == .binaryData: return value
        case .null: return nil
        default: return object._managedDataSlow(at: index)
        }
    }

    /// Empty `Data()`.
    @inlinable @inline(__always)
    public static var _managedValueForNil: Data? { Data() }

    /// Stores a `Data`.
    public func _setManagedValue(in object: NSManagedObject, at index: Int, key: String) {
        object._setManagedStoreValue(.data(self), kind: .binaryData, original: self, at: index, key: key)
    }
}

extension UUID: ManagedAttributeValue {
    /// Reads a `UUID` attribute.
    @inlinable @inline(__always)
    public static func _managedValue(in object: NSManagedObject, at index: Int) -> UUID? {
        switch object._values[index] {
        case .uuid(let value): return value
        case .null: return nil
        default: return object._managedUUIDSlow(at: index)
        }
    }

    /// The all-zero UUID.
    @inlinable @inline(__always)
    public static var _managedValueForNil: UUID? { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }

    /// Stores a `UUID`.
    public func _setManagedValue(in object: NSManagedObject, at index: Int, key: String) {
        object._setManagedStoreValue(.uuid(self), kind: .uuid, original: self, at: index, key: key)
    }
}

extension URL: ManagedAttributeValue {
    /// Reads a `URI` attribute.
    @inlinable @inline(__always)
    public static func _managedValue(in object: NSManagedObject, at index: Int) -> URL? {
        switch object._values[index] {
        case .url(let value): return value
        case .null: return nil
        default: return object._managedURLSlow(at: index)
        }
    }

    /// None: there is no empty URL, and a nil non-optional `URL` stops the process.
    @inlinable @inline(__always)
    public static var _managedValueForNil: URL? { nil }

    /// Stores a `URL`.
    public func _setManagedValue(in object: NSManagedObject, at index: Int, key: String) {
        object._setManagedStoreValue(.url(self), kind: .url, original: self, at: index, key: key)
    }
}
