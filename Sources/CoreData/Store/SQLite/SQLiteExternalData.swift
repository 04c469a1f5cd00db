import Foundation

// External binary storage (`allowsExternalBinaryDataStorage`), as Apple's SQLite store keeps it.
//
// The column of such an attribute always starts with a marker byte:
// - `0x01` and the bytes themselves (a value kept in the row), or
// - `0x02` and the name of a file (a UUID, then a NUL) in `.<StoreName>_SUPPORT/_EXTERNAL_DATA/`
//   beside the store file, which holds the bytes.
// A column without a marker (written before this package wrote Apple's) is read as the bytes.
//
// Files follow the save's transaction: a save writes the files of its new values inside the
// transaction, before `COMMIT`, and removes them if the transaction rolls back; the files of
// values it replaced or deleted are removed only once it has committed. A process killed in
// between leaves files no row names, never a row naming a missing file; opening the store
// (read-write) removes such files, holding the write lock so that no save is under way.

extension SQLiteStore {
    /// Values of at least this many bytes go to a file of their own; smaller ones stay in the row.
    static let externalStorageThreshold = 100 * 1024

    /// `.<StoreName>_SUPPORT/_EXTERNAL_DATA/` beside the store file at `url` (`nil` for a store
    /// without a file of its own, such as `/dev/null`).
    static func externalDataFolder(forStoreAt url: URL) -> URL? {
        guard url.isFileURL, url.path != "/dev/null" else { return nil }
        return supportFolder(forStoreAt: url).appendingPathComponent("_EXTERNAL_DATA", isDirectory: true)
    }

    /// `.<StoreName>_SUPPORT/` beside the store file at `url`: what moves with the file.
    static func supportFolder(forStoreAt url: URL) -> URL {
        let name = url.deletingPathExtension().lastPathComponent
        return url.deletingLastPathComponent().appendingPathComponent(".\(name)_SUPPORT", isDirectory: true)
    }

    /// The value of an external-storage column, as its marker says.
    func externalValue(_ bytes: Data) throws -> StoreValue {
        guard let marker = bytes.first else { return .data(bytes) }
        switch marker {
        case 0x01:
            return .data(Data(bytes.dropFirst()))
        case 0x02:
            let name = try Self.externalFileName(bytes, store: url)
            guard let folder = url.flatMap(Self.externalDataFolder(forStoreAt:)) else {
                throw CoreDataError.make(.persistentStoreOperation, "The store has no folder for the external data file \(name)")
            }
            let file = folder.appendingPathComponent(name)
            do {
                return .data(try Data(contentsOf: file, options: .mappedIfSafe))
            } catch {
                throw NSError(domain: NSCocoaErrorDomain, code: CoreDataError.Code.fileReadNoSuchFile.rawValue, userInfo: [
                    NSLocalizedDescriptionKey: "The external data file \(name) that a row of the store at \(url?.path ?? "") names can't be read from \(folder.path)",
                    NSFilePathErrorKey: file.path, NSUnderlyingErrorKey: error,
                ])
            }
        default:
            return .data(bytes)
        }
    }

