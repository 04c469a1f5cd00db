import CoreData
import Foundation

/// `coredata migrate STORE --model PATH.xcdatamodeld [--mapping DIR] [--to VERSION] [--dry-run]`:
/// which version of a model wrote a store, the mapping that migrates it to another version, and
/// the migration itself. The store is a SQLite file or a PostgreSQL store's `postgres://` URL
/// (with `CoreDataPostgreSQL`'s `registerPostgreSQLStore()` called first).
///
/// The mapping is a mapping model (`.xcmappingmodel`) for the two versions in `mappingFolder`
/// when one is given (none there is an error); else the one a store open would use: a mapping
/// model where the app's are found (beside the `.xcdatamodeld`, the model search folders), run by `NSMigrationManager` into a new file (a PostgreSQL store: a new
/// schema) whose contents then replace the store's; else the inferred one, applied in place
/// (lightweight migration).
///
/// ```swift
/// let tool = StoreMigrationTool(store: URL(fileURLWithPath: "Notes.sqlite"),
///                               model: URL(fileURLWithPath: "Notes.xcdatamodeld"))
/// print(try tool.plan())      // Notes → Notes 2, entity by entity
/// print(try tool.migrate())   // Migrated … in 0.21 s
/// ```
public struct StoreMigrationTool: Sendable {
    /// The store file (`.sqlite`), or a PostgreSQL store's `postgres://` URL.
    public let store: URL
    /// The versioned model (`.xcdatamodeld`).
    public let model: URL
    /// The version to migrate to (its name, `Notes 2`); `nil` for the bundle's current version.
    public let targetVersion: String?
    /// A folder of mapping models (`.xcmappingmodel`), the only place searched (a mapping model
    /// given here is read as the folder holding it); `nil` for the places a store open searches.
    public let mappingFolder: URL?

    /// A tool for the store at `store`, written by a version of `model`, migrating it to `targetVersion`
    /// (`nil`: the current version) with a mapping model of `mappingFolder`, if given.
    public init(store: URL, model: URL, to targetVersion: String? = nil, mappingFolder: URL? = nil) {
        self.store = store
        self.model = model
        self.targetVersion = targetVersion
        self.mappingFolder = mappingFolder
    }

    /// The store's type and where it is, for messages (a URL's password masked).
    private var inspector: StoreInspector { StoreInspector(url: store) }

    /// The mapping model for the two versions: in ``mappingFolder`` when one is given (a folder
    /// that has none for them is an error: inferring instead would drop what its mapping
    /// computes), else where a store open looks, or `nil`.
    func mappingModel(_ versions: Versions) throws -> NSMappingModel? {
        let (source, destination) = (versions.source.model, versions.destination.model)
        guard let folder = mappingFolder else { return NSMappingModel(from: nil, forSourceModel: source, destinationModel: destination) }
        // A mapping model's own folder (`Notes1to2.xcmappingmodel`) is searched as the folder holding it.
        let searched = folder.pathExtension == "xcmappingmodel" ? folder.deletingLastPathComponent() : folder
        if let bundle = Bundle(url: searched), let mapping = NSMappingModel(from: [bundle], forSourceModel: source, destinationModel: destination) {
            return mapping
        }
        throw NSError(domain: NSCocoaErrorDomain, code: NSMigrationMissingMappingModelError, userInfo: [
            NSLocalizedDescriptionKey: "No mapping model in \(folder.path) maps version \(versions.source.name) to \(versions.destination.name); nothing was migrated (leave out --mapping to use the inferred mapping)",
            NSFilePathErrorKey: folder.path,
        ])
    }

    /// The version that wrote the store and the one to migrate to, with their models.
    struct Versions {
        var source: (name: String, model: NSManagedObjectModel)
        var destination: (name: String, model: NSManagedObjectModel)
    }

