import Foundation

// Linux-only: Foundation on Linux has no `ValueTransformer`, which transformable attributes need.
// This is Apple's API, so code that registers transformers compiles unchanged.

/// The name of a registered value transformer.
public struct NSValueTransformerName: RawRepresentable, Hashable, Sendable {
    /// The name's string.
    public let rawValue: String
    /// The name whose string is `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The name whose string is `rawValue`, without the label: `NSValueTransformerName("ColorTransformer")`.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The default transformer of transformable attributes.
    public static let secureUnarchiveFromDataTransformerName = NSValueTransformerName("NSSecureUnarchiveFromData")
    /// Apple's insecure keyed transformer, kept for old models; this name gives
    /// ``NSSecureUnarchiveFromDataTransformer``, which decodes only its
    /// ``NSSecureUnarchiveFromDataTransformer/allowedTopLevelClasses`` (docs/PORTING.md).
    public static let keyedUnarchiveFromDataTransformerName = NSValueTransformerName("NSKeyedUnarchiveFromData")
    /// Apple's deprecated transformer of `NSArchiver` data, kept for old models; Linux has no
    /// `NSUnarchiver`, so this name gives the secure keyed transformer.
    public static let unarchiveFromDataTransformerName = NSValueTransformerName("NSUnarchiveFromData")
}

/// Converts values to another form and back; transformable attributes store the transformed form.
///
/// ```swift
/// final class ColorTransformer: ValueTransformer { ... }
/// ValueTransformer.setValueTransformer(ColorTransformer(), forName: .init("ColorTransformer"))
/// ```
open class ValueTransformer: NSObject, @unchecked Sendable {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var registry: [String: ValueTransformer] = [
        NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue: NSSecureUnarchiveFromDataTransformer(),
        "NSSecureUnarchiveFromDataTransformer": NSSecureUnarchiveFromDataTransformer(),
        NSValueTransformerName.keyedUnarchiveFromDataTransformerName.rawValue: NSSecureUnarchiveFromDataTransformer(),
        NSValueTransformerName.unarchiveFromDataTransformerName.rawValue: NSSecureUnarchiveFromDataTransformer(),
    ]

    /// Registers a transformer under a name.
    open class func setValueTransformer(_ transformer: ValueTransformer?, forName name: NSValueTransformerName) {
        lock.lock(); defer { lock.unlock() }
        registry[name.rawValue] = transformer
    }

    /// Creates a transformer; subclasses override ``transformedValue(_:)`` and, if reversible,
    /// ``reverseTransformedValue(_:)``.
    public override init() { super.init() }

    /// The transformer registered under `name`, or `nil`.
    open class func valueTransformer(forName name: NSValueTransformerName) -> ValueTransformer? {
        lock.lock(); defer { lock.unlock() }
        return registry[name.rawValue]
    }

    /// The names of the registered transformers.
    open class func valueTransformerNames() -> [NSValueTransformerName] {
        lock.lock(); defer { lock.unlock() }
        return registry.keys.sorted().map(NSValueTransformerName.init(rawValue:))
    }

    /// The class of transformed values.
    open class func transformedValueClass() -> AnyClass { NSObject.self }
    /// Whether ``reverseTransformedValue(_:)`` is supported.
    open class func allowsReverseTransformation() -> Bool { true }
    /// The transformed form of `value`.
    open func transformedValue(_ value: Any?) -> Any? { value }
    /// The original form of a transformed value.
    open func reverseTransformedValue(_ value: Any?) -> Any? { value }
}

/// Archives values with `NSKeyedArchiver` (secure coding) and unarchives only the allowed classes.
open class NSSecureUnarchiveFromDataTransformer: ValueTransformer, @unchecked Sendable {
    /// The classes that may be unarchived; subclasses add their own.
    open class var allowedTopLevelClasses: [AnyClass] {
        [NSArray.self, NSDictionary.self, NSSet.self, NSString.self, NSNumber.self, NSDate.self, NSData.self,
         NSURL.self, NSUUID.self, NSNull.self, NSOrderedSet.self, NSDecimalNumber.self]
    }

