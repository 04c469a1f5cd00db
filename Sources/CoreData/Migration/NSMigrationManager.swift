import Foundation

/// Migrates a store to a new model through a mapping model, writing a new store: each entity
/// mapping's ``NSEntityMigrationPolicy`` makes the destination objects, then their relationships,
/// then validates, in Apple's three passes.
///
/// ```swift
/// let manager = NSMigrationManager(sourceModel: v1, destinationModel: v2)
/// let mapping = try #require(NSMappingModel(from: nil, forSourceModel: v1, destinationModel: v2))
/// try manager.migrateStore(from: oldURL, type: .sqlite, mapping: mapping, to: newURL, type: .sqlite)
/// ```
///
/// The source store is opened read-only in ``sourceContext`` and never changed; the new store is
/// written at the destination URL in ``destinationContext``. Both contexts are confined to the
/// migrating thread (Apple's are private-queue; the stages run inside the migration either way).
/// The migration goes entity mapping by entity mapping, saving and resetting both contexts every
/// 500 objects, so a large store is never loaded whole; a policy must therefore not keep
/// managed objects from one stage to the next (keep their `objectID`s). A failure, or
/// ``cancelMigrationWithError(_:)``, throws and leaves no file at the destination.
open class NSMigrationManager: NSObject {
    /// The model of the store migrated from.
    open private(set) var sourceModel: NSManagedObjectModel
    /// The model of the store migrated to.
    open private(set) var destinationModel: NSManagedObjectModel
    /// The mapping model of the running (or last) migration. Read before any migration, it is a
    /// programmer error that stops the process (Apple's is `nil` then, though declared non-optional).
    open var mappingModel: NSMappingModel { during("mappingModel", runningMapping) }
    /// The context of the source store (read-only), while a migration runs; read at another time,
    /// it is a programmer error that stops the process.
    open var sourceContext: NSManagedObjectContext { during("sourceContext", runningSourceContext) }
    /// The context of the new store, while a migration runs; read at another time, it is a
    /// programmer error that stops the process.
    open var destinationContext: NSManagedObjectContext { during("destinationContext", runningDestinationContext) }
    /// The entity mapping being migrated; read when none is, it is a programmer error that stops
    /// the process.
    open var currentEntityMapping: NSEntityMapping { during("currentEntityMapping", runningEntityMapping) }
    /// The fraction of the migration done, from 0 to 1: one step per entity mapping and pass.
    /// Linux: no key-value observing; a subclass sees each change in
    /// ``willChangeValue(forKey:)`` and ``didChangeValue(forKey:)`` (`"migrationProgress"`), as
    /// Apple's key-value observing calls them.
    open internal(set) var migrationProgress: Float = 0 {
        willSet { willChangeValue(forKey: "migrationProgress") }
        didSet {
            progress?.completedUnitCount = Int64((Double(migrationProgress) * 1000).rounded())
            didChangeValue(forKey: "migrationProgress")
        }
    }

    /// Called before ``migrationProgress`` changes, with its key, as key-value observing calls it
    /// on Apple platforms: override it to follow the migration (call `super`).
    ///
    /// ```swift
    /// override func willChangeValue(forKey key: String) { super.willChangeValue(forKey: key) }
    /// ```
    open func willChangeValue(forKey key: String) {}

    /// Called after ``migrationProgress`` changed, with its key: override it to report progress
    /// (call `super`).
    ///
    /// ```swift
    /// override func didChangeValue(forKey key: String) {
    ///     super.didChangeValue(forKey: key)
    ///     if key == "migrationProgress" { report(migrationProgress) }
    /// }
    /// ```
    open func didChangeValue(forKey key: String) {}

    /// What the public properties read while a migration runs.
    internal var runningMapping: NSMappingModel?
    internal var runningSourceContext: NSManagedObjectContext?
    internal var runningDestinationContext: NSManagedObjectContext?
    internal var runningEntityMapping: NSEntityMapping?

    private func during<T>(_ name: String, _ value: T?) -> T {
        guard let value else {
            preconditionFailure("NSMigrationManager.\(name) is read while no migration runs (it exists only during migrateStore(from:…))")
        }
        return value
    }
    /// Information of the app's, for its policies.
    open var userInfo: [AnyHashable: Any]?
    /// Whether a store type's own manager may migrate (Apple's in-place SQLite migration of an
    /// inferred mapping). This manager always migrates object by object.
    open var usesStoreSpecificMigrationManager = false

    /// A `Progress` of a thousand units that follows ``migrationProgress`` (a migration at store open).
    internal var progress: Progress?

