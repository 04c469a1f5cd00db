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
// an upsert reads all its rows first, then finds the stored rows that hold one of them under any
// of its constraints (a few thousand rows a statement, their constrained columns only, no lock),
// and locks those in `Z_PK` order (a few thousand a statement), after its entity's `Z_PRIMARYKEY`
// row (which a save that writes a table with uniqueness constraints also holds to its commit,
// taken before its rows) and before persistent history's keys, then writes. Two upserts of one
// entity, or an upsert and such a save, never cross: the `Z_PRIMARYKEY` row orders them.
extension PostgreSQLStore {
    /// Locks, in `Z_PK` order, the rows of `table` (aliased `t0`) that hold one of `rows` (each a
    /// row's values, of which `columns` are the constrained ones, the columns of `source`, a `u`
    /// row of arrays) under one of `conflicts` (one condition on `t0` and `u` per constraint).
    func lockRowsUpdated(by rows: [[PostgreSQLParameter]], columns: [Int], table: String, source: String, conflicts: [String],
                         on connection: any PostgreSQLConnection) throws {
        guard !rows.isEmpty, !conflicts.isEmpty else { return }
        let matching = conflicts.map { "(\($0))" }.joined(separator: " OR ")
        let find = "SELECT DISTINCT t0.\(Self.pk) FROM \(table) t0, \(source) WHERE \(matching)"
        var keys = Set<Int64>()
        var arrays = BatchArrays(columns: columns.count)
        func send() throws {
            guard arrays.rows > 0 else { return }
            let found = try connection.execute(find, arrays.parameters)
            for row in 0..<found.count { keys.insert(found.int64(row, 0)) }
            arrays = BatchArrays(columns: columns.count)
        }
        for (number, values) in rows.enumerated() {
            arrays.append(key: Int64(number))
            for (column, offset) in columns.enumerated() { arrays.append(values[offset], column: column) }
            if arrays.rows == batchRowsPerStatement || arrays.bytes >= Self.bytesPerStatement { try send() }
        }
        try send()
        try lockRows(Array(keys), of: table, on: connection)
    }
}
