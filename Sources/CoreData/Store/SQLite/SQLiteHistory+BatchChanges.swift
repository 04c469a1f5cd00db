import Foundation

// The change rows of a batch request, one statement for all of them, shared by the SQLite
// (`SQLiteBatchHistory.swift`) and PostgreSQL (`PostgreSQLBatchHistory.swift`) stores: an
// `INSERT INTO ACHANGE … SELECT` over the rows the request touches, with the request's own
// condition. The updated-properties mask is a constant and each tombstone a column, chosen by
// the row's `Z_ENT`; the stores differ only in how they spell names, keys and values.

/// How a store spells ``SQLiteHistory/batchChangeInsert(_:root:where:changed:schema:spelling:)``.
internal struct BatchChangeSpelling: Sendable {
    /// A table or column name as the store's SQL writes it (`Z_ENT`, or `"Z_ENT"`).
    var name: @Sendable (String) -> String
    /// The value of a change row's `Z_PK` (SQLite numbers the rows itself: `NULL`).
    var primaryKey: String
    /// The placeholder of the transaction's number (the statement's first, after the key's if
    /// ``primaryKey`` has one; the condition's follow).
    var transaction: String
    /// A literal of bytes: an update's mask.
    var bytes: @Sendable (Data) -> String
    /// A tombstone column's value, from the column (`t0.<column>`) of the attribute kept.
    var tombstone: @Sendable (_ column: String, _ attribute: NSAttributeDescription) -> String
}

extension SQLiteHistory {
    /// The statement recording a change of `type` for each row of `root`'s table (aliased `t0`)
    /// that `condition` selects (every row for `nil`; its placeholders follow the transaction's):
    /// an update's mask names the properties `changed`, a delete keeps its tombstone values.
    /// Only tracked entities' rows; `nil` when none of `root`'s family is tracked.
    ///
    /// ```swift
    /// history.batchChangeInsert(.delete, root: item, where: "t0.ZSIZE > ?", changed: [], schema: schema, spelling: spelling)
    /// // INSERT INTO ACHANGE (Z_PK, …, ZTOMBSTONE0) SELECT NULL, 16001, NULL, 2, t0.Z_ENT, t0.Z_PK, ?, NULL, … FROM ZITEM t0 WHERE (t0.ZSIZE > ?)
    /// ```
    func batchChangeInsert(_ type: NSPersistentHistoryChangeType, root: NSEntityDescription, where condition: String?,
                           changed: [Int], schema: SQLiteSchema, spelling: BatchChangeSpelling) -> String? {
        let family = schema.entities.filter { $0.rootEntity === root.rootEntity }
        let tracked = family.filter(tracks)
        guard !tracked.isEmpty else { return nil }
        let entityColumn = "t0." + spelling.name("Z_ENT")
        var conditions = condition.map { ["(\($0))"] } ?? []
        if tracked.count < family.count {
            conditions.append("\(entityColumn) IN (\(tracked.map { String(schema.number(of: $0)) }.joined(separator: ", ")))")
        }
        func byEntity(_ value: (NSEntityDescription) -> String?) -> String {
            let cases = tracked.compactMap { entity in value(entity).map { " WHEN \(schema.number(of: entity)) THEN \($0)" } }.joined()
            return cases.isEmpty ? "NULL" : "CASE \(entityColumn)\(cases) END"
        }
        var columns = ["Z_PK", "Z_ENT", "Z_OPT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS"]
        var values = [spelling.primaryKey, String(Self.changeEntity), "NULL", String(type.rawValue), entityColumn,
                      "t0." + spelling.name("Z_PK"), spelling.transaction,
                      type == .update ? byEntity { spelling.bytes(mask(of: $0, changed: changed)) } : "NULL"]
        if type == .delete {
            for position in 0..<tombstoneCount {
                let kept = byEntity { entity in
                    let indexes = tombstones[entity.layout.entityNumber]
                    guard position < indexes.count, let attribute = entity.layout.properties[indexes[position]] as? NSAttributeDescription,
                          let column = schema.storage(of: entity).columns[indexes[position]] else { return nil }
                    return spelling.tombstone("t0.\(column)", attribute)
                }
                guard kept != "NULL" else { continue }
                columns.append("ZTOMBSTONE\(position)")
                values.append(kept)
            }
        }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return "INSERT INTO \(spelling.name("ACHANGE")) (\(columns.map(spelling.name).joined(separator: ", "))) "
            + "SELECT \(values.joined(separator: ", ")) FROM \(schema.table(of: root)) t0\(whereClause)"
    }
}
