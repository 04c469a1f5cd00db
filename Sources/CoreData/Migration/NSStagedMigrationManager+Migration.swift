import Foundation

// Running a staged migration: the stage list made into a list of versions, the store and the
// coordinator's model found in it, every model of the path between them resolved and every
// lightweight mapping inferred (all before the store is touched), then one step per version, each
// in its own transaction: a SQLite file's, or a PostgreSQL database's
// (`PostgreSQLStore.migrateStage(at:options:from:to:)`).

extension NSStagedMigrationManager {
    /// The model versions the stages list, in order, and the custom stage that leads from the
    /// version at an index to the next one.
    struct VersionList {
        var checksums: [String] = []
        var customStages: [Int: NSCustomMigrationStage] = [:]
    }

    /// Migrates the store at `url`, of `type` (SQLite or PostgreSQL), through the stages to
    /// `destination` (the coordinator's model), if another version wrote it; nothing happens when
    /// no store is there or it already has `destination`'s version hashes. `options` are the
    /// store's options: the handlers' container adds the store with them (less the migration
    /// options). See the class's documentation for the errors and what a failure leaves.
    func migrateStore(at url: URL, ofType type: String = NSSQLiteStoreType, options: [AnyHashable: Any]?,
                      to destination: NSManagedObjectModel) throws {
        let isPostgreSQL = type == NSPostgreSQLStoreType
        let location = isPostgreSQL ? PostgreSQLStore.location(of: url) : url.path
        let list = try versionList()
        let metadata: [String: Any]
        // Other servers' staged migrations of the database wait for this one's steps and handlers.
        let lock = isPostgreSQL ? try PostgreSQLStore.migrationSession(url, options: options) : nil
        defer { lock?.close() }
        // Another process's or coordinator's staged migration of a SQLite file waits for this
        // one's steps and handlers, then reads the version this one left.
        var fileLock: StoreFileMigrationLock?
        defer { withExtendedLifetime(fileLock) {} }
        if isPostgreSQL {
            do {
                metadata = try PostgreSQLStore.readMetadata(at: url, options: options)
            } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code == NSFileReadNoSuchFileError {
                return
            }
        } else {
            guard !SQLiteStore.isInMemory(url) else { return }
            fileLock = try StoreFileMigrationLock(path: url.path)
            guard fileLock != nil else { return } // (no file: nothing to migrate)
            metadata = try SQLiteStore.readMetadata(at: url)
        }
        guard let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any] else {
            throw CoreDataError.make(.stagedMigrationFrameworkVersionMismatch,
                "The store at \(location) cannot be migrated with staged migration: its metadata has no model version hashes (\(NSStoreModelVersionHashesKey))",
                extra: [NSFilePathErrorKey: location])
        }
        let hashes = stored.compactMapValues { $0 as? Data }
        if destination.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { return }
        guard let target = list.checksums.firstIndex(of: destination.versionChecksum) else {
            throw CoreDataError.make(.managedObjectModelReferenceNotFound,
                "Cannot use staged migration with an unknown coordinator model version. (The coordinator's model, version checksum \(destination.versionChecksum), is in none of the stages.)")
        }
        let storeChecksum = VersionHash.versionChecksum(entityHashes: hashes)
        var finder = ModelFinder(destination: destination, references: stages.compactMap { $0 as? NSCustomMigrationStage }.flatMap { [$0.currentModel, $0.nextModel] })
        var start = list.checksums.firstIndex(of: storeChecksum)
        if start == nil {
            // A store this package recorded with its earlier hashes of composite and derived
            // attributes (``VersionHash/matches(_:_:)``): the stage whose model it matches.
            for (index, checksum) in list.checksums.enumerated() where start == nil {
                if let model = try? finder.model(checksum), model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { start = index }
            }
        }
        guard let start else {
            throw CoreDataError.make(.migrationMissingSourceModel,
                "The store at \(location) was written with a model (version checksum \(storeChecksum)) that is in none of the stages, so staged migration cannot migrate it; it was left untouched",
                extra: [NSFilePathErrorKey: location, "metadata": metadata])
        }
        guard start < target else {
            throw CoreDataError.make(.stagedMigrationBackwardMigration,
                "A store file cannot be migrated backwards with staged migration. (The store at \(location) has a later model version than the coordinator's.)",
                extra: [NSFilePathErrorKey: location])
        }
        let models = try list.checksums[start...target].map { try finder.model($0) }
        let mappings = try zip(models, models.dropFirst()).map { try NSMappingModel.inferredMappingModel(forSourceModel: $0, destinationModel: $1) }
        let migrationKeys: Set<AnyHashable> = [NSPersistentStoreStagedMigrationManagerOptionKey, NSMigratePersistentStoresAutomaticallyOption,
                                               NSInferMappingModelAutomaticallyOption]
        let storeOptions = (options ?? [:]).filter { !migrationKeys.contains($0.key) }
        for (step, mapping) in mappings.enumerated() {
            let (source, next) = (models[step], models[step + 1])
            let stage = list.customStages[start + step]
            if let handler = stage?.willMigrateHandler, let stage {
                try withContainer(url, type, source, storeOptions) { try handler(self, stage) }
            }
            if isPostgreSQL {
                try PostgreSQLStore.migrateStage(at: url, options: options, from: source, to: next)
            } else {
                try Self.migrate(url, from: source, to: next, mapping: mapping)
            }
            if let handler = stage?.didMigrateHandler, let stage {
                try withContainer(url, type, next, storeOptions) { try handler(self, stage) }
            }
        }
    }

    /// The stages as a list of versions, refusing (134110) what Apple's framework raises for.
    func versionList() throws -> VersionList {
        func refuse(_ message: String, _ stage: NSMigrationStage) -> NSError {
            CoreDataError.make(.migration, "\(message) (stage \(stages.firstIndex { $0 === stage } ?? 0)\(stage.label.isEmpty ? "" : " '\(stage.label)'"))")
        }
        var list = VersionList()
        for (index, stage) in stages.enumerated() {
            if stages[..<index].contains(where: { $0 === stage }) { throw refuse("Duplicate lightweight migration stages detected.", stage) }
            var checksums: [String]
            switch stage {
            case let lightweight as NSLightweightMigrationStage:
                checksums = lightweight.versionChecksums
                guard Set(checksums).count == checksums.count else { throw refuse("Duplicate version checksums detected.", stage) }
            case let custom as NSCustomMigrationStage:
                checksums = [custom.currentModel.versionChecksum, custom.nextModel.versionChecksum]
                guard checksums[0] != checksums[1] else {
                    throw refuse("The current model reference and the next model reference cannot be equal.", stage)
                }
            default:
                throw refuse("A migration stage must be an NSLightweightMigrationStage or an NSCustomMigrationStage.", stage)
            }
            // A stage may start at the version the previous one ended with (V1 → V2, V2 → V3).
            if let last = list.checksums.last, checksums.first == last { checksums.removeFirst() }
            if let custom = stage as? NSCustomMigrationStage { list.customStages[list.checksums.count + checksums.count - 2] = custom }
            guard Set(list.checksums).isDisjoint(with: checksums) else { throw refuse("Duplicate version checksums across stages detected.", stage) }
            list.checksums += checksums
        }
        return list
    }

    /// Runs `body` with ``container`` holding the store at `url`, of `type`, loaded with `model`;
    /// the store is removed from it and ``container`` is `nil` again afterwards.
    private func withContainer(_ url: URL, _ type: String, _ model: NSManagedObjectModel, _ options: [AnyHashable: Any],
                               _ body: () throws -> Void) throws {
        let container = NSPersistentContainer(name: url.deletingPathExtension().lastPathComponent, managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: url)
        description.type = type
        container.persistentStoreDescriptions = [description]
        let coordinator = container.persistentStoreCoordinator
        let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: options)
        self.container = container
        defer {
            self.container = nil
            // The store is closed whatever happened; a failure to remove it changes nothing on disk.
            try? coordinator.remove(store)
        }
        try body()
    }

    /// One lightweight step, in one transaction: the file at `url`, of `source`, becomes a store of
    /// `destination`.
    private static func migrate(_ url: URL, from source: NSManagedObjectModel, to destination: NSManagedObjectModel, mapping: NSMappingModel) throws {
        let db = try SQLiteConnection(path: url.path, readOnly: false, create: false)
        try db.execute("PRAGMA foreign_keys = OFF")
        try db.transaction {
            let metadata = try SQLiteStore.readMetadata(db)
            do {
                try SQLiteLightweightMigration(db: db, source: source, destination: destination, mapping: mapping).run(metadata: metadata)
            } catch {
                throw SQLiteLightweightMigration.constraintViolation(error) ?? error
            }
        }
    }
}

