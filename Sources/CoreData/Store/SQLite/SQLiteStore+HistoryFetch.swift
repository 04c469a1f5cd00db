import CSQLite
import Foundation

// Persistent history, read and purged: the rows `SQLiteStore+History.swift` records (or Apple's
// framework wrote) made into `NSPersistentHistoryTransaction`s and `NSPersistentHistoryChange`s,
// for `NSPersistentHistoryChangeRequest`. Apple's rules: a fetch after a transaction number is
// `Z_PK > N`, a purge before one `Z_PK < N`; after a date `ZTIMESTAMP > t`, before `< t`. Columns
// are read by name (an upgraded store may have them in another order); a transaction's strings
// come from `ATRANSACTIONSTRING`, else from the older VARCHAR columns.
extension SQLiteStore {
    /// The condition on `ATRANSACTION` (aliased `t`) of a fetch after `bound` (`after`) or a
    /// purge before it, with its binding; `nil` for every row.
    private static func historyCondition(_ bound: HistoryBound?, after: Bool) -> (String, StoreValue)? {
        let comparison = after ? ">" : "<"
        switch bound {
        case .number(let number)?: return ("t.Z_PK \(comparison) ?", .int(number))
        case .timestamp(let seconds)?: return ("t.ZTIMESTAMP \(comparison) ?", .double(seconds))
        case nil: return nil
        }
    }

    /// The number of the store's last transaction, purged or not (the transactions' key
    /// sequence, so that a purge never takes the current token back); 0 when it has none.
    func lastHistoryTransaction() throws -> Int64 {
        try withReader { db in
            try db.scalarInt("SELECT max(coalesce((SELECT max(Z_PK) FROM ATRANSACTION), 0), coalesce((SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(SQLiteHistory.transactionEntity)), 0))") ?? 0
        }
    }

    /// Throws `NSPersistentHistoryTokenExpiredError` (134301) when history after the
    /// transaction `number` of a token (from 1 on) was purged: ``HistoryTokenCheck``.
    func checkHistoryToken(_ number: Int64) throws {
        guard number >= 0 else { return } // (0: taken before the store had a transaction; checked too)
        let current = try withReader { db in
            let statement = try db.cached(HistoryTokenCheck.sql(transactions: "ATRANSACTION", primaryKeys: "Z_PRIMARYKEY",
                                                                 pk: "Z_PK", ent: "Z_ENT", max: "Z_MAX", parameter: "?1"))
            defer { statement.reset() }
            statement.bind(number, at: 1)
            return try statement.step() && statement.int64(0) != 0
        }
        guard current else { throw historyTokenExpired(location: url?.path ?? "") }
    }

    func countHistoryChanges(after bound: HistoryBound?) throws -> Int {
        guard history != nil else { return 0 }
        let condition = Self.historyCondition(bound, after: true)
        return try withReader { db in
            let statement = try db.cached("SELECT count(*) FROM ACHANGE c JOIN ATRANSACTION t ON c.ZTRANSACTIONID = t.Z_PK"
                                          + (condition.map { " WHERE " + $0.0 } ?? ""))
            defer { statement.reset() }
            if let condition { statement.bind(condition.1, at: 1) }
            return try statement.step() ? Int(statement.int64(0)) : 0
        }
    }

    /// The transactions after `bound`, oldest first, with their changes if `withChanges`.
    func fetchHistory(after bound: HistoryBound?, withChanges: Bool) throws -> [NSPersistentHistoryTransaction] {
        guard let history else { return [] }
        let condition = Self.historyCondition(bound, after: true)
        let whereClause = condition.map { " WHERE " + $0.0 } ?? ""
        let storeID: String = identifier
        // One snapshot for the transactions and their changes: a purge or a save between the
        // two reads would give a transaction changes it lacks, or none.
        return try withReader { db in try db.snapshot {
            let names = ["AUTHOR", "BUNDLEID", "CONTEXTNAME", "PROCESSID"]
            let columns = try SQLiteHistory.columns(of: "ATRANSACTION", on: db)
            let hasStrings = try Self.tableExists("ATRANSACTIONSTRING", in: db)
            // Each string: its interned form, else the old VARCHAR column, else NULL.
            let strings = names.map { name -> String in
                var sources: [String] = []
                if hasStrings && columns.contains("Z\(name)TS") {
                    sources.append("(SELECT s.ZNAME FROM ATRANSACTIONSTRING s WHERE s.Z_PK = t.Z\(name)TS)")
                }
                if columns.contains("Z\(name)") { sources.append("t.Z\(name)") }
                return sources.isEmpty ? "NULL" : sources.count == 1 ? sources[0] : "coalesce(\(sources.joined(separator: ", ")))"
            }.joined(separator: ", ")
            let statement = try readStatement(db, "SELECT t.Z_PK, t.ZTIMESTAMP, \(strings) FROM ATRANSACTION t\(whereClause) ORDER BY t.Z_PK")
            defer { statement.reset() }
            if let condition { statement.bind(condition.1, at: 1) }
            var transactions: [NSPersistentHistoryTransaction] = []
            func text(_ column: Int32) -> String? { statement.isNull(column) ? nil : statement.string(column) }
            while try statement.step() {
                let process = text(5) ?? ""
                transactions.append(NSPersistentHistoryTransaction(
                    timestamp: Date(timeIntervalSinceReferenceDate: statement.double(1)), storeID: storeID,
                    bundleID: text(3) ?? process, processID: process, contextName: text(4), author: text(2),
                    transactionNumber: statement.int64(0)))
            }
            if withChanges {
                historyFetchBetweenReadsHook?()
                try readChanges(into: transactions, whereClause: whereClause, binding: condition?.1, history: history, on: db)
            }
            return transactions
        } }
    }

