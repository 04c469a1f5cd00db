import Foundation

/// Turns Swift key paths of `NSManagedObject` subclasses (`\Car.name`, `\Car.owner?.name`) into
/// the entity property names a `PredicateNode` or `SortKey` uses (`["name"]`, `["owner", "name"]`).
///
/// How: the key path is applied once to a *probe*, a blank object of the root class's entity
/// (made with `init(entity:insertInto: nil)`, never inserted anywhere), whose `@Managed`
/// accessors report the key they read. Every `@Managed` getter goes through
/// `_managedIndex(_:)`, which calls `_verifyQueue(key)` when the object's `_checksQueue` is set;
/// a probe sets it, and `_verifyQueue` on an object without a context hands the key to the
/// ``ManagedKeyRecorder`` of the current task. A to-one relationship read on a probe answers
/// another probe (of the destination entity), so a chained key path reports each key in turn.
/// Results are cached per key path (one probe per key path per process).
///
/// Why not the alternatives:
/// - `AnyKeyPath.debugDescription` names stored properties, but `@Managed` properties are
///   computed, and for those the standard library can only find the accessor's symbol through
///   `dladdr`: measured on this toolchain (Swift 6.3.1, Linux) a `swiftc -O` executable prints
///   `\Car.<computed 0x000055818d360e80 (Int)>` for `\Car.year` (even `\Set<P>.count` prints as
///   `<computed …>`). Release builds would fail where debug builds work.
/// - A table recorded by the `@Managed` macro: the macro sees one property at a time and Swift
///   cannot enumerate a class's static members, so a table could only be filled as accessors
///   run (too late for the first fetch) or by a second, class-level macro users would have to add.
///
/// What counts as a Core Data key path: each step must read exactly one managed property
/// (through `@Managed`, or a hand-written accessor on ``ManagedPropertyKey`` or
/// `value(forKey:)`) of the object the previous step returned. A stored Swift property, a
/// computed property that reads no managed property or several, and a key path whose root is
/// not a managed object class of a loaded model are refused with an error naming the key path
/// (``TypedKeyPathError``), never a crash. A computed property is run once on the blank probe
/// (attributes hold ``ProbeValues``, relationships are empty), so its getter must not trap on
/// those; a computed property that reads exactly one managed property is taken for that property
/// when its type fits the property's (`String` for a string attribute, a number for a numeric
/// one, …) and it answers the value the attribute holds (`var title: String { name.capitalized }`
/// does not).
internal enum TypedKeyPaths {
    /// Successful mappings, by key path.
    private static let cache = Locked<[AnyKeyPath: [String]]>([:])

    /// The entity property names `keyPath` reads, from its root class's entity.
    static func names(of keyPath: AnyKeyPath) throws -> [String] {
        if let cached = cache.withLock({ $0[keyPath] }) { return cached }
        let names = try probe(keyPath)
        cache.withLock { $0[keyPath] = names }
        return names
    }

    /// The entity of a managed object class, from the models coordinators use.
    static func entity(of type: Any.Type, for keyPath: AnyKeyPath) throws -> NSEntityDescription {
        guard let objectClass = type as? NSManagedObject.Type else {
            throw TypedKeyPathError.notManaged(keyPath, "\(type) is not an NSManagedObject subclass")
        }
        for model in LoadedModels.all {
            if let entity = objectClass.entity(in: model) { return entity }
        }
        // A Swift base class shared by several entities (`class Stamped: NSManagedObject`, each
        // entity's class a subclass): the first such entity by name reads its properties, which
        // every one of them has by the same names.
        for model in LoadedModels.all {
            let entities = model.entities.sorted { ($0.name ?? "") < ($1.name ?? "") }
            if let entity = entities.first(where: { $0.layout.instanceClass.isSubclass(of: objectClass) }) { return entity }
        }
        throw TypedKeyPathError.notManaged(keyPath, "no entity of a loaded model has the class \(String(reflecting: objectClass)) or a subclass of it (add the model to a coordinator first)")
    }

