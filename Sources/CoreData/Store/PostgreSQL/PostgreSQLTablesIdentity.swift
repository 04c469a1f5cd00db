import Foundation

/// Which tables a store opened on: the object identifier (`oid`) of its `"Z_PRIMARYKEY"` table,
/// which changes only when a heavyweight migration puts a new store's tables in place of the old
/// ones (`Migration/PostgreSQLHeavyweightMigration.swift`; a lightweight migration keeps the
/// table, and the keys with it).
///
/// A coordinator of another server that still has the store open with the old model would write
/// into the new tables, whose objects have other keys: its save's statements, waiting for the
/// migration's table locks, run on the new tables once it commits. So every write transaction
/// ends with ``commitCheck(_:)``, in `COMMIT`'s round trip: when the tables are no longer those
/// the store opened on, it fails, and the transaction is rolled back with nothing written
/// (``PostgreSQLConnectionPool/inTransaction(prelude:_:)``).
///
/// ```swift
/// let identity = try connection.execute(PostgreSQLTablesIdentity.query, []).int64(0, 0)
/// ```
internal enum PostgreSQLTablesIdentity {
    /// The identity of the tables the session sees now (0 when there is no `"Z_PRIMARYKEY"`).
    static let query = """
        SELECT coalesce((SELECT c.oid::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                         WHERE c.relname = 'Z_PRIMARYKEY' AND n.nspname = current_schema()), 0)
        """

    /// The SQLSTATE of a failed check (`invalid_text_representation`: the check fails by casting
    /// a text to an integer, which plain SQL can do where it can't raise).
    static let failureState = "22P02"

    /// A statement that fails when the tables are no longer those of `identity`. (The failing
    /// branch reads the table's row, so the planner can't evaluate it beforehand.)
    static func commitCheck(_ identity: Int64) -> PostgreSQLStatement {
        PostgreSQLStatement(sql: """
            SELECT CAST(CASE WHEN c.oid::bigint = \(identity) THEN '1' ELSE 'replaced ' || c.relname END AS integer)
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relname = 'Z_PRIMARYKEY' AND n.nspname = current_schema()
            """)
    }

    /// The error a write transaction ends with when the check failed.
    static func replacedError(_ failure: PostgreSQLError) -> PostgreSQLError {
        PostgreSQLError(message: "The store's tables were replaced by a migration through a mapping model (by another coordinator or "
                        + "server) after this coordinator added the store: nothing was written. Add the store again with the model "
                        + "it has now", sqlState: failure.sqlState, isConnectionFailure: false)
    }
}
