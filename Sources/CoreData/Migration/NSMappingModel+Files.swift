import Foundation

// Mapping models from files: Xcode's `.xcmappingmodel` folders, read as they are.
//
// Apple's apps ship the `.cdm` Xcode's mapping compiler makes of a `.xcmappingmodel`; on Linux
// the folder itself ships as a resource, and `XcodeMappingModelReader` reads its
// `xcmapping.xml`. A `.cdm` knows the version hashes of the models it maps between; the XML
// does not (Xcode keeps its own editing model there, which is not read), so a mapping model is
// matched to a pair of models by the entities it names and by the model versions Xcode recorded
// for it (docs/PORTING.md, "Mapping models").

extension NSMappingModel {
    /// The mapping model in Xcode's `.xcmappingmodel` folder (or its `xcmapping.xml`) at `url`, or
    /// `nil` when there is none or it can't be read (the reason goes to standard error, as
    /// `CoreData: error: …`).
    ///
    /// ```swift
    /// let url = Bundle.module.url(forResource: "NotesV1ToV2", withExtension: "xcmappingmodel")
    /// if let mapping = NSMappingModel(contentsOf: url) {
    ///     print(mapping.entityMappings.map(\.name))   // ["PersonToPerson", "NoteToNote", …]
    /// }
    /// ```
    ///
    /// Each entity mapping has the file's names, policy class and value expressions. Its type is
    /// `.addEntityMappingType` without a source entity, `.removeEntityMappingType` without a
    /// destination, `.customEntityMappingType` with a migration policy class, else
    /// `.transformEntityMappingType`. Version hashes are `nil` until the mapping model is found for
    /// two models (``init(from:forSourceModel:destinationModel:)``). A compiled `.cdm` is not read.
    public convenience init?(contentsOf url: URL?) {
        guard let url, let file = Self.readOrReport(url) else { return nil }
        self.init(file: file)
    }

    /// The file at `url`, or `nil` with Apple's style of message on standard error.
    private static func readOrReport(_ url: URL) -> XcodeMappingModelFile? {
        do {
            return try XcodeMappingModelReader.read(at: url)
        } catch {
            FileHandle.standardError.write(Data("CoreData: error:  Failed to load mapping model at \(url.path): \(error.asNSError?.localizedDescription ?? "\(error)")\n".utf8))
            return nil
        }
    }

    /// The mapping model, among those in `bundles`, that maps `sourceModel` to
    /// `destinationModel`, or `nil` when none does.
    ///
    /// ```swift
    /// let mapping = NSMappingModel(from: [.main], forSourceModel: version1, destinationModel: version2)
    /// ```
    ///
    /// The `.xcmappingmodel` folders directly in the bundles' resource folders are read (for `nil`
    /// bundles: the main bundle's, the Linux additions that ``NSManagedObjectModel/mergedModel(from:)``
    /// searches, and the folder of the destination's `.xcdatamodeld`). One matches when every
    /// entity it maps from is an entity of `sourceModel` and every entity it maps to one of
    /// `destinationModel`, and the model versions Xcode recorded for it (`Notes.xcdatamodel`,
    /// `Notes 2.xcdatamodel`) are the models' versions when the models were read from a
    /// `.xcdatamodeld`; for another model (a merged one), the recorded version, when it is found,
    /// has its version hashes for the entities the file maps. Its entity mappings then carry the
    /// models' version hashes.
    public convenience init?(from bundles: [Bundle]?, forSourceModel sourceModel: NSManagedObjectModel?,
                             destinationModel: NSManagedObjectModel?) {
        guard let sourceModel, let destinationModel else { return nil }
        var folders = ModelSearch.locations(firstIn: [], bundles: bundles ?? [Bundle.main], linuxAdditions: bundles == nil)
        if bundles == nil, let bundle = destinationModel.versionedModelURL { folders.append(bundle.deletingLastPathComponent()) }
        var seen = Set<String>()
        let versions = (source: MappingVersions(sourceModel), destination: MappingVersions(destinationModel))
        for url in ModelSearch.files(in: folders, extensions: ["xcmappingmodel"]) where seen.insert(url.standardizedFileURL.path).inserted {
            // An unreadable file is no match (others may be), and standard error says why.
            guard let file = Self.readOrReport(url), Self.file(file, maps: sourceModel, to: destinationModel, versions: versions),
                  versions.source.versionName != nil
                    || Self.recordedVersion(file.sourceModelPath, in: folders, fits: sourceModel, for: file.entityMappings.compactMap(\.sourceEntityName)),
                  versions.destination.versionName != nil
                    || Self.recordedVersion(file.destinationModelPath, in: folders, fits: destinationModel, for: file.entityMappings.compactMap(\.destinationEntityName))
            else { continue }
            self.init(file: file)
            for mapping in entityMappings ?? [] {
                mapping.sourceEntityVersionHash = mapping.sourceEntityName.flatMap { sourceModel.entitiesByName[$0]?.versionHash }
                mapping.destinationEntityVersionHash = mapping.destinationEntityName.flatMap { destinationModel.entitiesByName[$0]?.versionHash }
            }
            return
        }
        return nil
    }

