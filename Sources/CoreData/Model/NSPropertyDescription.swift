import Foundation

/// The description of one property of an entity: an attribute or a relationship.
///
/// As on Apple platforms, you do not instantiate `NSPropertyDescription` directly; use
/// ``NSAttributeDescription`` or ``NSRelationshipDescription``.
///
/// ```swift
/// let name = NSAttributeDescription()
/// name.name = "name"
/// name.attributeType = .stringAttributeType
/// name.isOptional = false
/// ```
///
/// A property description may be changed only until the model it belongs to is used by a
/// persistent store coordinator; after that the model is frozen, and changing it is a programmer
/// error that stops the process (Apple raises `NSInternalInconsistencyException`).
open class NSPropertyDescription: NSObject, NSCopying, @unchecked Sendable {
    /// The name of the property; a key for `value(forKey:)`.
    open var name: String = "" { willSet { assertMutable() } }
    /// Whether the property may be `nil` when its object is saved. Defaults to `true`, as on Apple platforms.
    open var isOptional: Bool = true { willSet { assertMutable() } }
    /// Whether the property is transient: kept in memory, never written to a store.
    open var isTransient: Bool = false { willSet { assertMutable() } }
    /// Read-only properties cannot be set through key-value coding (they still hash differently).
    open var isReadOnly: Bool = false { willSet { assertMutable() } }
    /// Whether the property is indexed in the store (deprecated on Apple platforms in favour of
    /// `NSEntityDescription.indexes`; still honoured here).
    open var isIndexed: Bool = false { willSet { assertMutable() } }
    /// Whether Spotlight indexes the property; stored for fidelity, unused on Linux.
    open var isIndexedBySpotlight: Bool = false
    /// Stored for fidelity, unused on Linux.
    open var isStoredInExternalRecord: Bool = false
    /// Free-form information about the property.
    open var userInfo: [AnyHashable: Any]? = nil
    /// A string mixed into ``versionHash`` to mark a change that does not otherwise alter the hash.
    open var versionHashModifier: String? = nil { willSet { assertMutable() } }
    /// The name of this property in the previous model version, used by lightweight migration;
    /// unset, the property's name, as Apple documents ("If unset, the identifier will return the
    /// property's name").
    ///
    /// ```swift
    /// fullName.renamingIdentifier = "name"   // was `name` in the previous version
    /// ```
    open var renamingIdentifier: String? {
        get { explicitRenamingIdentifier ?? name }
        set { explicitRenamingIdentifier = newValue }
    }
    /// The identifier set (by the app or a model file), `nil` when unset.
    internal var explicitRenamingIdentifier: String?
    /// The entity this property belongs to.
    open internal(set) unowned var entity: NSEntityDescription!

    /// The predicates every value must satisfy when the object is saved.
    open private(set) var validationPredicates: [NSPredicate] = []
    /// The error strings returned when the matching predicate in ``validationPredicates`` fails.
    open private(set) var validationWarnings: [Any] = []

    /// Sets the validation predicates and their warnings.
    open func setValidationPredicates(_ validationPredicates: [NSPredicate]?, withValidationWarnings validationWarnings: [String]?) {
        assertMutable()
        self.validationPredicates = validationPredicates ?? []
        self.validationWarnings = validationWarnings ?? []
    }

    /// The hash Core Data uses to decide whether two models' properties are compatible.
    ///
    /// Computed exactly as Apple computes it: see `VersionHash.swift`.
    open var versionHash: Data { VersionHash.propertyHash(self) }

    /// A copy of the property's settings, in no entity; subclasses copy their own settings too.
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = type(of: self).init()
        copy.copyProperties(from: self)
        return copy
    }

    /// An empty property; as on Apple platforms, create an ``NSAttributeDescription`` or
    /// ``NSRelationshipDescription`` instead.
    public required override init() { super.init() }

    internal func copyProperties(from other: NSPropertyDescription) {
        name = other.name
        isOptional = other.isOptional
        isTransient = other.isTransient
        isReadOnly = other.isReadOnly
        isIndexed = other.isIndexed
        isIndexedBySpotlight = other.isIndexedBySpotlight
        isStoredInExternalRecord = other.isStoredInExternalRecord
        userInfo = other.userInfo
        versionHashModifier = other.versionHashModifier
        explicitRenamingIdentifier = other.explicitRenamingIdentifier
        validationPredicates = other.validationPredicates
        validationWarnings = other.validationWarnings
    }

    open override var description: String {
        "(\(type(of: self))) \(name), optional \(isOptional), transient \(isTransient)"
    }

    // MARK: Internal layout, fixed when the model is frozen

    /// The position of this property in its entity's (and every sub-entity's) value array.
    internal var index: Int = -1
    /// The SQLite column that stores the property (attributes and to-one relationships).
    internal var columnName: String = ""

    /// The composite attribute this property is an element of (set by its `elements`): an
    /// element belongs to no entity, but to its composite's.
    internal weak var containingComposite: NSCompositeAttributeDescription?

    internal func assertMutable() {
        var owner: NSPropertyDescription? = self
        while let property = owner, property.entity == nil { owner = property.containingComposite }
        if let model = owner?.entity?.managedObjectModel, model.isFrozen {
            preconditionFailure("Can't modify the property '\(name)' of a managed object model that is in use by a persistent store coordinator")
        }
    }

    /// Whether the value lives in a store row (attributes and to-one relationships that are not
    /// transient). A composite attribute does not: its leaf elements do (``CompositeLeafAttribute``).
    internal var isStoredInRow: Bool {
        if isTransient { return false }
        if let relationship = self as? NSRelationshipDescription { return !relationship.isToMany }
        return self is NSAttributeDescription && !(self is NSCompositeAttributeDescription)
    }

    /// The upper-cased name the property's column is named after (`Z` + stem, numbered on a
    /// collision): the name, or a composite's leaf element's own name.
    internal var columnStem: String { name.uppercased() }
}
