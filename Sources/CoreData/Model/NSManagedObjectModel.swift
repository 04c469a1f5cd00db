import Foundation

/// A set of entities: the schema of an object graph.
///
/// Build one in code, or load the `.xcdatamodeld` / `.xcdatamodel` that Xcode writes:
///
/// ```swift
/// let url = Bundle.module.url(forResource: "Car", withExtension: "xcdatamodeld")!
/// guard let model = NSManagedObjectModel(contentsOf: url) else { fatalError("no model") }
/// let car = model.entitiesByName["Car"]!
/// ```
///
/// A model can be changed until a persistent store coordinator uses it; then it is frozen.
open class NSManagedObjectModel: NSObject, NSCopying, @unchecked Sendable {
    private let lock = NSLock()
    private var _entities: [NSEntityDescription] = []
    private var _configurations: [String: [NSEntityDescription]] = [:]
    private var _frozen = false

    /// Identifiers of the model's version (Xcode's "Model Version Identifier").
    open var versionIdentifiers: Set<AnyHashable> = []
    /// Localized names of entities and properties; stored for fidelity.
    open var localizationDictionary: [String: String]? = nil
    /// The `.xcdatamodeld` this model is a version of, when it was read from one (set by
    /// `XcodeModelReader`; kept by copies): where a store's source model is looked for first
    /// (`ModelSearch.sourceModel(forStoreMetadata:destination:)`).
    internal var versionedModelURL: URL?
    /// The fetch request templates by name (`NSManagedObjectModel+FetchRequestTemplates.swift`).
    internal let fetchRequestTemplates = Locked<[String: NSFetchRequest<NSFetchRequestResult>]>([:])

    /// An empty model.
    public override init() { super.init() }

    /// Loads a model from an Xcode model file: a `.xcdatamodeld` folder (its current version, named
    /// by `.xccurrentversion`) or a `.xcdatamodel` folder. Returns `nil` if the file cannot be read,
    /// as Apple's does; ``init(validatingContentsOf:)`` throws an error that says what is wrong.
    public convenience init?(contentsOf url: URL) {
        guard let model = try? XcodeModelReader.readModel(at: url) else { return nil }
        self.init()
        adopt(model)
    }

    /// Loads a model from an Xcode model file, throwing an `NSError` in `NSCocoaErrorDomain`
    /// that names the file and the problem when it cannot be read.
    ///
    /// Linux addition: Apple's framework only offers the failable initializer.
    public convenience init(validatingContentsOf url: URL) throws {
        let model = try XcodeModelReader.readModel(at: url)
        self.init()
        adopt(model)
    }

    /// A model holding copies of the entities and fetch request templates of all `models`
    /// (sub-entities and relationships included); `nil` when two of them have an entity, or a
    /// template, of the same name.
    ///
    /// ```swift
    /// let merged = NSManagedObjectModel(byMerging: [appModel, frameworkModel])
    /// ```
    public convenience init?(byMerging models: [NSManagedObjectModel]?) {
        self.init()
        // Each model copied whole (sub-entities, relationships and inverses pointing at the
        // copies), so the merged model shares nothing with the originals. Two entities of the
        // same name cannot be merged: `nil` (Apple's raises).
        var entities: [NSEntityDescription] = []
        var names = Set<String>()
        var templates: [String: NSFetchRequest<NSFetchRequestResult>] = [:]
        var configurations: [String: [NSEntityDescription]] = [:]
        for model in models ?? [] {
            let copy = model.copy() as! NSManagedObjectModel
            for entity in copy.entities {
                guard names.insert(entity.name ?? "").inserted else { return nil }
                entities.append(entity)
            }
            // A configuration of several models holds the entities each gives it.
            for name in copy.configurations { configurations[name, default: []] += copy.entities(forConfigurationName: name) ?? [] }
            for (name, template) in copy.fetchRequestTemplatesByName {
                guard templates.updateValue(template, forKey: name) == nil else { return nil }
            }
        }
        self.entities = entities
        for (name, members) in configurations { setEntities(members, forConfigurationName: name) }
        fetchRequestTemplates.withLock { $0 = templates }
    }

    private func adopt(_ other: NSManagedObjectModel) {
        _entities = other._entities
        for entity in _entities { entity.managedObjectModel = self }
        _configurations = other._configurations
        versionIdentifiers = other.versionIdentifiers
        versionedModelURL = other.versionedModelURL
        fetchRequestTemplates.withLock { $0 = other.fetchRequestTemplatesByName }
    }

