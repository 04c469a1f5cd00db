import Foundation
import Synchronization

/// Makes a stored-looking property of an ``NSManagedObject`` subclass read and write the
/// object's value for the entity property of the same name: Linux's spelling of `@NSManaged`.
///
/// ```swift
/// import CoreData
///
/// final class Car: NSManagedObject {
///     @Managed var name: String?
///     @Managed var year: Int16
///     @Managed var price: Double
///     @Managed var owner: Person?           // to-one
///     @Managed var passengers: Set<Person>  // to-many (also NSSet?)
///     @Managed var stops: NSOrderedSet?     // ordered to-many (also [Stop])
///     @Managed var tags: [String]?          // transformable
/// }
///
/// let car = Car(context: context)
/// car.name = "Model T"        // as car.setValue("Model T", forKey: "name")
/// car.year += 1               // as car.value(forKey: "year") as! Int16, without boxing
/// ```
///
/// Write it as `@NSManaged` is written: one annotation per `var`, with a type annotation, no
/// initial value (defaults come from the model) and any access modifier (`@Managed public var`).
/// The property's name is the key. The macro turns the property into a getter and a setter that
/// call `managedValue(for:as:)` and `setManagedValue(_:for:)` on ``NSManagedObject``
/// (keyed by the property's ``ManagedPropertyKey``); the overload is chosen at compile time
/// by the property's type:
///
/// - `Int`, `Int16`, `Int32`, `Int64`, `Double`, `Float`, `Bool`, `String`, `Date`, `Data`, `UUID`,
///   `URL`, `Decimal` (the ``ManagedAttributeValue`` types) and their optionals read the stored
///   value directly (a few nanoseconds).
///   A non-optional property whose value is nil reads as `0`, `false`, `""`, empty `Data`, the
///   reference date, the all-zero UUID (as Apple's scalar accessors read a nil number as 0); a nil
///   non-optional `URL` stops the process. An integer that does not fit the attribute's type
///   (`Integer 16` set from an `Int`) is kept and fails validation at save, as with
///   `setValue(_:forKey:)`.
/// - `T?` and `T` (`T: NSManagedObject`) for to-one relationships; `Set<T>`, `[T]`, `NSSet`,
///   `NSOrderedSet` (each optional or not) for to-many ones. Setting maintains the inverse.
/// - Any other type (transformable values such as `[String]?`, `NSNumber?`) goes through
///   ``NSManagedObject/value(forKey:)``'s value and a cast.
/// - A fetched property (``NSFetchedPropertyDescription``), declared `[T]`, `NSArray?` or the
///   like, reads its fetched array as `value(forKey:)` does; setting it changes nothing.
///
/// The macro also adds a private static ``ManagedPropertyKey`` per property
/// (`_managedKey_<name>`), which caches the property's index so that an access does not hash
/// the name. Setters call ``NSManagedObject/willChangeValue(forKey:)`` and
/// ``NSManagedObject/didChangeValue(forKey:)``; getters fire the fault but, unlike
/// `value(forKey:)`, do not call `willAccessValue(forKey:)`.
///
/// A property name that is not a property of the object's entity stops the process with a
/// message naming the class, the entity and the key. Using `@Managed` on a `let`, a computed
/// property, a property with an initial value or without a type annotation is a compile error.
///
/// Linux difference: `@NSManaged` needs the Objective-C runtime and its name is reserved by the
/// compiler. For sources shared with Apple platforms, see `docs/PORTING.md`.
@attached(accessor)
@attached(peer, names: prefixed(_managedKey_))
public macro Managed() = #externalMacro(module: "CoreDataMacros", type: "ManagedMacro")

/// The name of an entity property, with a thread-safe cache of its index in the entity's objects:
/// what `@Managed` accessors pass to `managedValue(for:as:)` and `setManagedValue(_:for:)`.
///
/// Keep one per property in a `static let`, as the macro does, so that the cache lives as long
/// as the class; write hand-made accessors the same way:
///
/// ```swift
/// extension Car {
///     private static let yearKey = ManagedPropertyKey("year")
///     var modelYear: Int { Int(managedValue(for: Self.yearKey, as: Int16.self)) }
/// }
/// ```
///
/// The cache holds one (entity layout, index) pair in an atomic word: it is filled on first use
/// and stays valid for every object of that entity and of its sub-entities, in any context, on
/// any thread. A class used by entities of several models (tests) refills it on a miss.
public struct ManagedPropertyKey: ~Copyable, Sendable {
    /// The property's name in the entity.
    public let name: String
    /// The upper 32 bits: ``EntityLayout/managedSerial`` of the entity that declares the
    /// property (0: empty); the lower 32 bits: the property's index.
    @usableFromInline internal let _cache: Atomic<UInt64>

