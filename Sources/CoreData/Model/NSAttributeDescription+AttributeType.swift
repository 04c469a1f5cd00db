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

        public static let undefined = AttributeType(.undefinedAttributeType)
        public static let integer16 = AttributeType(.integer16AttributeType)
        public static let integer32 = AttributeType(.integer32AttributeType)
        public static let integer64 = AttributeType(.integer64AttributeType)
        public static let decimal = AttributeType(.decimalAttributeType)
        public static let double = AttributeType(.doubleAttributeType)
        public static let float = AttributeType(.floatAttributeType)
        public static let string = AttributeType(.stringAttributeType)
        public static let boolean = AttributeType(.booleanAttributeType)
        public static let date = AttributeType(.dateAttributeType)
        public static let binaryData = AttributeType(.binaryDataAttributeType)
        public static let uuid = AttributeType(.UUIDAttributeType)
        public static let uri = AttributeType(.URIAttributeType)
        public static let transformable = AttributeType(.transformableAttributeType)
        public static let objectID = AttributeType(.objectIDAttributeType)
        /// Composite attributes (``NSAttributeType/compositeAttributeType``) are not supported here.
        public static let composite = AttributeType(.compositeAttributeType)
    }

    /// The attribute's type; the same as ``attributeType``, in Apple's Swift spelling.
    public var type: AttributeType {
        get { AttributeType(attributeType) }
        set { attributeType = newValue.rawValue }
    }
}
