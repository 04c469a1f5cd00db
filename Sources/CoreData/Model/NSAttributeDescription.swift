import Foundation

/// The type of an attribute, with the raw values Apple uses (they are part of the version hash).
public enum NSAttributeType: UInt, Sendable {
    case undefinedAttributeType = 0
    case integer16AttributeType = 100
    case integer32AttributeType = 200
    case integer64AttributeType = 300
    case decimalAttributeType = 400
    case doubleAttributeType = 500
    case floatAttributeType = 600
    case stringAttributeType = 700
    case booleanAttributeType = 800
    case dateAttributeType = 900
    case binaryDataAttributeType = 1000
    case UUIDAttributeType = 1100
    case URIAttributeType = 1200
    case transformableAttributeType = 1800
    case objectIDAttributeType = 2000
    case compositeAttributeType = 2100
}

/// The description of an attribute: a value of one ``NSAttributeType`` stored in a column.
///
/// ```swift
/// let price = NSAttributeDescription()
/// price.name = "price"
/// price.attributeType = .doubleAttributeType
/// price.defaultValue = 0.0
/// ```
open class NSAttributeDescription: NSPropertyDescription, @unchecked Sendable {
    /// The type of the attribute's values.
    open var attributeType: NSAttributeType = .undefinedAttributeType { willSet { assertMutable() } }
    /// The name of the class of the attribute's values, derived from ``attributeType`` unless set.
    open var attributeValueClassName: String? {
        get { _attributeValueClassName ?? Self.defaultClassName(for: attributeType) }
        set { _attributeValueClassName = newValue }
    }
    private var _attributeValueClassName: String?
    /// The value a newly inserted object starts with.
    open var defaultValue: Any? = nil { willSet { assertMutable() } }
    /// The name of the ``ValueTransformer`` of a transformable attribute; `nil` means
    /// `NSSecureUnarchiveFromData`, as on Apple platforms.
    open var valueTransformerName: String? = nil { willSet { assertMutable() } }
    /// Whether large binary values may live outside the store file: the SQLite store keeps a
    /// value of at least 100 KiB in a file of `.<StoreName>_SUPPORT/_EXTERNAL_DATA/`, as Apple's
    /// does (binary data attributes only). Part of the version hash.
    open var allowsExternalBinaryDataStorage: Bool = false { willSet { assertMutable() } }
    /// Whether the value is kept in persistent history when its object is deleted. Part of the version hash.
    open var preservesValueInHistoryOnDeletion: Bool = false { willSet { assertMutable() } }
    /// Stored for fidelity; CloudKit does not exist on Linux.
    open var allowsCloudEncryption: Bool = false

    /// An empty attribute: no name, type ``NSAttributeType/undefinedAttributeType``, optional.
    public required init() { super.init() }

    /// A copy of the attribute's settings, in no entity, so it may be changed even while this one's
    /// model is in use.
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = Swift.type(of: self).init()
        copy.copyAttributeSettings(from: self)
        return copy
    }

    /// Takes every setting of `other`, its name included.
    internal func copyAttributeSettings(from other: NSAttributeDescription) {
        copyProperties(from: other)
        if !(self is NSCompositeAttributeDescription) { attributeType = other.attributeType }
        _attributeValueClassName = other._attributeValueClassName
        defaultValue = other.defaultValue
        valueTransformerName = other.valueTransformerName
        allowsExternalBinaryDataStorage = other.allowsExternalBinaryDataStorage
        preservesValueInHistoryOnDeletion = other.preservesValueInHistoryOnDeletion
        allowsCloudEncryption = other.allowsCloudEncryption
        minimum = other.minimum
        maximum = other.maximum
        regularExpression = other.regularExpression
        usesScalarValueType = other.usesScalarValueType
    }

    /// The property's hash with the attribute type and the external-storage and history flags mixed
    /// in, as Apple computes it.
    open override var versionHash: Data { VersionHash.attributeHash(self) }

    static func defaultClassName(for type: NSAttributeType) -> String? {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
             .doubleAttributeType, .floatAttributeType, .booleanAttributeType: return "NSNumber"
        case .decimalAttributeType: return "NSDecimalNumber"
        case .stringAttributeType: return "NSString"
        case .dateAttributeType: return "NSDate"
        case .binaryDataAttributeType: return "NSData"
        case .UUIDAttributeType: return "NSUUID"
        case .URIAttributeType: return "NSURL"
        case .objectIDAttributeType: return "NSManagedObjectID"
        case .compositeAttributeType: return "NSDictionary"
        case .transformableAttributeType, .undefinedAttributeType: return nil
        }
    }

    /// Whether values are kept as objects (transformable, undefined, composite) rather than typed storage.
    internal var holdsObjects: Bool {
        switch attributeType {
        case .transformableAttributeType, .undefinedAttributeType, .compositeAttributeType: return true
        default: return false
        }
    }

    /// Whether any value rule applies (bounds, pattern, predicates).
    internal var hasValueRules: Bool {
        minimum != nil || maximum != nil || regularExpression != nil || !validationPredicates.isEmpty
    }

    // MARK: Validation rules in the form Xcode's model editor writes them

    /// Minimum value (numbers, dates) or minimum length (strings, binary data), as Xcode's `minValueString`.
    internal var minimum: Double?
    /// Maximum value (numbers, dates) or maximum length (strings, binary data), as Xcode's `maxValueString`.
    internal var maximum: Double?
    /// A regular expression every string value must match, as Xcode's `regularExpressionString`.
    internal var regularExpression: String?
    /// Whether generated accessors use a scalar Swift type (Xcode's `usesScalarValueType`); stored for fidelity.
    internal var usesScalarValueType: Bool = false
}