    /// A key for the entity property named `name`.
    @inlinable
    public init(_ name: String) {
        self.name = name
        self._cache = Atomic(0)
    }
}

/// How a property is stored in an object's values, by property index (``EntityLayout/storageKinds``):
/// the typed `@Managed` setters store directly only when the property's kind is the one they produce.
@usableFromInline
internal enum ManagedStorageKind: UInt8, Sendable {
    /// Transformable, undefined, composite and object-ID attributes.
    case other
    case integer16, integer32, integer64
    /// Double and Float attributes (both stored as `Double`).
    case double
    case bool, string, date, binaryData, uuid, url, decimal
    case toOne, toMany, orderedToMany

    init(_ type: NSAttributeType) {
        switch type {
        case .integer16AttributeType: self = .integer16
        case .integer32AttributeType: self = .integer32
        case .integer64AttributeType: self = .integer64
        case .doubleAttributeType, .floatAttributeType: self = .double
        case .booleanAttributeType: self = .bool
        case .stringAttributeType: self = .string
        case .dateAttributeType: self = .date
        case .binaryDataAttributeType: self = .binaryData
        case .UUIDAttributeType: self = .uuid
        case .URIAttributeType: self = .url
        case .decimalAttributeType: self = .decimal
        case .transformableAttributeType, .undefinedAttributeType, .compositeAttributeType, .objectIDAttributeType: self = .other
        }
    }

    var isAttribute: Bool {
        switch self {
        case .toOne, .toMany, .orderedToMany: return false
        default: return true
        }
    }
}

// MARK: - The runtime of `@Managed` accessors

/// Typed property access for `@Managed` accessors and hand-written ones.
///
/// Each method finds the property's index through the key's cache, fires the fault if needed and
/// reads or writes the value. Reading is inlined into the caller and specialized by type; reads
/// of another type than the attribute's convert as `NSNumber` does (an `Integer 64` read as
/// `Double`), or stop the process when no conversion exists (a string read as `Int`).
extension NSManagedObject {
    // MARK: Index lookup

    /// The index of `key`'s property in this object's entity: one atomic load and one compare
    /// once the key's cache holds this entity.
    @inlinable @inline(__always)
    internal func _managedIndex(_ key: borrowing ManagedPropertyKey) -> Int {
        if _checksQueue { _verifyQueue(key.name) } // every @Managed accessor comes through here
        let cached = key._cache.load(ordering: .relaxed)
        if UInt32(truncatingIfNeeded: cached &>> 32) == layout.managedSerial {
            return Int(truncatingIfNeeded: UInt32(truncatingIfNeeded: cached))
        }
        return _resolveManagedIndex(key)
    }

    /// The slow path of ``_managedIndex(_:)``: an entity inheriting the property, or a cache miss.
    @usableFromInline @inline(never)
    internal func _resolveManagedIndex(_ key: borrowing ManagedPropertyKey) -> Int {
        let cached = key._cache.load(ordering: .relaxed)
        let cachedSerial = UInt32(truncatingIfNeeded: cached &>> 32)
        if cachedSerial != 0 && layout.lineage.contains(cachedSerial) {
            // Cached for a super-entity: inherited properties keep their indexes in sub-entities.
            return Int(truncatingIfNeeded: UInt32(truncatingIfNeeded: cached))
        }
        guard let index = layout.nameTable.index(of: key.name) else {
            // A fetched property: an index of its own kind, never cached (its value is fetched anyway).
            if let fetched = layout.propertiesByName[key.name] as? NSFetchedPropertyDescription {
                return FetchedPropertyIndex.managedIndex(of: fetched)
            }
            _unknownManagedKey(key.name)
        }
        // Cache the index for the entity that declares the property, so that objects of its
        // sub-entities hit the cache too (above) instead of replacing it.
        let declaring = layout.properties[index].entity?.frozenLayout?.managedSerial ?? layout.managedSerial
        key._cache.store(UInt64(declaring) &<< 32 | UInt64(UInt32(truncatingIfNeeded: index)), ordering: .relaxed)
        return index
    }