    /// `NSData`: values are transformed into keyed archives.
    open override class func transformedValueClass() -> AnyClass { NSData.self }

    /// Archives `value` to `Data`.
    open override func transformedValue(_ value: Any?) -> Any? {
        guard let value else { return nil }
        return try? NSKeyedArchiver.archivedData(withRootObject: TransformableCoding.bridge(value), requiringSecureCoding: true)
    }

    /// Unarchives `Data`.
    open override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data else { return nil }
        return try? NSKeyedUnarchiver.unarchivedObject(ofClasses: Self.allowedTopLevelClasses, from: data)
    }
}

/// Encoding and decoding of transformable attributes with their transformer.
internal enum TransformableCoding {
    static func transformer(for attribute: NSAttributeDescription) -> ValueTransformer? {
        let name = attribute.valueTransformerName ?? NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue
        return ValueTransformer.valueTransformer(forName: NSValueTransformerName(name))
    }

    static func encode(_ value: Any, for attribute: NSAttributeDescription) throws -> Data {
        if let data = value as? Data, attribute.attributeType == .undefinedAttributeType { return data }
        guard let transformer = transformer(for: attribute) else {
            throw CoreDataError.make(.managedObjectValidation,
                "No value transformer named '\(attribute.valueTransformerName ?? "")' is registered for \(attribute.entity?.name ?? "").\(attribute.name)",
                extra: [NSValidationKeyErrorKey: attribute.name])
        }
        guard let data = transformer.transformedValue(value) as? Data else {
            throw CoreDataError.make(.managedObjectValidation,
                "\(attribute.entity?.name ?? "").\(attribute.name): the value \(value) (\(type(of: value))) can't be transformed to data by \(type(of: transformer))",
                extra: [NSValidationKeyErrorKey: attribute.name, NSValidationValueErrorKey: value])
        }
        return data
    }

    /// The value `data` holds; nil, with a warning logged once per attribute, when its
    /// transformer can't read it (an archived class not among the secure transformer's
    /// ``NSSecureUnarchiveFromDataTransformer/allowedTopLevelClasses``, say).
    static func decode(_ data: Data, for attribute: NSAttributeDescription) -> Any? {
        guard let transformer = transformer(for: attribute) else { return data }
        let value = transformer.reverseTransformedValue(data)
        if value == nil, !data.isEmpty, undecodable.withLock({ $0.insert(ObjectIdentifier(attribute)).inserted }) {
            CoreDataLog.warning("\(attribute.entity?.name ?? "").\(attribute.name): \(type(of: transformer)) can't read a stored value "
                + "(\(data.count) bytes), which reads as nil; a value of a class it does not allow needs a transformer of its own "
                + "(valueTransformerName). Logged once per attribute")
        }
        return value
    }

    /// The attributes whose values a transformer could not read, already logged.
    private static let undecodable = Locked<Set<ObjectIdentifier>>([])

    /// Swift values as the Foundation objects that archive.
    static func bridge(_ value: Any) -> Any {
        switch value {
        case let v as [String]: return NSArray(array: v.map { NSString(string: $0) })
        case let v as [Int]: return NSArray(array: v.map { NSNumber(value: $0) })
        case let v as [Double]: return NSArray(array: v.map { NSNumber(value: $0) })
        case let v as [Any]: return NSArray(array: v.map { bridge($0) })
        case let v as [String: Any]:
            let dictionary = NSMutableDictionary()
            for (key, item) in v { dictionary[NSString(string: key)] = bridge(item) }
            return dictionary
        case let v as String: return NSString(string: v)
        case let v as Int: return NSNumber(value: v)
        case let v as Double: return NSNumber(value: v)
        case let v as Bool: return NSNumber(value: v)
        case let v as Date: return NSDate(timeIntervalSinceReferenceDate: v.timeIntervalSinceReferenceDate)
        case let v as Data: return NSData(data: v)
        case let v as URL: return NSURL(string: v.absoluteString) ?? v
        case let v as UUID: return NSUUID(uuidString: v.uuidString) ?? v
        default: return value
        }
    }
}
