import ArgumentParser
import CSQLite
import CoreData
import Foundation

/// `coredata inspect STORE`: a store's metadata, entities and row counts, read from the file's
/// own tables, so any store in Core Data's layout can be inspected without its model.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a Core Data SQLite store's metadata, entities and row counts."
    )

    @Argument(help: "The store file (.sqlite).") var store: String

    func run() throws {
        let url = URL(fileURLWithPath: store)
        let metadata: [String: Any]
        do {
            metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        } catch let error as NSError {
            throw ValidationError("Can't inspect \(store): \(error.localizedDescription) (\(error.domain) \(error.code))")
        }
        print("Store: \(url.path)")
        print("UUID: \(metadata[NSStoreUUIDKey] as? String ?? "?")")
        print("Type: \(metadata[NSStoreTypeKey] as? String ?? "?")")
        for key in ["NSPersistenceFrameworkVersion", "NSStoreModelVersionHashesVersion", "NSStoreModelVersionChecksumKey",
                    "NSStoreModelVersionHashesDigest", NSStoreModelVersionIdentifiersKey] {
            if let value = metadata[key] { print("\(key): \(Self.describe(value))") }
        }
        let hashes = metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]

        let db = try Database(path: url.path)
        let entities = try db.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        let tables = Set(try db.rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0[0] })
        print("")
        print("Entities:")
        print(Self.pad("Z_ENT", 6) + Self.pad("entity", 28) + Self.pad("parent", 20) + Self.pad("rows", 10) + "version hash")
        var names: [String: String] = [:]
        for row in entities { if let number = row[0], let name = row[1] { names[number] = name } }
        for row in entities {
            guard let number = row[0], let name = row[1] else { continue }
            var root = number
            var parent = row[2] ?? "0"
            while parent != "0", let grand = entities.first(where: { $0[0] == parent }) {
                root = parent
                parent = grand[2] ?? "0"
            }
            let table = "Z" + (names[root] ?? name).uppercased()
            var count = "-"
            if tables.contains(table) {
                count = try db.rows("SELECT count(*) FROM \(table) WHERE Z_ENT = \(Int(number) ?? 0)").first?[0] ?? "?"
            }
            let hash = (hashes[name] as? Data)?.base64EncodedString() ?? "-"
            let parentName = row[2].flatMap { names[$0] } ?? ""
            print(Self.pad(number, 6) + Self.pad(name, 28) + Self.pad(parentName, 20) + Self.pad(count, 10) + hash)
        }
        let joins = tables.filter { $0.hasPrefix("Z_") && $0.first(where: \.isNumber) != nil && !["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"].contains($0) }
        if !joins.isEmpty {
            print("")
            print("Join tables:")
            for join in joins.sorted() {
                print("  \(join): \(try db.rows("SELECT count(*) FROM \(join)").first?[0] ?? "?") rows")
            }
        }
        let journal = try db.rows("PRAGMA journal_mode").first?[0] ?? "?"
        print("")
        print("Journal mode: \(journal)")
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    static func describe(_ value: Any) -> String {
        if let array = value as? [Any] { return "[" + array.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
        return "\(value)"
    }
}

/// A read-only SQLite connection for inspection.
final class Database {
    private var handle: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            defer { sqlite3_close(handle) }
            throw ValidationError("Can't open \(path): \(String(cString: sqlite3_errmsg(handle)))")
        }
    }

    deinit { sqlite3_close(handle) }

    func rows(_ sql: String) throws -> [[String?]] {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &stmt, nil) == SQLITE_OK else {
            throw ValidationError("SQL error: \(String(cString: sqlite3_errmsg(handle)))")
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