    @usableFromInline @inline(never)
    internal func _unknownManagedKey(_ key: String) -> Never {
        let names = layout.properties.map(\.name).joined(separator: ", ")
        preconditionFailure("CoreData: the @Managed property '\(key)' of class \(String(reflecting: type(of: self))) is not a property of its entity '\(entity.name ?? "")' (the entity has: \(names)). Rename the Swift property or the model's property so that they match.")
    }

    @usableFromInline @inline(never)
    internal func _managedTypeMismatch(at index: Int, value: Any, expected: Any.Type) -> Never {
        let name = FetchedPropertyIndex.isFetched(index) ? FetchedPropertyIndex.property(at: index, in: layout).name : layout.properties[index].name
        preconditionFailure("CoreData: the @Managed property '\(name)' of class \(String(reflecting: type(of: self))) (entity '\(entity.name ?? "")') holds a \(type(of: value)) (\(value)), which can't be read as \(expected)")
    }

    @usableFromInline @inline(never)
    internal func _managedNilForNonOptional(_ key: String, as type: Any.Type) -> Never {
        preconditionFailure("CoreData: the non-optional @Managed property '\(key)' of class \(String(reflecting: Swift.type(of: self))) (entity '\(entity.name ?? "")') is nil; declare it as \(type)?")
    }

    // MARK: Attributes (Int, Double, Bool, String, Date, … : ManagedAttributeValue)

    /// The value of an attribute, nil when it is nil: the one body of the attribute getters.
    @inlinable @inline(__always)
    internal func _managedAttributeValue<Value: ManagedAttributeValue>(_ key: borrowing ManagedPropertyKey, as type: Value.Type) -> Value? {
        let index = _managedIndex(key)
        if layout.observesReads { _observeRead(at: index) }
        fireFaultIfNeeded(triggeredBy: index)
        return Value._managedValue(in: self, at: index)
    }

    /// The value of an attribute of a type that ``ManagedAttributeValue`` lists (`Int16`,
    /// `Double`, `String`, …); when the value is nil, `0`, `false`, `""`, empty `Data`, the
    /// reference date or the all-zero UUID (a nil `URL` stops the process).
    @inlinable
    public func managedValue<Value: ManagedAttributeValue>(for key: borrowing ManagedPropertyKey, as type: Value.Type) -> Value {
        guard let value = _managedAttributeValue(key, as: Value.self) ?? Value._managedValueForNil else {
            _managedNilForNonOptional(key.name, as: Value.self)
        }
        return value
    }

    /// The value of an optional attribute (`Int16?`, `Double?`, `String?`, …).
    @inlinable
    public func managedValue<Value: ManagedAttributeValue>(for key: borrowing ManagedPropertyKey, as type: Value?.Type) -> Value? {
        _managedAttributeValue(key, as: Value.self)
    }

    // `Data` and `Decimal` keep getters of their own. A client's compiler returns these types
    // (many small fields) through memory from its own functions, such as its specializations of
    // the generic getters above, but in registers from this module's public ones: reading one
    // through the generic getter measured 1-2 ns slower (issue 21; docs/BENCHMARKS.md).

    /// The value of a `Data` property; `Data()` when the value is nil.
    @inlinable
    public func managedValue(for key: borrowing ManagedPropertyKey, as type: Data.Type) -> Data {
        _managedAttributeValue(key, as: Data.self) ?? Data()
    }

    /// The value of a `Data?` property.
    @inlinable
    public func managedValue(for key: borrowing ManagedPropertyKey, as type: Data?.Type) -> Data? {
        _managedAttributeValue(key, as: Data.self)
    }

    /// The value of a `Decimal` property; `0` when the value is nil.
    @inlinable
    public func managedValue(for key: borrowing ManagedPropertyKey, as type: Decimal.Type) -> Decimal {
        _managedAttributeValue(key, as: Decimal.self) ?? 0
    }

    /// The value of a `Decimal?` property.
    @inlinable
    public func managedValue(for key: borrowing ManagedPropertyKey, as type: Decimal?.Type) -> Decimal? {
        _managedAttributeValue(key, as: Decimal.self)
    }

    /// Sets an attribute (`Int16`, `Double`, `String`, …).
    @inlinable
    public func setManagedValue<Value: ManagedAttributeValue>(_ value: Value, for key: borrowing ManagedPropertyKey) {
        value._setManagedValue(in: self, at: _managedIndex(key), key: key.name)
    }