    /// A mapping model of a file's entity mappings.
    internal convenience init(file: XcodeMappingModelFile) {
        self.init()
        entityMappings = file.entityMappings.map { entity in
            let mapping = NSEntityMapping()
            mapping.name = entity.name
            mapping.sourceEntityName = entity.sourceEntityName
            mapping.destinationEntityName = entity.destinationEntityName
            mapping.entityMigrationPolicyClassName = entity.migrationPolicyClassName
            mapping.sourceFilterPredicate = entity.sourceFilterPredicate
            mapping.mappingType = entity.sourceEntityName == nil ? .addEntityMappingType
                : entity.destinationEntityName == nil ? .removeEntityMappingType
                : entity.migrationPolicyClassName != nil ? .customEntityMappingType
                : .transformEntityMappingType
            func properties(_ list: [XcodeMappingModelFile.Property]) -> [NSPropertyMapping] {
                list.map { property in
                    let mapping = NSPropertyMapping()
                    mapping.name = property.name
                    mapping.valueExpression = property.valueExpression
                    return mapping
                }
            }
            mapping.attributeMappings = properties(entity.attributeMappings)
            mapping.relationshipMappings = properties(entity.relationshipMappings)
            return mapping
        }
    }

    /// Whether the file maps `source` to `destination`: its entities are theirs, and the versions
    /// Xcode recorded are theirs where both are known.
    private static func file(_ file: XcodeMappingModelFile, maps source: NSManagedObjectModel, to destination: NSManagedObjectModel,
                             versions: (source: MappingVersions, destination: MappingVersions)) -> Bool {
        guard !file.entityMappings.isEmpty,
              file.entityMappings.allSatisfy({ $0.sourceEntityName.map { source.entitiesByName[$0] != nil } ?? true }),
              file.entityMappings.allSatisfy({ $0.destinationEntityName.map { destination.entitiesByName[$0] != nil } ?? true })
        else { return false }
        return versions.source.agrees(with: file.sourceModelPath) && versions.destination.agrees(with: file.destinationModelPath)
    }
}

extension NSMappingModel {
    /// For a model that is no version of a `.xcdatamodeld` (a merged model, `mergedModel(from:)`,
    /// or one edited in code): whether the version a mapping model's file recorded
    /// (`Notes/Notes.xcdatamodeld/Notes 2.xcdatamodel`), found among `folders`, has the version
    /// hashes `model` has for the entities the file maps (`names`), as the hashes a compiled
    /// mapping model carries are compared on Apple platforms; `true` when it can't be found.
    /// Otherwise a mapping from version 1 to 2 matched a store of version 2, whose entity names
    /// are the same, and ran on it.
    fileprivate static func recordedVersion(_ path: String?, in folders: [URL], fits model: NSManagedObjectModel, for names: [String]) -> Bool {
        guard let path else { return true }
        let components = path.split(separator: "/").map(String.init)
        guard components.count >= 2 else { return true }
        let (bundleName, versionName) = (components[components.count - 2], components[components.count - 1])
        guard let bundle = ModelSearch.files(in: folders, extensions: ["xcdatamodeld"]).first(where: { $0.lastPathComponent == bundleName }) else { return true }
        let version = bundle.appendingPathComponent(versionName)
        guard FileManager.default.fileExists(atPath: version.path), let recorded = ModelSearch.read(version) else { return true }
        let (mine, theirs) = (model.entityVersionHashesByName, recorded.entityVersionHashesByName)
        return names.allSatisfy { mine[$0] == theirs[$0] }
    }
}

/// The version name of a model read from a `.xcdatamodeld` (the `.xcdatamodel` whose entities
/// have its version hashes), for matching the paths Xcode records in a mapping model.
private struct MappingVersions {
    let bundleName: String?
    /// `nil` for a model not read from a `.xcdatamodeld`.
    let versionName: String?

    init(_ model: NSManagedObjectModel) {
        guard let bundle = model.versionedModelURL else { bundleName = nil; versionName = nil; return }
        bundleName = bundle.lastPathComponent
        let hashes = model.entityVersionHashesByName
        versionName = ModelSearch.firstVersion(of: bundle, where: { $0.entityVersionHashesByName == hashes })?.url.lastPathComponent
    }

    /// Whether a recorded path (`Notes/Notes.xcdatamodeld/Notes 2.xcdatamodel`) names this
    /// version, or can't be compared (no path, or the model's version is unknown).
    func agrees(with path: String?) -> Bool {
        guard let path, let versionName, let bundleName else { return true }
        let components = path.split(separator: "/").map(String.init)
        guard components.count >= 2, components[components.count - 2] == bundleName else { return true }
        return components[components.count - 1] == versionName
    }
}
