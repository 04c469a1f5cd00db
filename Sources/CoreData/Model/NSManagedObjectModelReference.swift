import Foundation

/// One version of a model, named for staged migration: the model itself, its file, its name in a
/// bundle, or its entities' version hashes, with the version checksum it must have.
///
/// ```swift
/// let v2 = NSManagedObjectModelReference(name: "Garage", in: nil, versionChecksum: "kL9pPm…=")
/// let v3 = NSManagedObjectModelReference(fileURL: modelsURL.appendingPathComponent("Garage 3.xcdatamodel"),
///                                        versionChecksum: "2t0uXy…=")
/// let stage = NSCustomMigrationStage(migratingFrom: v2, to: v3)
/// ```
///
/// A reference is resolved (its model found and read) when a staged migration starts; a
/// reference that cannot be resolved makes the migration throw before the store is touched:
/// - `NSManagedObjectModelReferenceNotFoundError` (134504) when no model is found (a file that
///   cannot be read, no version of that name and checksum, no model with those hashes);
/// - `NSPersistentStoreIncompatibleVersionHashError` (134100) when the model found has another
///   ``NSManagedObjectModel/versionChecksum`` than the one given (`userInfo`'s `"reason"`,
///   `"versionHash"` — the model's — and `"checksum"` — the one given), as Apple's.
///
/// A model's checksum is its ``NSManagedObjectModel/versionChecksum`` (and, for a compiled model,
/// the `NSManagedObjectModel_VersionChecksums` of its `VersionInfo.plist`).
open class NSManagedObjectModelReference: NSObject {
    /// Where the model comes from.
    private enum Source {
        case model(NSManagedObjectModel)
        case file(URL)
        case named(String, Bundle?)
        case hashes([String: Data], Bundle?)
    }

    private let source: Source
    private let resolved = Locked<NSManagedObjectModel?>(nil) // not `Mutex`: see `Locked`

    /// The version checksum the referenced model must have.
    ///
    /// ```swift
    /// let reference = NSManagedObjectModelReference(model: v1, versionChecksum: v1.versionChecksum)
    /// reference.versionChecksum == v1.versionChecksum   // true
    /// ```
    public let versionChecksum: String

    /// A reference to `model`, which must have the version checksum `versionChecksum`.
    ///
    /// ```swift
    /// let reference = NSManagedObjectModelReference(model: v1, versionChecksum: "bMpud6…=")
    /// ```
    public init(model: NSManagedObjectModel, versionChecksum: String) {
        source = .model(model)
        self.versionChecksum = versionChecksum
        super.init()
    }

    /// A reference to the model in the Xcode model file at `fileURL` (a `.xcdatamodel` folder, or
    /// a `.xcdatamodeld` for its current version).
    ///
    /// ```swift
    /// let url = URL(fileURLWithPath: "Models/Garage.xcdatamodeld/Garage 2.xcdatamodel")
    /// let reference = NSManagedObjectModelReference(fileURL: url, versionChecksum: "kL9pPm…=")
    /// ```
    public init(fileURL: URL, versionChecksum: String) {
        source = .file(fileURL)
        self.versionChecksum = versionChecksum
        super.init()
    }

    /// A reference to the version of the model named `modelName` in `bundle` (the main bundle for
    /// `nil`) whose checksum is `versionChecksum`.
    ///
    /// ```swift
    /// let reference = NSManagedObjectModelReference(name: "Garage", in: nil, versionChecksum: "kL9pPm…=")
    /// ```
    ///
    /// The model is `<modelName>.xcdatamodeld` (each of its versions) or `<modelName>.xcdatamodel`,
    /// looked for in the bundle's resources and its folder; on Linux then, for a `nil` bundle, in
    /// the folders `NSPersistentContainer` searches for models (the SwiftPM resource folders next
    /// to the executable, ``NSPersistentContainer/modelSearchDirectories``, the current directory).
    public init(name modelName: String, in bundle: Bundle?, versionChecksum: String) {
        source = .named(modelName, bundle)
        self.versionChecksum = versionChecksum
        super.init()
    }

