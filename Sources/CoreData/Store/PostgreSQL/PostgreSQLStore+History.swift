import Foundation

// Persistent history on PostgreSQL (NSPersistentHistoryTrackingKey): the SQLite store's three
// tables, `ATRANSACTION`, `ACHANGE` and `ATRANSACTIONSTRING`, with the same columns in PostgreSQL
// types, their keys in `Z_PRIMARYKEY` under Apple's ancillary entity numbers (16001 CHANGE,
// 16002 TRANSACTION, 16003 TRANSACTIONSTRING), written by every save in its own transaction.
// What is recorded (tracked entities, `ZCOLUMNS` masks) is the SQLite store's ``SQLiteHistory``;
// change rows are read back as that store reads them (``SQLiteHistory/change(_:type:entityNumber:primaryKey:store:entity:mask:tombstone:)``).
//
// Transaction numbers follow the commits: a save takes its transaction's key from
// `Z_PRIMARYKEY` (`UPDATE … RETURNING`), which holds that row's lock until it commits, so the next
// save on any server gets the next number only once this one has committed or rolled back. A
// fetch after a token therefore never misses a transaction that commits later with a smaller
// number. Keys held to the commit are taken in `Z_ENT` order (the model's entities with
// uniqueness constraints, then 16001, 16002, 16003), so saves never wait on each other in a cycle.
//
// Tombstones (`ZTOMBSTONE<i>`) are `text` columns, as their values are of every type.
// A store whose history has rows, opened without the key, opens read-only (as Apple's).
extension PostgreSQLStore {
    /// Opens read-only, as Apple's store and the SQLite store do, a store opened read-write
    /// without ``NSPersistentHistoryTrackingKey`` whose persistent history has rows: saves without
    /// the key would leave holes in the history other servers rely on. The open succeeds; saves
    /// then fail (134030). Once the history is purged, the store opens read-write without the key.
    func openReadOnlyIfHistoryWouldBeLost(_ connection: any PostgreSQLConnection) throws {
        guard !isReadOnly, !SQLiteHistory.isRequested(by: options) else { return }
        guard try connection.execute("SELECT to_regclass($1) IS NOT NULL", [.text("\"ATRANSACTION\"")]).text(0, 0) == "t",
              try connection.execute("SELECT EXISTS (SELECT 1 FROM \"ATRANSACTION\")", []).text(0, 0) == "t" else { return }
        CoreDataLog.warning("Store opened without NSPersistentHistoryTrackingKey but previously had been opened with NSPersistentHistoryTrackingKey - Forcing into Read Only mode store at '\(location)'")
        isReadOnly = true
    }

