import Foundation
import Observation
import Synchronization

/// What an entity looks like once its model is frozen: every property at a fixed index, the
/// table and columns that store it, its `Z_ENT` number. Hot paths (save, fetch, fault firing,
/// property access) work by these indexes, never by name.
///
/// `@usableFromInline` for the inlined `@Managed` accessors (`Managed.swift`), which read
/// ``managedSerial`` and ``storageKinds`` across modules.
@usableFromInline
internal final class EntityLayout: @unchecked Sendable {
    unowned let entity: NSEntityDescription
    /// The entity's `Z_ENT` number in stores.
    let entityNumber: Int
    /// The root of the entity's hierarchy; its table stores every sub-entity's rows.
    unowned let root: NSEntityDescription
    /// `Z` + the root entity's upper-cased name.
    let tableName: String
    /// The root entity's `Z_ENT` number (object IDs of a hierarchy share its key space).
    var rootNumber: Int = 0
    /// Every attribute and relationship, inherited ones first; a sub-entity shares its parent's
    /// indexes. Fetched properties hold no value in an object, so they are not here.
    let properties: [NSPropertyDescription]
    /// Every property by name, fetched properties included (a stored property wins a name clash).
    let propertiesByName: [String: NSPropertyDescription]
    /// The fetched properties, inherited ones first, at their ``NSFetchedPropertyDescription/fetchedIndex``.
    let fetchedProperties: [NSFetchedPropertyDescription]
    /// Property indexes by name (every lookup by name goes through it).
    let nameTable: PropertyNameTable
    /// Each attribute's type by property index (`.undefinedAttributeType` for relationships),
    /// so the hot paths need no cast of the property description.
    let attributeTypes: ContiguousArray<NSAttributeType>
    /// Indexes of the properties stored in the entity's row (attributes and to-one relationships, not transient).
    let rowIndexes: [Int]
    /// Indexes of all relationships.
    let relationshipIndexes: [Int]
    /// The same, as a mask.
    let relationshipMask: PropertyMask
    /// Indexes of the attributes.
    let attributeIndexes: [Int]
    /// Indexes of the transient properties (never written).
    let transientIndexes: [Int]
    /// Indexes of the composite attributes (``NSCompositeAttributeDescription``): their values
    /// live in their leaves' slots, which follow them.
    let compositeIndexes: [Int]
    /// Indexes of the attributes that hold objects (transformable, undefined, composite): their
    /// values are encoded before they are written.
    let objectAttributeIndexes: [Int]
    /// Indexes of the row's properties whose values may be object IDs (to-one relationships and
    /// object-ID attributes): a save resolves the temporary ones there.
    let idValueIndexes: [Int]
    /// This entity's `Z_ENT` and those of all its sub-entities.
    var entityNumbers: [Int] = []
    /// All concrete entities at or below this one, this one first.
    var descendants: [NSEntityDescription] = []
    /// How this entity's values are laid out (``PropertyValues``).
    let valueShape: ValueShape
    /// The values a new object starts with.
    let defaultValues: PropertyValues

    /// The property or composite leaf named `name` (`title`, `address.city`), as uniqueness
    /// constraints and fetch indexes name them.
    func property(named name: String) -> NSPropertyDescription? {
        nameTable.index(of: name).map { properties[$0] }
    }
    /// Whether every default value is `.null` (no attribute has a default).
    let defaultValuesAreNull: Bool

    /// `.null` for every property, in a buffer of their own.
    @inline(__always)
    func nullValues() -> PropertyValues { PropertyValues(nullsOf: valueShape) }