    private static func probe(_ keyPath: AnyKeyPath) throws -> [String] {
        let entity = try entity(of: type(of: keyPath).rootType, for: keyPath)
        let recorder = ManagedKeyRecorder()
        let root = recorder.makeProbe(entity, as: type(of: keyPath).rootType as? NSManagedObject.Type)
        let value = ManagedKeyRecorder.$current.withValue(recorder) { root[keyPath: keyPath] }
        let names = try recorder.chain(from: root, keyPath: keyPath)
        var property: NSPropertyDescription?
        var current: NSEntityDescription? = entity
        for name in names {
            property = current?.propertiesByName[name]
            current = (property as? NSRelationshipDescription)?.destinationEntity
        }
        let valueType = type(of: keyPath).valueType
        if let relationship = property as? NSRelationshipDescription, relationship.isToMany, !isCollection(valueType) {
            // Past the to-many: its `count` is `@count` (`\Person.cars.count`); anything else
            // (`isEmpty`, `first?.name`) has no key.
            let unwrapped = (valueType as? any TypedOptional.Type)?.wrappedType ?? valueType
            guard unwrapped == Int.self else {
                throw TypedKeyPathError.notManaged(keyPath, "it goes past the to-many relationship \(names.joined(separator: ".")) to a \(valueType); only its count has a key (@count)")
            }
            return names + ["@count"]
        }
        if let property, !isCompatible(valueType, with: property) {
            throw TypedKeyPathError.notManaged(keyPath, "it reads \(names.joined(separator: ".")) but its value is a \(valueType) (a computed property derived from a managed one?)")
        }
        // (An enumeration's getter may have answered a case of its own on the probe: see
        // `_managedProbeCase`.)
        let unwrapped = (valueType as? any TypedOptional.Type)?.wrappedType ?? valueType
        if !(unwrapped is any RawRepresentable.Type), let attribute = property as? NSAttributeDescription,
           let probeValue = ProbeValues.value(for: attribute),
           !ProbeValues.matches(value as Any, probeValue) {
            throw TypedKeyPathError.notManaged(keyPath, "it reads \(names.joined(separator: ".")) but answers another value than the attribute holds (a computed property derived from it: \(probeValue) read as \(value ?? "nil")); use a key path to the @Managed property")
        }
        return names
    }

    /// Whether `valueType` (optional or not) is a collection a to-many relationship's value
    /// can be: a set, an array, `NSSet`, `NSOrderedSet`.
    static func isCollection(_ valueType: Any.Type) -> Bool {
        let type = (valueType as? any TypedOptional.Type)?.wrappedType ?? valueType
        return type is any Collection.Type || type is NSSet.Type || type is NSOrderedSet.Type
    }

    /// Whether a key path's value type can be the Swift form of `property` (catches computed
    /// properties such as `var isOld: Bool { year < 1950 }` that read one managed property).
    static func isCompatible(_ valueType: Any.Type, with property: NSPropertyDescription) -> Bool {
        let type = (valueType as? any TypedOptional.Type)?.wrappedType ?? valueType
        if let relationship = property as? NSRelationshipDescription {
            return relationship.isToMany != (type is NSManagedObject.Type)
        }
        guard let attribute = property as? NSAttributeDescription else { return true }
        if let enumeration = type as? any RawRepresentable.Type { return isCompatible(rawValueType(enumeration), with: property) }
        switch attribute.attributeType {
        case .booleanAttributeType:
            return type == Bool.self || type == NSNumber.self
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
             .doubleAttributeType, .floatAttributeType, .decimalAttributeType:
            return type is any Numeric.Type || type == NSNumber.self || type == NSDecimalNumber.self
        case .stringAttributeType: return type == String.self || type == NSString.self
        case .dateAttributeType: return type == Date.self || type == NSDate.self
        case .binaryDataAttributeType: return type == Data.self || type == NSData.self
        case .UUIDAttributeType: return type == UUID.self || type == NSUUID.self
        case .URIAttributeType: return type == URL.self || type == NSURL.self
        default: return true
        }
    }
}

/// The type of `type`'s raw values (an enumeration's).
private func rawValueType<Value: RawRepresentable>(_ type: Value.Type) -> Any.Type { Value.RawValue.self }

/// `Optional`, seen through its wrapped type.
internal protocol TypedOptional {
    static var wrappedType: Any.Type { get }
}

extension Optional: TypedOptional {
    static var wrappedType: Any.Type { Wrapped.self }
}

/// Collects the keys read on probe objects while a key path is applied to one.
internal final class ManagedKeyRecorder: @unchecked Sendable {
    /// The recorder of the probe under way on this task or thread.
    @TaskLocal static var current: ManagedKeyRecorder?

    private var probes: Set<ObjectIdentifier> = []
    /// Each key read on a probe, with the probe that read it and the probe it returned (to-one).
    private var reads: [(object: ObjectIdentifier, key: String, next: ObjectIdentifier?)] = []
    private var keep: [NSManagedObject] = []

    func makeProbe(_ entity: NSEntityDescription, as objectClass: NSManagedObject.Type?) -> NSManagedObject {
        let cls = objectClass ?? entity.layout.instanceClass
        let probe = cls.init(entity: entity, insertInto: nil)
        for (index, property) in probe.layout.properties.enumerated() {
            if let attribute = property as? NSAttributeDescription, let value = ProbeValues.value(for: attribute) {
                probe.setValue(value, at: index)
            }
        }
        probe._checksQueue = true
        probes.insert(ObjectIdentifier(probe))
        keep.append(probe)
        return probe
    }