    /// Sets an optional attribute (`Int16?`, `Double?`, `String?`, …).
    @inlinable
    public func setManagedValue<Value: ManagedAttributeValue>(_ value: Value?, for key: borrowing ManagedPropertyKey) {
        if let value { setManagedValue(value, for: key) } else { _setManagedNil(at: _managedIndex(key), key: key.name) }
    }

    // MARK: To-one relationships

    /// The object of a to-one relationship.
    @inlinable
    public func managedValue<T: NSManagedObject>(for key: borrowing ManagedPropertyKey, as type: T?.Type) -> T? {
        let index = _managedIndex(key)
        guard let object = _managedToOne(at: index) else { return nil }
        if let typed = object as? T { return typed }
        _managedTypeMismatch(at: index, value: object, expected: T.self)
    }

    /// The object of a to-one relationship that is never nil when read.
    @inlinable
    public func managedValue<T: NSManagedObject>(for key: borrowing ManagedPropertyKey, as type: T.Type) -> T {
        guard let object = managedValue(for: key, as: T?.self) else { _managedNilForNonOptional(key.name, as: T.self) }
        return object
    }

    /// Sets a to-one relationship, keeping the inverse in step.
    @inlinable
    public func setManagedValue<T: NSManagedObject>(_ value: T?, for key: borrowing ManagedPropertyKey) {
        _setManagedToOne(value, at: _managedIndex(key), key: key.name)
    }

    /// Sets a to-one relationship, keeping the inverse in step.
    @inlinable
    public func setManagedValue<T: NSManagedObject>(_ value: T, for key: borrowing ManagedPropertyKey) {
        _setManagedToOne(value, at: _managedIndex(key), key: key.name)
    }

    // MARK: To-many relationships

    /// The objects of a to-many relationship.
    @inlinable
    public func managedValue<T: NSManagedObject>(for key: borrowing ManagedPropertyKey, as type: Set<T>.Type) -> Set<T> {
        let index = _managedIndex(key)
        let objects = _managedToMany(at: index)
        var result = Set<T>(minimumCapacity: objects.count)
        for object in objects {
            guard let typed = object as? T else { _managedTypeMismatch(at: index, value: object, expected: T.self) }
            result.insert(typed)
        }
        return result
    }

    /// The objects of a to-many relationship (never nil).
    @inlinable
    public func managedValue<T: NSManagedObject>(for key: borrowing ManagedPropertyKey, as type: Set<T>?.Type) -> Set<T>? {
        managedValue(for: key, as: Set<T>.self)
    }

    /// The objects of a to-many relationship, in order for an ordered one.
    @inlinable
    public func managedValue<T: NSManagedObject>(for key: borrowing ManagedPropertyKey, as type: [T].Type) -> [T] {
        let index = _managedIndex(key)
        let objects = _managedToMany(at: index)
        var result: [T] = []
        result.reserveCapacity(objects.count)
        for object in objects {
            guard let typed = object as? T else { _managedTypeMismatch(at: index, value: object, expected: T.self) }
            result.append(typed)
        }
        return result
    }

    /// The objects of a to-many relationship, in order for an ordered one (never nil).
    @inlinable
    public func managedValue<T: NSManagedObject>(for key: borrowing ManagedPropertyKey, as type: [T]?.Type) -> [T]? {
        managedValue(for: key, as: [T].self)
    }

    /// The objects of a to-many relationship.
    @inlinable
    public func managedValue(for key: borrowing ManagedPropertyKey, as type: NSSet.Type) -> NSSet {
        NSSet(array: _managedToMany(at: _managedIndex(key)))
    }

    /// The objects of a to-many relationship (never nil).
    @inlinable
    public func managedValue(for key: borrowing ManagedPropertyKey, as type: NSSet?.Type) -> NSSet? {
        managedValue(for: key, as: NSSet.self)
    }

    /// The objects of an ordered to-many relationship.
    @inlinable
    public func managedValue(for key: borrowing ManagedPropertyKey, as type: NSOrderedSet.Type) -> NSOrderedSet {
        NSOrderedSet(array: _managedToMany(at: _managedIndex(key)))
    }

    /// The objects of an ordered to-many relationship (never nil).
    @inlinable
    public func managedValue(for key: borrowing ManagedPropertyKey, as type: NSOrderedSet?.Type) -> NSOrderedSet? {
        managedValue(for: key, as: NSOrderedSet.self)
    }

