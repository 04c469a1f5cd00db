import Foundation

extension PostgreSQLStore {
    /// Drops the store in the database `url` names
    /// (``NSPersistentStoreCoordinator/destroyPersistentStore(at:ofType:options:)``): its entity
    /// tables (those its `Z_PRIMARYKEY` names, whatever model wrote them), its join tables
    /// (`Z_` and one of its entity numbers),
    /// `Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE` and persistent history's tables, in one
    /// transaction under the lock that orders openings. An app's other tables stay. A database
    /// that holds no store is left as it is. Sessions still reading the tables (another server's
    /// store) are waited for as long as the store's timeout (`NSPersistentStoreTimeoutOption`);
    /// after that 134070, nothing dropped. Those servers' next requests then throw: nothing they
    /// save is lost without an error.
    ///
    /// ```swift
    /// try coordinator.destroyPersistentStore(at: URL(string: "postgres://db/cars")!, ofType: NSPostgreSQLStoreType)
    /// ```
    static func destroy(at url: URL, options: [AnyHashable: Any]?) throws {
        let connection = try connect(url, options: options)
        defer { connection.close() }
        do {
            try connection.transaction {
                try takeOpeningLock(on: connection, options: options)
                guard try holdsStore(connection) else { return }
                // The schema the store's tables are in (the first of the search path that has them).
                let schema = try connection.execute("""
                    SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = '"Z_METADATA"'::regclass
                    """, []).text(0, 0)
                let quotedSchema = SQLiteSchema.quoted(schema)
                let entities = try connection.execute(
                    "SELECT \"Z_ENT\", \"Z_NAME\", \"Z_SUPER\" FROM \(quotedSchema).\"Z_PRIMARYKEY\" WHERE \"Z_ENT\" < 16000", [])
                var ours: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE", "ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING"]
                var numbers: Set<String> = []
                for row in 0..<entities.count where !entities.isNull(row, 0) && !entities.isNull(row, 1) {
                    numbers.insert(String(entities.int64(row, 0)))
                    if entities.isNull(row, 2) || entities.int64(row, 2) == 0 { ours.insert("Z" + entities.text(row, 1).uppercased()) }
                }
                let existing = try connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = $1", [.text(schema)])
                let dropped = (0..<existing.count).map { existing.text($0, 0) }
                    .filter { ours.contains($0) || isJoinTableName($0, entityNumbers: numbers) }.sorted()
                guard !dropped.isEmpty else { return }
                try connection.run("DROP TABLE " + dropped.map { quotedSchema + "." + SQLiteSchema.quoted($0) }.joined(separator: ", "))
            }
        } catch let error as PostgreSQLError {
            throw Self.error(error, .persistentStoreOperation, "Can't destroy the PostgreSQL store at \(location(of: url))")
        }
    }

    /// Whether `name` is a join table's, `Z_`, one of the store's entity numbers, then a
    /// relationship's name (`Z_1TAGS`); an app's `Z_2024_SALES` is not, unless its number is one.
    private static func isJoinTableName(_ name: String, entityNumbers: Set<String>) -> Bool {
        guard name.hasPrefix("Z_") else { return false }
        let rest = name.dropFirst(2)
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard digits.count < rest.count, entityNumbers.contains(String(digits)) else { return false }
        return rest.dropFirst(digits.count).allSatisfy { $0.isUppercase || $0.isNumber || $0 == "_" || !$0.isLetter }
    }
}