    /// Called by `_verifyQueue` for objects without a context.
    func record(_ object: NSManagedObject, key: String) {
        guard probes.contains(ObjectIdentifier(object)) else { return }
        var next: ObjectIdentifier?
        if let index = object.layout.nameTable.index(of: key),
           let relationship = object.layout.properties[index] as? NSRelationshipDescription,
           !relationship.isToMany, let destination = relationship.destinationEntity {
            let probe = makeProbe(destination, as: nil)
            object._relations[index] = .toOne(probe)
            next = ObjectIdentifier(probe)
        }
        reads.append((ObjectIdentifier(object), key, next))
    }

    /// The keys read from `root`, each on the object the previous read returned.
    func chain(from root: NSManagedObject, keyPath: AnyKeyPath) throws -> [String] {
        guard !reads.isEmpty else {
            throw TypedKeyPathError.notManaged(keyPath, "it reads no managed property (a stored Swift property, or a computed property not backed by the model)")
        }
        var names: [String] = []
        var expected: ObjectIdentifier? = ObjectIdentifier(root)
        for read in reads {
            guard read.object == expected else {
                throw TypedKeyPathError.notManaged(keyPath, "it reads several managed properties (\(reads.map(\.key).joined(separator: ", "))); use a key path to one @Managed property")
            }
            names.append(read.key)
            expected = read.next
        }
        return names
    }
}

/// A key path that is not a chain of Core Data properties.
internal enum TypedKeyPathError {
    static func notManaged(_ keyPath: AnyKeyPath, _ reason: String) -> NSError {
        CoreDataError.make(.unsupportedRequestType, "the key path \(describe(keyPath)) is not a Core Data property: \(reason)")
    }

    /// `\Car.<computed …>` is all the standard library can say in release builds; add the types.
    static func describe(_ keyPath: AnyKeyPath) -> String {
        let type = Swift.type(of: keyPath)
        return "\(keyPath.debugDescription) (\(String(reflecting: type.rootType)) → \(String(reflecting: type.valueType)))"
    }
}

/// The values a probe's attributes hold while a key path runs on it: set, so that a non-optional
/// accessor finds a value, and odd enough that a computed property deriving another value from
/// the one attribute it reads (`name.capitalized`, `age * 12`, `!isDone`) answers something else.
internal enum ProbeValues {
    /// The value of `attribute` on a probe; `nil` for a type with no value to make (transformable,
    /// composite, object ID).
    static func value(for attribute: NSAttributeDescription) -> Any? {
        switch attribute.attributeType {
        case .stringAttributeType: return "cD pRobe"
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType: return 1 // (a case of most enumerations)
        case .decimalAttributeType: return Decimal(7)
        case .doubleAttributeType, .floatAttributeType: return 7.25
        case .booleanAttributeType: return true
        case .dateAttributeType: return Date(timeIntervalSinceReferenceDate: 7.25)
        case .binaryDataAttributeType: return Data([0xCD, 0x07])
        case .UUIDAttributeType: return UUID(uuid: (0xCD, 7, 7, 7, 7, 7, 0x47, 7, 0x87, 7, 7, 7, 7, 7, 7, 7))
        case .URIAttributeType: return URL(string: "cd-probe://7")
        default: return nil
        }
    }

    /// Whether `value`, what a key path answered on a probe (perhaps optional, a Swift number, a
    /// raw-representable value), is `probeValue`.
    static func matches(_ value: Any, _ probeValue: Any) -> Bool {
        var value = value
        while Mirror(reflecting: value).displayStyle == .optional {
            guard let wrapped = Mirror(reflecting: value).children.first?.value else { return false }
            value = wrapped
        }
        switch probeValue {
        case is Bool: return (value as? Bool ?? (value as? NSNumber)?.boolValue) == true
        case let number as Int: return double(value) == Double(number)
        case let number as Double: return double(value) == number
        case let number as Decimal: return double(value) == NSDecimalNumber(decimal: number).doubleValue
        case let string as String: return (value as? String ?? (value as? NSString).map(String.init)) == string
        case let date as Date: return (value as? Date ?? (value as? NSDate).map { $0 as Date }) == date
        case let data as Data: return (value as? Data ?? (value as? NSData).map { $0 as Data }) == data
        case let uuid as UUID: return (value as? UUID ?? (value as? NSUUID).map { $0 as UUID }) == uuid
        case let url as URL: return (value as? URL ?? (value as? NSURL).map { $0 as URL }) == url
        default: return true
        }
    }

    private static func double(_ value: Any) -> Double? {
        switch value {
        case let decimal as Decimal: return NSDecimalNumber(decimal: decimal).doubleValue
        case let number as NSNumber: return number.doubleValue
        case let integer as any BinaryInteger: return Double(exactly: integer)
        case let floating as any BinaryFloatingPoint: return Double(floating)
        default: return nil
        }
    }
}
