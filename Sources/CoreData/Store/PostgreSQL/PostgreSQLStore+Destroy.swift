import Foundation

extension PostgreSQLStore {
    /// Drops the store in the database `url` names
    /// (``NSPersistentStoreCoordinator/destroyPersistentStore(at:ofType:options:)``): its entity
    /// tables (those its `Z_PRIMARYKEY` names, whatever model wrote them), its join tables,
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
                let entities = try connection.execute("SELECT \"Z_NAME\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_SUPER\" = 0 AND \"Z_ENT\" < 16000", [])
                var ours: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE", "ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING"]
                for row in 0..<entities.count where !entities.isNull(row, 0) { ours.insert("Z" + entities.text(row, 0).uppercased()) }
                let existing = try connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()", [])
                let dropped = (0..<existing.count).map { existing.text($0, 0) }.filter { ours.contains($0) || isJoinTableName($0) }.sorted()
                try connection.run("DROP TABLE " + dropped.map(SQLiteSchema.quoted).joined(separator: ", "))
            }
        } catch let error as PostgreSQLError {
            throw Self.error(error, .persistentStoreOperation, "Can't destroy the PostgreSQL store at \(location(of: url))")
        }
    }

    /// Whether `name` has a join table's shape, `Z_` and an entity number then the relationship's
    /// name (`Z_1TAGS`).
    private static func isJoinTableName(_ name: String) -> Bool {
        guard name.hasPrefix("Z_") else { return false }
        let rest = name.dropFirst(2)
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        return !digits.isEmpty && digits.count < rest.count
    }
}