    /// The model's entities, sub-entities included.
    ///
    /// An entity of a model a coordinator uses cannot be put into another (its layout would be
    /// rebuilt under the first): a programmer error that stops the process, as Apple's raises
    /// "Can't use an entity in two models". Put a copy in (`entity.copy()`).
    open var entities: [NSEntityDescription] {
        get { lock.withLock { _entities } }
        set {
            assertMutable()
            for entity in newValue {
                if let owner = entity.managedObjectModel, owner !== self, owner.isFrozen {
                    preconditionFailure("Can't use an entity in two models: '\(entity.name ?? "")' belongs to a model in use by a persistent store coordinator; add a copy of it (entity.copy())")
                }
            }
            lock.withLock {
                _entities = newValue
                for entity in newValue { entity.managedObjectModel = self }
            }
        }
    }

    /// The model's entities by name.
    open var entitiesByName: [String: NSEntityDescription] {
        if let byName = frozenEntitiesByName { return byName }
        var result: [String: NSEntityDescription] = [:]
        for entity in entities { if let name = entity.name { result[name] = entity } }
        return result
    }

    /// The names of the model's configurations (not counting the default one).
    open var configurations: [String] { lock.withLock { _configurations.keys.sorted() } }

    /// The entities of a configuration; `nil` or `"Default"` names all entities.
    open func entities(forConfigurationName configuration: String?) -> [NSEntityDescription]? {
        guard let configuration, !Self.namesAllEntities(configuration) else { return entities }
        return lock.withLock { _configurations[configuration] }
    }

    /// Whether a configuration name stands for the whole model: `nil`, `"Default"` or Apple's
    /// `"PF_DEFAULT_CONFIGURATION_NAME"`.
    internal static func namesAllEntities(_ configuration: String?) -> Bool {
        configuration == nil || configuration == "Default" || configuration == "PF_DEFAULT_CONFIGURATION_NAME"
    }

    /// Sets the entities of a configuration.
    open func setEntities(_ entities: [NSEntityDescription], forConfigurationName configuration: String) {
        assertMutable()
        lock.withLock { _configurations[configuration] = entities }
    }

    /// The version hash of every entity, by entity name.
    open var entityVersionHashesByName: [String: Data] {
        var result: [String: Data] = [:]
        for entity in entities { if let name = entity.name { result[name] = entity.versionHash } }
        return result
    }