    /// Replaces the objects of a to-many relationship, keeping the inverses in step.
    @inlinable
    public func setManagedValue<T: NSManagedObject>(_ value: Set<T>, for key: borrowing ManagedPropertyKey) {
        _setManagedToMany(Array(value), at: _managedIndex(key), key: key.name)
    }

    /// Replaces the objects of a to-many relationship (nil: none), keeping the inverses in step.
    @inlinable
    public func setManagedValue<T: NSManagedObject>(_ value: Set<T>?, for key: borrowing ManagedPropertyKey) {
        _setManagedToMany(value.map { Array($0) } ?? [], at: _managedIndex(key), key: key.name)
    }

    /// Replaces the objects of a to-many relationship (in this order for an ordered one).
    @inlinable
    public func setManagedValue<T: NSManagedObject>(_ value: [T], for key: borrowing ManagedPropertyKey) {
        _setManagedToMany(value, at: _managedIndex(key), key: key.name)
    }

    /// Replaces the objects of a to-many relationship (nil: none).
    @inlinable
    public func setManagedValue<T: NSManagedObject>(_ value: [T]?, for key: borrowing ManagedPropertyKey) {
        _setManagedToMany(value ?? [], at: _managedIndex(key), key: key.name)
    }

    /// Replaces the objects of a to-many relationship.
    @inlinable
    public func setManagedValue(_ value: NSSet, for key: borrowing ManagedPropertyKey) {
        _setManagedToMany(from: value, at: _managedIndex(key), key: key.name)
    }

    /// Replaces the objects of a to-many relationship (nil: none).
    @inlinable
    public func setManagedValue(_ value: NSSet?, for key: borrowing ManagedPropertyKey) {
        _setManagedToMany(from: value, at: _managedIndex(key), key: key.name)
    }

    /// Replaces the objects of an ordered to-many relationship.
    @inlinable
    public func setManagedValue(_ value: NSOrderedSet, for key: borrowing ManagedPropertyKey) {
        _setManagedToMany(from: value, at: _managedIndex(key), key: key.name)
    }

    /// Replaces the objects of an ordered to-many relationship (nil: none).
    @inlinable
    public func setManagedValue(_ value: NSOrderedSet?, for key: borrowing ManagedPropertyKey) {
        _setManagedToMany(from: value, at: _managedIndex(key), key: key.name)
    }

    // MARK: Any other type

    /// The value of a property of any other type (a transformable value, `NSNumber?`, …): the
    /// value ``value(forKey:)`` returns, cast to `Value`. A value of another type stops the process.
    @_disfavoredOverload @inlinable
    public func managedValue<Value>(for key: borrowing ManagedPropertyKey, as type: Value.Type) -> Value {
        _managedAnyValue(at: _managedIndex(key), key: key.name, as: Value.self)
    }

    /// Sets a property of any other type as `setValue(_:forKey:)` does.
    @_disfavoredOverload @inlinable
    public func setManagedValue<Value>(_ value: Value, for key: borrowing ManagedPropertyKey) {
        _setManagedAnyValue(value, at: _managedIndex(key), key: key.name)
    }

    // MARK: Slow paths (not inlined)

    @usableFromInline
    internal func _managedIntegerSlow(at index: Int) -> Int64? {
        switch _values[index] {
        case .null: return nil
        case .int(let value): return value
        case .bool(let value): return value ? 1 : 0
        case .double(let value): return NSNumber(value: value).int64Value
        case .decimal(let value): return NSDecimalNumber(decimal: value).int64Value
        default:
            guard let value = primitiveValue(at: index) else { return nil }
            if let integer = StoreValue.integer(value) { return integer }
            if let number = value as? NSNumber { return number.int64Value }
            _managedTypeMismatch(at: index, value: value, expected: Int64.self)
        }
    }

    @usableFromInline
    internal func _managedDoubleSlow(at index: Int) -> Double? {
        switch _values[index] {
        case .null: return nil
        case .double(let value): return value
        case .int(let value): return Double(value)
        case .bool(let value): return value ? 1 : 0
        case .decimal(let value): return value.nearestDouble
        default:
            guard let value = primitiveValue(at: index) else { return nil }
            if let value = value as? Double { return value }
            if let value = value as? Float { return Double(value) }
            if let integer = StoreValue.integer(value) { return Double(integer) }
            if let number = value as? NSNumber { return number.doubleValue }
            _managedTypeMismatch(at: index, value: value, expected: Double.self)
        }
    }