    /// Makes the history tables and their `Z_PRIMARYKEY` rows if the database lacks them, in the
    /// opening's transaction (under its advisory lock).
    func createHistoryTables(_ history: SQLiteHistory, on connection: any PostgreSQLConnection) throws {
        let tombstoneColumns = (0..<history.tombstoneCount).map { ", \"ZTOMBSTONE\($0)\" text" }.joined()
        guard try connection.execute("SELECT to_regclass($1) IS NULL", [.text("\"ACHANGE\"")]).text(0, 0) == "t" else {
            // Tables a smaller model made: the tombstone columns this model needs more of (only
            // those missing: an ALTER TABLE needs the table's owner and locks it).
            guard history.tombstoneCount > 0 else { return }
            let existing = try connection.execute("""
                SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'ACHANGE' \
                AND column_name LIKE 'ZTOMBSTONE%'
                """, [])
            for index in (Int(existing.int64(0, 0)))..<history.tombstoneCount {
                try connection.run("ALTER TABLE \"ACHANGE\" ADD COLUMN IF NOT EXISTS \"ZTOMBSTONE\(index)\" text")
            }
            return
        }
        try connection.run("""
            CREATE TABLE "ACHANGE" ("Z_PK" bigint PRIMARY KEY, "Z_ENT" integer, "Z_OPT" integer, "ZCHANGETYPE" integer, \
            "ZENTITY" integer, "ZENTITYPK" bigint, "ZTRANSACTIONID" bigint, "ZCOLUMNS" bytea\(tombstoneColumns));
            CREATE TABLE "ATRANSACTION" ("Z_PK" bigint PRIMARY KEY, "Z_ENT" integer, "Z_OPT" integer, "ZAUTHORTS" bigint, \
            "ZBUNDLEIDTS" bigint, "ZCONTEXTNAMETS" bigint, "ZPROCESSIDTS" bigint, "ZTIMESTAMP" double precision, "ZAUTHOR" text, \
            "ZBUNDLEID" text, "ZCONTEXTNAME" text, "ZPROCESSID" text, "ZQUERYGEN" bytea);
            CREATE TABLE "ATRANSACTIONSTRING" ("Z_PK" bigint PRIMARY KEY, "Z_ENT" integer, "Z_OPT" integer, "ZNAME" text);
            CREATE INDEX "ACHANGE_ZTRANSACTIONID_INDEX" ON "ACHANGE" ("ZTRANSACTIONID");
            CREATE INDEX "ATRANSACTION_ZAUTHORTS_INDEX" ON "ATRANSACTION" ("ZAUTHORTS");
            CREATE INDEX "ATRANSACTION_ZBUNDLEIDTS_INDEX" ON "ATRANSACTION" ("ZBUNDLEIDTS");
            CREATE INDEX "ATRANSACTION_ZCONTEXTNAMETS_INDEX" ON "ATRANSACTION" ("ZCONTEXTNAMETS");
            CREATE INDEX "ATRANSACTION_ZPROCESSIDTS_INDEX" ON "ATRANSACTION" ("ZPROCESSIDTS");
            CREATE INDEX "Z_TRANSACTION_TransactionAuthorIndex" ON "ATRANSACTION" ("ZAUTHOR" COLLATE "C");
            CREATE INDEX "Z_TRANSACTION_TransactionTimestampIndex" ON "ATRANSACTION" ("ZTIMESTAMP");
            CREATE UNIQUE INDEX "Z_TRANSACTIONSTRING_UNIQUE_NAME" ON "ATRANSACTIONSTRING" ("ZNAME" COLLATE "C")
            """)
        for (number, name) in [(SQLiteHistory.changeEntity, "CHANGE"), (SQLiteHistory.transactionEntity, "TRANSACTION"),
                               (SQLiteHistory.stringEntity, "TRANSACTIONSTRING")] {
            _ = try connection.execute("""
                INSERT INTO "Z_PRIMARYKEY" ("Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX") VALUES ($1, $2, 0, 0) ON CONFLICT ("Z_ENT") DO NOTHING
                """, [.int(number), .text(name)])
        }
    }

    // MARK: Recording a save

    /// Writes the history of one save inside its transaction: its change rows, then its
    /// transaction row; the transaction's number, or `nil` when the save changed no tracked
    /// entity (and wrote no history). `tombstones` are the kept values of deleted rows, by delete
    /// position (``tombstone(of:history:on:)``).
    func recordHistory(_ changes: SaveChanges, insertedKeys: [Int64], tombstones: [Int: [PostgreSQLParameter]], history: SQLiteHistory,
                       on connection: any PostgreSQLConnection) throws -> Int64? {
        let changeCount = history.changeCount(of: changes)
        guard changeCount > 0 else { return nil }
        // Keys in Z_ENT order: the changes' (16001) before the transaction's (16002).
        var key = try allocateHistoryKeys(SQLiteHistory.changeEntity, count: changeCount, on: connection)
        let transaction = try allocateHistoryKeys(SQLiteHistory.transactionEntity, count: 1, on: connection)
        try writeHistoryTransaction(transaction, author: changes.transactionAuthor, contextName: changes.contextName, on: connection)
        let tombstoneColumns = (0..<history.tombstoneCount).map { ", \"ZTOMBSTONE\($0)\"" }.joined()
        let tombstoneValues = (0..<history.tombstoneCount).map { ", $\($0 + 7)" }.joined()
        let noTombstone = [PostgreSQLParameter](repeating: .null, count: history.tombstoneCount)
        try history.forEachChange(of: changes, insertedKeys: insertedKeys) { type, entity, pk, mask, deletePosition in
            var kept = deletePosition.flatMap { tombstones[$0] } ?? noTombstone
            kept += noTombstone.prefix(history.tombstoneCount - kept.count)
            _ = try connection.execute("""
                INSERT INTO "ACHANGE" ("Z_PK", "Z_ENT", "Z_OPT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS"\(tombstoneColumns)) \
                VALUES ($1, \(SQLiteHistory.changeEntity), NULL, $2, $3, $4, $5, $6\(tombstoneValues))
                """, [.int(key), .int(type), .int(Int64(schema.number(of: entity))), .int(pk), .int(transaction), mask.map(PostgreSQLParameter.bytes) ?? .null] + kept)
            key += 1
        }
        return transaction
    }

