import Foundation

/// The versions of a versioned model: `checksumsForVersionedModel(at:)`.
///
/// A versioned model is Xcode's `.xcdatamodeld` folder, one `.xcdatamodel` folder per version
/// (each loads on its own with ``NSManagedObjectModel/init(contentsOf:)``), or the `.momd` folder
/// Xcode compiles it into, whose `VersionInfo.plist` lists every version's checksum.
extension NSManagedObjectModel {
    /// The version checksum of every version of the versioned model at `modelURL`, by version
    /// name (the version's file name without its extension: `"Garage 2"`).
    ///
    /// ```swift
    /// let url = URL(fileURLWithPath: "Garage.xcdatamodeld")
    /// let checksums = try NSManagedObjectModel.checksumsForVersionedModel(at: url)
    /// // ["Garage": "…=", "Garage 2": "…=", "Garage 3": "…="]
    /// if checksums.values.contains(storeMetadata[NSPersistentStoreModelVersionChecksumKey] as? String ?? "") { … }
    /// ```
    ///
    /// For a `.xcdatamodeld` each version is read and its ``versionChecksum`` computed: the value
    /// Xcode's model compiler writes into `VersionInfo.plist` (`NSManagedObjectModel_VersionChecksums`).
    /// For a compiled `.momd` folder that plist is read. Throws an `NSError` in
    /// `NSCocoaErrorDomain`: `NSFileReadNoSuchFileError` (260) when nothing is at `modelURL`,
    /// `NSFileReadCorruptFileError` (259) when it is not a versioned model or a version cannot be
    /// read, the error naming the file and the problem.
    public class func checksumsForVersionedModel(at modelURL: URL) throws -> [String: String] {
        let url = modelURL.standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw XcodeModelReader.fileError(.fileReadNoSuchFile, url, "does not exist")
        }
        switch (isDirectory.boolValue, url.pathExtension.lowercased()) {
        case (true, "xcdatamodeld"):
            var checksums: [String: String] = [:]
            for version in ModelSearch.versions(of: url) {
                checksums[version.deletingPathExtension().lastPathComponent] = try XcodeModelReader.readModel(at: version).versionChecksum
            }
            guard !checksums.isEmpty else {
                throw XcodeModelReader.fileError(.fileReadCorruptFile, url, "holds no model version ('.xcdatamodel' folder)")
            }
            return checksums
        case (true, "momd"):
            return try compiledChecksums(in: url)
        default:
            throw XcodeModelReader.fileError(.fileReadCorruptFile, url, "is not a versioned model (a '.xcdatamodeld' or '.momd' folder)")
        }
    }

    /// The `NSManagedObjectModel_VersionChecksums` of a compiled `.momd` folder's `VersionInfo.plist`.
    private static func compiledChecksums(in momd: URL) throws -> [String: String] {
        let plistURL = momd.appendingPathComponent("VersionInfo.plist")
        guard FileManager.default.fileExists(atPath: plistURL.path) else {
            throw XcodeModelReader.fileError(.fileReadNoSuchFile, plistURL, "does not exist: the compiled model has no version information")
        }
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: plistURL), options: [], format: nil)
        } catch {
            throw XcodeModelReader.fileError(.fileReadCorruptFile, plistURL, "is not a valid property list (\(error.localizedDescription))", underlying: error)
        }
        guard let checksums = (plist as? [String: Any])?["NSManagedObjectModel_VersionChecksums"] as? [String: String] else {
            throw XcodeModelReader.fileError(.fileReadCorruptFile, plistURL,
                                             "has no version checksums (no 'NSManagedObjectModel_VersionChecksums' dictionary of strings)")
        }
        return checksums
    }
}
