import Foundation

extension NSAttributeDescription {
    /// The type of an attribute's values, as a structure (Apple's Swift spelling of
    /// ``NSAttributeType``).
    ///
    /// ```swift
    /// let title = NSAttributeDescription()
    /// title.name = "title"
    /// title.type = .string // title.attributeType == .stringAttributeType
    /// ```
    public struct AttributeType: RawRepresentable, Hashable, Sendable {
        /// The ``NSAttributeType`` this type stands for.
        public let rawValue: NSAttributeType

        /// The type standing for `type`.
        public init(_ type: NSAttributeType) { rawValue = type }

        /// The type standing for `rawValue`.
        public init(rawValue: NSAttributeType) { self.rawValue = rawValue }

        /// No type: ``NSAttributeType/undefinedAttributeType``.
        public static let undefined = AttributeType(.undefinedAttributeType)
        /// 16-bit integers: ``NSAttributeType/integer16AttributeType``.
        public static let integer16 = AttributeType(.integer16AttributeType)
        /// 32-bit integers: ``NSAttributeType/integer32AttributeType``.
        public static let integer32 = AttributeType(.integer32AttributeType)
        /// 64-bit integers: ``NSAttributeType/integer64AttributeType``.
        public static let integer64 = AttributeType(.integer64AttributeType)
        /// Decimal numbers (`NSDecimalNumber`): ``NSAttributeType/decimalAttributeType``.
        public static let decimal = AttributeType(.decimalAttributeType)
        /// Double-precision floating-point numbers: ``NSAttributeType/doubleAttributeType``.
        public static let double = AttributeType(.doubleAttributeType)
        /// Single-precision floating-point numbers: ``NSAttributeType/floatAttributeType``.
        public static let float = AttributeType(.floatAttributeType)
        /// Strings: ``NSAttributeType/stringAttributeType``.
        public static let string = AttributeType(.stringAttributeType)
        /// Booleans: ``NSAttributeType/booleanAttributeType``.
        public static let boolean = AttributeType(.booleanAttributeType)
        /// Dates: ``NSAttributeType/dateAttributeType``.
        public static let date = AttributeType(.dateAttributeType)
        /// Binary data: ``NSAttributeType/binaryDataAttributeType``.
        public static let binaryData = AttributeType(.binaryDataAttributeType)
        /// UUIDs: ``NSAttributeType/UUIDAttributeType``.
        public static let uuid = AttributeType(.UUIDAttributeType)
        /// URLs: ``NSAttributeType/URIAttributeType``.
        public static let uri = AttributeType(.URIAttributeType)
        /// Values stored through a ``ValueTransformer``: ``NSAttributeType/transformableAttributeType``.
        public static let transformable = AttributeType(.transformableAttributeType)
        /// Managed object IDs: ``NSAttributeType/objectIDAttributeType``.
        public static let objectID = AttributeType(.objectIDAttributeType)
        /// Composite attributes: ``NSAttributeType/compositeAttributeType`` (an
        /// ``NSCompositeAttributeDescription``'s type).
        public static let composite = AttributeType(.compositeAttributeType)
    }

    /// The attribute's type; the same as ``attributeType``, in Apple's Swift spelling.
    public var type: AttributeType {
        get { AttributeType(attributeType) }
        set { attributeType = newValue.rawValue }
    }
}
