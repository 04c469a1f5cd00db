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
/// Both are set for the transaction only (`set_config(…, true)`, as `SET LOCAL`) in the round
/// trip of the writer's `BEGIN`, so readers that keep a snapshot open are not ended.
internal struct PostgreSQLTimeouts {
    /// `lock_timeout`, in milliseconds.
    let lockTimeout: Int

    /// The lock timeout when ``NSPersistentStoreTimeoutOption`` is absent, in milliseconds.
    static let defaultLockTimeout = 30_000
    /// How much longer than the lock timeout a transaction may sit idle, in milliseconds.
    static let idleGrace = 30_000
    /// SQLSTATE `lock_not_available`: `lock_timeout` expired.
    static let lockNotAvailable = "55P03"

    /// The statement that sets them for one transaction (one statement: a pipeline takes one an
    /// entry); `set_config`'s third argument `true` is `SET LOCAL`. Built once, sent each save.
    let statement: String
    /// ``statement`` for the short transaction that takes a save's keys, which also turns
    /// `synchronous_commit` off: its commit need not wait for the disk
    /// (``PostgreSQLConnectionPool/inTransaction(prelude:_:)``).
    let keyTransactionStatement: String

    /// The timeouts a store's options ask for.
    init(options: [AnyHashable: Any]?) {
        if let seconds = (options?[NSPersistentStoreTimeoutOption] as? NSNumber)?.doubleValue, seconds.isFinite, seconds >= 0 {
            // 0 would mean "no timeout" to PostgreSQL: the shortest wait instead.
            lockTimeout = max(1, Int(min(seconds, 2_000_000) * 1000))
        } else {
            lockTimeout = Self.defaultLockTimeout
        }
        let idleTimeout = lockTimeout + Self.idleGrace
        let timeouts = [("lock_timeout", String(lockTimeout)), ("idle_in_transaction_session_timeout", String(idleTimeout))]
        statement = Self.statement(setting: timeouts)
        keyTransactionStatement = Self.statement(setting: [("synchronous_commit", "off")] + timeouts)
    }

    /// `SELECT set_config(name, value, true), …` of `settings`.
    private static func statement(setting settings: [(name: String, value: String)]) -> String {
        "SELECT " + settings.map { "set_config('\($0.name)', '\($0.value)', true)" }.joined(separator: ", ")
    }

    /// The statement that sets the lock timeout for the rest of a transaction (a migration's DDL
    /// in the opening's transaction, `PostgreSQLStore+Migration.swift`).
    var lockTimeoutSetting: String { "SET LOCAL lock_timeout = \(lockTimeout)" }
}
