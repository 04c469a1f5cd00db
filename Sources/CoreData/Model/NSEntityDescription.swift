import Foundation

/// The description of an entity: its name, its class, its properties and its place in the
/// entity hierarchy.
///
/// ```swift
/// let car = NSEntityDescription()
/// car.name = "Car"
/// car.managedObjectClassName = NSStringFromClass(Car.self)
/// car.properties = [name, year]
/// ```
open class NSEntityDescription: NSObject, NSCopying, @unchecked Sendable {
    /// The entity's name, unique in its model.
    open var name: String? { willSet { assertMutable() } }
    /// The name of the class that represents the entity's objects. A module-qualified name
    /// (`MyModule.Car`) or a bare one (`Car`, looked up in the modules that registered classes
    /// with ``NSManagedObject``). A name with no class behind it falls back to `NSManagedObject`.
    open var managedObjectClassName: String! = "NSManagedObject" { willSet { assertMutable() } }
    /// Whether the entity is abstract: it cannot have instances of its own.
    open var isAbstract: Bool = false { willSet { assertMutable() } }
    /// Free-form information about the entity.
    open var userInfo: [AnyHashable: Any]? = nil
    /// A string mixed into ``versionHash`` to mark a change that does not otherwise alter it.
    open var versionHashModifier: String? { willSet { assertMutable() } }
    /// The name of this entity in the previous model version, used by lightweight migration;
    /// unset, the entity's name, as Apple documents.
    open var renamingIdentifier: String? {
        get { explicitRenamingIdentifier ?? name }
        set { explicitRenamingIdentifier = newValue }
    }
    /// The identifier set (by the app or a model file), `nil` when unset.
    internal var explicitRenamingIdentifier: String?
    /// The model the entity belongs to.
    open internal(set) weak var managedObjectModel: NSManagedObjectModel!
    /// The entity this one inherits from.
    open internal(set) unowned var superentity: NSEntityDescription?
    /// Property names (or arrays of names) whose values must be unique among the entity's objects.
    open var uniquenessConstraints: [[Any]] = [] { willSet { assertMutable() } }
    /// The store indexes declared for the entity.
    open var indexes: [NSFetchIndexDescription] = [] { willSet { assertMutable() } }

    private var _subentities: [NSEntityDescription] = []
    private var _properties: [NSPropertyDescription] = []

    /// An empty entity: set its name and properties, then add it to a model's `entities`.
    public override init() { super.init() }

    /// The entities that inherit from this one.
    open var subentities: [NSEntityDescription] {
        get { _subentities }
        set {
            assertMutable()
            for entity in _subentities where entity.superentity === self { entity.superentity = nil }
            _subentities = newValue
            for entity in newValue { entity.superentity = self }
        }
    }

    /// The entity's direct sub-entities by name.
    ///
    /// ```swift
    /// let circle = model.entitiesByName["Shape"]?.subentitiesByName["Circle"]
    /// ```
    open var subentitiesByName: [String: NSEntityDescription] {
        Dictionary(_subentities.compactMap { entity in entity.name.map { ($0, entity) } }, uniquingKeysWith: { first, _ in first })
    }

    /// All the entity's properties, inherited ones first, as on Apple platforms.
    /// Setting it sets the entity's own properties.
    open var properties: [NSPropertyDescription] {
        get { (superentity?.properties ?? []) + _properties }
        set {
            assertMutable()
            _properties = newValue
            for property in newValue { property.entity = self }
        }
    }

    /// The properties declared by this entity itself, not inherited.
    internal var ownProperties: [NSPropertyDescription] { _properties }

    /// ``ownProperties`` with each composite attribute followed by its leaf elements
    /// (``CompositeLeafAttribute``): the properties that get indexes and columns. The leaves
    /// exist once the model has frozen.
    internal var ownLayoutProperties: [NSPropertyDescription] {
        _properties.flatMap { property -> [NSPropertyDescription] in
            guard let composite = property as? NSCompositeAttributeDescription else { return [property] }
            return [composite] + composite.leaves
        }
    }

