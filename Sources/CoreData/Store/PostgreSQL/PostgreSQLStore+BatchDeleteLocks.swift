import Foundation

// A batch delete through the delete rules never deadlocks with a save or another batch delete.
//
// The rules write rows of other tables in their own order: the deleted rows' keys are read
// first, then, table by table, the related rows cleared (nullify) or deleted (cascade). A save
// locks the rows it changes in the global order, (table, `Z_PK`) (`PostgreSQLStore+RowLocks.swift`),
// so a save changing a person and her car would lock the car first (`ZCAR` comes before
// `ZPERSON`) while a batch delete of the person held her row and wanted the car's to clear its
// owner: a cycle, which PostgreSQL ends with 40P01. So before writing, the batch delete reads
// every row the rules will write (``SQLiteSchema/rowsReachedByDeleteRules(_:root:using:)``,
// without locks) and locks them all in the global order, before persistent history's key rows,
// as a save does. A row that comes to point at a deleted row between that read and the locks
// (another server's commit) is locked when it is cleared; the deadlock that could then happen
// is rare, and the batch delete, which is run again as a deadlock's victim, loses nothing.
extension PostgreSQLStore {
    /// Locks, in the global order, the rows that deleting `keys` (of `root`'s table) through the
    /// delete rules will write. One row alone closes no cycle: then nothing is sent.
    func lockRowsTheRulesReach(_ keys: [FetchedKey], root: NSEntityDescription, on connection: any PostgreSQLConnection) throws {
        guard !keys.isEmpty else { return }
        let reached = try schema.rowsReachedByDeleteRules(keys, root: root, using: deleteStatements(on: connection))
        guard reached.values.reduce(0, { $0 + $1.keys.count }) > 1 else { return }
        var locks: [Int: (table: String, keys: [Int64])] = [:]
        for (root, rows) in reached.values where !rows.isEmpty {
            locks[schema.number(of: root)] = (schema.table(of: root), Array(rows)) // (sorted by lockRows)
        }
        try lockRows(locks, on: connection)
    }
}