    @usableFromInline
    internal func _managedBoolSlow(at index: Int) -> Bool? {
        switch _values[index] {
        case .null: return nil
        case .bool(let value): return value
        case .int(let value): return value != 0
        case .double(let value): return value != 0
        case .decimal(let value): return !value.isZero
        default:
            guard let value = primitiveValue(at: index) else { return nil }
            if let value = value as? Bool { return value }
            if let integer = StoreValue.integer(value) { return integer != 0 }
            if let number = value as? NSNumber { return number.boolValue }
            _managedTypeMismatch(at: index, value: value, expected: Bool.self)
        }
    }

    @usableFromInline
    internal func _managedDecimalSlow(at index: Int) -> Decimal? {
        switch _values[index] {
        case .null: return nil
        case .decimal(let value): return value
        case .int(let value): return Decimal(value)
        case .double(let value): return Decimal(storing: value)
        case .bool(let value): return value ? 1 : 0
        default:
            guard let value = primitiveValue(at: index) else { return nil }
            if let value = value as? Decimal { return value }
            if let value = value as? NSDecimalNumber { return value.decimalValue }
            if let integer = StoreValue.integer(value) { return Decimal(integer) }
            if let number = value as? NSNumber { return Decimal(storing: number) }
            _managedTypeMismatch(at: index, value: value, expected: Decimal.self)
        }
    }

    /// The value as `value(forKey:)` returns it (transformable values decoded), cast to `T`.
    internal func _managedCastSlow<T>(at index: Int, as type: T.Type) -> T? {
        guard let value = primitiveValue(at: index) else { return nil }
        if let typed = value as? T { return typed }
        _managedTypeMismatch(at: index, value: value, expected: T.self)
    }

    // `_managedCastSlow` for each type that uses it, not generic: a client's compiler does not
    // devirtualize a call to an inlinable `ManagedAttributeValue` witness whose body calls a generic
    // function of this module (Swift 6.3), which would leave an indirect call on every read.

    @usableFromInline
    internal func _managedStringSlow(at index: Int) -> String? { _managedCastSlow(at: index, as: String.self) }

    @usableFromInline
    internal func _managedDateSlow(at index: Int) -> Date? { _managedCastSlow(at: index, as: Date.self) }

    @usableFromInline
    internal func _managedDataSlow(at index: Int) -> Data? { _managedCastSlow(at: index, as: Data.self) }

    @usableFromInline
    internal func _managedUUIDSlow(at index: Int) -> UUID? { _managedCastSlow(at: index, as: UUID.self) }

    @usableFromInline
    internal func _managedURLSlow(at index: Int) -> URL? { _managedCastSlow(at: index, as: URL.self) }

    @usableFromInline
    internal func _managedAnyValue<Value>(at index: Int, key: String, as type: Value.Type) -> Value {
        if layout.observesReads { _observeRead(at: index) }
        guard let value = FetchedPropertyIndex.isFetched(index) ? fetchedPropertyValue(forKey: key) : primitiveValue(at: index) else {
            // nil is a value of `Value` only when it is an optional type.
            if let none = Optional<Any>.none as? Value { return none }
            _managedNilForNonOptional(key, as: Value.self)
        }
        if let typed = value as? Value { return typed }
        _managedTypeMismatch(at: index, value: value, expected: Value.self)
    }

    @usableFromInline
    internal func _managedToOne(at index: Int) -> NSManagedObject? {
        if layout.observesReads { _observeRead(at: index) }
        guard layout.storageKinds[index] == .toOne else {
            guard let value = primitiveValue(at: index) else { return nil }
            if let object = value as? NSManagedObject { return object }
            _managedTypeMismatch(at: index, value: value, expected: NSManagedObject.self)
        }
        return toOneObject(at: index)
    }

    @usableFromInline
    internal func _managedToMany(at index: Int) -> [NSManagedObject] {
        if layout.observesReads { _observeRead(at: index) }
        if FetchedPropertyIndex.isFetched(index) {
            let value = fetchedPropertyValue(forKey: FetchedPropertyIndex.property(at: index, in: layout).name)
            if let objects = value as? [NSManagedObject] { return objects }
            _managedTypeMismatch(at: index, value: value as Any, expected: [NSManagedObject].self)
        }
        switch layout.storageKinds[index] {
        case .toMany, .orderedToMany: return toManyList(at: index).objects
        default:
            let value = primitiveValue(at: index)
            _managedTypeMismatch(at: index, value: value as Any, expected: Set<NSManagedObject>.self)
        }
    }

