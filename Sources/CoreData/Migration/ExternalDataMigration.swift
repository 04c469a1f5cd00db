import CSQLite
import Foundation

// Lightweight migration of an attribute whose external storage (`allowsExternalBinaryDataStorage`)
// was turned on or off: the SQLite store keeps such a column with Apple's marker before the bytes
// (`SQLiteExternalData.swift`), so the bytes are rewritten, not copied:
// - turned off: `cd_external_inline(value, folder)` gives the bytes themselves, read from the
//   row after `0x01` or from the file a `0x02` names (the file, no longer named by any row, is
//   removed by the next open);
// - turned on: `cd_external_mark(value)` puts `0x01` before the bytes (kept in the row, as
//   Apple's store reads them, whatever their size).
// Without this the bytes kept or lost their marker, and the next open removed every file.
internal enum ExternalDataMigration {
    /// Registers the two functions on a migration's connection.
    static func registerFunctions(on db: OpaquePointer) {
        sqlite3_create_function_v2(db, "cd_external_inline", 2, SQLITE_UTF8, nil, { context, count, values in
            guard let context, let values, count == 2 else { return }
            guard sqlite3_value_type(values[0]) != SQLITE_NULL else { return sqlite3_result_null(context) }
            let bytes = ExternalDataMigration.blob(values[0])
            switch bytes.first {
            case 0x01?:
                ExternalDataMigration.result(context, Data(bytes.dropFirst()))
            case 0x02?:
                let name = String(decoding: bytes.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
                let folder = sqlite3_value_text(values[1]).map { String(cString: $0) } ?? ""
                guard !name.isEmpty, !name.contains("/"), name != ".", name != "..",
                      let data = try? Data(contentsOf: URL(fileURLWithPath: folder).appendingPathComponent(name)) else {
                    sqlite3_result_error(context, "the external data file '\(name)' a row names can't be read from \(folder)", -1)
                    return
                }
                ExternalDataMigration.result(context, data)
            default:
                ExternalDataMigration.result(context, bytes) // no marker: written before this package wrote Apple's
            }
        }, nil, nil, nil)
        sqlite3_create_function_v2(db, "cd_external_mark", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, count, values in
            guard let context, let values, count == 1 else { return }
            guard sqlite3_value_type(values[0]) != SQLITE_NULL else { return sqlite3_result_null(context) }
            ExternalDataMigration.result(context, Data([0x01]) + ExternalDataMigration.blob(values[0]))
        }, nil, nil, nil)
    }

    /// The SQL rewriting the source row's (`s`) `column` of an attribute kept with external
    /// storage (`wasExternal`) for one kept without it, or the reverse, in the store at `path`.
    static func conversion(_ column: String, wasExternal: Bool, storePath path: String) -> String {
        let value = "s." + SQLiteSchema.quoted(column)
        guard wasExternal else { return "cd_external_mark(\(value))" }
        let folder = SQLiteStore.externalDataFolder(forStoreAt: URL(fileURLWithPath: path))?.path ?? ""
        return "cd_external_inline(\(value), '\(folder.replacingOccurrences(of: "'", with: "''"))')"
    }

    fileprivate static func blob(_ value: OpaquePointer?) -> Data {
        let count = Int(sqlite3_value_bytes(value))
        guard count > 0, let pointer = sqlite3_value_blob(value) else { return Data() }
        return Data(bytes: pointer, count: count)
    }

    fileprivate static func result(_ context: OpaquePointer, _ data: Data) {
        data.withUnsafeBytes { buffer in
            sqlite3_result_blob(context, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), SQLITE_TRANSIENT_DESTRUCTOR)
        }
    }
}
