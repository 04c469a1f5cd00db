import Foundation

extension NSManagedObjectModel {
    /// A model merging every model found in `bundles` (each `.xcdatamodeld`'s current version,
    /// and each `.xcdatamodel`; a model found twice, once), or `nil` when there is none, one
    /// cannot be read (the reason goes to standard error) or two have an entity of the same name.
    ///
    /// ```swift
    /// let model = NSManagedObjectModel.mergedModel(from: nil)!   // the program's models
    /// let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    /// ```
    ///
    /// As on Apple platforms the models are looked for directly in each bundle's resources (not
    /// in sub-folders), and `nil` means the main bundle. Linux differences: `nil` also searches
    /// where `NSPersistentContainer(name:)` does after the bundles (the SwiftPM resource folders
    /// next to the executable, `NSPersistentContainer.modelSearchDirectories`, the current
    /// directory), and models are Xcode's source formats (a compiled `.momd` or `.mom` is not
    /// read). Apple's documentation does not say what an empty search gives; here it is `nil`.
    public class func mergedModel(from bundles: [Bundle]?) -> NSManagedObjectModel? {
        var models: [NSManagedObjectModel] = []
        for url in ModelSearch.models(in: searchFolders(bundles)) {
            guard let model = ModelSearch.read(url) else { return nil }
            // The same model in two places (SwiftPM copies a target's resources for each build
            // of it, `<target>.resources` and `<target>-tool.resources`) is merged once.
            let hashes = model.entityVersionHashesByName
            if models.contains(where: { $0.entityVersionHashesByName == hashes }) { continue }
            models.append(model)
        }
        guard !models.isEmpty else { return nil }
        return NSManagedObjectModel(byMerging: models)
    }

    /// The model that wrote a store, merged from the models in `bundles` (searched as
    /// ``mergedModel(from:)`` searches them), every version of each considered: `nil` when no
    /// combination has exactly the entity version hashes of `metadata`.
    ///
    /// ```swift
    /// let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
    /// if let storeModel = NSManagedObjectModel.mergedModel(from: nil, forStoreMetadata: metadata) {
    ///     print(storeModel.versionIdentifiers)   // the version the store was written with
    /// }
    /// ```
    ///
    /// A version that cannot be read is skipped (the reason goes to standard error).
    public class func mergedModel(from bundles: [Bundle]?, forStoreMetadata metadata: [String: Any]) -> NSManagedObjectModel? {
        let versions = ModelSearch.readVersions(of: ModelSearch.models(in: searchFolders(bundles)))
        return NSManagedObjectModel(byMerging: versions, forStoreMetadata: metadata)
    }

    /// A model merged from those of `models` whose entities all have the version hashes
    /// `metadata` records, or `nil` when no such merge has exactly the entities and hashes of
    /// `metadata` (`NSStoreModelVersionHashesKey`).
    ///
    /// ```swift
    /// let versions = [version1, version2, plugInModel]
    /// let storeModel = NSManagedObjectModel(byMerging: versions, forStoreMetadata: metadata)
    /// ```
    ///
    /// Several versions of one model may be given: a model whose entities are all among those
    /// already taken is skipped, and the models with the most entities are taken first.
    public convenience init?(byMerging models: [NSManagedObjectModel], forStoreMetadata metadata: [String: Any]) {
        guard let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any] else { return nil }
        let hashes = stored.compactMapValues { $0 as? Data }
        func matches(_ model: NSManagedObjectModel) -> Bool {
            model.entityVersionHashesByName.allSatisfy { hashes[$0.key] == $0.value }
        }
        var taken = Set<String>()
        var chosen: [NSManagedObjectModel] = []
        for model in models.filter(matches).sorted(by: { $0.entities.count > $1.entities.count }) {
            let names = Set(model.entitiesByName.keys)
            guard taken.isDisjoint(with: names) else { continue }
            taken.formUnion(names)
            chosen.append(model)
        }
        guard taken == Set(hashes.keys), hashes.count == stored.count else { return nil }
        self.init(byMerging: chosen)
    }

    /// The folders ``mergedModel(from:)`` searches: the bundles' own, or for `nil` the main
    /// bundle's and the Linux additions.
    private static func searchFolders(_ bundles: [Bundle]?) -> [URL] {
        ModelSearch.locations(firstIn: [], bundles: bundles ?? [Bundle.main], linuxAdditions: bundles == nil)
    }
}
