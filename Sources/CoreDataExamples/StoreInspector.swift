import CSQLite
import CoreData
import Foundation

/// A report of a store in Core Data's layout: its metadata, entities, row counts and join tables,
/// read from the store's own tables, so any such store can be inspected without its model: a
/// SQLite file, or a PostgreSQL store at a `postgres://` URL (with `CoreDataPostgreSQL`'s
/// `registerPostgreSQLStore()` called first).
public struct StoreInspector {
    /// The store to inspect: a SQLite file's URL, or a `postgres://` URL.
    public let url: URL

    /// An inspector of the store at `url`; nothing is read until ``report()``.
    public init(url: URL) { self.url = url }

    /// Whether `url` names a PostgreSQL store (`postgres://` or `postgresql://`).
    var isPostgreSQL: Bool { ["postgres", "postgresql"].contains(url.scheme?.lowercased() ?? "") }

    /// The store's type string.
    var storeType: String { isPostgreSQL ? NSPostgreSQLStoreType : NSSQLiteStoreType }

    /// Where the store is, for the report: a file's path, or the URL without its password.
    var location: String { isPostgreSQL ? Self.displayName(of: url.absoluteString) : url.path }

    /// `store` (a path or a URL) as a message may show it: a URL's password is masked.
    public static func displayName(of store: String) -> String {
        store.contains("://") ? PostgreSQLURL.masked(store) : store
    }