    /// The name by which a uniqueness constraint or a fetch index names `property`: its own, or
    /// for an element of one of the entity's composite attributes, its key path (`address.city`),
    /// as Apple's framework records it.
    internal func qualifiedName(of property: NSPropertyDescription) -> String {
        if property.entity == nil {
            for case let composite as NSCompositeAttributeDescription in properties {
                if let path = composite.path(to: property) { return path.joined(separator: ".") }
            }
        }
        return property.name
    }

    /// The element of one of the entity's composite attributes that `keyPath` names
    /// (`address.city`), if any (a leaf element, not a nested composite).
    internal func compositeElement(named keyPath: String) -> NSAttributeDescription? {
        var path = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard path.count > 1, var elements = (propertiesByName[path.removeFirst()] as? NSCompositeAttributeDescription)?.elements else { return nil }
        while let name = path.first {
            path.removeFirst()
            guard let element = elements.first(where: { $0.name == name }) else { return nil }
            guard let nested = element as? NSCompositeAttributeDescription else { return path.isEmpty ? element : nil }
            elements = nested.elements
        }
        return nil
    }

    /// The names of the properties of a uniqueness constraint (names as given, descriptions by
    /// ``qualifiedName(of:)``).
    internal func names(ofConstraint constraint: [Any]) -> [String] {
        constraint.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription).map(qualifiedName(of:)) }
    }

    /// The name of the property a fetch index element indexes.
    internal func name(ofIndexElement element: NSFetchIndexElementDescription) -> String? {
        element.property.map(qualifiedName(of:)) ?? element.propertyName
    }

    /// ``properties`` with each composite attribute followed by its leaf elements: every
    /// property an object of the entity holds a value for, in index order.
    internal var layoutProperties: [NSPropertyDescription] {
        (superentity?.layoutProperties ?? []) + ownLayoutProperties
    }

    /// All properties (inherited included) by name.
    open var propertiesByName: [String: NSPropertyDescription] {
        if let layout = frozenLayout { return layout.propertiesByName }
        return Dictionary(properties.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// All attributes (inherited included) by name.
    open var attributesByName: [String: NSAttributeDescription] {
        propertiesByName.compactMapValues { $0 as? NSAttributeDescription }
    }

    /// All relationships (inherited included) by name.
    open var relationshipsByName: [String: NSRelationshipDescription] {
        propertiesByName.compactMapValues { $0 as? NSRelationshipDescription }
    }

    /// The relationships whose destination is `entity`.
    open func relationships(forDestination entity: NSEntityDescription) -> [NSRelationshipDescription] {
        properties.compactMap { $0 as? NSRelationshipDescription }.filter { $0.destinationEntity === entity }
    }

    /// Whether this entity is `entity` or inherits from it.
    open func isKindOf(entity: NSEntityDescription) -> Bool {
        var current: NSEntityDescription? = self
        while let candidate = current {
            if candidate === entity { return true }
            current = candidate.superentity
        }
        return false
    }

    /// The hash Core Data compares to decide whether a store's entity matches this one.
    /// Computed exactly as Apple computes it (see `VersionHash.swift`).
    open var versionHash: Data { VersionHash.entityHash(self) }

    /// A copy of the entity with copies of its own properties, in no model and with no super- or
    /// sub-entities (``NSManagedObjectModel``'s copy links the copies up).
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSEntityDescription()
        copy.name = name
        copy.managedObjectClassName = managedObjectClassName
        copy.isAbstract = isAbstract
        copy.userInfo = userInfo
        copy.versionHashModifier = versionHashModifier
        copy.explicitRenamingIdentifier = explicitRenamingIdentifier
        copy.properties = _properties.map { $0.copy() as! NSPropertyDescription }
        // The copy's constraints and indexes name the copy's own properties: none may point at
        // this entity's (which the copy outlives, as a merged model outlives the models it was
        // made of). An element of a composite is found by its key path in the copy; a property
        // of another entity (a super-entity) is named.
        func copied(_ property: NSPropertyDescription) -> NSPropertyDescription? {
            if property.entity === self { return copy.ownProperties.first { $0.name == property.name } }
            if property.entity == nil { return copy.compositeElement(named: qualifiedName(of: property)) }
            return nil
        }
        copy.uniquenessConstraints = uniquenessConstraints.map { constraint in
            constraint.map { item -> Any in
                guard let property = item as? NSPropertyDescription else { return item }
                return copied(property) ?? qualifiedName(of: property)
            }
        }
        copy.indexes = indexes.map { index in
            let elements = index.elements.map { element -> NSFetchIndexElementDescription in
                let description: NSFetchIndexElementDescription
                if let property = element.property, let own = copied(property) {
                    description = NSFetchIndexElementDescription(property: own, collationType: element.collationType)
                } else {
                    description = NSFetchIndexElementDescription(propertyName: element.property.map(qualifiedName(of:)) ?? element.propertyName ?? "",
                                                                 ascending: element.isAscending)
                    description.collationType = element.collationType
                }
                description.isAscending = element.isAscending
                return description
            }
            let description = NSFetchIndexDescription(name: index.name, elements: elements)
            description.partialIndexPredicate = index.partialIndexPredicate
            return description
        }
        return copy
    }

    open override var description: String {
        "(<NSEntityDescription: \(name ?? "<unnamed>")>) properties: \(properties.map(\.name))"
    }

    // MARK: Finding entities and inserting objects

    /// The entity named `entityName` in the model of `context`'s coordinator, or `nil`.
    open class func entity(forEntityName entityName: String, in context: NSManagedObjectContext) -> NSEntityDescription? {
        context.withModel { $0?.entity(named: entityName) }
    }

    /// Creates an object of the named entity, inserts it into `context` and returns it.
    ///
    /// Naming an entity the context's model does not have is a programmer error and stops the
    /// process, as Apple's raises `NSInternalInconsistencyException`; check with
    /// ``entity(forEntityName:in:)`` first when the name comes from input.
    @discardableResult
    open class func insertNewObject(forEntityName entityName: String, into context: NSManagedObjectContext) -> NSManagedObject {
        guard let entity = entity(forEntityName: entityName, in: context) else {
            preconditionFailure("+entityForName: could not locate an entity named '\(entityName)' in this model.")
        }
        // The entity found (retained) above is handed on to the object, which keeps it: no
        // second retain, as a method of the entity (which lends `self`) would take.
        let instanceClass = entity.instanceClass
        guard instanceClass == NSManagedObject.self else { return instanceClass.init(entity: entity, insertInto: context) }
        // A plain object (no initializer of a subclass to run) is made without a context and
        // inserted here: an initializer retains and releases `self` around any call it makes
        // after `super.init()`, and takes its context owned (a retain and a release more), where
        // this method lends both. Made without a context, the object shares its entity's
        // default values (a retain) until given its own buffer here (their release): two atomic
        // operations fewer per object in all. (A second designated initializer, without the
        // defaults, would cost subclasses their inherited convenience initializers.)
        let layout = entity.layoutReference // kept by the entity, which the object keeps
        let object = NSManagedObject(entity: consume entity, insertInto: nil)
        object._values = layout._withUnsafeGuaranteedRef { $0.newValues() }
        context.insert(object)
        return object
    }

    /// The class of this entity's objects, read from the layout without a retain.
    private var instanceClass: NSManagedObject.Type {
        layoutReference._withUnsafeGuaranteedRef { $0.instanceClass }
    }

    // MARK: Internal layout, fixed when the model is frozen

    /// The layout while the model freezes (the builder's working copy).
    internal var frozenLayout: EntityLayout?
    /// The complete layout, set once freezing has finished.
    internal var publishedLayout: EntityLayout? {
        didSet { publishedLayoutReference = publishedLayout.map { Unmanaged.passUnretained($0) } }
    }
    /// `publishedLayout`, which keeps it: read by every `insertNewObject` without a retain.
    private var publishedLayoutReference: Unmanaged<EntityLayout>?

    /// ``layout``, unretained: the entity keeps it (a published layout is never replaced).
    /// For `NSManagedObject.init`, which holds the entity while it reads the layout.
    internal var layoutReference: Unmanaged<EntityLayout> {
        if let layout = publishedLayoutReference { return layout }
        return Unmanaged.passUnretained(layout)
    }

    /// The entity's frozen layout. Freezes the model on first use.
    internal var layout: EntityLayout {
        if let layout = publishedLayout { return layout }
        managedObjectModel?.freeze()
        if let layout = publishedLayout { return layout }
        preconditionFailure("The entity '\(name ?? "")' is not part of a managed object model")
    }

    internal func assertMutable() {
        if let model = managedObjectModel, model.isFrozen {
            preconditionFailure("Can't modify the entity '\(name ?? "")' of a managed object model that is in use by a persistent store coordinator")
        }
    }

    /// Whether an entity of this entity's hierarchy (its root and every entity below it: the
    /// rows of one table) has uniqueness constraints.
    internal var hierarchyHasUniquenessConstraints: Bool {
        rootEntity.layout.descendants.contains { !$0.uniquenessConstraints.isEmpty }
    }

    /// The root of this entity's hierarchy: the entity whose table holds its rows.
    internal var rootEntity: NSEntityDescription {
        var entity = self
        while let parent = entity.superentity { entity = parent }
        return entity
    }
}