    /// Whether `object` is a model with the same entities: the same names, each with the same
    /// version hash (as Apple's model compares its entities). Two models read from one file are
    /// equal, so migration code can find the bundle's version a store's model is:
    ///
    /// ```swift
    /// let current = versions.first { $0 == storeModel }
    /// ```
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSManagedObjectModel else { return false }
        return other === self || entityVersionHashesByName == other.entityVersionHashesByName
    }

    /// A hash of the entities' names (equal models have equal names).
    open override var hash: Int {
        var hasher = Hasher()
        for name in entities.compactMap(\.name).sorted() { hasher.combine(name) }
        return hasher.finalize()
    }

    /// The checksum Xcode shows for the model: base64 of SHA-256 over the entity hashes in name order.
    open var versionChecksum: String { VersionHash.versionChecksum(self) }

    /// Whether a store whose metadata is `metadata` was written with this model's entities: each
    /// entity of the configuration has the version hash the metadata records for it
    /// (`NSStoreModelVersionHashesKey`). For `nil` or `"Default"` (all entities) the metadata must
    /// also record no other entity: a store records every entity of the model that wrote it, so a
    /// named configuration's store records entities outside the configuration too. An unknown
    /// configuration, or metadata without hashes, is not compatible.
    ///
    /// ```swift
    /// let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: storeURL)
    /// if !model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) {
    ///     // the store needs migrating
    /// }
    /// ```
    open func isConfiguration(withName configuration: String?, compatibleWithStoreMetadata metadata: [String: Any]) -> Bool {
        guard let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any],
              let entities = self.entities(forConfigurationName: configuration) else { return false }
        if Self.namesAllEntities(configuration), stored.count != entities.count { return false }
        for entity in entities {
            guard let name = entity.name, let hash = stored[name] as? Data, VersionHash.matches(hash, entity) else { return false }
        }
        return true
    }

    /// A copy of the model that may be changed: copies of its entities, their relationships pointed at
    /// the copied entities, and copies of its fetch request templates.
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSManagedObjectModel()
        var map: [ObjectIdentifier: NSEntityDescription] = [:]
        let roots = entities.filter { $0.superentity == nil }
        var all: [NSEntityDescription] = []
        func copyTree(_ entity: NSEntityDescription) -> NSEntityDescription {
            let entityCopy = entity.copy() as! NSEntityDescription
            map[ObjectIdentifier(entity)] = entityCopy
            all.append(entityCopy)
            entityCopy.subentities = entity.subentities.map(copyTree)
            return entityCopy
        }
        _ = roots.map(copyTree)
        // Re-point relationships (and fetched properties' requests) at the copied entities and inverses.
        for entity in all {
            for case let relationship as NSRelationshipDescription in entity.ownProperties {
                if let destination = relationship.destinationEntity { relationship.destinationEntity = map[ObjectIdentifier(destination)] }
                if let inverse = relationship.inverseRelationship, let inverseEntity = inverse.entity,
                   let copiedEntity = map[ObjectIdentifier(inverseEntity)] {
                    relationship.inverseRelationship = copiedEntity.ownProperties.first { $0.name == inverse.name } as? NSRelationshipDescription
                }
            }
            for case let fetched as NSFetchedPropertyDescription in entity.ownProperties {
                if let request = fetched.fetchRequest, let destination = request.entity { request.entity = map[ObjectIdentifier(destination)] ?? destination }
            }
        }
        copy.entities = all
        copy.versionIdentifiers = versionIdentifiers
        copy.versionedModelURL = versionedModelURL
        copy.localizationDictionary = localizationDictionary
        // The configurations, of the copied entities.
        let configurations = lock.withLock { _configurations }
        for (name, entities) in configurations {
            copy.setEntities(entities.compactMap { map[ObjectIdentifier($0)] }, forConfigurationName: name)
        }
        copy.fetchRequestTemplates.withLock { copies in
            for (name, template) in fetchRequestTemplatesByName {
                let request = template.copiedRequest(as: NSFetchRequestResult.self)
                if let entity = template.entity { request.entity = map[ObjectIdentifier(entity)] ?? entity }
                copies[name] = request
            }
        }
        return copy
    }

    // MARK: Freezing

    /// Whether a coordinator uses the model; a frozen model cannot change.
    internal var isFrozen: Bool { lock.withLock { _frozen } }
    private var frozenEntitiesByName: [String: NSEntityDescription]?
    /// The frozen model's named entities and their indexes by name: `insertNewObject(forEntityName:into:)`
    /// looks a name up for every object, and a `Dictionary` lookup hashes it with SipHash.
    /// Set once, when the model freezes, and retained until the model goes (`deinit`): held
    /// `Unmanaged`, so that a lookup reads it without a retain and release.
    private var frozenEntityNames: Unmanaged<EntityNameIndex>?

    deinit { frozenEntityNames?.release() }

    /// Whether the model is frozen and its objects hold only plain values: no relationships,
    /// fetched properties or object-valued (transformable) attributes, through which letting go
    /// of an object could let go of objects of app classes, or of app values.
    internal var objectsHoldOnlyValues: Bool {
        frozenEntityNames?._withUnsafeGuaranteedRef { $0.objectsHoldOnlyValues } ?? false
    }

    /// Whether the model is frozen, its objects hold only plain values
    /// (``objectsHoldOnlyValues``), and no attribute has a rule to check at save (every one is
    /// optional, without bounds, length or pattern): a plain object of it that holds no value of
    /// the wrong type is valid.
    internal var objectsHaveNoValidationRules: Bool {
        frozenEntityNames?._withUnsafeGuaranteedRef { $0.objectsHaveNoValidationRules } ?? false
    }

    /// The derived attributes of the frozen model's entities (each once, on the entity that
    /// declares it): a save computes them (`NSManagedObjectContext+DerivedAttributes.swift`).
    internal var derivedAttributes: [NSDerivedAttributeDescription] {
        frozenEntityNames?._withUnsafeGuaranteedRef { $0.derivedAttributes } ?? []
    }

    /// The entity named `name`: through the name table once the model is frozen.
    internal func entity(named name: String) -> NSEntityDescription? {
        if let frozen = frozenEntityNames { return frozen._withUnsafeGuaranteedRef { $0.entity(named: name) } }
        return entitiesByName[name]
    }

    /// Checks the model, computes every entity's layout and forbids further changes.
    /// Called when a coordinator adopts the model, or when an entity is first used.
    internal func freeze() {
        lock.lock()
        defer { lock.unlock() }
        guard !_frozen else { return }
        ModelLayoutBuilder.build(_entities)
        var byName: [String: NSEntityDescription] = [:]
        for entity in _entities { if let name = entity.name { byName[name] = entity } }
        frozenEntitiesByName = byName
        // The dictionary's entities (the last of a duplicate name, as in `entitiesByName`).
        // Whether objects of the model hold only plain values: no relationships, no fetched
        // properties, no transformable (or other object-valued) attributes. Letting go of such
        // objects runs no app code but their own classes' (see `lettingGoOfSavedObjects`).
        // Every entity a layout was built for: through each layout's `descendants`, sub-entities
        // reached only through `subentities` too (an entity without a layout counts as neither).
        let layouts = _entities.flatMap { $0.frozenLayout?.descendants ?? [$0] }.map { $0.publishedLayout ?? $0.frozenLayout }
        let holdsOnlyValues = layouts.allSatisfy { layout in
            guard let layout else { return false }
            return layout.relationshipIndexes.isEmpty && layout.objectAttributeIndexes.isEmpty && layout.fetchedProperties.isEmpty
        }
        let noRules = holdsOnlyValues && layouts.allSatisfy { $0?.validatedIndexes.isEmpty ?? false }
        // Each entity's own derived attributes, once (an entity may be met as a model entity and
        // as a descendant).
        var derived: [NSDerivedAttributeDescription] = []
        var seen = Set<ObjectIdentifier>()
        for case let attribute as NSDerivedAttributeDescription in layouts.flatMap({ $0?.entity.ownProperties ?? [] })
        where seen.insert(ObjectIdentifier(attribute)).inserted {
            attribute.prepareDerivation()
            derived.append(attribute)
        }
        fetchRequestTemplates.withLock { for template in $0.values { template.isImmutableTemplate = true } }
        frozenEntityNames = Unmanaged.passRetained(EntityNameIndex(byName.values.sorted { $0.name! < $1.name! },
                                                                   objectsHoldOnlyValues: holdsOnlyValues,
                                                                   objectsHaveNoValidationRules: noRules,
                                                                   derivedAttributes: derived))
        _frozen = true
    }

    /// Throws an error if the model cannot be used: unnamed or duplicate entities, names that are
    /// not identifiers (``ModelNames``), relationships without destinations, inverses that do not
    /// point back.
    internal func validateForUse() throws {
        // One composite description in two entities would get one set of leaf indexes for both.
        var compositeOwners: [ObjectIdentifier: String] = [:]
        for entity in entities {
            for case let composite as NSCompositeAttributeDescription in entity.ownProperties {
                if let other = compositeOwners.updateValue(entity.name ?? "", forKey: ObjectIdentifier(composite)), other != entity.name {
                    throw CoreDataError.make(.persistentStoreInvalidType,
                        "The model cannot be used: the entities '\(other)' and '\(entity.name ?? "")' hold the same composite attribute description '\(composite.name)'; give each its own (copy())")
                }
            }
        }
        var seen = Set<String>()
        for entity in entities {
            guard let name = entity.name, !name.isEmpty else {
                throw CoreDataError.make(.persistentStoreInvalidType, "The model has an entity without a name")
            }
            if let problem = ModelNames.problem(entityName: name) {
                throw CoreDataError.make(.persistentStoreInvalidType, "The model cannot be used: it has an entity named '\(name)', \(problem)")
            }
            for property in entity.ownProperties where !property.name.isEmpty {
                if let problem = ModelNames.problem(propertyName: property.name) {
                    throw CoreDataError.make(.persistentStoreInvalidType, "The model cannot be used: the entity '\(name)' has a property named '\(property.name)', \(problem)")
                }
                if let composite = property as? NSCompositeAttributeDescription, let problem = composite.elementProblem {
                    throw CoreDataError.make(.persistentStoreInvalidType,
                        "The model cannot be used: the composite attribute '\(name).\(property.name)' cannot be stored: \(problem)")
                }
                if let derived = property as? NSDerivedAttributeDescription {
                    do {
                        _ = try Derivation(for: derived)
                    } catch {
                        throw CoreDataError.make(.persistentStoreInvalidType,
                            "The model cannot be used: the derived attribute '\(name).\(property.name)' cannot be computed: \(error.reason)")
                    }
                }
            }
            for index in entity.indexes {
                if let problem = ModelNames.problem(indexName: index.name) {
                    throw CoreDataError.make(.persistentStoreInvalidType, "The model cannot be used: the entity '\(name)' has a fetch index named '\(index.name)', \(problem)")
                }
            }
            // A composite has no column: constraints and indexes name its elements (`address.city`).
            let composites = Set(entity.properties.compactMap { ($0 as? NSCompositeAttributeDescription)?.name })
            if !composites.isEmpty {
                let constrained = entity.uniquenessConstraints.flatMap(entity.names(ofConstraint:))
                let indexed = entity.indexes.flatMap { $0.elements.compactMap(entity.name(ofIndexElement:)) }
                for (names, what) in [(constrained, "a uniqueness constraint"), (indexed, "a fetch index")] {
                    if let composite = names.first(where: composites.contains) {
                        throw CoreDataError.make(.persistentStoreInvalidType,
                            "The model cannot be used: \(what) of the entity '\(name)' names the composite attribute '\(composite)', which has no column of its own: name its elements ('\(composite).<element>')")
                    }
                }
            }
            guard seen.insert(name).inserted else {
                throw CoreDataError.make(.persistentStoreInvalidType, "The model has two entities named '\(name)'")
            }
            var propertyNames = Set<String>()
            for property in entity.properties {
                guard !property.name.isEmpty else {
                    throw CoreDataError.make(.persistentStoreInvalidType, "The entity '\(name)' has a property without a name")
                }
                guard propertyNames.insert(property.name).inserted else {
                    throw CoreDataError.make(.persistentStoreInvalidType, "The entity '\(name)' has two properties named '\(property.name)'")
                }
                if let relationship = property as? NSRelationshipDescription {
                    guard let destination = relationship.destinationEntity, destination.managedObjectModel === self else {
                        throw CoreDataError.make(.persistentStoreInvalidType, "The relationship '\(name).\(property.name)' has no destination entity in this model")
                    }
                    if let inverse = relationship.inverseRelationship {
                        guard inverse.entity.map({ destination.isKindOf(entity: $0) || $0.isKindOf(entity: destination) }) ?? false else {
                            throw CoreDataError.make(.persistentStoreInvalidType, "The inverse of '\(name).\(property.name)' does not belong to its destination entity")
                        }
                    }
                }
            }
        }
    }

    internal func assertMutable() {
        if isFrozen {
            preconditionFailure("Can't modify a managed object model that is in use by a persistent store coordinator")
        }
    }

    open override var description: String {
        "(<NSManagedObjectModel>) entities: \(entities.compactMap(\.name).sorted())"
    }
}