    /// How many objects a stage handles between saves (and context resets).
    internal var batchSize = 500

    internal private(set) var cancellation: Error?
    /// Both models' entities by version hash, while a migration runs (the models can't change
    /// then: their coordinators use them), so that an entity is not hashed per object.
    private var entitiesByHash: (source: [Data: NSEntityDescription], destination: [Data: NSEntityDescription])?
    internal var associations: [String: MigrationAssociations] = [:]
    internal var policies: [String: NSEntityMigrationPolicy] = [:]

    /// Makes a manager that migrates stores of `sourceModel` to `destinationModel`.
    ///
    /// ```swift
    /// let manager = NSMigrationManager(sourceModel: v1, destinationModel: v2)
    /// ```
    public init(sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel) {
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        super.init()
    }

    // MARK: Migrating

    /// Migrates the store at `sourceURL` into a new store at `dURL` through `mappings` (the
    /// mapping lightweight migration infers when `nil`). Throws `NSMigrationError` (134110) when
    /// a store can't be opened, a stage fails or a save fails, the cancellation's error after
    /// ``cancelMigrationWithError(_:)``, and Foundation's `NSFileWriteFileExistsError` (516) when
    /// a file is already at `dURL`. The source store is never changed.
    ///
    /// ```swift
    /// try manager.migrateStore(from: oldURL, sourceType: NSSQLiteStoreType, options: nil, with: mapping,
    ///                          toDestinationURL: newURL, destinationType: NSSQLiteStoreType, destinationOptions: nil)
    /// ```
    open func migrateStore(from sourceURL: URL, sourceType sStoreType: String, options sOptions: [AnyHashable: Any]? = nil,
                           with mappings: NSMappingModel?, toDestinationURL dURL: URL, destinationType dStoreType: String,
                           destinationOptions dOptions: [AnyHashable: Any]? = nil) throws {
        let mapping = try mappings ?? NSMappingModel.inferredMappingModel(forSourceModel: sourceModel, destinationModel: destinationModel)
        try validate(mapping, from: sourceURL, to: dURL, destinationType: dStoreType, destinationOptions: dOptions)
        reset()
        runningMapping = mapping
        var sourceOptions = sOptions ?? [:]
        sourceOptions[NSReadOnlyPersistentStoreOption] = true
        runningSourceContext = try Self.context(sourceModel, sStoreType, sourceURL, sourceOptions, "Can't add source store")
        defer { close() }
        runningDestinationContext = try Self.context(destinationModel, dStoreType, dURL, dOptions, "Can't add destination store")
        func byHash(_ model: NSManagedObjectModel) -> [Data: NSEntityDescription] {
            Dictionary(model.entities.map { ($0.versionHash, $0) }, uniquingKeysWith: { first, _ in first })
        }
        entitiesByHash = (byHash(sourceModel), byHash(destinationModel))
        do {
            try run(mapping)
        } catch {
            removeDestination(at: dURL, type: dStoreType, options: dOptions)
            throw error
        }
    }

    /// Migrates the store at `sourceURL` into a new store at `destinationURL` through `mapping`;
    /// see ``migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)``.
    ///
    /// ```swift
    /// try manager.migrateStore(from: oldURL, type: .sqlite, mapping: mapping, to: newURL, type: .sqlite)
    /// ```
    open func migrateStore(from sourceURL: URL, type sourceType: NSPersistentStore.StoreType, options sourceOptions: [AnyHashable: Any]? = nil,
                           mapping: NSMappingModel, to destinationURL: URL, type destinationType: NSPersistentStore.StoreType,
                           options destinationOptions: [AnyHashable: Any]? = nil) throws {
        try migrateStore(from: sourceURL, sourceType: sourceType.rawValue, options: sourceOptions, with: mapping,
                         toDestinationURL: destinationURL, destinationType: destinationType.rawValue, destinationOptions: destinationOptions)
    }

    /// Forgets the associations and contexts of the last migration.
    ///
    /// ```swift
    /// manager.reset()
    /// ```
    open func reset() {
        associations = [:]
        policies = [:]
        cancellation = nil
        migrationProgress = 0
        runningEntityMapping = nil
        entitiesByHash = nil
        runningSourceContext = nil
        runningDestinationContext = nil
    }

    /// Stops the running migration: it throws `error` after the policy call that is running.
    ///
    /// ```swift
    /// manager.cancelMigrationWithError(NSError(domain: NSCocoaErrorDomain, code: NSMigrationCancelledError))
    /// ```
    open func cancelMigrationWithError(_ error: any Error) {
        if cancellation == nil { cancellation = error }
    }

    // MARK: Entities and instances

