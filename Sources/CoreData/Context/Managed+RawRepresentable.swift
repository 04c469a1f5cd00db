import Foundation

// `@Managed` properties of an enumeration type, stored as its raw value: Apple's pattern
// `@objc enum Status: Int16` with `@NSManaged var status: Status` becomes
//
// ```swift
// enum Status: Int16 { case open, done }
// final class Item: NSManagedObject {
//     @Managed var status: Status          // an Integer 16 attribute
//     @Managed var priority: Priority?     // enum Priority: String, a String attribute
// }
// ```
//
// A raw value the enumeration has no case for (a row another app version wrote) stops the
// process with a message naming the property and the value, where Apple's `@objc enum` reads
// a value outside its cases.
extension NSManagedObject {
    /// The value of an attribute declared as an enumeration, made from its raw value (a nil
    /// value reads as the raw type's nil value, `0` or `""`).
    @inlinable
    public func managedValue<Value: RawRepresentable>(for key: borrowing ManagedPropertyKey, as type: Value.Type) -> Value
    where Value.RawValue: ManagedAttributeValue {
        guard _managedStoresRawValue(key.name) else { return _managedAnyValue(at: _managedIndex(key), key: key.name, as: Value.self) }
        let raw = managedValue(for: key, as: Value.RawValue.self)
        guard let value = Value(rawValue: raw) ?? _managedProbeCase(key.name, as: Value.self) else { _managedInvalidRawValue(key.name, raw, as: Value.self) }
        return value
    }

    /// The value of an optional attribute declared as an enumeration; `nil` when it is nil.
    @inlinable
    public func managedValue<Value: RawRepresentable>(for key: borrowing ManagedPropertyKey, as type: Value?.Type) -> Value?
    where Value.RawValue: ManagedAttributeValue {
        guard _managedStoresRawValue(key.name) else { return _managedAnyValue(at: _managedIndex(key), key: key.name, as: Value?.self) }
        guard let raw = managedValue(for: key, as: Value.RawValue?.self) else { return nil }
        if let value = Value(rawValue: raw) { return value }
        guard _managedIsProbe else { _managedInvalidRawValue(key.name, raw, as: Value.self) }
        return _managedProbeCase(key.name, as: Value.self)
    }

    /// Sets an attribute declared as an enumeration to the value's raw value.
    @inlinable
    public func setManagedValue<Value: RawRepresentable>(_ value: Value, for key: borrowing ManagedPropertyKey)
    where Value.RawValue: ManagedAttributeValue {
        guard _managedStoresRawValue(key.name) else { return _setManagedAnyValue(value, at: _managedIndex(key), key: key.name) }
        setManagedValue(value.rawValue, for: key)
    }

    /// Sets an optional attribute declared as an enumeration (nil: none).
    @inlinable
    public func setManagedValue<Value: RawRepresentable>(_ value: Value?, for key: borrowing ManagedPropertyKey)
    where Value.RawValue: ManagedAttributeValue {
        guard _managedStoresRawValue(key.name) else { return _setManagedAnyValue(value as Any, at: _managedIndex(key), key: key.name) }
        setManagedValue(value?.rawValue, for: key)
    }

    /// Whether the attribute `key` holds an enumeration's raw value: not a transformable one,
    /// which holds the value itself (a `Codable` enumeration through a transformer), read and
    /// written as `value(forKey:)` and `setValue(_:forKey:)` do.
    @usableFromInline
    internal func _managedStoresRawValue(_ key: String) -> Bool {
        guard let index = layout.nameTable.index(of: key), let attribute = layout.properties[index] as? NSAttributeDescription else { return true }
        return attribute.attributeType != .transformableAttributeType && attribute.attributeType != .undefinedAttributeType
    }

    /// While a Swift key path is mapped (TypedKeyPaths.swift), its probe object holds values no
    /// enumeration has a case for: the attribute's default value, or else the first case of a
    /// `CaseIterable` one, or an integer one's case of the smallest raw value from -1 to 1024,
    /// stands in (nil for an optional one); `nil` otherwise (the getter then stops the process
    /// saying what to do), and outside a probe.
    @usableFromInline @inline(never)
    internal func _managedProbeCase<Value: RawRepresentable>(_ key: String, as type: Value.Type) -> Value? {
        guard _managedIsProbe else { return nil }
        if let index = layout.nameTable.index(of: key), let attribute = layout.properties[index] as? NSAttributeDescription,
           let raw = attribute.defaultValue as? Value.RawValue, let value = Value(rawValue: raw) {
            return value
        }
        if let cases = Value.self as? any CaseIterable.Type, let first = firstCase(cases) as? Value { return first }
        // An integer enumeration: its case of the smallest raw value from -1 to 1024.
        if let integer = Value.RawValue.self as? any FixedWidthInteger.Type {
            for candidate in -1...1024 {
                if let raw = integer.init(exactly: candidate) as? Value.RawValue, let value = Value(rawValue: raw) { return value }
            }
        }
        return nil
    }

    /// Whether a Swift key path is being mapped on this task (an optional enumeration then reads
    /// as nil where the probe's value is no case).
    @usableFromInline
    internal var _managedIsProbe: Bool { ManagedKeyRecorder.current != nil }

    @usableFromInline @inline(never)
    internal func _managedInvalidRawValue(_ key: String, _ raw: Any, as type: Any.Type) -> Never {
        if _managedIsProbe {
            preconditionFailure("CoreData: a Swift key path reads the @Managed property '\(key)' of class \(String(reflecting: Swift.type(of: self))), an enumeration of no case the key path's mapping can find; give the attribute a default value that is a case of \(String(reflecting: type)), or make it CaseIterable")
        }
        preconditionFailure("CoreData: the @Managed property '\(key)' of class \(String(reflecting: Swift.type(of: self))) (entity '\(entity.name ?? "")') holds \(raw), which is no case of \(String(reflecting: type))")
    }
}

/// The first case of an enumeration, if it has one.
private func firstCase<Value: CaseIterable>(_ type: Value.Type) -> Any? { Value.allCases.first }
