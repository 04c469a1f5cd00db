import Foundation

/// The source and destination instances an entity mapping associated, by object ID (IDs stay
/// valid across the context resets between batches).
internal struct MigrationAssociations {
    private var destinationsBySource: [NSManagedObjectID: [NSManagedObjectID]] = [:]
    private var sourcesByDestination: [NSManagedObjectID: [NSManagedObjectID]] = [:]
    /// The destination instances in the order they were made: what the second pass walks.
    private(set) var destinations: [NSManagedObjectID] = []

    mutating func add(source: NSManagedObjectID, destination: NSManagedObjectID) {
        if sourcesByDestination[destination] == nil { destinations.append(destination) }
        if destinationsBySource[source]?.contains(destination) != true { destinationsBySource[source, default: []].append(destination) }
        if sourcesByDestination[destination]?.contains(source) != true { sourcesByDestination[destination, default: []].append(source) }
    }

    func destinations(of source: NSManagedObjectID) -> [NSManagedObjectID] { destinationsBySource[source] ?? [] }
    func sources(of destination: NSManagedObjectID) -> [NSManagedObjectID] { sourcesByDestination[destination] ?? [] }
}

/// The three passes of a migration, and opening and closing its stores.
extension NSMigrationManager {
    /// Refuses a mapping or URLs the migration can't use, before any store is touched.
    func validate(_ mapping: NSMappingModel, from sourceURL: URL, to destinationURL: URL, destinationType: String,
                  destinationOptions: [AnyHashable: Any]?) throws {
        let urls: [String: Any] = ["sourceURL": Self.shown(sourceURL), "destinationURL": Self.shown(destinationURL)]
        guard sourceURL.standardizedFileURL != destinationURL.standardizedFileURL else {
            throw MigrationErrors.migration("Migration source and destination URLs must be different", urls)
        }
        // Files only: a store of another kind (a PostgreSQL database) is found when it is added.
        guard !sourceURL.isFileURL || FileManager.default.fileExists(atPath: sourceURL.path) else {
            throw MigrationErrors.migration("Can't add source store", urls, underlying: NSError(
                domain: NSCocoaErrorDomain, code: CocoaError.Code.fileReadNoSuchFile.rawValue,
                userInfo: [NSFilePathErrorKey: sourceURL.path, NSLocalizedDescriptionKey: "No store file at \(sourceURL.path)"]))
        }
        guard !destinationURL.isFileURL || !FileManager.default.fileExists(atPath: destinationURL.path) else {
            throw NSError(domain: NSCocoaErrorDomain, code: CocoaError.Code.fileWriteFileExists.rawValue,
                          userInfo: [NSFilePathErrorKey: destinationURL.path,
                                     NSLocalizedDescriptionKey: "A file already exists at the migration's destination \(destinationURL.path)"])
        }
        if destinationType == NSPostgreSQLStoreType, try PostgreSQLStore.holdsStore(at: destinationURL, options: destinationOptions) {
            throw NSError(domain: NSCocoaErrorDomain, code: CocoaError.Code.fileWriteFileExists.rawValue,
                          userInfo: [NSLocalizedDescriptionKey: "A store already exists in the migration's destination database \(Self.shown(destinationURL))"])
        }
        for entityMapping in mapping.entityMappings ?? [] {
            let sourceKnown = entityMapping.sourceEntityVersionHash.map { hash in sourceModel.entities.contains { $0.versionHash == hash } } ?? true
            let destinationKnown = entityMapping.destinationEntityVersionHash.map { hash in destinationModel.entities.contains { $0.versionHash == hash } } ?? true
            guard sourceKnown, destinationKnown else {
                throw MigrationErrors.migration("Mismatch between mapping and source/destination models", ["entityMapping": entityMapping.name ?? ""])
            }
        }
    }

    /// `url` as errors show it: a PostgreSQL store's without its password.
    static func shown(_ url: URL) -> Any {
        url.isFileURL ? url : PostgreSQLURL.masked(url)
    }

