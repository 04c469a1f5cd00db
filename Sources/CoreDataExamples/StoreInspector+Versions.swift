import CoreData
import Foundation

/// `coredata inspect STORE --model PATH.xcdatamodeld`: which version of a model wrote a store.
extension StoreInspector {
    /// Which version of the model at `modelURL` (a `.xcdatamodeld`, or one `.xcdatamodel`) wrote
    /// the store: the version whose entities have exactly the version hashes the store's metadata
    /// records. When none did, the report names, for each version, the entities that differ.
    ///
    /// ```swift
    /// let inspector = StoreInspector(url: URL(fileURLWithPath: "Garage.sqlite"))
    /// print(try inspector.versionReport(model: URL(fileURLWithPath: "Garage.xcdatamodeld")))
    /// // Written by version: Garage 2 (version identifiers: 2.0; checksum …)
    /// ```
    ///
    /// Throws an `NSError` saying why the store's metadata or a version of the model can't be read.
    public func versionReport(model modelURL: URL) throws -> String {
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: storeType, at: url)
        let stored = (metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]).compactMapValues { $0 as? Data }
        var versions: [(name: String, model: NSManagedObjectModel)] = []
        if modelURL.pathExtension.lowercased() == "xcdatamodeld" {
            versions = try Self.versions(of: modelURL)
        } else {
            versions.append((modelURL.deletingPathExtension().lastPathComponent, try NSManagedObjectModel(validatingContentsOf: modelURL)))
        }

        var lines = ["Model: \(modelURL.path)"]
        if let match = versions.first(where: { $0.model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) }) {
            let identifiers = match.model.versionIdentifiers.map { "\($0)" }.sorted().joined(separator: ", ")
            lines.append("Written by version: \(match.name) (version identifiers: \(identifiers.isEmpty ? "none" : identifiers); checksum \(match.model.versionChecksum))")
            return lines.joined(separator: "\n")
        }
        lines.append("Written by version: none of the \(versions.count) version\(versions.count == 1 ? "" : "s") of \(modelURL.lastPathComponent)")
        for version in versions {
            lines.append("  \(version.name): entities that differ: \(Self.differences(stored, version.model.entityVersionHashesByName).joined(separator: ", "))")
        }
        return lines.joined(separator: "\n")
    }

    /// The entities whose hashes differ between a store (`stored`) and a model, each with how.
    static func differences(_ stored: [String: Data], _ model: [String: Data]) -> [String] {
        Set(stored.keys).union(model.keys).sorted().compactMap { name in
            switch (stored[name], model[name]) {
            case (nil, _): return "\(name) (not in the store)"
            case (_, nil): return "\(name) (not in the model)"
            case let (a?, b?): return a == b ? nil : "\(name) (changed)"
            }
        }
    }

    /// Every version of the `.xcdatamodeld` at `bundle`, read, by name in numeric order (`Garage`,
    /// `Garage 2`, …, `Garage 10`); throws why a version can't be read.
    static func versions(of bundle: URL) throws -> [(name: String, model: NSManagedObjectModel)] {
        try NSManagedObjectModel.checksumsForVersionedModel(at: bundle).keys
            .sorted { $0.compare($1, options: .numeric) == .orderedAscending }
            .map { name in (name, try NSManagedObjectModel(validatingContentsOf: bundle.appendingPathComponent(name).appendingPathExtension("xcdatamodel"))) }
    }
}
