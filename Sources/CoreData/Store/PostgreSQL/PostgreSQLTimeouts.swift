import Foundation

/// How long a PostgreSQL store's transactions wait, so that no save and no `close()` waits
/// forever for a server that hangs while it holds rows.
///
/// - `lock_timeout`: a statement waiting for a row lock (another server's save) gives up after
///   ``NSPersistentStoreTimeoutOption`` (seconds; the SQLite store's meaning: how long to wait
///   for another connection's lock), 30 s when the option is absent. The save then throws
///   134030 with SQLSTATE `55P03` and nothing is saved.
/// - `idle_in_transaction_session_timeout`: the server ends a session of this store that sits
///   in a transaction doing nothing for ``idleGrace`` longer than that (a server that hangs
///   mid-save), which frees its rows. Longer than the lock timeout: a save across several
///   stores waits in one store's transaction while the next store's save waits for its locks.
///   A nested save that takes longer than the grace ends the outer store's session: a limit
///   (docs/POSTGRESQL.md, "Not yet").
///
/// Both are set for the writer's session (``sessionStatement``), once per session (again after
/// a reconnect), and so hold for everything sent on it, preparing statements included; readers,
/// which may keep a snapshot open, don't have them.
internal struct PostgreSQLTimeouts {
    /// `lock_timeout`, in milliseconds.
    let lockTimeout: Int

    /// The lock timeout when ``NSPersistentStoreTimeoutOption`` is absent, in milliseconds.
    static let defaultLockTimeout = 30_000
    /// How much longer than the lock timeout a transaction may sit idle, in milliseconds.
    static let idleGrace = 30_000
    /// SQLSTATE `lock_not_available`: `lock_timeout` expired.
    static let lockNotAvailable = "55P03"

    /// The statements that set them for the writer's session.
    let sessionStatement: String
    /// The statement that turns `synchronous_commit` off for the short transaction that takes a
    /// save's keys: its commit need not wait for the disk
    /// (``PostgreSQLConnectionPool/inTransaction(prelude:_:)``).
    static let keyTransactionStatement = "SELECT set_config('synchronous_commit', 'off', true)"

    /// The timeouts a store's options ask for.
    init(options: [AnyHashable: Any]?) {
        if let seconds = (options?[NSPersistentStoreTimeoutOption] as? NSNumber)?.doubleValue, seconds.isFinite, seconds >= 0 {
            // 0 would mean "no timeout" to PostgreSQL: the shortest wait instead.
            lockTimeout = max(1, Int(min(seconds, 2_000_000) * 1000))
        } else {
            lockTimeout = Self.defaultLockTimeout
        }
        sessionStatement = "SET lock_timeout = \(lockTimeout); SET idle_in_transaction_session_timeout = \(lockTimeout + Self.idleGrace)"
    }

    /// The statement that sets the lock timeout for the rest of a transaction (a migration's DDL
    /// in the opening's transaction, `PostgreSQLStore+Migration.swift`).
    var lockTimeoutSetting: String { "SET LOCAL lock_timeout = \(lockTimeout)" }
}