    /// A context on a coordinator of `model` with the store at `url` added.
    static func context(_ model: NSManagedObjectModel, _ type: String, _ url: URL, _ options: [AnyHashable: Any]?,
                        _ reason: String) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        coordinator.postsStoreNotifications = false // the migration's own, never seen by the app
        do {
            try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: options)
        } catch {
            throw MigrationErrors.migration(reason, ["URL": shown(url)], underlying: error)
        }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Removes both stores from their coordinators (closing their files) and forgets the contexts.
    func close() {
        for context in [runningSourceContext, runningDestinationContext] {
            guard let context, let coordinator = context.persistentStoreCoordinator else { continue }
            context.reset()
            for store in coordinator.persistentStores {
                do { try coordinator.remove(store) } catch { continue }
            }
        }
        runningSourceContext = nil
        runningDestinationContext = nil
        policies = [:]
    }

    /// Deletes what a failed migration wrote at the destination.
    func removeDestination(at url: URL, type: String, options: [AnyHashable: Any]?) {
        guard let context = runningDestinationContext, let coordinator = context.persistentStoreCoordinator else { return }
        context.reset()
        do {
            try coordinator.destroyPersistentStore(at: url, ofType: type, options: options)
        } catch {
            // The migration's own error is the one to report; a file left here is refused by the next run.
        }
    }

    /// The three passes over the mapping's entity mappings.
    func run(_ mapping: NSMappingModel) throws {
        let entityMappings = mapping.entityMappings ?? []
        let steps = Float(3 * entityMappings.count)
        var step: Float = 0
        func advance() { step += 1; migrationProgress = step / steps }
        // Within a step, the part of its objects done so far.
        func advance(_ done: Int, of total: Int) { migrationProgress = (step + Float(done) / Float(Swift.max(total, 1))) / steps }
        // As Apple's: objects are made in the first pass, related in the second, validated in
        // the third; the saves in between do not validate (a required relationship is empty
        // until the second pass sets it).
        destinationContext.savesWithoutValidation = true
        for entityMapping in entityMappings {
            runningEntityMapping = entityMapping
            let policy = try self.policy(for: entityMapping)
            try stage { try policy.begin(entityMapping, with: self) }
            if let sourceEntity = sourceEntity(for: entityMapping), entityMapping.mappingType != .removeEntityMappingType {
                let ids = try sourceIDs(of: sourceEntity, in: entityMapping)
                for batch in ids.chunked(batchSize) {
                    for source in try sourceObjects(Array(batch), of: sourceEntity) {
                        try stage { try policy.createDestinationInstances(forSource: source, in: entityMapping, manager: self) }
                    }
                    try saveBatch("Failed to save new store after first pass of migration.")
                    advance(batch.endIndex, of: ids.count)
                }
            }
            try stage { try policy.endInstanceCreation(forMapping: entityMapping, manager: self) }
            try saveBatch("Failed to save new store after first pass of migration.")
            advance()
        }
        for entityMapping in entityMappings {
            runningEntityMapping = entityMapping
            let policy = try self.policy(for: entityMapping)
            let destinations = associations[entityMapping.name ?? ""]?.destinations ?? []
            for batch in destinations.chunked(batchSize) {
                for id in batch {
                    let destination = destinationContext.object(with: id)
                    try stage { try policy.createRelationships(forDestination: destination, in: entityMapping, manager: self) }
                }
                try saveBatch("Failed to save new store after second pass of migration.")
                advance(batch.endIndex, of: destinations.count)
            }
            try stage { try policy.endRelationshipCreation(forMapping: entityMapping, manager: self) }
            try saveBatch("Failed to save new store after second pass of migration.")
            advance()
        }
        for entityMapping in entityMappings {
            runningEntityMapping = entityMapping
            let policy = try self.policy(for: entityMapping)
            try stage { try policy.performCustomValidation(forMapping: entityMapping, manager: self) }
            // What the policy changed is saved, then validated with the rest.
            try saveBatch("Failed to save new store.")
            try validateDestinations(of: entityMapping)
            try stage { try policy.end(entityMapping, manager: self) }
            try saveBatch("Failed to save new store.")
            advance()
        }
        if entityMappings.isEmpty { migrationProgress = 1 }
    }

    /// Validates the objects the mapping made, as the third pass does (the rules of their
    /// entities, relationships included), a batch at a time; throws 134110 for the first invalid one.
    private func validateDestinations(of entityMapping: NSEntityMapping) throws {
        let destinations = associations[entityMapping.name ?? ""]?.destinations ?? []
        for batch in destinations.chunked(batchSize) {
            for id in batch {
                do {
                    try destinationContext.object(with: id).validateForInsert()
                } catch {
                    throw MigrationErrors.migration("Failed to validate the new store's objects after the migration's second pass.", underlying: error)
                }
            }
            destinationContext.reset()
        }
    }

    /// Runs one policy call, then throws the cancellation's error if it cancelled the migration.
    private func stage(_ call: () throws -> Void) throws {
        try call()
        try throwIfCancelled()
    }

    /// Saves the new store and resets both contexts, so a batch's objects are let go.
    private func saveBatch(_ reason: String) throws {
        do {
            try destinationContext.save()
        } catch {
            throw MigrationErrors.migration(reason, underlying: error)
        }
        destinationContext.reset()
        sourceContext.reset()
    }

    /// The IDs of the mapping's source instances: the source entity's own objects (not its
    /// sub-entities', as Apple's generated `FETCH` asks), through the mapping's filter if it has one.
    private func sourceIDs(of entity: NSEntityDescription, in entityMapping: NSEntityMapping) throws -> [NSManagedObjectID] {
        let request = NSFetchRequest<NSManagedObjectID>(entityName: entity.name ?? "")
        request.entity = entity
        request.resultType = .managedObjectIDResultType
        request.includesSubentities = false
        if let filter = try Self.sourceFilter(of: entityMapping), !filter.isEmpty {
            request.predicate = try NSPredicate(validatingFormat: filter)
        }
        return try sourceContext.fetch(request)
    }

    /// The filter of a mapping's source instances: the one its file gives, or the one of its
    /// ``NSEntityMapping/sourceExpression`` in the form Xcode writes, `FETCH(FUNCTION($manager,
    /// "fetchRequestForSourceEntityNamed:predicateString:", "Note", "archived == NO"),
    /// $manager.sourceContext, NO)`. Another source expression is refused (134110) rather than
    /// ignored: every instance would be migrated.
    static func sourceFilter(of entityMapping: NSEntityMapping) throws -> String? {
        guard let expression = entityMapping.sourceExpression else { return entityMapping.sourceFilterPredicate }
        if case .fetchRequest(.function("fetchRequestForSourceEntityNamed:predicateString:", let arguments), _, countOnly: false) = expression.node,
           arguments.count == 3, case .variable("manager") = arguments[0], case .constant(.string(let entityName)) = arguments[1],
           case .constant(.string(let predicate)) = arguments[2], entityName == entityMapping.sourceEntityName {
            return predicate
        }
        throw MigrationErrors.migration("The entity mapping \(entityMapping.name ?? "") has a source expression this package can't run (\(expression)); "
            + "only FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"\(entityMapping.sourceEntityName ?? "")\", \"<predicate>\"), $manager.sourceContext, NO) is")
    }

    /// The source objects of a batch of IDs, read in one fetch.
    private func sourceObjects(_ ids: [NSManagedObjectID], of entity: NSEntityDescription) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity.name ?? "")
        request.entity = entity
        request.includesSubentities = false
        request.predicate = NSPredicate(format: "SELF IN %@", ids)
        return try sourceContext.fetch(request)
    }

    /// The policy of an entity mapping, made once per migration: the class its
    /// `entityMigrationPolicyClassName` names (module-qualified), or the default one.
    private func policy(for entityMapping: NSEntityMapping) throws -> NSEntityMigrationPolicy {
        let key = entityMapping.name ?? ""
        if let policy = policies[key] { return policy }
        var policyClass = NSEntityMigrationPolicy.self
        if let name = entityMapping.entityMigrationPolicyClassName, !name.isEmpty, name != "NSEntityMigrationPolicy" {
            guard let found = NSClassFromString(name) as? NSEntityMigrationPolicy.Type else {
                throw MigrationErrors.policy("Can't find the entity migration policy class '\(name)' of entity mapping \(key) (an NSEntityMigrationPolicy subclass, named with its module)")
            }
            policyClass = found
        }
        let policy = policyClass.init()
        policy.runningManager = self
        policies[key] = policy
        return policy
    }
}

extension Array {
    /// The array in consecutive slices of at most `size` elements.
    fileprivate func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: Swift.max(size, 1)).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