    // Setters: record the change through `setStoreValue(_:at:)` when the value already has the
    // property's storage form, else convert as `setValue(_:forKey:)` does.

    @usableFromInline
    internal func _setManagedInteger(_ value: Int64, original: Any, at index: Int, key: String) {
        willChangeValue(forKey: key)
        switch layout.storageKinds[index] {
        case .integer64:
            setStoreValue(.int(value), at: index)
        case .integer32:
            // Out of range: kept as given, so that validation reports it at save (as StoreValue.convert).
            if Int32(exactly: value) != nil { setStoreValue(.int(value), at: index) } else { setMistyped(original, at: index) }
        case .integer16:
            if Int16(exactly: value) != nil { setStoreValue(.int(value), at: index) } else { setMistyped(original, at: index) }
        default:
            setValue(original, at: index)
        }
        didChangeValue(forKey: key)
    }

    /// An integer past `Int64` (an `Int128`, a `UInt64`): kept as given, so that validation
    /// reports it at save, as for any value out of the attribute's range.
    @usableFromInline
    internal func _setManagedOutOfRange(_ original: Any, at index: Int, key: String) {
        willChangeValue(forKey: key)
        setMistyped(original, at: index)
        didChangeValue(forKey: key)
    }

    internal func _setManagedStoreValue(_ value: StoreValue, kind: ManagedStorageKind, original: Any, at index: Int, key: String) {
        willChangeValue(forKey: key)
        if layout.storageKinds[index] == kind {
            setStoreValue(value, at: index)
        } else {
            setValue(original, at: index)
        }
        didChangeValue(forKey: key)
    }

    @usableFromInline
    internal func _setManagedNil(at index: Int, key: String) {
        willChangeValue(forKey: key)
        if layout.storageKinds[index].isAttribute {
            setStoreValue(.null, at: index)
        } else {
            setValue(nil, at: index)
        }
        didChangeValue(forKey: key)
    }

    @usableFromInline
    internal func _setManagedToOne(_ object: NSManagedObject?, at index: Int, key: String) {
        willChangeValue(forKey: key)
        if layout.storageKinds[index] == .toOne {
            setToOne(object, at: index)
        } else {
            setValue(object, at: index)
        }
        didChangeValue(forKey: key)
    }

    @usableFromInline
    internal func _setManagedToMany(_ objects: [NSManagedObject], at index: Int, key: String) {
        if FetchedPropertyIndex.isFetched(index) { return setFetchedPropertyValue(objects, forKey: key) }
        willChangeValue(forKey: key)
        switch layout.storageKinds[index] {
        case .toMany, .orderedToMany: setToMany(objects, at: index)
        default: setValue(objects, at: index)
        }
        didChangeValue(forKey: key)
    }

    /// A collection holding anything but managed objects (object IDs, say) stops the process
    /// with Apple's "Unacceptable type of value" message, as `setValue(_:forKey:)` does: read
    /// as objects, it would empty the relationship.
    @usableFromInline
    internal func _setManagedToMany(from value: Any?, at index: Int, key: String) {
        if let value, !FetchedPropertyIndex.isFetched(index), !Self.isCollectionOfObjects(value) { refuseRelationshipValue(value, at: index) }
        _setManagedToMany(Self.objects(from: value), at: index, key: key)
    }

    @usableFromInline
    internal func _setManagedAnyValue(_ value: Any, at index: Int, key: String) {
        if FetchedPropertyIndex.isFetched(index) { return setFetchedPropertyValue(value, forKey: key) }
        willChangeValue(forKey: key)
        setValue(ManagedOptional.flatten(value), at: index)
        didChangeValue(forKey: key)
    }
}

/// Unwraps optionals hidden in an `Any` (a generic `Value` that is `[String]?` holding nil).
internal enum ManagedOptional {
    static func flatten(_ value: Any) -> Any? {
        guard let optional = value as? any _ManagedOptionalProtocol else { return value }
        return optional._managedWrapped.flatMap(flatten)
    }
}

internal protocol _ManagedOptionalProtocol {
    var _managedWrapped: Any? { get }
}

extension Optional: _ManagedOptionalProtocol {
    var _managedWrapped: Any? { self.map { $0 as Any } }
}
