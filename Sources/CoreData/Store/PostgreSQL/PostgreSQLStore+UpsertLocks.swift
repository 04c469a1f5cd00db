import Foundation

// An upsert (a batch insert with uniqueness constraints) never deadlocks with a save or a batch
// update or delete.
//
// An upsert goes row by row in the request's order (`PostgreSQLStore+BatchInsert.swift`), and
// each row that matches a stored one updates it, so the stored rows would be locked in the
// request's order: an upsert of "b" then "a" would hold "b" and wait for "a" while a save that
// changes both (which locks them in the global order, (table, `Z_PK`), `PostgreSQLStore+RowLocks.swift`)
// held "a" and waited for "b", and PostgreSQL would end one of them with 40P01. A batch insert is
// never run again after a deadlock (its rows are read once), so it would fail with 134030. So
// an upsert reads all its rows first, then locks every stored row that holds one of them under
// any of its constraints in `Z_PK` order, in one statement, after its entity's `Z_PRIMARYKEY`
// row (which a save that inserts also takes before its rows) and before persistent history's
// keys, then writes. Two upserts of one entity never cross: the `Z_PRIMARYKEY` row orders them.
extension PostgreSQLStore {
    /// Locks, in `Z_PK` order, the rows of `table` (aliased `t0`) that hold one of `rows` (each a
    /// row's values, the columns of `source`, a `u` row of arrays) under one of `conflicts` (one
    /// condition on `t0` and `u` per constraint).
    func lockRowsUpdated(by rows: [[PostgreSQLParameter]], table: String, source: String, conflicts: [String],
                         on connection: any PostgreSQLConnection) throws {
        guard let width = rows.first?.count, !conflicts.isEmpty else { return }
        var arrays = BatchArrays(columns: width)
        for (number, values) in rows.enumerated() {
            arrays.append(key: Int64(number))
            for (offset, value) in values.enumerated() { arrays.append(value, column: offset) }
        }
        let matching = conflicts.map { "(\($0))" }.joined(separator: " OR ")
        let locked = "SELECT FROM \(table) t0 WHERE t0.\(Self.pk) IN (SELECT t0.\(Self.pk) FROM \(table) t0, \(source) WHERE \(matching))"
            + " ORDER BY t0.\(Self.pk) FOR UPDATE OF t0"
        _ = try connection.execute("SELECT count(*) FROM (\(locked)) AS locked", arrays.parameters)
    }
}
