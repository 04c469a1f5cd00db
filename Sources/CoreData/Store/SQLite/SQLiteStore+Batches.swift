import Foundation

// Reads by lists of primary keys: the batches of a batched fetch (`fetchBatchSize`) and the
// related rows of `relationshipKeyPathsForPrefetching`, one statement per list.
extension SQLiteStore {
    /// The most keys bound to one statement (SQLite allows 32766 variables).
    static let maximumKeysPerStatement = 8192

    /// `?, ?, …` for `count` keys, padded to a power of two (the last key repeated) so that the
    /// statement cache holds a few statements per table, not one per list length.
    private static func keyList(_ keys: ArraySlice<Int64>) -> (sql: String, bindings: [Int64]) {
        var size = 8
        while size < keys.count { size *= 2 }
        var bindings = Array(keys)
        if let last = keys.last { bindings.append(contentsOf: repeatElement(last, count: size - keys.count)) }
        return (Array(repeating: "?", count: size).joined(separator: ", "), bindings)
    }

    /// Runs `sql(list)` for each chunk of `keys`, binding the chunk's keys first.
    private func forEachChunk(of keys: [Int64], on db: SQLiteConnection, _ sql: (String) -> String,
                              _ body: (SQLiteStatement) throws -> Void) throws {
        var start = 0
        while start < keys.count {
            let end = min(start + Self.maximumKeysPerStatement, keys.count)
            let (list, bindings) = Self.keyList(keys[start..<end])
            let statement = try readStatement(db, sql(list))
            defer { statement.reset() }
            for (offset, key) in bindings.enumerated() { statement.bind(key, at: Int32(offset + 1)) }
            try body(statement)
            start = end
        }
    }

    /// The rows of `root`'s table whose primary keys are `primaryKeys` (`WHERE Z_PK IN (…)`).
    func readRows(primaryKeys: [Int64], root: NSEntityDescription, on db: SQLiteConnection) throws -> [FetchedRow] {
        let decoder = self.decoder(for: root)
        var rows: [FetchedRow] = []
        rows.reserveCapacity(primaryKeys.count)
        try forEachChunk(of: primaryKeys, on: db, { "SELECT \(decoder.selectList) FROM \(schema.table(of: root)) t0 WHERE t0.Z_PK IN (\($0))" }) { statement in
            while try statement.step() {
                if let row = try decodeRow(statement, decoder: decoder) { rows.append(row) }
            }
        }
        return rows
    }

    /// The destination rows of a to-many relationship for every owner in `owners`, with the
    /// owner's key read from the foreign key or join-table column after the row's columns.
    func readRelatedRows(for relationship: NSRelationshipDescription, owners: [Int64], on db: SQLiteConnection) throws -> [RelatedRow] {
        guard let destination = relationship.destinationEntity else { return [] }
        let decoder = self.decoder(for: destination)
        guard let (from, ownerColumn, order) = schema.relatedRowsSource(relationship) else {
            if relationship.isTransient { return [] }
            throw SQLiteSchema.unmapped(relationship)
        }
        let ownerIndex = Int32(decoder.columnCount)
        var result: [RelatedRow] = []
        try forEachChunk(of: owners, on: db, {
            "SELECT \(decoder.selectList), \(ownerColumn) FROM \(from) WHERE \(ownerColumn) IN (\($0)) ORDER BY \(ownerColumn), \(order)t0.Z_PK"
        }) { statement in
            while try statement.step() {
                if let row = try decodeRow(statement, decoder: decoder) { result.append(RelatedRow(owner: statement.int64(ownerIndex), row: row)) }
            }
        }
        return result
    }
}
