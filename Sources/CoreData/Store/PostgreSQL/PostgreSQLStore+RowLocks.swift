import Foundation

// Concurrent saves never deadlock on the rows they change.
//
// A save writes its deletes, then its updates, each in the context's order, so two servers
// changing the same rows in other orders (A then B, B then A; or one deleting A and updating B
// while the other deletes B and updates A) would each hold a row the other waits for, and
// PostgreSQL would end one of them with 40P01. So before writing, a save locks every existing
// row it will change in one global order, the order every server uses: table by table (by the
// root entity's number in the model, which every server shares), and by `Z_PK` within a table,
// one `SELECT … FOR UPDATE` per table. Saves that share rows then wait for each other instead
// of crossing, and the later one finds the rows as the earlier one left them: an optimistic
// locking conflict for the merge policy, or a plain save.
//
// The full order of a save's locks: the `Z_PRIMARYKEY` rows of the tables with uniqueness
// constraints it writes (by `Z_ENT`; other tables' keys are taken and let go before the save
// begins, `PostgreSQLStore+Save.swift`), these rows, then the `Z_PRIMARYKEY` row of persistent
// history's transaction number. What is left (join-table rows inserted in crossing orders) is rare; a save
// PostgreSQL ends as a deadlock victim before `beforeCommitting` ran is run again
// (``PostgreSQLStore/saveRetryingDeadlocks(_:)``).
extension PostgreSQLStore {
    /// Locks the rows `changes` deletes or updates, or whose foreign key or order it rewrites, or
    /// whose versions it checks (``SaveChanges/locks``), in the global order. A save that changes
    /// one existing row sends nothing: one row lock alone closes no cycle with another save's row
    /// locks.
    /// (A new object's row, inserted by this save, needs no lock.)
    func lockRows(of changes: SaveChanges, on connection: any PostgreSQLConnection) throws {
        var keys: [Int: (table: String, keys: [Int64])] = [:]
        var count = 0
        func add(_ id: NSManagedObjectID) {
            guard !id.isTemporaryID, let pk = id.primaryKey else { return }
            let root = id.entity.rootEntity
            keys[schema.number(of: root), default: (schema.table(of: root), [])].keys.append(pk)
            count += 1
        }
        for delete in changes.deletes { add(delete.id) }
        for update in changes.updates { add(update.id) }
        for lock in changes.locks { add(lock.id) }
        for update in changes.foreignKeyUpdates { add(update.member) }
        for order in changes.orderUpdates {
            if case .foreignKey? = schema.toManyStorage(of: order.relationship) { add(order.member) }
        }
        guard count > 1 else { return }
        try lockRows(keys, on: connection)
    }

    /// Locks the rows `keys` lists by their root entity's number in the model, in the global
    /// order: table by table in the order of those numbers, by `Z_PK` within a table.
    func lockRows(_ keys: [Int: (table: String, keys: [Int64])], on connection: any PostgreSQLConnection) throws {
        for number in keys.keys.sorted() {
            let (table, list) = keys[number]!
            try lockRows(list, of: table, on: connection)
        }
    }

    /// Locks the rows `keys` of `table` in `Z_PK` order, in statements of
    /// ``batchRowsPerStatement`` keys at the most, taken in key order, that send no row back.
    func lockRows(_ keys: [Int64], of table: String, on connection: any PostgreSQLConnection) throws {
        let sorted = keys.sorted()
        // One array parameter (`{1,2,3}`): one prepared statement per table whatever the count.
        let lock = "SELECT count(*) FROM (SELECT FROM \(table) WHERE \(Self.pk) = ANY($1::bigint[]) ORDER BY \(Self.pk) FOR UPDATE) AS locked"
        for start in stride(from: 0, to: sorted.count, by: batchRowsPerStatement) {
            let chunk = sorted[start..<min(start + batchRowsPerStatement, sorted.count)]
            _ = try connection.execute(lock, [.text(BatchArrays.keyList(Array(chunk)))])
        }
    }

    /// Locks the rows of `table` (aliased `t0`) that `condition` selects (every row for `nil`), its
    /// `?`s bound to `bindings`, in the global order (`Z_PK` order: a batch request changes one
    /// table), in one statement that sends no row back. A batch update or delete takes them before
    /// persistent history's key rows, as a save does (rows, then history), so the two never wait
    /// for each other in a cycle.
    func lockRows(of table: String, where condition: String?, _ bindings: [PostgreSQLParameter], on connection: any PostgreSQLConnection) throws {
        let rows = "SELECT FROM \(table) t0" + (condition.map { " WHERE \($0)" } ?? "") + " ORDER BY t0.\(Self.pk) FOR UPDATE OF t0"
        _ = try connection.execute(PredicateSQLCompiler.Dialect.numberedParameters("SELECT count(*) FROM (\(rows)) AS locked"), bindings)
    }

    /// How many times a save that PostgreSQL ended as a deadlock's victim is run again.
    static let deadlockRetries = 3

    /// Runs `save` (one transaction) again when PostgreSQL ended it as a deadlock's victim
    /// (SQLSTATE 40P01) before it set its argument's ``CommitMark/isCommitting`` (just before
    /// `beforeCommitting`): nothing of it was committed, and `beforeCommitting` had not run.
    func saveRetryingDeadlocks<T>(_ save: (CommitMark) throws -> T) throws -> T {
        var attempt = 0
        while true {
            let mark = CommitMark()
            do {
                return try save(mark)
            } catch let error as PostgreSQLError where error.sqlState == "40P01" && !mark.isCommitting && attempt < Self.deadlockRetries {
                attempt += 1
            }
        }
    }
}

/// Set by a save once it calls `beforeCommitting`: from then on it is never run again.
final class CommitMark {
    var isCommitting = false
}