    /// The server's clock now, in seconds since 2001 (`ZTIMESTAMP`): one clock for every server's
    /// saves. `clock_timestamp()`, not `now()` (the transaction's start): the transaction row is
    /// written under the lock of its number, so timestamps follow the numbers.
    static let serverTimestamp = "(extract(epoch from clock_timestamp()) - 978307200)"

    /// Writes the `ATRANSACTION` row numbered `transaction`: its author, context name, bundle
    /// and process (their names interned in `ATRANSACTIONSTRING`) and the time.
    func writeHistoryTransaction(_ transaction: Int64, author: String?, contextName: String?, on connection: any PostgreSQLConnection) throws {
        guard let history else { return }
        var strings: [PostgreSQLParameter] = []
        for name in [author, history.bundleID, contextName, history.processID] {
            strings.append(try name.map { .int(try intern($0, on: connection)) } ?? .null)
        }
        _ = try connection.execute("""
            INSERT INTO "ATRANSACTION" ("Z_PK", "Z_ENT", "Z_OPT", "ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS", "ZTIMESTAMP") \
            VALUES ($1, \(SQLiteHistory.transactionEntity), NULL, $2, $3, $4, $5, \(Self.serverTimestamp))
            """, [.int(transaction)] + strings)
    }

    /// The kept values of a row about to be deleted (its entity's tombstone attributes, read in
    /// the save's transaction), as the text of the tombstone columns; `nil` when its entity keeps
    /// none (no read) or the row is gone.
    func tombstone(of id: NSManagedObjectID, history: SQLiteHistory, on connection: any PostgreSQLConnection) throws -> [PostgreSQLParameter]? {
        let kept = history.tombstones[id.entity.layout.entityNumber]
        guard !kept.isEmpty, history.tracks(id.entity), let pk = id.primaryKey, let row = try readRow(id.entity, pk, on: connection) else { return nil }
        return kept.map { Self.tombstoneText(row.values[$0]) }
    }

    /// A kept value as the text of a `ZTOMBSTONE<i>` column (`text`: the columns hold values of
    /// every type): numbers and dates (seconds since 2001) in Swift's exact decimal form, data in
    /// base64, UUIDs and URLs as their strings.
    private static func tombstoneText(_ value: StoreValue) -> PostgreSQLParameter {
        switch value {
        case .null, .object, .objectID: return .null
        case .int(let v): return .text(String(v))
        case .bool(let v): return .text(v ? "1" : "0")
        case .double(let v): return .text(String(v))
        case .string(let v): return .text(v)
        case .date(let v): return .text(String(v.timeIntervalSinceReferenceDate))
        case .data(let v): return .text(v.base64EncodedString())
        case .uuid(let v): return .text(v.uuidString)
        case .url(let v): return .text(v.absoluteString)
        case .decimal(let v): return .text(v.description)
        }
    }