/// An index over one or more properties of an entity.
open class NSFetchIndexDescription: NSObject, @unchecked Sendable {
    /// The index's name.
    open var name: String
    /// The indexed properties, in order; each element's ``NSFetchIndexElementDescription/indexDescription``
    /// is this index.
    open var elements: [NSFetchIndexElementDescription] {
        didSet {
            for element in oldValue where element.indexDescription === self { element.indexDescription = nil }
            for element in elements { element.indexDescription = self }
        }
    }
    /// An optional partial-index predicate.
    open var partialIndexPredicate: NSPredicate?
    /// The entity the index belongs to.
    open internal(set) unowned var entity: NSEntityDescription?

    /// An index named `name` over `elements`, in order (`nil`: none yet).
    ///
    /// ```swift
    /// let element = NSFetchIndexElementDescription(property: name, collationType: .binary)
    /// car.indexes = [NSFetchIndexDescription(name: "byName", elements: [element])]
    /// ```
    public init(name: String, elements: [NSFetchIndexElementDescription]?) {
        self.name = name
        self.elements = elements ?? []
        super.init()
        for element in self.elements { element.indexDescription = self }
    }
}

/// Apple's top-level name of ``NSFetchIndexElementDescription/CollationType``: both spellings
/// name one type.
///
/// ```swift
/// let type: NSFetchIndexElementType = .binary
/// ```
public typealias NSFetchIndexElementType = NSFetchIndexElementDescription.CollationType

/// One property in an ``NSFetchIndexDescription``.
open class NSFetchIndexElementDescription: NSObject, @unchecked Sendable {
    /// How an index element is stored.
    public enum CollationType: UInt, Sendable { case binary = 0, rTree = 1 }
    /// The indexed property.
    open var property: NSPropertyDescription?
    /// The indexed property's name.
    open var propertyName: String?
    /// Whether the element sorts ascending.
    open var isAscending: Bool = true
    /// The kind of index.
    open var collationType: CollationType = .binary
    /// The index this element belongs to.
    open internal(set) weak var indexDescription: NSFetchIndexDescription?

    /// An ascending element indexing `property`, stored as `collationType` (`.binary` for an ordinary index).
    public init(property: NSPropertyDescription, collationType: CollationType) {
        self.property = property
        self.propertyName = property.name
        self.collationType = collationType
        super.init()
    }

    internal init(propertyName: String, ascending: Bool) {
        self.propertyName = propertyName
        self.isAscending = ascending
        super.init()
    }
}