    /// The default values in a buffer of their own, for a new object about to take its values.
    func newValues() -> PropertyValues {
        var values = PropertyValues(nullsOf: valueShape)
        if defaultValuesAreNull { return values }
        for index in 0..<values.count where !defaultValues[index].isNull { values.initialize(defaultValues[index], at: index) }
        return values
    }
    /// Indexes of the properties that validation must look at: relationships with a rule,
    /// non-optional attributes and attributes with value rules.
    let validatedIndexes: [Int]
    /// Attributes whose values `setValue(_:forKey:)` may have stored mistyped (every attribute
    /// that does not hold arbitrary objects): checked only for objects that took such a value.
    let typeCheckedIndexes: [Int]
    /// The class the name resolved to when the model froze (immutable: read without a lock).
    let initialClass: NSManagedObject.Type
    /// The class named by `managedObjectClassName`, or `NSManagedObject` (read through `instanceClass`).
    private(set) var objectClass: NSManagedObject.Type
    /// A process-wide unique, never reused number for this layout (never 0): the key of the
    /// property-index caches of `@Managed` accessors (``ManagedPropertyKey``).
    @usableFromInline let managedSerial: UInt32
    /// ``managedSerial`` of this entity and of each of its super-entities, this one first: a
    /// property index cached for an ancestor is valid here too (inherited properties come first).
    var lineage: [UInt32] = []
    /// How each property is stored, by property index, for the typed `@Managed` accessors.
    @usableFromInline let storageKinds: ContiguousArray<ManagedStorageKind>
    /// Whether objects of this entity tell Swift's `Observation` of their reads: its class, or a
    /// class an object of it was made of, conforms to `Observable` (set once, never unset).
    @usableFromInline let _observesReads = Atomic<Bool>(false)
    /// ``_observesReads``, read by every `@Managed` getter and `value(forKey:)`.
    @inlinable var observesReads: Bool { @inline(__always) get { _observesReads.load(ordering: .relaxed) } }

    /// Notes that objects of `objectClass` are made of this entity: if it is `Observable`, this
    /// entity's objects observe their reads (`NSManagedObject+Observation.swift`).
    func noteInstanceClass(_ objectClass: NSManagedObject.Type) {
        if objectClass is any Observable.Type { _observesReads.store(true, ordering: .relaxed) }
    }

    private static let serials = Atomic<UInt32>(0)

    init(entity: NSEntityDescription, number: Int) {
        self.entity = entity
        self.entityNumber = number
        self.root = entity.rootEntity
        self.tableName = "Z" + (entity.rootEntity.name ?? "").uppercased()
        let all = entity.layoutProperties
        let properties = all.filter { !($0 is NSFetchedPropertyDescription) }
        self.properties = properties
        var byName: [String: NSPropertyDescription] = [:]
        var rowIndexes: [Int] = []
        var relationshipIndexes: [Int] = []
        var attributeIndexes: [Int] = []
        var defaults = ContiguousArray<StoreValue>(repeating: .null, count: properties.count)
        var kinds = ContiguousArray<ManagedStorageKind>(repeating: .other, count: properties.count)
        var attributeTypes = ContiguousArray<NSAttributeType>(repeating: .undefinedAttributeType, count: properties.count)
        for (index, property) in properties.enumerated() {
            // A composite's leaves are found by index (and by key path in ``nameTable``), not
            // among the entity's public properties.
            if !(property is CompositeLeafAttribute) { byName[property.name] = property }
            if property.isStoredInRow { rowIndexes.append(index) }
            if let attribute = property as? NSAttributeDescription {
                if !(attribute is NSCompositeAttributeDescription) { attributeIndexes.append(index) }
                // (A composite's default goes to its leaves: ``NSCompositeAttributeDescription/prepareLeaves()``.)
                if let value = attribute.defaultValue, !(attribute is NSCompositeAttributeDescription) {
                    defaults[index] = StoreValue.storage(of: value, for: attribute.attributeType) ?? .null
                }
                kinds[index] = ManagedStorageKind(attribute.attributeType)
                attributeTypes[index] = attribute.attributeType
            } else if let relationship = property as? NSRelationshipDescription {
                relationshipIndexes.append(index)
                kinds[index] = !relationship.isToMany ? .toOne : relationship.isOrdered ? .orderedToMany : .toMany
            }
        }
        let fetchedProperties = all.compactMap { $0 as? NSFetchedPropertyDescription }
        for fetched in fetchedProperties where byName[fetched.name] == nil { byName[fetched.name] = fetched }
        self.fetchedProperties = fetchedProperties
        self.storageKinds = kinds
        let serial = Self.serials.wrappingAdd(1, ordering: .relaxed).newValue
        precondition(serial != 0, "CoreData: more than 4 billion entity layouts in one process")
        self.managedSerial = serial
        self.propertiesByName = byName
        self.nameTable = PropertyNameTable(properties.map(\.name))
        self.attributeTypes = attributeTypes
        self.rowIndexes = rowIndexes
        self.idValueIndexes = rowIndexes.filter { kinds[$0] == .toOne || attributeTypes[$0] == .objectIDAttributeType }
        self.relationshipIndexes = relationshipIndexes
        var relationshipMask = PropertyMask()
        for index in relationshipIndexes { relationshipMask.insert(index) }
        self.relationshipMask = relationshipMask
        self.attributeIndexes = attributeIndexes
        self.transientIndexes = properties.indices.filter { properties[$0].isTransient }
        self.compositeIndexes = properties.indices.filter { properties[$0] is NSCompositeAttributeDescription }
        self.objectAttributeIndexes = attributeIndexes.filter { (properties[$0] as? NSAttributeDescription)?.holdsObjects ?? false }
        let valueShape = ValueShape.make(storageKinds: kinds)
        self.valueShape = valueShape
        var defaultValues = PropertyValues(nullsOf: valueShape)
        for (index, value) in defaults.enumerated() where !value.isNull { defaultValues.initialize(value, at: index) }
        self.defaultValues = defaultValues
        self.defaultValuesAreNull = defaults.allSatisfy(\.isNull)
        self.validatedIndexes = properties.indices.filter { index in
            if let relationship = properties[index] as? NSRelationshipDescription {
                // Only relationships with a rule: validating others would load every to-many at save.
                return !relationship.isOptional || relationship.minCount > 0 || (relationship.isToMany && relationship.maxCount > 0)
            }
            guard let attribute = properties[index] as? NSAttributeDescription else { return true }
            // A composite always: its value may be one that is not a dictionary of its elements.
            return !attribute.isOptional || attribute.hasValueRules || attribute is NSCompositeAttributeDescription
        }
        self.typeCheckedIndexes = properties.indices.filter { index in
            guard let attribute = properties[index] as? NSAttributeDescription else { return false }
            return !attribute.holdsObjects && attribute.isOptional && !attribute.hasValueRules
        }
        self.objectClass = ManagedObjectClassRegistry.resolve(entity.managedObjectClassName)
        self.initialClass = objectClass
        let name = entity.managedObjectClassName
        self.mayResolveLater = objectClass == NSManagedObject.self && name != nil && name != "NSManagedObject"
        noteInstanceClass(objectClass)
    }
    /// Whether ``instanceClass`` may change: the class name did not resolve when the model froze
    /// (immutable: read without a lock).
    private let mayResolveLater: Bool

