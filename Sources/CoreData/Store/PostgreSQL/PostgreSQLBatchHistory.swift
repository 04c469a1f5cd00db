import Foundation

// Persistent history of batch requests on PostgreSQL, as the SQLite store writes it
// (`SQLiteBatchHistory.swift`): with NSPersistentHistoryTrackingKey on, a batch insert, update or
// delete that changes rows records, in its own transaction, one `ATRANSACTION` row (the author
// and name of the context that executed it) and one `ACHANGE` row per changed row, written by
// `INSERT INTO "ACHANGE" … SELECT` over the rows the request touches with the request's own
// condition, so a batch of a million rows stays a few statements. Change keys are numbered in
// the statement (`Z_MAX` + `row_number()`).
//
// Keys: the recorder locks the `Z_PRIMARYKEY` rows of changes (16001) and transactions (16002)
// when it begins, in `Z_ENT` order as every save takes them, and holds them to the commit. A batch
// update or delete has locked the rows it changes before (``PostgreSQLStore/lockRows(of:where:_:on:)``),
// as a save locks its rows before history's keys, so the two never wait for each other in a cycle: its
// change and transaction numbers are then the next ones, and transaction numbers follow the
// commits across servers, as a save's do (`PostgreSQLStore+History.swift`). A batch that
// changed nothing writes no transaction and takes no number.

/// The history of one batch request, written inside its transaction on the writer.
internal struct PostgreSQLBatchHistory {
    private let history: SQLiteHistory
    private let store: PostgreSQLStore
    /// The transaction's number, written at the end if the batch recorded a change.
    let transaction: Int64
    /// The last change key handed out: the next change row is numbered after it.
    private var lastChange: Int64
    private var changeCount = 0

    /// The history of a batch request on `store`; `nil` when the store does not track history.
    init?(store: PostgreSQLStore, on connection: any PostgreSQLConnection) throws {
        guard let history = store.history else { return nil }
        self.history = history
        self.store = store
        let rows = try connection.execute("""
            SELECT "Z_MAX" FROM "Z_PRIMARYKEY" WHERE "Z_ENT" IN ($1, $2) ORDER BY "Z_ENT" FOR UPDATE
            """, [.int(SQLiteHistory.changeEntity), .int(SQLiteHistory.transactionEntity)])
        guard rows.count == 2 else {
            throw CoreDataError.make(.persistentStoreSave, "Z_PRIMARYKEY has no rows for persistent history in the PostgreSQL store at \(store.location)")
        }
        lastChange = rows.int64(0, 0)
        transaction = try PrimaryKeys.advance(rows.int64(1, 0), table: "ATRANSACTION")
    }

    /// Records a change of `type` for each row of `root`'s table (aliased `t0`) that `condition`
    /// selects (every row for `nil`), its `?`s bound to `bindings`: an update's mask names the
    /// properties `changed`, a delete keeps its tombstone values. Only tracked entities' rows.
    mutating func record(_ type: NSPersistentHistoryChangeType, root: NSEntityDescription, where condition: String?,
                         _ bindings: [PostgreSQLParameter], changed: [Int] = [], on connection: any PostgreSQLConnection) throws {
        guard let sql = history.batchChangeInsert(type, root: root, where: condition, changed: changed, schema: store.schema, spelling: Self.spelling) else { return }
        let added = try connection.execute(PredicateSQLCompiler.Dialect.numberedParameters(sql),
                                           [.int(lastChange), .int(transaction)] + bindings).affectedRows
        lastChange += Int64(added)
        changeCount += added
    }

    /// Records an update of each row in `rows`, its mask naming the properties `changed`, in one statement.
    mutating func recordUpdates(_ rows: [(key: FetchedKey, changed: [Int])], on connection: any PostgreSQLConnection) throws {
        let tracked = rows.filter { history.tracks($0.key.entity) }
        guard !tracked.isEmpty else { return }
        let entities = "{" + tracked.map { String(store.schema.number(of: $0.key.entity)) }.joined(separator: ",") + "}"
        let keys = "{" + tracked.map { String($0.key.primaryKey) }.joined(separator: ",") + "}"
        let masks = "{" + tracked.map { PredicateSQLCompiler.hex(history.mask(of: $0.key.entity, changed: $0.changed)) }.joined(separator: ",") + "}"
        let added = try connection.execute("""
            INSERT INTO "ACHANGE" ("Z_PK", "Z_ENT", "Z_OPT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS") \
            SELECT $1::bigint + u.n, \(SQLiteHistory.changeEntity), NULL, \(NSPersistentHistoryChangeType.update.rawValue), u.e, u.k, $2::bigint, decode(u.m, 'hex') \
            FROM unnest($3::integer[], $4::bigint[], $5::text[]) WITH ORDINALITY AS u(e, k, m, n)
            """, [.int(lastChange), .int(transaction), .text(entities), .text(keys), .text(masks)]).affectedRows
        lastChange += Int64(added)
        changeCount += added
    }

    /// Ends the batch's history: if a change was recorded, the keys are counted in
    /// `Z_PRIMARYKEY` and the transaction row written with the executing context's
    /// `transactionAuthor` and `name`. The transaction's number, or `nil` if it recorded nothing.
    func finish(_ author: HistoryAuthor, on connection: any PostgreSQLConnection) throws -> Int64? {
        guard changeCount > 0 else { return nil }
        _ = try connection.execute("UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = $1 WHERE \"Z_ENT\" = $2", [.int(lastChange), .int(SQLiteHistory.changeEntity)])
        _ = try connection.execute("UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = $1 WHERE \"Z_ENT\" = $2", [.int(transaction), .int(SQLiteHistory.transactionEntity)])
        try store.writeHistoryTransaction(transaction, author: author.transactionAuthor, contextName: author.contextName, on: connection)
        return transaction
    }

    /// How this store writes a batch's change rows: quoted names, keys numbered from `Z_MAX`
    /// (the statement's first parameter, the transaction its second), tombstones as text.
    private static let spelling = BatchChangeSpelling(
        name: { "\"\($0)\"" },
        primaryKey: "?::bigint + row_number() OVER (ORDER BY t0.\(PostgreSQLStore.pk))",
        transaction: "?::bigint",
        bytes: { "decode('" + PredicateSQLCompiler.hex($0) + "', 'hex')" },
        tombstone: { column, attribute in tombstoneText(column, attribute.attributeType) })

    /// The SQL of a kept value of `column` as the text of a `ZTOMBSTONE<i>` column, as a save
    /// writes it (`PostgreSQLStore.tombstoneText(_:)`): numbers and dates in their exact
    /// decimal form, data in base64, UUIDs as their strings; `NULL` for object IDs.
    private static func tombstoneText(_ column: String, _ type: NSAttributeType) -> String {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType,
             .doubleAttributeType, .floatAttributeType, .decimalAttributeType, .dateAttributeType:
            return "\(column)::text"
        case .stringAttributeType, .URIAttributeType: return column
        case .UUIDAttributeType: return "upper(encode(\(column), 'hex')::uuid::text)"
        case .objectIDAttributeType: return "NULL"
        default: return "translate(encode(\(column), 'base64'), E'\\n', '')"
        }
    }
}
