import Foundation

/// Where models are looked for: the folders `NSPersistentContainer(name:)` searches for a model by
/// name, and `NSManagedObjectModel.mergedModel(from:)` searches for every model.
///
/// Apple platforms look in bundles. A Linux program has no app bundle, so three Linux additions
/// follow the bundles: the SwiftPM resource folders next to the executable
/// (`<package>_<target>.resources`, what `Bundle.module` reads), the folders of
/// `NSPersistentContainer.modelSearchDirectories`, and the current directory.
internal enum ModelSearch {
    /// `NSPersistentContainer.modelSearchDirectories`.
    static let extraDirectories = Locked<[URL]>([]) // not `Mutex`: see `Locked`

    /// The folders to search, in order, without duplicates: `directories`, each bundle's
    /// resources and its own folder, then, with `linuxAdditions`, the three Linux additions.
    static func locations(firstIn directories: [URL], bundles: [Bundle], linuxAdditions: Bool = true) -> [URL] {
        var locations = directories
        for bundle in bundles {
            if let resources = bundle.resourceURL { locations.append(resources) }
            locations.append(bundle.bundleURL)
        }
        if linuxAdditions {
            let executableFolder = Bundle.main.bundleURL
            let contents = (try? FileManager.default.contentsOfDirectory(at: executableFolder, includingPropertiesForKeys: nil)) ?? []
            locations += contents.filter { $0.pathExtension == "resources" }.sorted { $0.path < $1.path }
            locations += extraDirectories.withLock { $0 }
            locations.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true))
        }
        var seen = Set<String>()
        return locations.filter { seen.insert($0.standardizedFileURL.path).inserted }
    }

    /// The models directly in `folders` (`.xcdatamodeld` and `.xcdatamodel` folders), in folder
    /// order and by name within a folder.
    static func models(in folders: [URL]) -> [URL] {
        files(in: folders, extensions: ["xcdatamodeld", "xcdatamodel"])
    }

    /// The files (or folders) directly in `folders` whose extension is one of `extensions`
    /// (lower-case), in folder order and by name within a folder; a folder that can't be listed
    /// has none.
    static func files(in folders: [URL], extensions: Set<String>) -> [URL] {
        folders.flatMap { folder in
            let contents = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
            return contents.filter { extensions.contains($0.pathExtension.lowercased()) }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
        }
    }

    /// Every version of the model at `url`: a `.xcdatamodeld`'s `.xcdatamodel` folders, by name,
    /// or the `.xcdatamodel` itself.
    static func versions(of url: URL) -> [URL] {
        guard url.pathExtension.lowercased() == "xcdatamodeld" else { return [url] }
        let contents = (try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)) ?? []
        return contents.filter { $0.pathExtension.lowercased() == "xcdatamodel" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// Every readable version of `models` (`.xcdatamodeld` and `.xcdatamodel` URLs), in order; one
    /// that can't be read is reported on standard error and skipped (``read(_:)``).
    static func readVersions(of models: [URL]) -> [NSManagedObjectModel] {
        models.flatMap(versions(of:)).compactMap(read)
    }

    /// Reads the model at `url`; on failure writes Apple's style of message to standard error
    /// (`CoreData: error: …`) and returns `nil`.
    static func read(_ url: URL) -> NSManagedObjectModel? {
        do {
            return try NSManagedObjectModel(validatingContentsOf: url)
        } catch {
            FileHandle.standardError.write(Data("CoreData: error:  Failed to load model at \(url.path): \(error.localizedDescription)\n".utf8))
            return nil
        }
    }
}

extension ModelSearch {
    /// The model that wrote a store whose metadata is `metadata`, among the models the app ships,
    /// for migrating the store to `destination`; `nil` when none matches
    /// (`NSMigrationMissingSourceModelError`, 134130).
    ///
    /// Searched in order:
    /// 1. the versions of the `.xcdatamodeld` `destination` was read from (by name), the first
    ///    whose entities have exactly the metadata's version hashes
    ///    (``NSManagedObjectModel/isConfiguration(withName:compatibleWithStoreMetadata:)``);
    /// 2. as ``NSManagedObjectModel/mergedModel(from:forStoreMetadata:)`` searches for `nil`
    ///    bundles (the main bundle and the Linux additions), where several models may merge.
    static func sourceModel(forStoreMetadata metadata: [String: Any], destination: NSManagedObjectModel) -> NSManagedObjectModel? {
        if let bundle = destination.versionedModelURL,
           let version = firstVersion(of: bundle, where: { $0.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) }) {
            return version.model
        }
        return NSManagedObjectModel.mergedModel(from: nil, forStoreMetadata: metadata)
    }

    /// The first version of the `.xcdatamodeld` at `bundle` (by name) whose model `matches`, read
    /// as ``read(_:)`` reads it (a version that can't be read is reported and skipped).
    static func firstVersion(of bundle: URL, where matches: (NSManagedObjectModel) -> Bool) -> (url: URL, model: NSManagedObjectModel)? {
        for version in versions(of: bundle) {
            if let model = read(version), matches(model) { return (version, model) }
        }
        return nil
    }
}