    /// The class to instantiate. A name that did not resolve is looked up again only after a new
    /// class has been registered (a lookup by name scans the runtime's type metadata).
    var instanceClass: NSManagedObject.Type {
        // A class that resolved when the model froze, or no class name: fixed for good.
        if !mayResolveLater { return initialClass }
        // Without the lock: a class found later (fixed for good), or no new class registered
        // since the name last failed to resolve.
        let found = resolvedClassBits.load(ordering: .acquiring)
        if found != 0 { return unsafeBitCast(found, to: NSManagedObject.Type.self) }
        let generation = ManagedObjectClassRegistry.generation
        if generation == checkedGeneration.load(ordering: .acquiring) { return NSManagedObject.self }
        classLock.lock()
        defer { classLock.unlock() }
        if objectClass == NSManagedObject.self, generation != resolvedGeneration {
            resolvedGeneration = generation
            objectClass = ManagedObjectClassRegistry.resolve(entity.managedObjectClassName)
            if objectClass != NSManagedObject.self {
                noteInstanceClass(objectClass)
                resolvedClassBits.store(unsafeBitCast(objectClass, to: UInt.self), ordering: .releasing)
            } else {
                checkedGeneration.store(generation, ordering: .releasing)
            }
        }
        return objectClass
    }
    /// Whether `cls` is a class this entity's name resolved to (so already registered): a new
    /// object of it need not register its class again (a lock and a set lookup per object).
    @inline(__always)
    func isResolvedClass(_ cls: NSManagedObject.Type) -> Bool {
        cls == initialClass || unsafeBitCast(cls, to: UInt.self) == resolvedClassBits.load(ordering: .relaxed)
    }
    private var resolvedGeneration = -1
    /// The class found after the model froze, as bits (0: none yet); read without the lock.
    private let resolvedClassBits = Atomic<UInt>(0)
    /// The registry generation at which the name last failed to resolve; read without the lock.
    private let checkedGeneration = Atomic<Int>(-1)
    /// Guards `objectClass` and `resolvedGeneration`: layouts are shared by every context.
    private let classLock = NSLock()
}