    func versions() throws -> Versions {
        if let folder = mappingFolder, !FileManager.default.fileExists(atPath: folder.path) {
            throw NSError(domain: NSCocoaErrorDomain, code: NSFileReadNoSuchFileError, userInfo: [
                NSLocalizedDescriptionKey: "There is no folder of mapping models at \(folder.path)", NSFilePathErrorKey: folder.path,
            ])
        }
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: inspector.storeType, at: store)
        let versions = try StoreInspector.versions(of: model)
        guard let source = versions.first(where: { $0.model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) }) else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSMigrationMissingSourceModelError, userInfo: [
                NSLocalizedDescriptionKey: "None of the \(versions.count) versions of \(model.lastPathComponent) wrote the store at \(inspector.location) (coredata inspect --model says which entities differ); it can't be migrated",
            ])
        }
        let destination: (name: String, model: NSManagedObjectModel)
        if let targetVersion {
            guard let named = versions.first(where: { $0.name == targetVersion }) else {
                throw NSError(domain: NSCocoaErrorDomain, code: NSFileReadNoSuchFileError, userInfo: [
                    NSLocalizedDescriptionKey: "\(model.lastPathComponent) has no version named '\(targetVersion)' (it has \(versions.map(\.name).joined(separator: ", ")))",
                ])
            }
            destination = named
        } else {
            let current = try NSManagedObjectModel(validatingContentsOf: model)
            guard let named = versions.first(where: { $0.model.entityVersionHashesByName == current.entityVersionHashesByName }) else {
                throw NSError(domain: NSCocoaErrorDomain, code: NSFileReadCorruptFileError, userInfo: [
                    NSLocalizedDescriptionKey: "Can't tell which version of \(model.lastPathComponent) is the current one",
                ])
            }
            destination = named
        }
        return Versions(source: source, destination: destination)
    }

    /// What a migration would do, changing nothing: the two versions and the mapping, entity by
    /// entity (`+` added, `-` removed, `←` where a value comes from): the mapping model found, with
    /// its policies, or else the one lightweight migration infers.
    ///
    /// Throws the inference's `NSInferredMappingModelError` (134190) when there is no mapping
    /// model and the change can't be inferred, naming the entity and property.
    public func plan() throws -> String {
        let versions = try versions()
        var lines = ["Store: \(inspector.location)", "Written by version: \(versions.source.name)", "Migrate to version: \(versions.destination.name)"]
        guard versions.source.name != versions.destination.name else {
            lines.append("Nothing to migrate: the store is at that version.")
            return lines.joined(separator: "\n")
        }
        let mapping: NSMappingModel
        if let found = try mappingModel(versions) {
            mapping = found
            lines.append("Mapping model (heavyweight migration into a new \(inspector.isPostgreSQL ? "schema" : "file"), then moved into the store):")
        } else {
            mapping = try NSMappingModel.inferredMappingModel(forSourceModel: versions.source.model, destinationModel: versions.destination.model)
            lines.append("Inferred mapping (lightweight migration, in place):")
        }
        for entity in mapping.entityMappings ?? [] {
            let policy = entity.entityMigrationPolicyClassName.map { $0.isEmpty || $0 == "NSEntityMigrationPolicy" ? "" : " (policy \($0))" } ?? ""
            switch entity.mappingType {
            case .addEntityMappingType: lines.append("  + \(entity.destinationEntityName ?? "?") (new entity)")
            case .removeEntityMappingType: lines.append("  - \(entity.sourceEntityName ?? "?") (removed, its rows deleted)")
            default:
                let renamed = entity.sourceEntityName == entity.destinationEntityName ? "" : " ← \(entity.sourceEntityName ?? "?")"
                lines.append("  \(entity.destinationEntityName ?? "?")\(renamed)\(policy)")
                let sourceEntity = entity.sourceEntityName.flatMap { versions.source.model.entitiesByName[$0] }
                for property in (entity.attributeMappings ?? []) + (entity.relationshipMappings ?? []) {
                    let name = property.name ?? "?"
                    // A property without an expression takes the source's of the same name, if any.
                    if property.valueExpression == nil, sourceEntity?.propertiesByName[name] != nil { continue }
                    if let expression = property.valueExpression {
                        // A value copied from a property: `$source.name`, or for a relationship the
                        // source's objects through the migration (Apple's inferred expression).
                        let text = "\(expression)"
                        if let range = text.range(of: #""_nonNilValueOrDefaultValueForAttribute:source:destination:" , ""#) {
                            // Apple's inferred expression for an attribute made non-optional.
                            let from = text[range.upperBound...].prefix { $0 != "\"" }
                            lines.append("      \(name) ← $source.\(from) (its default where nil)")
                            continue
                        }
                        let from = text.range(of: "$source.", options: .backwards).map { text[$0.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" } }
                        let copied = from.map { text == "$source.\($0)" || text.contains("destinationInstancesForSourceRelationshipNamed:") } ?? false
                        if let from, copied {
                            if from != name { lines.append("      \(name) ← $source.\(from)") }
                        } else {
                            lines.append("      \(name) ← \(text)")
                        }
                    } else {
                        lines.append("      + \(name) (new: its default value, or nil)")
                    }
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Migrates the store to the destination version, as ``plan()`` says (through the mapping
    /// model found, or the inferred mapping as `NSPersistentContainer`'s automatic migration runs
    /// it), and says how long it took.
    ///
    /// `report`, when given, gets the migration's fraction completed (0 to 1): about ten times a
    /// second while it runs, from another thread, then 1 once it is done. The migration reports
    /// to a `Progress` made current around it; swift-corelibs-foundation has no key-value
    /// observing, so the tool samples its `fractionCompleted`.
    ///
    /// ```swift
    /// try tool.migrate { fraction in print(StoreMigrationTool.progressBar(fraction)) }
    /// ```
    public func migrate(reportingProgress report: (@Sendable (Double) -> Void)? = nil) throws -> String {
        let versions = try versions()
        guard versions.source.name != versions.destination.name else {
            return "Nothing to migrate: the store at \(inspector.location) is at version \(versions.destination.name)."
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: versions.destination.model)
        let start = Date()
        let progress = Progress(totalUnitCount: 1)
        let queue = DispatchQueue(label: "StoreMigrationTool.progress")
        let timer = report.map { report in
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now(), repeating: .milliseconds(100))
            timer.setEventHandler { report(progress.fractionCompleted) }
            timer.resume()
            return timer
        }
        progress.becomeCurrent(withPendingUnitCount: 1)
        let added: NSPersistentStore
        do {
            defer {
                progress.resignCurrent()
                timer?.cancel()
                queue.sync {} // no sample after the last one
            }
            if let mapping = try mappingModel(versions) {
                try NSPersistentStoreCoordinator.migrateStore(at: store, ofType: inspector.storeType, from: versions.source.model,
                                                              to: versions.destination.model, mapping: mapping)
            }
            added = try coordinator.addPersistentStore(ofType: inspector.storeType, configurationName: nil, at: store, options: [
                NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
            ])
        }
        report?(1)
        let seconds = Date().timeIntervalSince(start)
        try coordinator.remove(added)
        return String(format: "Migrated %@ from version %@ to %@ in %.2f s.", inspector.location, versions.source.name, versions.destination.name, seconds)
    }

    /// A text progress bar for `fraction` (0 to 1): `[##########··········]  50%`.
    ///
    /// ```swift
    /// StoreMigrationTool.progressBar(0.5, width: 4)   // "[##··]  50%"
    /// ```
    public static func progressBar(_ fraction: Double, width: Int = 30) -> String {
        let clamped = fraction.isNaN ? 0 : min(max(fraction, 0), 1)
        let filled = Int((clamped * Double(width)).rounded(.down))
        let percent = Int((clamped * 100).rounded(.down))
        let number = String(percent)
        return "[" + String(repeating: "#", count: filled) + String(repeating: "·", count: width - filled) + "] "
            + String(repeating: " ", count: 3 - number.count) + number + "%"
    }
}