    /// Reads the changes of `transactions` (those `whereClause` selects) and gives each
    /// transaction its own, in order.
    private func readChanges(into transactions: [NSPersistentHistoryTransaction], whereClause: String, binding: StoreValue?,
                             history: SQLiteHistory, on db: SQLiteConnection) throws {
        var byNumber: [Int64: NSPersistentHistoryTransaction] = [:]
        for transaction in transactions {
            transaction.changes = []
            byNumber[transaction.transactionNumber] = transaction
        }
        let columns = try SQLiteHistory.columns(of: "ACHANGE", on: db)
        var tombstoneCount = 0
        while tombstoneCount < history.tombstoneCount && columns.contains("ZTOMBSTONE\(tombstoneCount)") { tombstoneCount += 1 }
        let tombstones = (0..<tombstoneCount).map { ", c.ZTOMBSTONE\($0)" }.joined()
        let sql = "SELECT c.Z_PK, c.ZTRANSACTIONID, c.ZCHANGETYPE, c.ZENTITY, c.ZENTITYPK, c.ZCOLUMNS\(tombstones) FROM ACHANGE c JOIN ATRANSACTION t ON t.Z_PK = c.ZTRANSACTIONID\(whereClause) ORDER BY c.Z_PK"
        let statement = try readStatement(db, sql)
        defer { statement.reset() }
        if let binding { statement.bind(binding, at: 1) }
        while try statement.step() {
            guard let transaction = byNumber[statement.int64(1)] else { continue }
            let entityNumber = statement.int64(3)
            guard let change = history.change(statement.int64(0), type: statement.int64(2), entityNumber: entityNumber, primaryKey: statement.int64(4),
                                              store: self, entity: entity(numbered: entityNumber),
                                              mask: { statement.isNull(5) ? nil : statement.data(5) },
                                              tombstone: { position, attribute in
                                                  let column = Int32(6 + position)
                                                  guard position < tombstoneCount, !statement.isNull(column) else { return nil }
                                                  return Self.tombstoneValue(statement, column, attribute)
                                              }) else { continue }
            change.linkedTransaction = transaction
            transaction.changes!.append(change)
        }
    }

    /// A tombstone column's value, stored as `attribute`'s own column stores it.
    private static func tombstoneValue(_ statement: SQLiteStatement, _ column: Int32, _ attribute: NSAttributeDescription) -> StoreValue? {
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType: return .int(statement.int64(column))
        case .booleanAttributeType: return .bool(statement.int64(column) != 0)
        case .doubleAttributeType, .floatAttributeType: return .double(statement.double(column))
        case .decimalAttributeType: return Decimal(storedText: statement.string(column)).map(StoreValue.decimal)
        case .stringAttributeType: return .string(statement.string(column))
        case .dateAttributeType: return .date(Date(timeIntervalSinceReferenceDate: statement.double(column)))
        case .UUIDAttributeType:
            return UUID(storedBytes: statement.data(column)).map(StoreValue.uuid) ?? UUID(uuidString: statement.string(column)).map(StoreValue.uuid)
        case .URIAttributeType: return URL(string: statement.string(column)).map(StoreValue.url)
        default: return .data(statement.data(column))
        }
    }

    /// Purges the transactions before `bound` (every one for `nil`) and their changes, in one
    /// transaction on the writer; how many transactions went. The strings stay, as Apple's do.
    func deleteHistory(before bound: HistoryBound?) throws -> Int {
        guard !isReadOnly else {
            throw CoreDataError.make(.persistentStoreSave, "The store at \(url?.path ?? "") is read-only; its persistent history was not purged")
        }
        let condition = Self.historyCondition(bound, after: false)
        let whereClause = condition.map { " WHERE " + $0.0 } ?? ""
        return try withWriter { db in
            try db.transaction {
                let changes = try db.cached("DELETE FROM ACHANGE WHERE ZTRANSACTIONID IN (SELECT t.Z_PK FROM ATRANSACTION t\(whereClause))")
                defer { changes.reset() }
                if let condition { changes.bind(condition.1, at: 1) }
                try changes.step()
                let transactions = try db.cached("DELETE FROM ATRANSACTION AS t\(whereClause)")
                defer { transactions.reset() }
                if let condition { transactions.bind(condition.1, at: 1) }
                try transactions.step()
                return db.changes
            }
        }
    }
}