/// Finds the model of a version checksum for a staged migration: the coordinator's model, a
/// custom stage's reference, or else (for the checksums of lightweight stages) a version of the
/// coordinator model's `.xcdatamodeld`, or of the models the main bundle and the Linux search
/// folders hold (``ModelSearch``), read once when first needed.
private struct ModelFinder {
    let destination: NSManagedObjectModel
    let references: [NSManagedObjectModelReference]
    private var onDisk: [NSManagedObjectModel]?

    init(destination: NSManagedObjectModel, references: [NSManagedObjectModelReference]) {
        self.destination = destination
        self.references = references
    }

    mutating func model(_ checksum: String) throws -> NSManagedObjectModel {
        if destination.versionChecksum == checksum { return destination }
        if let reference = references.first(where: { $0.versionChecksum == checksum }) { return try reference.resolve() }
        if onDisk == nil {
            let bundles = destination.versionedModelURL.map { [$0] } ?? []
            let found = ModelSearch.models(in: ModelSearch.locations(firstIn: [], bundles: [Bundle.main]))
            onDisk = ModelSearch.readVersions(of: bundles + found)
        }
        if let model = onDisk?.first(where: { $0.versionChecksum == checksum }) { return model }
        throw CoreDataError.make(.managedObjectModelReferenceNotFound,
            "A model with version checksum \(checksum) could not be found: it is not the coordinator's model, no custom stage references it, and no version of the coordinator's model file or of the models in the search folders has it")
    }
}