/// Computes every entity's ``EntityLayout`` and every property's index and column.
internal enum ModelLayoutBuilder {
    static func build(_ entities: [NSEntityDescription]) {
        // Resolve relationships read from Xcode's XML by name, and those of entities copied from
        // another model, which still point into it (or at nothing, once it is gone), as Apple's
        // copies keep only the names.
        var byName: [String: NSEntityDescription] = [:]
        for entity in entities { if let name = entity.name { byName[name] = entity } }
        for entity in entities {
            // (Through the storage: the model, being frozen, refuses changes through the setters.)
            for case let relationship as NSRelationshipDescription in entity.ownProperties {
                if let destination = relationship._destinationEntity, let name = destination.name, byName[name] !== destination {
                    relationship._destinationEntity = nil
                    relationship.destinationEntityName = name
                }
                if relationship._destinationEntity == nil, let name = relationship.destinationEntityName {
                    relationship._destinationEntity = byName[name]
                }
                if let inverse = relationship._inverseRelationship, byName[inverse.entity?.name ?? ""] !== inverse.entity {
                    relationship._inverseRelationship = nil
                    relationship.inverseName = inverse.name
                }
                if relationship._inverseRelationship == nil, let inverseName = relationship.inverseName,
                   let destination = relationship._destinationEntity {
                    relationship._inverseRelationship = destination.propertiesByName[inverseName] as? NSRelationshipDescription
                }
            }
        }

        // Z_ENT numbers: roots in name order, each followed depth-first by its sub-entities in name order.
        var ordered: [NSEntityDescription] = []
        func visit(_ entity: NSEntityDescription) {
            ordered.append(entity)
            for child in entity.subentities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) { visit(child) }
        }
        for root in entities.filter({ $0.superentity == nil }).sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            visit(root)
        }
        // Entities listed in the model but reachable only as sub-entities of unlisted parents still get numbers.
        for entity in entities where !ordered.contains(where: { $0 === entity }) { ordered.append(entity) }

        // Property indexes: inherited first, so a sub-entity shares its parent's indexes.
        // Fetched properties are numbered apart: they hold no value in an object.
        // A composite attribute is followed by its leaf elements, each with an index of its own.
        for entity in ordered {
            for case let composite as NSCompositeAttributeDescription in entity.ownProperties { composite.prepareLeaves() }
        }
        for entity in ordered {
            let inherited = entity.superentity?.layoutProperties ?? []
            let inheritedFetched = inherited.count { $0 is NSFetchedPropertyDescription }
            var nextIndex = inherited.count - inheritedFetched
            var nextFetchedIndex = inheritedFetched
            for property in entity.ownLayoutProperties {
                property.entity = entity
                if let fetched = property as? NSFetchedPropertyDescription {
                    fetched.fetchedIndex = nextFetchedIndex
                    nextFetchedIndex += 1
                } else {
                    property.index = nextIndex
                    nextIndex += 1
                }
            }
        }

        // Columns: per root table, `Z` + upper-cased name, numbered when two sub-entities collide.
        for root in ordered where root.superentity == nil {
            var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
            let family = ordered.filter { $0.rootEntity === root }
            for entity in family {
                for property in entity.ownLayoutProperties where property.isStoredInRow {
                    let base = "Z" + property.columnStem
                    var column = base
                    var counter = 1
                    while used.contains(column) { column = base + String(counter); counter += 1 }
                    used.insert(column)
                    property.columnName = column
                }
            }
        }

        var layouts: [ObjectIdentifier: EntityLayout] = [:]
        for (offset, entity) in ordered.enumerated() {
            let layout = EntityLayout(entity: entity, number: offset + 1)
            entity.frozenLayout = layout
            layouts[ObjectIdentifier(entity)] = layout
        }
        for entity in ordered {
            var descendants: [NSEntityDescription] = []
            func collect(_ e: NSEntityDescription) {
                descendants.append(e)
                for child in e.subentities { collect(child) }
            }
            collect(entity)
            entity.frozenLayout!.descendants = descendants
            entity.frozenLayout!.rootNumber = entity.rootEntity.frozenLayout!.entityNumber
            entity.frozenLayout!.entityNumbers = descendants.map { $0.frozenLayout!.entityNumber }
            var lineage: [UInt32] = []
            var ancestor: NSEntityDescription? = entity
            while let current = ancestor {
                if let serial = layouts[ObjectIdentifier(current)]?.managedSerial { lineage.append(serial) }
                ancestor = current.superentity
            }
            entity.frozenLayout!.lineage = lineage
        }

        RelationshipStorage.assign(ordered)
        // Published last, once every layout is complete: `layout` readers take no lock.
        for entity in ordered { entity.publishedLayout = entity.frozenLayout }
    }
}

