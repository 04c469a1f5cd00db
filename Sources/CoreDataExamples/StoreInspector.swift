import CSQLite
import CoreData
import Foundation

/// A report of a store in Core Data's layout: its metadata, entities, row counts and join tables,
/// read from the file's own tables, so any such store can be inspected without its model.
public struct StoreInspector {
    public let url: URL

    public init(url: URL) { self.url = url }

    /// The report, as `coredata inspect` prints it. Throws an `NSError` saying why a file can't be read.
    public func report() throws -> String {
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        var lines: [String] = []
        lines.append("Store: \(url.path)")
        lines.append("UUID: \(metadata[NSStoreUUIDKey] as? String ?? "?")")
        lines.append("Type: \(metadata[NSStoreTypeKey] as? String ?? "?")")
        for key in ["NSPersistenceFrameworkVersion", "NSStoreModelVersionHashesVersion", "NSStoreModelVersionChecksumKey",
                    "NSStoreModelVersionHashesDigest", NSStoreModelVersionIdentifiersKey] {
            if let value = metadata[key] { lines.append("\(key): \(Self.describe(value))") }
        }
        let hashes = metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]

        let db = try ReadOnlyDatabase(path: url.path)
        let entities = try db.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        let tables = Set(try db.rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0[0] })
        var names: [String: String] = [:]
        for row in entities { if let number = row[0], let name = row[1] { names[number] = name } }
        lines.append("")
        lines.append("Entities:")
        lines.append(Self.pad("Z_ENT", 6) + Self.pad("entity", 28) + Self.pad("parent", 20) + Self.pad("rows", 10) + "version hash")
        for row in entities {
            guard let number = row[0], let name = row[1] else { continue }
            var root = number
            var parent = row[2] ?? "0"
            while parent != "0", parent != root, let grand = entities.first(where: { $0[0] == parent }) {
                root = parent
                parent = grand[2] ?? "0"
            }
            let table = "Z" + (names[root] ?? name).uppercased()
            var count = "-"
            if tables.contains(table), let entityNumber = Int(number) {
                count = try db.rows("SELECT count(*) FROM \(Self.quoted(table)) WHERE Z_ENT = \(entityNumber)").first?[0] ?? "?"
            }
            let hash = (hashes[name] as? Data)?.base64EncodedString() ?? "-"
            let parentName = row[2].flatMap { names[$0] } ?? ""
            lines.append(Self.pad(number, 6) + Self.pad(name, 28) + Self.pad(parentName, 20) + Self.pad(count, 10) + hash)
        }
        let special: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]
        let joins = tables.filter { $0.hasPrefix("Z_") && !special.contains($0) }.sorted()
        if !joins.isEmpty {
            lines.append("")
            lines.append("Join tables:")
            for join in joins {
                lines.append("  \(join): \(try db.rows("SELECT count(*) FROM \(Self.quoted(join))").first?[0] ?? "?") rows")
            }
        }
        lines.append("")
        lines.append("Journal mode: \(try db.rows("PRAGMA journal_mode").first?[0] ?? "?")")
        return lines.joined(separator: "\n")
    }

    /// A table name from the file, quoted for SQL (the file's names are data, not SQL).
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    public static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    static func describe(_ value: Any) -> String {
        if let array = value as? [Any] { return "[" + array.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
        return "\(value)"
    }
}

/// A read-only SQLite connection for inspection.
final class ReadOnlyDatabase {
    private var handle: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw NSError(domain: NSCocoaErrorDomain, code: 256, userInfo: [NSLocalizedDescriptionKey: "Can't open \(path): \(message)"])
        }
    }

    deinit { sqlite3_close(handle) }

    func rows(_ sql: String) throws -> [[String?]] {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &stmt, nil) == SQLITE_OK else {
            throw NSError(domain: NSSQLiteErrorDomain, code: Int(sqlite3_errcode(handle)),
                          userInfo: [NSLocalizedDescriptionKey: "SQL error: \(String(cString: sqlite3_errmsg(handle)))"])
        }
        defer { sqlite3_finalize(stmt) }
        var result: [[String?]] = []
        while sqlite3_step(stmt) == SQLITE_ROW {
            result.append((0..<sqlite3_column_count(stmt)).map { column in
                sqlite3_column_text(stmt, column).map { String(cString: $0) }
            })
        }
        return result
    }
}
