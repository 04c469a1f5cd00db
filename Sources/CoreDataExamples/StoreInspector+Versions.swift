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
    /// A version that can't be read is named in the report with why; throws an `NSError` saying
    /// why the store's metadata, or every version of the model, can't be read.
    public func versionReport(model modelURL: URL) throws -> String {
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: storeType, at: url)
        let stored = (metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]).compactMapValues { $0 as? Data }
        var versions: [(name: String, model: NSManagedObjectModel)] = []
        var unreadable: [String] = []
        if modelURL.pathExtension.lowercased() == "xcdatamodeld" {
            (versions, unreadable) = try Self.readVersions(of: modelURL)
        } else {
            versions.append((modelURL.deletingPathExtension().lastPathComponent, try NSManagedObjectModel(validatingContentsOf: modelURL)))
        }

        var lines = ["Model: \(modelURL.path)"] + unreadable.map { "  \($0)" }
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

    /// Every readable version of the `.xcdatamodeld` at `bundle`, by name in numeric order
    /// (`Garage`, `Garage 2`, …, `Garage 10`), and why each other one can't be read (an old
    /// version this reader refuses does not hide the others, as at a store's opening). Throws
    /// when the folder can't be listed, or no version can be read (the first one's error).
    static func readVersions(of bundle: URL) throws -> (versions: [(name: String, model: NSManagedObjectModel)], unreadable: [String]) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: bundle.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            _ = try NSManagedObjectModel.checksumsForVersionedModel(at: bundle) // (its error, naming the path)
            return ([], [])
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: bundle.path)
            .filter { $0.lowercased().hasSuffix(".xcdatamodel") }
            .map { String($0.dropLast(".xcdatamodel".count)) }
            .sorted { $0.compare($1, options: .numeric) == .orderedAscending }
        var versions: [(name: String, model: NSManagedObjectModel)] = []
        var unreadable: [String] = []
        var firstError: Error?
        for name in names {
            do {
                versions.append((name, try NSManagedObjectModel(validatingContentsOf: bundle.appendingPathComponent(name).appendingPathExtension("xcdatamodel"))))
            } catch {
                firstError = firstError ?? error
                unreadable.append("\(name): can't be read: \(error.localizedDescription)")
            }
        }
        if versions.isEmpty {
            if let firstError { throw firstError }
            _ = try NSManagedObjectModel.checksumsForVersionedModel(at: bundle) // (its "holds no model version")
        }
        return (versions, unreadable)
    }

    /// The readable versions of ``readVersions(of:)``.
    static func versions(of bundle: URL) throws -> [(name: String, model: NSManagedObjectModel)] {
        try readVersions(of: bundle).versions
    }
}
