import Foundation

/// Which version of a store's tables a coordinator opened: a UUID that every migration writes
/// anew, in `"Z_METADATA"`'s row 2 (row 1 is the metadata; a store no migration has touched has no
/// row 2, its generation `""`).
///
/// A coordinator of another server that still has the store open with the old model would write
/// into the migrated tables: after a heavyweight migration (`Migration/PostgreSQLHeavyweightMigration.swift`)
/// their rows have new keys, and its save's statements, waiting for the migration's table locks,
/// run on the new tables once it commits; after a lightweight one, entities may have new `Z_ENT`
/// numbers. So every write transaction ends, in `COMMIT`'s round trip, with ``commitCheck(_:)``
/// (a save's key transaction likewise): when the generation is no longer the one the store opened
/// with, it fails and the transaction is rolled back with nothing written
/// (``PostgreSQLConnectionPool/inTransaction(prelude:_:)``).
///
/// ```swift
/// let generation = try connection.execute(PostgreSQLStoreGeneration.query, []).text(0, 0)
/// ```
internal enum PostgreSQLStoreGeneration {
    /// The generation of the store the session sees now.
    static let query = #"SELECT coalesce((SELECT "Z_UUID" FROM "Z_METADATA" WHERE "Z_VERSION" = 2), '')"#

    /// Gives the store a new generation, in the migration's transaction on `connection`.
    static func renew(on connection: any PostgreSQLConnection) throws(PostgreSQLError) {
        _ = try connection.execute("""
            INSERT INTO "Z_METADATA" ("Z_VERSION", "Z_UUID") VALUES (2, $1)
            ON CONFLICT ("Z_VERSION") DO UPDATE SET "Z_UUID" = EXCLUDED."Z_UUID"
            """, [.text(UUID().uuidString)])
    }

    /// The SQLSTATE of a failed check (`invalid_text_representation`: the check fails by casting
    /// a text to an integer, which plain SQL can do where it can't raise).
    static let failureState = "22P02"

    /// A statement that fails when the store's generation is no longer `generation`. (The failing
    /// branch reads the table, so the planner can't evaluate it beforehand.)
    static func commitCheck(_ generation: String) -> PostgreSQLStatement {
        let expected = "'" + generation.replacingOccurrences(of: "'", with: "''") + "'"
        return PostgreSQLStatement(sql: """
            SELECT CAST(CASE WHEN g = \(expected) THEN '1' ELSE 'migrated to ' || g END AS integer)
            FROM (\(query)) AS generation(g)
            """)
    }

    /// The error a write transaction ends with when the check failed.
    static func migratedError(_ failure: PostgreSQLError) -> PostgreSQLError {
        PostgreSQLError(message: "The store was migrated (by another coordinator or server) after this coordinator added it: nothing "
                        + "was written. Add the store again with the model it has now", sqlState: failure.sqlState, isConnectionFailure: false)
    }
}