    /// The file name after a `0x02` marker: a plain name (no `/`, not `.` or `..`), up to a NUL.
    static func externalFileName(_ bytes: Data, store: URL?) throws -> String {
        let name = String(decoding: bytes.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else {
            throw CoreDataError.make(.persistentStoreOperation,
                "A row of the store at \(store?.path ?? "") names an external data file that is not a plain file name: '\(name)'")
        }
        return name
    }

    /// The column bytes of `data` for an external-storage attribute: in the row, or in a new
    /// file of the save under way (``ExternalDataFiles``).
    func externalBytes(_ data: Data) throws -> Data {
        guard data.count >= Self.externalStorageThreshold, let files = externalFiles else {
            var bytes = Data([0x01])
            bytes.append(data)
            return bytes
        }
        let name = try files.write(data)
        var bytes = Data([0x02])
        bytes.append(contentsOf: Array(name.utf8))
        bytes.append(0)
        return bytes
    }

    /// Notes, before a row's external-storage columns are overwritten or the row deleted, the
    /// files they name: removed once the save has committed.
    func noteReplacedExternalFiles(of entity: NSEntityDescription, primaryKey: Int64, columns: [String], on db: SQLiteConnection) throws {
        guard let files = externalFiles, !columns.isEmpty else { return }
        let statement = try db.cached("SELECT \(columns.joined(separator: ", ")) FROM \(schema.table(of: entity)) WHERE Z_PK = ?")
        defer { statement.reset() }
        statement.bind(primaryKey, at: 1)
        guard try statement.step() else { return }
        for column in columns.indices where !statement.isNull(Int32(column)) {
            let bytes = statement.data(Int32(column))
            if bytes.first == 0x02, let name = try? Self.externalFileName(bytes, store: url) { files.replaced.append(name) }
        }
    }

    /// The external data files the rows of `table` name in `columns` (an upsert's files before
    /// and after it: those it replaced are the difference).
    func externalFileNames(inTable table: String, columns: [String], on db: SQLiteConnection) throws -> Set<String> {
        guard externalFiles != nil, !columns.isEmpty else { return [] }
        let statement = try db.cached("SELECT \(columns.joined(separator: ", ")) FROM \(table)")
        defer { statement.reset() }
        var names = Set<String>()
        while try statement.step() {
            for column in columns.indices where !statement.isNull(Int32(column)) {
                let bytes = statement.data(Int32(column))
                if bytes.first == 0x02, let name = try? Self.externalFileName(bytes, store: url) { names.insert(name) }
            }
        }
        return names
    }

    /// Removes the files of the external data folder that no row names: left by a process
    /// killed between writing a file and committing, or between committing and removing the
    /// files of replaced values. Runs in a write transaction, so no save is under way; does
    /// nothing if the folder is empty or the file is busy, or while a query generation of this
    /// process is pinned on the file (its snapshot may name files no current row does).
    func removeUnreferencedExternalFiles(on db: SQLiteConnection, model: NSManagedObjectModel) {
        guard let url, !pinnedExternalData.isPinned, let folder = Self.externalDataFolder(forStoreAt: url),
              let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path), !names.isEmpty else { return }
        let columns = schema.externalDataColumns
        do {
            try db.transaction {
                // The file must be of this store's model exactly. A migration may have committed
                // since this store read the file, and a file of another model version opened with
                // `NSIgnorePersistentStoreVersioningOption` names external files in columns this
                // schema does not see: the files are then left for an open that knows them.
                let current = try Self.readMetadata(db)[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]
                let adopted = metadata?[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]
                let modelHashes = model.entityVersionHashesByName
                guard Set(current.keys) == Set(adopted.keys), adopted.allSatisfy({ current[$0.key] as? Data == $0.value as? Data }),
                      Set(current.keys) == Set(modelHashes.keys), modelHashes.allSatisfy({ current[$0.key] as? Data == $0.value }) else { return }
                var named = Set<String>()
                for (table, column) in columns {
                    let statement = try db.prepare("SELECT \(column) FROM \(table) WHERE substr(\(column), 1, 1) = X'02'")
                    defer { statement.finalize() }
                    while try statement.step() {
                        if let name = try? Self.externalFileName(statement.data(0), store: url) { named.insert(name) }
                    }
                }
                for name in names where !named.contains(name) {
                    try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
                }
            }
        } catch {
            // Left for the next open: the files are unused, and every named one is still there.
            CoreDataLog.warning("Unused external data files in \(folder.path) were left: \(error)")
        }
    }
}

extension SQLiteStore {
    /// Removes the staging folder a heavyweight migration killed before its end left beside the
    /// store (`SQLiteHeavyweightMigration.swift`), in a write transaction: a migration holds the
    /// store's write lock from start to end, so none is under way. Does nothing without one.
    func removeAbandonedMigration(on db: SQLiteConnection) {
        guard let url, !Self.isInMemory(url) else { return }
        let staging = SQLiteHeavyweightMigration.stagingFolder(forStoreAt: url)
        guard FileManager.default.fileExists(atPath: staging.path) else { return }
        do {
            try db.transaction { try FileManager.default.removeItem(at: staging) }
        } catch {
            CoreDataLog.warning("The staging folder of a migration that did not end, \(staging.path), was left: \(error)")
        }
    }
}

/// The external data files of one save: those it wrote (removed if it rolls back) and those of
/// the values it replaced or deleted (removed once it has committed). Used under the store's
/// write lock.
internal final class ExternalDataFiles {
    let folder: URL
    private(set) var created: [URL] = []
    var replaced: [String] = []

    init(folder: URL) { self.folder = folder }

    /// Writes `data` to a new file of the folder; its name.
    func write(_ data: Data) throws -> String {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let name = UUID().uuidString
        let file = folder.appendingPathComponent(name)
        try data.write(to: file, options: .withoutOverwriting)
        created.append(file)
        return name
    }

    /// The save rolled back: its files go.
    func discardCreated() {
        for file in created { try? FileManager.default.removeItem(at: file) }
        created.removeAll()
        replaced.removeAll()
    }

    /// The save committed: the files of the values it replaced go, once no query generation
    /// of this process is pinned on an older snapshot (`pinned`); one that cannot be removed is
    /// removed at the next open.
    func removeReplaced(_ pinned: PinnedExternalData) {
        pinned.remove(replaced.map { folder.appendingPathComponent($0) })
        created.removeAll()
        replaced.removeAll()
    }
}

extension NSAttributeDescription {
    /// A binary data (or transformable) attribute that allows external storage: its column
    /// carries Apple's marker before the bytes (the transformable value's archive).
    var storesExternally: Bool {
        allowsExternalBinaryDataStorage && (attributeType == .binaryDataAttributeType || attributeType == .transformableAttributeType)
    }
}