    /// The source model's entity of `mEntity`: by its version hash, or by name when it has none.
    ///
    /// ```swift
    /// let entity = manager.sourceEntity(for: mapping.entityMappings[0])
    /// ```
    open func sourceEntity(for mEntity: NSEntityMapping) -> NSEntityDescription? {
        if let hash = mEntity.sourceEntityVersionHash, let hashes = entitiesByHash { return hashes.source[hash] }
        return Self.entity(in: sourceModel, hash: mEntity.sourceEntityVersionHash, name: mEntity.sourceEntityName)
    }

    /// The destination model's entity of `mEntity`: by its version hash, or by name when it has none.
    ///
    /// ```swift
    /// let entity = manager.destinationEntity(for: mapping.entityMappings[0])
    /// ```
    open func destinationEntity(for mEntity: NSEntityMapping) -> NSEntityDescription? {
        if let hash = mEntity.destinationEntityVersionHash, let hashes = entitiesByHash { return hashes.destination[hash] }
        return Self.entity(in: destinationModel, hash: mEntity.destinationEntityVersionHash, name: mEntity.destinationEntityName)
    }

    /// Records that `destinationInstance` was made from `sourceInstance` by `entityMapping`.
    /// The default ``NSEntityMigrationPolicy/createDestinationInstances(forSource:in:manager:)`` calls it.
    ///
    /// ```swift
    /// manager.associate(sourceInstance: source, withDestinationInstance: destination, for: mapping)
    /// ```
    open func associate(sourceInstance: NSManagedObject, withDestinationInstance destinationInstance: NSManagedObject,
                        for entityMapping: NSEntityMapping) {
        if destinationInstance.objectID.isTemporaryID, let context = destinationInstance.managedObjectContext {
            do { try context.obtainPermanentIDs(for: [destinationInstance]) } catch { cancelMigrationWithError(error); return }
        }
        associations[entityMapping.name ?? "", default: MigrationAssociations()]
            .add(source: sourceInstance.objectID, destination: destinationInstance.objectID)
    }

    /// The destination instances `mappingName` made from `sourceInstances` (all it made, for
    /// `nil`), in order, without repeats. Naming no mapping of the mapping model is a programmer
    /// error and stops the process, as Apple's raises.
    ///
    /// ```swift
    /// let notes = manager.destinationInstances(forEntityMappingName: "NoteToNote", sourceInstances: [note])
    /// ```
    open func destinationInstances(forEntityMappingName mappingName: String, sourceInstances: [NSManagedObject]?) -> [NSManagedObject] {
        destinationInstances(mappingNamed: mappingName, sourceInstances)
    }

    /// The source instances `mappingName` made `destinationInstances` from (all it used, for
    /// `nil`), in order, without repeats. Naming no mapping of the mapping model is a programmer
    /// error and stops the process, as Apple's raises.
    ///
    /// ```swift
    /// let sources = manager.sourceInstances(forEntityMappingName: "NoteToNote", destinationInstances: [newNote])
    /// ```
    open func sourceInstances(forEntityMappingName mappingName: String, destinationInstances: [NSManagedObject]?) -> [NSManagedObject] {
        sourceInstances(mappingNamed: mappingName, destinationInstances)
    }

    /// ``destinationInstances(forEntityMappingName:sourceInstances:)``, through every mapping for a `nil` name.
    internal func destinationInstances(mappingNamed mappingName: String?, _ sourceInstances: [NSManagedObject]?) -> [NSManagedObject] {
        instances(mappingName, sourceInstances, of: runningDestinationContext) { $0.destinations(of: $1) }
    }

    /// ``sourceInstances(forEntityMappingName:destinationInstances:)``, through every mapping for a `nil` name.
    internal func sourceInstances(mappingNamed mappingName: String?, _ destinationInstances: [NSManagedObject]?) -> [NSManagedObject] {
        instances(mappingName, destinationInstances, of: runningSourceContext) { $0.sources(of: $1) }
    }

    // MARK: Internals

    /// Throws the cancellation's error, once cancelled.
    internal func throwIfCancelled() throws {
        if let cancellation { throw cancellation }
    }

    /// The destination instances of the objects of a source relationship's value, through every
    /// entity mapping whose destination entity fits `relationship`'s destination.
    internal func destinationInstances(forSourceRelationshipValue value: Any?, to relationship: NSRelationshipDescription) -> [NSManagedObject] {
        let sources = MigrationRelationships.managedObjects(in: value)
        guard !sources.isEmpty, let target = relationship.destinationEntity else { return [] }
        return destinationInstances(mappingNamed: nil, sources).filter { $0.entity.isKindOf(entity: target) }
    }