/// Decides where each relationship is stored, as Apple's SQLite store does: a foreign-key
/// column on the to-one side (plus `Z<n>_<NAME>` holding the destination's `Z_ENT` when the
/// destination has sub-entities), a `Z_<n><NAME>` join table for many-to-many, a hidden
/// `Z<n><NAME>` column in the destination for a to-many with no inverse, and `Z_FOK_` order columns.
internal enum RelationshipStorage {
    static func assign(_ entities: [NSEntityDescription]) {
        for entity in entities {
            for case let relationship as NSRelationshipDescription in entity.ownProperties where !relationship.isTransient {
                // A destination (or inverse) outside the model has no layout: nothing to assign;
                // `addPersistentStore` refuses the model with a clear error (`validateForUse`).
                guard let destination = relationship.destinationEntity, destination.frozenLayout != nil,
                      relationship.inverseRelationship?.entity.map({ $0.frozenLayout != nil }) ?? true else { continue }
                let number = entity.frozenLayout!.entityNumber
                // Named after the foreign key's column (`ZPARENT`, or `ZPARENT1` where sibling
                // entities of one table both have a `parent`), so that two never collide.
                if !relationship.isToMany {
                    if !destination.subentities.isEmpty {
                        relationship.entityColumn = "Z" + String(destination.frozenLayout!.entityNumber) + "_" + relationship.columnName.dropFirst()
                    }
                    continue
                }
                if relationship.inverseRelationship == nil {
                    // To-many with no inverse: a hidden foreign key in the destination's table.
                    relationship.hiddenForeignKeyColumn = "Z" + String(number) + relationship.name.uppercased()
                    if relationship.isOrdered { relationship.orderColumn = "Z_FOK_" + String(number) + relationship.name.uppercased() }
                    continue
                }
                let inverse = relationship.inverseRelationship!
                if !inverse.isToMany {
                    // One-to-many: the foreign key is the inverse's column in the destination's table.
                    if relationship.isOrdered { relationship.orderColumn = "Z_FOK_" + inverse.columnName.dropFirst() }
                    continue
                }
                // Many-to-many: a join table named by the side whose entity comes first.
                let inverseEntity = inverse.entity!
                let inverseNumber = inverseEntity.frozenLayout!.entityNumber
                let owns = number < inverseNumber || (number == inverseNumber && relationship.name <= inverse.name)
                let owner = owns ? relationship : inverse
                let ownerNumber = owns ? number : inverseNumber
                let table = "Z_" + String(ownerNumber) + owner.name.uppercased()
                // Each side's column holds that side's keys and is named after the relationship
                // pointing at it and that relationship's destination entity, from both sides
                // alike (an inverse may be declared on a parent or child of the destination).
                // (An inverse with no destination of this model is refused by `validateForUse`.)
                let myNumber = inverse.destinationEntity?.frozenLayout?.entityNumber ?? number
                let myColumn = "Z_" + String(myNumber) + inverse.name.uppercased()
                var destinationColumn = "Z_" + String(destination.frozenLayout!.entityNumber) + relationship.name.uppercased()
                // A relationship that is its own inverse (Author.collaborators): the second
                // column takes a "1", as Apple's store names it.
                if destinationColumn == myColumn { destinationColumn += "1" }
                relationship.joinTable = .init(name: table, sourceColumn: myColumn, destinationColumn: destinationColumn,
                                               orderColumn: relationship.isOrdered ? "Z_FOK_" + destinationColumn.dropFirst(2) : nil,
                                               isOwner: owns)
            }
        }
    }
}