/// A frozen model's entities by name (a class: read in place, not copied, on every lookup),
/// and what else is fixed once it froze.
private final class EntityNameIndex: @unchecked Sendable {
    private let entities: [NSEntityDescription]
    private let table: PropertyNameTable
    /// See ``NSManagedObjectModel/objectsHoldOnlyValues``.
    let objectsHoldOnlyValues: Bool
    /// See ``NSManagedObjectModel/objectsHaveNoValidationRules``.
    let objectsHaveNoValidationRules: Bool
    /// See ``NSManagedObjectModel/derivedAttributes``.
    let derivedAttributes: [NSDerivedAttributeDescription]

    /// `entities` all have names.
    init(_ entities: [NSEntityDescription], objectsHoldOnlyValues: Bool, objectsHaveNoValidationRules: Bool,
         derivedAttributes: [NSDerivedAttributeDescription]) {
        self.entities = entities
        self.table = PropertyNameTable(entities.map { $0.name! })
        self.objectsHoldOnlyValues = objectsHoldOnlyValues
        self.objectsHaveNoValidationRules = objectsHaveNoValidationRules
        self.derivedAttributes = derivedAttributes
    }

    func entity(named name: String) -> NSEntityDescription? {
        table.index(of: name).map { entities[$0] }
    }
}