    /// The relationship whose value is being computed (``NSEntityMigrationPolicy/createRelationships(forDestination:in:manager:)``).
    internal var currentDestinationRelationship: NSRelationshipDescription?

    /// What Apple's private `destinationInstancesForSourceRelationshipNamed:sourceInstances:`
    /// answers (the inferred mapping's relationships, and Xcode's generated ones): the destination
    /// instances of `value`'s objects through every entity mapping whose source entity fits the
    /// destination of the current mapping's source relationship `name`, and whose destination
    /// entity fits that of the relationship being set.
    private func destinationInstances(forSourceRelationshipNamed name: String, sourceInstances value: Any?) -> [NSManagedObject] {
        let sourceTarget = runningEntityMapping.flatMap { sourceEntity(for: $0) }?.relationshipsByName[name]?.destinationEntity
        let destinationTarget = currentDestinationRelationship?.destinationEntity
        let names = (runningMapping?.entityMappings ?? []).filter { mapping in
            let fitsSource = sourceTarget.map { target in sourceEntity(for: mapping)?.isKindOf(entity: target) ?? false } ?? true
            let fitsDestination = destinationTarget.map { target in destinationEntity(for: mapping)?.isKindOf(entity: target) ?? false } ?? true
            return fitsSource && fitsDestination
        }.compactMap(\.name)
        // In the order of the source objects (an ordered relationship keeps it), whichever
        // entity mapping made each one's instances.
        let sources = MigrationRelationships.managedObjects(in: value)
        var seen = Set<NSManagedObjectID>()
        return sources.flatMap { source in
            names.flatMap { destinationInstances(forEntityMappingName: $0, sourceInstances: [source]) }
        }.filter { seen.insert($0.objectID).inserted }
    }

    private func instances(_ mappingName: String?, _ objects: [NSManagedObject]?, of context: NSManagedObjectContext?,
                           _ lookup: (MigrationAssociations, NSManagedObjectID) -> [NSManagedObjectID]) -> [NSManagedObject] {
        guard let context, let objects else { return [] }
        let tables: [MigrationAssociations]
        if let mappingName {
            guard runningMapping?.entityMappingsByName[mappingName] != nil else {
                preconditionFailure("Can't find mapping for name (\(mappingName)).")
            }
            tables = associations[mappingName].map { [$0] } ?? []
        } else {
            tables = (runningMapping?.entityMappings ?? []).compactMap { associations[$0.name ?? ""] }
        }
        var seen = Set<NSManagedObjectID>()
        var result: [NSManagedObject] = []
        for object in objects {
            for table in tables {
                for id in lookup(table, object.objectID) where seen.insert(id).inserted {
                    result.append(context.object(with: id))
                }
            }
        }
        return result
    }

    private static func entity(in model: NSManagedObjectModel, hash: Data?, name: String?) -> NSEntityDescription? {
        if let hash { return model.entities.first { $0.versionHash == hash } }
        return name.flatMap { model.entitiesByName[$0] }
    }
}

extension NSMigrationManager: ExpressionMethodReceiver {
    /// The manager's methods a mapping model's expressions call by selector.
    func invokeExpressionMethod(_ selector: String, arguments: [Any?]) -> Any? {
        switch selector {
        case "sourceContext": return sourceContext
        case "destinationContext": return destinationContext
        case "destinationInstancesForEntityMappingNamed:sourceInstances:",
             "sourceInstancesForEntityMappingNamed:destinationInstances:":
            guard arguments.count == 2 else { break }
            let name = arguments[0] as? String
            if let name, runningMapping?.entityMappingsByName[name] == nil {
                cancelMigrationWithError(MigrationErrors.migration("Can't find mapping for name (\(name)).", ["mappingName": name]))
                return nil
            }
            let objects = MigrationRelationships.managedObjects(in: arguments[1])
            // (Through the open methods when a name is given, so that a subclass's override runs.)
            if selector.hasPrefix("destination") {
                return name.map { destinationInstances(forEntityMappingName: $0, sourceInstances: objects) } ?? destinationInstances(mappingNamed: nil, objects)
            }
            return name.map { sourceInstances(forEntityMappingName: $0, destinationInstances: objects) } ?? sourceInstances(mappingNamed: nil, objects)
        case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
            guard arguments.count == 2, let name = arguments[0] as? String else { break }
            return destinationInstances(forSourceRelationshipNamed: name, sourceInstances: arguments[1])
        default: break
        }
        cancelMigrationWithError(MigrationErrors.migration("NSMigrationManager does not answer the selector '\(selector)'"))
        return nil
    }
}