    /// A tombstone column's text as the value of `attribute` (the reverse of ``tombstoneText(_:)``).
    private static func tombstoneValue(_ text: String, _ attribute: NSAttributeDescription) -> StoreValue? {
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType: return Int64(text).map(StoreValue.int)
        case .booleanAttributeType: return .bool(text == "1")
        case .doubleAttributeType, .floatAttributeType: return Double(text).map(StoreValue.double)
        case .decimalAttributeType: return Decimal(storedText: text).map(StoreValue.decimal)
        case .stringAttributeType: return .string(text)
        case .dateAttributeType: return Double(text).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .UUIDAttributeType: return UUID(uuidString: text).map(StoreValue.uuid)
        case .URIAttributeType: return URL(string: text).map(StoreValue.url)
        default: return Data(base64Encoded: text).map(StoreValue.data)
        }
    }

    /// `count` keys of the ancillary entity `number`: the first of them. The row stays locked
    /// until the caller's transaction ends.
    private func allocateHistoryKeys(_ number: Int64, count: Int, on connection: any PostgreSQLConnection) throws -> Int64 {
        let rows = try connection.execute("UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = \"Z_MAX\" + $1 WHERE \"Z_ENT\" = $2 RETURNING \"Z_MAX\"",
                                          [.int(Int64(count)), .int(number)])
        guard rows.count == 1 else {
            throw CoreDataError.make(.persistentStoreSave, "Z_PRIMARYKEY has no row for the persistent history entity \(number) in the PostgreSQL store at \(location)")
        }
        guard !rows.isNull(0, 0) else { throw PrimaryKeys.missingMaximum(table: "persistent history entity \(number)") }
        return try PrimaryKeys.advance(rows.int64(0, 0), by: 0, table: "persistent history entity \(number)") - Int64(count) + 1
    }

    /// The `ATRANSACTIONSTRING` key of `name`, added if new. Another server may add the same
    /// name meanwhile: its row is then the one.
    private func intern(_ name: String, on connection: any PostgreSQLConnection) throws -> Int64 {
        let find = "SELECT \"Z_PK\" FROM \"ATRANSACTIONSTRING\" WHERE \"ZNAME\" = $1"
        let found = try connection.execute(find, [.text(name)])
        if found.count > 0 { return found.int64(0, 0) }
        let key = try allocateHistoryKeys(SQLiteHistory.stringEntity, count: 1, on: connection)
        let inserted = try connection.execute("""
            INSERT INTO "ATRANSACTIONSTRING" ("Z_PK", "Z_ENT", "Z_OPT", "ZNAME") VALUES ($1, \(SQLiteHistory.stringEntity), NULL, $2) \
            ON CONFLICT DO NOTHING
            """, [.int(key), .text(name)])
        if inserted.affectedRows == 1 { return key }
        let again = try connection.execute(find, [.text(name)])
        guard again.count > 0 else {
            throw CoreDataError.make(.persistentStoreSave, "Can't record the name '\(name)' in the persistent history of the PostgreSQL store at \(location)")
        }
        return again.int64(0, 0)
    }

    // MARK: Reading and purging (HistoryRecordingStore)

    /// The condition on `ATRANSACTION` (aliased `t`) of a fetch after `bound` (`after`) or a
    /// purge before it, with its parameter; `nil` for every row.
    private static func historyCondition(_ bound: HistoryBound?, after: Bool) -> (String, PostgreSQLParameter)? {
        let comparison = after ? ">" : "<"
        switch bound {
        case .number(let number)?: return ("t.\"Z_PK\" \(comparison) $1", .int(number))
        case .timestamp(let seconds)?: return ("t.\"ZTIMESTAMP\" \(comparison) $1", .double(seconds))
        case nil: return nil
        }
    }

    func lastHistoryTransaction() throws -> Int64 {
        try read { connection in
            try connection.execute("SELECT greatest(coalesce((SELECT max(\"Z_PK\") FROM \"ATRANSACTION\"), 0), coalesce((SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_ENT\" = \(SQLiteHistory.transactionEntity)), 0))", []).int64(0, 0)
        }
    }

    func checkHistoryToken(_ number: Int64) throws {
        guard number >= 0 else { return } // (0: taken before the store had a transaction; checked too)
        let current = try read { connection in
            try connection.execute(HistoryTokenCheck.sql(transactions: "\"ATRANSACTION\"", primaryKeys: "\"Z_PRIMARYKEY\"", pk: "\"Z_PK\"",
                                                         ent: "\"Z_ENT\"", max: "\"Z_MAX\"", parameter: "$1::bigint"),
                                   [.int(number)]).int64(0, 0) != 0
        }
        guard current else { throw historyTokenExpired(location: location) }
    }

    func countHistoryChanges(after bound: HistoryBound?) throws -> Int {
        guard history != nil else { return 0 }
        let condition = Self.historyCondition(bound, after: true)
        return try read { connection in
            Int(try connection.execute("SELECT count(*) FROM \"ACHANGE\" c JOIN \"ATRANSACTION\" t ON c.\"ZTRANSACTIONID\" = t.\"Z_PK\""
                                       + (condition.map { " WHERE " + $0.0 } ?? ""), condition.map { [$0.1] } ?? []).int64(0, 0))
        }
    }

    /// The transactions after `bound` and their changes, read in one snapshot (`REPEATABLE READ`),
    /// so that a purge or a save meanwhile can't part a transaction from its changes.
    func fetchHistory(after bound: HistoryBound?, withChanges: Bool) throws -> [NSPersistentHistoryTransaction] {
        guard let history else { return [] }
        let condition = Self.historyCondition(bound, after: true)
        let whereClause = condition.map { " WHERE " + $0.0 } ?? ""
        let parameters = condition.map { [$0.1] } ?? []
        let storeID: String = identifier
        return try read { connection in
            try connection.transaction {
                try connection.run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                let strings = ["AUTHOR", "BUNDLEID", "CONTEXTNAME", "PROCESSID"].map {
                    "(SELECT s.\"ZNAME\" FROM \"ATRANSACTIONSTRING\" s WHERE s.\"Z_PK\" = t.\"Z\($0)TS\")"
                }.joined(separator: ", ")
                let rows = try connection.execute("SELECT t.\"Z_PK\", t.\"ZTIMESTAMP\", \(strings) FROM \"ATRANSACTION\" t\(whereClause) ORDER BY t.\"Z_PK\"",
                                                  parameters)
                var transactions: [NSPersistentHistoryTransaction] = []
                var byNumber: [Int64: NSPersistentHistoryTransaction] = [:]
                for row in 0..<rows.count {
                    func text(_ column: Int) -> String? { rows.isNull(row, column) ? nil : rows.text(row, column) }
                    let process = text(5) ?? ""
                    let transaction = NSPersistentHistoryTransaction(
                        timestamp: Date(timeIntervalSinceReferenceDate: rows.double(row, 1)), storeID: storeID,
                        bundleID: text(3) ?? process, processID: process, contextName: text(4), author: text(2),
                        transactionNumber: rows.int64(row, 0))
                    transactions.append(transaction)
                    if withChanges {
                        transaction.changes = []
                        byNumber[transaction.transactionNumber] = transaction
                    }
                }
                guard withChanges else { return transactions }
                let tombstoneColumns = (0..<history.tombstoneCount).map { ", c.\"ZTOMBSTONE\($0)\"" }.joined()
                let changes = try connection.execute("""
                    SELECT c."Z_PK", c."ZTRANSACTIONID", c."ZCHANGETYPE", c."ZENTITY", c."ZENTITYPK", c."ZCOLUMNS"\(tombstoneColumns) FROM "ACHANGE" c \
                    JOIN "ATRANSACTION" t ON t."Z_PK" = c."ZTRANSACTIONID"\(whereClause) ORDER BY c."Z_PK"
                    """, parameters)
                for row in 0..<changes.count {
                    guard let transaction = byNumber[changes.int64(row, 1)] else { continue }
                    let entityNumber = changes.int64(row, 3)
                    guard let change = history.change(changes.int64(row, 0), type: changes.int64(row, 2), entityNumber: entityNumber,
                                                      primaryKey: changes.int64(row, 4), store: self, entity: schema.entity(numbered: entityNumber),
                                                      mask: { changes.isNull(row, 5) ? nil : changes.bytes(row, 5) },
                                                      tombstone: { position, attribute in
                                                          changes.isNull(row, 6 + position) ? nil : Self.tombstoneValue(changes.text(row, 6 + position), attribute)
                                                      }) else { continue }
                    change.linkedTransaction = transaction
                    transaction.changes!.append(change)
                }
                return transactions
            }
        }
    }

    func deleteHistory(before bound: HistoryBound?) throws -> Int {
        guard !isReadOnly else {
            throw CoreDataError.make(.persistentStoreSave, "The PostgreSQL store at \(location) is read-only; its persistent history was not purged")
        }
        let condition = Self.historyCondition(bound, after: false)
        let whereClause = condition.map { " WHERE " + $0.0 } ?? ""
        let parameters = condition.map { [$0.1] } ?? []
        do {
            return try inTransaction { connection in
                _ = try connection.execute("DELETE FROM \"ACHANGE\" WHERE \"ZTRANSACTIONID\" IN (SELECT t.\"Z_PK\" FROM \"ATRANSACTION\" t\(whereClause))",
                                           parameters)
                return try connection.execute("DELETE FROM \"ATRANSACTION\" AS t\(whereClause)", parameters).affectedRows
            }
        } catch let error as PostgreSQLError {
            throw Self.error(error, .persistentStoreSave, "Can't purge the persistent history of the PostgreSQL store at \(location)")
        } catch let failure as PostgreSQLCommitOutcomeUnknown {
            throw commitOutcomeUnknownError(failure)
        }
    }
}

extension PostgreSQLStore: HistoryRecordingStore {}
