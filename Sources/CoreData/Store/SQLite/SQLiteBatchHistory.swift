import Foundation

// Persistent history of batch requests. With NSPersistentHistoryTrackingKey on, a batch insert,
// update or delete that changes rows records, in its own SQLite transaction, what a save records:
// one ATRANSACTION row (the author and name of the context that executed it) and one ACHANGE row
// per changed row. The change rows are written by `INSERT INTO ACHANGE … SELECT` over the rows the
// request touches, run with the request's own condition just before its UPDATE or DELETE (whose
// WHERE sees the rows as they were), so that a batch of a million rows stays a few statements:
// the updated-properties mask is a constant and each tombstone a column, chosen by the row's
// `Z_ENT`. Apple's framework gathers the same rows through temporary tables
// (`gatherHistoryChangesFromTable:`). A batch that changed nothing writes no transaction; a
// store without the key does none of this.

/// The history of one batch request, written inside its transaction on the writer.
internal struct SQLiteBatchHistory {
    private let history: SQLiteHistory
    private let store: SQLiteStore
    /// The transaction's number: the next `ATRANSACTION` key, taken when the batch ends if it
    /// recorded a change.
    private let transaction: Int64
    /// `ACHANGE`'s `Z_MAX` when the batch began, held by a placeholder row (removed at the end)
    /// when the table's last row is below it: change rows are numbered by SQLite, after the last.
    private let placeholder: Int64?
    private var changeCount = 0

    /// The history of a batch request on `store`; `nil` when the store does not track history.
    init?(store: SQLiteStore, on db: SQLiteConnection) throws {
        guard let history = store.history else { return nil }
        self.history = history
        self.store = store
        transaction = try PrimaryKeys.advance(try db.scalarInt("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(SQLiteHistory.transactionEntity)") ?? 0,
                                              table: "ATRANSACTION")
        let reserved = try db.scalarInt("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(SQLiteHistory.changeEntity)") ?? 0
        let last = try db.scalarInt("SELECT max(Z_PK) FROM ACHANGE") ?? 0
        if last < reserved {
            try db.execute("INSERT INTO ACHANGE (Z_PK) VALUES (\(reserved))")
            placeholder = reserved
        } else {
            placeholder = nil
        }
    }

    /// Records a change of `type` for each row of `root`'s table (aliased `t0`) that `condition`
    /// selects (every row for `nil`), its `?`s bound to `bindings`: an update's mask names the
    /// properties `changed`, a delete keeps its tombstone columns. Only tracked entities' rows.
    mutating func record(_ type: NSPersistentHistoryChangeType, root: NSEntityDescription, where condition: String?,
                         _ bindings: [StoreValue], changed: [Int] = [], on db: SQLiteConnection) throws {
        guard let sql = history.batchChangeInsert(type, root: root, where: condition, changed: changed, schema: store.schema, spelling: Self.spelling) else { return }
        let statement = try db.cached(sql)
        defer { statement.reset() }
        statement.bind(transaction, at: 1)
        for (offset, value) in bindings.enumerated() { statement.bind(value, at: Int32(offset + 2)) }
        try statement.step()
        changeCount += db.changes
    }

    /// Records an update of each row in `rows`, its mask naming the properties `changed`.
    mutating func recordUpdates(_ rows: [(key: FetchedKey, changed: [Int])], on db: SQLiteConnection) throws {
        let statement = try db.cached("INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS) VALUES (NULL, \(SQLiteHistory.changeEntity), NULL, 1, ?, ?, ?, ?)")
        defer { statement.reset() }
        for (key, changed) in rows where history.tracks(key.entity) {
            statement.bind(Int64(store.schema.number(of: key.entity)), at: 1)
            statement.bind(key.primaryKey, at: 2)
            statement.bind(transaction, at: 3)
            statement.bind(history.mask(of: key.entity, changed: changed), at: 4)
            try statement.step()
            statement.resetKeepingBindings()
            changeCount += 1
        }
    }

    /// Ends the batch's history: the placeholder goes, and if a change was recorded, the keys
    /// are counted in `Z_PRIMARYKEY` and the transaction row written with the executing
    /// context's `transactionAuthor` and `name`.
    func finish(_ author: HistoryAuthor, on db: SQLiteConnection) throws {
        if let placeholder { try db.execute("DELETE FROM ACHANGE WHERE Z_PK = \(placeholder)") }
        guard changeCount > 0 else { return }
        try db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, (SELECT max(Z_PK) FROM ACHANGE)) WHERE Z_ENT = \(SQLiteHistory.changeEntity)")
        try db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = \(transaction) WHERE Z_ENT = \(SQLiteHistory.transactionEntity)")
        try history.writeTransaction(transaction, author: author.transactionAuthor, contextName: author.contextName, on: db)
    }

    /// How this store writes a batch's change rows: bare names, keys numbered by SQLite,
    /// tombstones as the columns' own values.
    private static let spelling = BatchChangeSpelling(
        name: { $0 }, primaryKey: "NULL", transaction: "?",
        bytes: { "X'" + PredicateSQLCompiler.hex($0) + "'" },
        tombstone: { column, _ in column })
}