    /// The report, as `coredata inspect` prints it. Throws an `NSError` saying why a file can't be read.
    public func report() throws -> String {
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: storeType, at: url)
        var lines: [String] = []
        lines.append("Store: \(location)")
        lines.append("UUID: \(metadata[NSStoreUUIDKey] as? String ?? "?")")
        lines.append("Type: \(metadata[NSStoreTypeKey] as? String ?? "?")")
        for key in ["NSPersistenceFrameworkVersion", "NSStoreModelVersionHashesVersion", "NSStoreModelVersionChecksumKey",
                    "NSStoreModelVersionHashesDigest", NSStoreModelVersionIdentifiersKey] {
            if let value = metadata[key] { lines.append("\(key): \(Self.describe(value))") }
        }
        let hashes = metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]

        let db: any InspectedDatabase = isPostgreSQL ? try InspectedPostgreSQLDatabase(url: url) : try ReadOnlyDatabase(path: url.path)
        var entities = try db.rows(#"SELECT "Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX" FROM "Z_PRIMARYKEY" ORDER BY "Z_ENT""#)
        let tables = Set(try db.tableNames())
        // Apple's ancillary entities (persistent history's: 16001 CHANGE, 16002 TRANSACTION,
        // 16003 TRANSACTIONSTRING) have tables of their own, `A` and their name.
        let isAncillary = { (row: [String?]) in Int(row[0] ?? "") ?? 0 > 16000 }
        let ancillary = entities.filter(isAncillary)
        entities.removeAll(where: isAncillary)
        var names: [String: String] = [:]
        for row in entities { if let number = row[0], let name = row[1] { names[number] = name } }
        lines.append("")
        lines.append("Entities:")
        lines.append(Self.pad("Z_ENT", 6) + Self.pad("entity", 28) + Self.pad("parent", 20) + Self.pad("rows", 10) + "version hash")
        for row in entities {
            guard let number = row[0], let name = row[1] else { continue }
            var root = number
            var parent = row[2] ?? "0"
            var seen: Set<String> = [number] // a cycle in a damaged Z_SUPER ends the walk
            while parent != "0", seen.insert(parent).inserted, let grand = entities.first(where: { $0[0] == parent }) {
                root = parent
                parent = grand[2] ?? "0"
            }
            let table = "Z" + (names[root] ?? name).uppercased()
            var count = "-"
            if tables.contains(table), let entityNumber = Int(number) {
                count = try db.rows("SELECT count(*) FROM \(Self.quoted(table)) WHERE \"Z_ENT\" = \(entityNumber)").first?[0] ?? "?"
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
        var history: [String] = []
        for row in ancillary {
            guard let table = row[1].map({ "A" + $0.uppercased() }), tables.contains(table) else { continue }
            history.append("  \(table): \(try db.rows("SELECT count(*) FROM \(Self.quoted(table))").first?[0] ?? "?") rows")
        }
        if !history.isEmpty {
            lines.append("")
            lines.append("Persistent history:")
            lines += history
        }
        if let footer = try db.footer() {
            lines.append("")
            lines.append(footer)
        }
        return lines.joined(separator: "\n")
    }

    /// A table name from the file, quoted for SQL (the file's names are data, not SQL).
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `text` padded with spaces to `width` characters (or followed by one space if it is that wide
    /// already), for the report's columns.
    public static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    static func describe(_ value: Any) -> String {
        if let array = value as? [Any] { return "[" + array.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
        return "\(value)"
    }
}

/// The store's tables, as the inspector reads them: every value as text.
protocol InspectedDatabase {
    /// The rows of `sql` (which names no value the user gave), each value as text or nil.
    func rows(_ sql: String) throws -> [[String?]]
    /// The names of the store's tables.
    func tableNames() throws -> [String]
    /// A last line about the database itself, if any (SQLite's journal mode).
    func footer() throws -> String?
}

/// A PostgreSQL store's database, read through the connection `CoreDataPostgreSQL` registered.
final class InspectedPostgreSQLDatabase: InspectedDatabase {
    private let connection: any PostgreSQLConnection

    init(url: URL) throws {
        guard let connector = PostgreSQLStoreRegistry.connector else {
            throw NSError(domain: NSCocoaErrorDomain, code: 134000, userInfo: [NSLocalizedDescriptionKey:
                "The PostgreSQL store is not registered: import CoreDataPostgreSQL and call NSPersistentStoreCoordinator.registerPostgreSQLStore() first"])
        }
        do {
            connection = try connector(url, nil)
        } catch {
            throw NSError(domain: NSCocoaErrorDomain, code: 134080, userInfo: [NSLocalizedDescriptionKey: error.message])
        }
    }

    deinit { connection.close() }

    func rows(_ sql: String) throws -> [[String?]] {
        let result: any PostgreSQLRows
        do {
            result = try connection.execute(sql, [])
        } catch {
            throw NSError(domain: NSCocoaErrorDomain, code: 256, userInfo: [NSLocalizedDescriptionKey: "SQL error: \(error.message)"])
        }
        return (0..<result.count).map { row in
            (0..<result.columnCount).map { column in result.isNull(row, column) ? nil : result.text(row, column) }
        }
    }

    /// Those of the schema holding `Z_METADATA`, which the search path finds (as the store does),
    /// whatever `current_schema()` is.
    func tableNames() throws -> [String] {
        try rows("""
            SELECT tablename FROM pg_tables WHERE schemaname = (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                                                                 WHERE c.oid = to_regclass('"Z_METADATA"'))
            """).compactMap { $0[0] }
    }

    func footer() throws -> String? { nil }
}

/// A read-only SQLite connection for inspection.
final class ReadOnlyDatabase: InspectedDatabase {
    private var handle: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw NSError(domain: NSCocoaErrorDomain, code: 256, userInfo: [NSLocalizedDescriptionKey: "Can't open \(path): \(message)"])
        }
        sqlite3_busy_timeout(handle, 5_000) // a store another process is writing
    }

    deinit { sqlite3_close(handle) }

    /// Its tables, without virtual tables (Apple's R-tree fetch indexes, `Z_Car_byLocation`) and
    /// their shadow tables (`…_node`, `…_parent`, `…_rowid`): they are no join tables, and a
    /// SQLite without their module can't count them.
    func tableNames() throws -> [String] {
        let all = try rows("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        let virtual = all.filter { $0[1]?.uppercased().hasPrefix("CREATE VIRTUAL TABLE") == true }.compactMap { $0[0] }
        return all.compactMap { $0[0] }.filter { name in
            !virtual.contains { name == $0 || (name.hasPrefix($0 + "_") && ["node", "parent", "rowid"].contains(String(name.dropFirst($0.count + 1)))) }
        }
    }

    func footer() throws -> String? {
        "Journal mode: \(try rows("PRAGMA journal_mode").first?[0] ?? "?")"
    }

    func rows(_ sql: String) throws -> [[String?]] {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &stmt, nil) == SQLITE_OK else {
            throw NSError(domain: NSSQLiteErrorDomain, code: Int(sqlite3_errcode(handle)),
                          userInfo: [NSLocalizedDescriptionKey: "SQL error: \(String(cString: sqlite3_errmsg(handle)))"])
        }
        defer { sqlite3_finalize(stmt) }
        var result: [[String?]] = []
        while true {
            let step = sqlite3_step(stmt)
            if step == SQLITE_DONE { return result }
            guard step == SQLITE_ROW else {
                // A damaged page, a lock: an error, not a report that leaves rows out.
                throw NSError(domain: NSSQLiteErrorDomain, code: Int(step),
                              userInfo: [NSLocalizedDescriptionKey: "SQL error: \(String(cString: sqlite3_errmsg(handle)))"])
            }
            result.append((0..<sqlite3_column_count(stmt)).map { column in
                sqlite3_column_text(stmt, column).map { String(cString: $0) }
            })
        }
    }
}