    /// A reference to the model in `bundle` (the main bundle for `nil`) whose entities have the
    /// version hashes `versionHash` (entity name to hash `Data`, as a store's metadata records
    /// them under `NSStoreModelVersionHashesKey`).
    ///
    /// ```swift
    /// let hashes = storeMetadata[NSStoreModelVersionHashesKey] as! [String: Any]
    /// let reference = NSManagedObjectModelReference(entityVersionHashes: hashes, in: nil, versionChecksum: "kL9pPm…=")
    /// ```
    ///
    /// Every version of every model found as for ``init(name:in:versionChecksum:)`` is compared.
    public init(entityVersionHashes versionHash: [AnyHashable: Any], in bundle: Bundle?, versionChecksum: String) {
        var hashes: [String: Data] = [:]
        for case let (name as String, hash as Data) in versionHash { hashes[name] = hash }
        source = .hashes(hashes, bundle)
        self.versionChecksum = versionChecksum
        super.init()
    }

    /// The referenced model.
    ///
    /// ```swift
    /// stage.willMigrateHandler = { manager, stage in
    ///     let entities = stage.currentModel.resolvedModel.entitiesByName.keys
    /// }
    /// ```
    ///
    /// A staged migration resolves its references before it starts, throwing when one cannot be
    /// resolved, so inside the handlers of an ``NSCustomMigrationStage`` this always succeeds.
    /// Elsewhere, reading it for a reference that cannot be resolved is a programmer error and
    /// traps (Apple's framework raises an exception when its references cannot be resolved),
    /// with the message of the error the migration would throw.
    open var resolvedModel: NSManagedObjectModel {
        do {
            return try resolve()
        } catch {
            fatalError("NSManagedObjectModelReference: \(error.localizedDescription)")
        }
    }

    // MARK: Resolving

    /// The referenced model, found and read once: throws 134504 when it is not found, 134100 when
    /// its checksum is not ``versionChecksum``.
    func resolve() throws -> NSManagedObjectModel {
        if let model = resolved.withLock({ $0 }) { return model }
        let model = try find()
        guard model.versionChecksum == versionChecksum else {
            throw CoreDataError.make(.incompatibleVersionHash,
                "The model referenced \(describe) has the version checksum \(model.versionChecksum), not the \(versionChecksum) the reference gives",
                extra: ["reason": "The version hash (and associated hashes) are incompatible with the current Core Data version.",
                        "versionHash": model.versionChecksum, "checksum": versionChecksum])
        }
        resolved.withLock { $0 = model }
        return model
    }

    private func find() throws -> NSManagedObjectModel {
        switch source {
        case .model(let model):
            return model
        case .file(let url):
            do {
                return try NSManagedObjectModel(validatingContentsOf: url)
            } catch {
                throw CoreDataError.make(.managedObjectModelReferenceNotFound,
                    "A model with version checksum \(versionChecksum) could not be read at \(url.path): \(error.localizedDescription)",
                    extra: [NSUnderlyingErrorKey: error, NSFilePathErrorKey: url.path])
            }
        case .named(let name, let bundle):
            let files = Self.models(in: bundle).filter { $0.deletingPathExtension().lastPathComponent == name }
            if let model = ModelSearch.readVersions(of: files).first(where: { $0.versionChecksum == versionChecksum }) { return model }
            throw CoreDataError.make(.managedObjectModelReferenceNotFound,
                "A model with version checksum \(versionChecksum) could not be found in the bundle at \(Self.path(of: bundle)) (no version of a model named '\(name)' has it)")
        case .hashes(let hashes, let bundle):
            if let model = ModelSearch.readVersions(of: Self.models(in: bundle)).first(where: { $0.entityVersionHashesByName == hashes }) { return model }
            throw CoreDataError.make(.managedObjectModelReferenceNotFound,
                "A model with version hashes \(hashes.keys.sorted()) (entity names) could not be found in the bundle at \(Self.path(of: bundle))")
        }
    }

    /// How the reference names its model, for messages.
    private var describe: String {
        switch source {
        case .model: "by a model object"
        case .file(let url): "at \(url.path)"
        case .named(let name, let bundle): "as '\(name)' in the bundle at \(Self.path(of: bundle))"
        case .hashes(_, let bundle): "by entity version hashes in the bundle at \(Self.path(of: bundle))"
        }
    }

    private static func path(of bundle: Bundle?) -> String { (bundle ?? Bundle.main).bundlePath }

    /// The Xcode models (`.xcdatamodeld`, `.xcdatamodel`) in `bundle`'s folders, then, for `nil`,
    /// the Linux additions of ``ModelSearch``.
    private static func models(in bundle: Bundle?) -> [URL] {
        ModelSearch.models(in: ModelSearch.locations(firstIn: [], bundles: [bundle ?? Bundle.main], linuxAdditions: bundle == nil))
    }
}
