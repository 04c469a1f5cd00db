import Foundation

// The PostgreSQL store's writes: keys and saves, each one transaction on the store's writer
// connection (`PostgreSQLConnectionPool.swift`), never run twice.
//
// Keys come from `Z_PRIMARYKEY`: `UPDATE … SET "Z_MAX" = "Z_MAX" + n … RETURNING "Z_MAX"` locks
// the root entity's row, so coordinators on other machines wait for it and never get the same
// keys. The store takes them in blocks (``NSPostgreSQLKeyBlockSizeOption``, 100 by default) and
// gives the rest of a block to its next saves (`PostgreSQLKeyBlocks.swift`), so most saves take
// none from the database. A save whose block holds too few takes a new one in a short
// transaction of its own, committed in the round trip that begins the save's
// (``PostgreSQLConnectionPool/inTransaction(prelude:_:)``): the rows are locked for that
// statement, not until the save commits, so saves of many servers into one table run side by
// side (measured: docs/POSTGRESQL.md, "Keys"). A save that fails leaves its keys unused. The
// rows are taken in `Z_ENT` order. Tables with uniqueness constraints are the exception: a save
// that writes one holds its row to the commit and takes exactly its keys there (see
// `saveInTransaction`).
//
// Optimistic locking: an update or delete names the row's `Z_OPT` as the saving context read
// it; a row that no longer has it changes nothing, and is reported as the SQLite store reports
// it (``StoreConflictError``, with the row as it is now), so the merge policies work unchanged.
// A unique index refusing a row (SQLSTATE 23505) is Core Data's constraint conflict, 133021.
extension PostgreSQLStore {
    func allocateKeys(for entity: NSEntityDescription, count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The PostgreSQL store at \(location) is read-only") }
        let root = entity.rootEntity, number = schema.number(of: root)
        guard !root.hierarchyHasUniquenessConstraints else {
            return try write("allocate keys in") { connection, _ in
                let first = try allocateKeys(root: root, count: count, on: connection)
                return Array(first..<first + Int64(count))
            }
        }
        if let first = keyBlocks.take(count, of: number) { return Array(first..<first + Int64(count)) }
        let reservation = keyBlocks.reservation(for: count)
        // Kept under the writer's lock, as a save keeps its block, so that a batch insert's
        // `discard` (in its transaction) comes after it, never before.
        return try write("allocate keys in") { connection, _ in
            let first = try allocateKeys(root: root, count: reservation, on: connection)
            keyBlocks.keep(reservedFrom: first, reserved: reservation, used: count, of: number)
            return Array(first..<first + Int64(count))
        }
    }

    /// The first of `count` new keys of `root`'s table (they follow each other), in the caller's transaction.
    private func allocateKeys(root: NSEntityDescription, count: Int, on connection: any PostgreSQLConnection) throws -> Int64 {
        let statement = keyStatement(root: root, count: count)
        return try firstKey(of: root, count: count, in: try connection.execute(statement.sql, statement.parameters))
    }

    /// The statement taking `count` new keys of `root`'s table.
    private func keyStatement(root: NSEntityDescription, count: Int) -> PostgreSQLStatement {
        PostgreSQLStatement(sql: "UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = \"Z_MAX\" + $1 WHERE \"Z_ENT\" = $2 RETURNING \"Z_MAX\"",
                            parameters: [.int(Int64(count)), .int(Int64(schema.number(of: root)))], returnsRows: true)
    }

    /// The first of the `count` keys ``keyStatement(root:count:)`` took, from its rows.
    private func firstKey(of root: NSEntityDescription, count: Int, in rows: any PostgreSQLRows) throws -> Int64 {
        guard rows.count == 1 else {
            throw CoreDataError.make(.persistentStoreSave, "Z_PRIMARYKEY has no row for entity \(root.name ?? "") in the PostgreSQL store at \(location)")
        }
        guard !rows.isNull(0, 0) else { throw PrimaryKeys.missingMaximum(table: root.name) }
        let last = try PrimaryKeys.advance(rows.int64(0, 0), by: 0, table: root.name) // (keys handed out one past it would overflow)
        return last - Int64(count) + 1
    }

    /// Runs a write in one transaction, mapping a failure to a Core Data error: 133021 for a
    /// unique index's refusal, else 134030 saying what failed (`what` the store), flagged with
    /// ``NSPostgreSQLCommitOutcomeUnknownKey`` when the session was lost after `COMMIT` was sent.
    /// Run again if it was a deadlock's victim before `body` set its mark's `isCommitting`
    /// (``saveRetryingDeadlocks(_:)``), unless `retryingDeadlocks` is `false` (a body that cannot
    /// run twice, as a batch insert reading its rows once): the deadlock is then 134030.
    func write<T>(_ what: String, retryingDeadlocks: Bool = true, _ body: (any PostgreSQLConnection, CommitMark) throws -> T) throws -> T {
        try write(what, retryingDeadlocks: retryingDeadlocks, prelude: []) { connection, _, mark in try body(connection, mark) }
    }

    /// ``write(_:retryingDeadlocks:_:)`` with a prelude (``PostgreSQLConnectionPool/inTransaction(prelude:_:)``);
    /// a deadlock's victim runs its prelude again.
    func write<T>(_ what: String, retryingDeadlocks: Bool = true, prelude: [PostgreSQLStatement],
                  _ body: (any PostgreSQLConnection, [any PostgreSQLRows], CommitMark) throws -> T) throws -> T {
        do {
            func attempt(_ mark: CommitMark) throws -> T { try inTransaction(prelude: prelude) { try body($0, $1, mark) } }
            return try retryingDeadlocks ? saveRetryingDeadlocks(attempt) : attempt(CommitMark())
        } catch let error as PostgreSQLCommitOutcomeUnknown {
            throw commitOutcomeUnknownError(error)
        } catch let error as PostgreSQLError where error.sqlState == PostgreSQLTimeouts.lockNotAvailable {
            throw Self.error(error, .persistentStoreSave, "Can't \(what) the PostgreSQL store at \(location): "
                + "a row it changes stayed locked by another connection for longer than the store's timeout "
                + "(NSPersistentStoreTimeoutOption, \(PostgreSQLTimeouts(options: options).lockTimeout) ms); nothing was saved")
        } catch let error as PostgreSQLError where error.sqlState == "40P01" {
            throw Self.error(error, .persistentStoreSave, "Can't \(what) the PostgreSQL store at \(location): "
                + "the server ended it to break a deadlock with another connection's transaction; nothing was saved")
        } catch let error as PostgreSQLError where error.sqlState == "23505" {
            throw Self.error(error, .constraintMerge, "A uniqueness constraint is violated; nothing was saved")
        } catch let error as PostgreSQLError {
            throw Self.error(error, .persistentStoreSave, "Can't \(what) the PostgreSQL store at \(location); nothing was saved")
        }
    }

    func saveInTransaction(_ changes: SaveChanges, beforeCommitting: () throws -> Void) throws -> SaveResult {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The PostgreSQL store at \(location) is read-only; nothing was saved") }
        // New keys per root table, in `Z_ENT` order, taken before the save's transaction begins.
        // Tables with uniqueness constraints are the exception: a save that writes one (inserts,
        // updates or deletes rows of it) holds its `Z_PRIMARYKEY` row to the commit, taking that
        // table's new keys there, as an upsert holds it: two writers putting crossing unique values
        // into one table would otherwise each wait for the other's uncommitted index entry (40P01),
        // and an upsert is never run again.
        var counts: [Int: (root: NSEntityDescription, count: Int)] = [:]
        for insert in changes.inserts where insert.isTemporary {
            counts[schema.number(of: insert.entity.rootEntity), default: (insert.entity.rootEntity, 0)].count += 1
        }
        var constrained: [Int: NSEntityDescription] = [:]
        var written: Set<ObjectIdentifier> = [] // the root entities looked at
        func note(_ entity: NSEntityDescription) {
            let root = entity.rootEntity
            guard written.insert(ObjectIdentifier(root)).inserted, root.hierarchyHasUniquenessConstraints else { return }
            constrained[schema.number(of: root)] = root
        }
        for insert in changes.inserts { note(insert.entity) }
        for update in changes.updates { note(update.id.entity) }
        for delete in changes.deletes { note(delete.id.entity) }
        // The other tables' keys come from the store's blocks (`PostgreSQLKeyBlocks.swift`); a
        // table whose block holds too few takes a new block in the prelude.
        var fromBlocks: [Int: Int64] = [:]
        var reservations: [(number: Int, count: Int, reserved: Int)] = []
        for number in counts.keys.sorted() where constrained[number] == nil {
            let count = counts[number]!.count
            if let first = keyBlocks.take(count, of: number) {
                fromBlocks[number] = first
            } else {
                reservations.append((number, count, keyBlocks.reservation(for: count)))
            }
        }
        var prelude = reservations.map { keyStatement(root: counts[$0.number]!.root, count: $0.reserved) }
        // The key transaction's commit does not wait for the disk when the save uses all its keys
        // (the save's own commit flushes it). One that leaves a block waits: after a crash that
        // lost it, `Z_MAX` would hand out again the keys the block still holds.
        if reservations.contains(where: { $0.reserved > $0.count }) { prelude.append(PostgreSQLKeyBlocks.durableCommit) }
        return try write("save to", prelude: prelude) { connection, keyRows, mark in
            guard keyRows.count == reservations.count else {
                throw CoreDataError.make(.persistentStoreSave, "The PostgreSQL store at \(location) got \(keyRows.count) answers for \(reservations.count) key requests; nothing was saved")
            }
            var next = fromBlocks
            for (reservation, rows) in zip(reservations, keyRows) {
                let first = try firstKey(of: counts[reservation.number]!.root, count: reservation.reserved, in: rows)
                next[reservation.number] = first
                keyBlocks.keep(reservedFrom: first, reserved: reservation.reserved, used: reservation.count, of: reservation.number)
            }
            for number in constrained.keys.sorted() {
                if let count = counts[number]?.count {
                    next[number] = try allocateKeys(root: constrained[number]!, count: count, on: connection)
                } else {
                    _ = try connection.execute("SELECT FROM \"Z_PRIMARYKEY\" WHERE \"Z_ENT\" = $1 FOR UPDATE", [.int(Int64(number))])
                }
            }
            return try write(changes, keys: next, on: connection, beforeCommitting: {
                mark.isCommitting = true
                try beforeCommitting()
            })
        }
    }

    /// One save inside the caller's transaction, its new keys starting at `next` (by root
    /// entity number).
    private func write(_ changes: SaveChanges, keys next: [Int: Int64], on connection: any PostgreSQLConnection,
                       beforeCommitting: () throws -> Void) throws -> SaveResult {
        let inserts = changes.inserts
        var next = next
        var insertedKeys = inserts.map { $0.primaryKey ?? 0 }
        for offset in inserts.indices where inserts[offset].isTemporary {
            let number = schema.number(of: inserts[offset].entity.rootEntity)
            insertedKeys[offset] = next[number]!
            next[number]! += 1
        }
        var resolver = TemporaryIDResolver(inserts: inserts, keys: insertedKeys, store: self)
        func resolve(_ id: NSManagedObjectID) -> NSManagedObjectID { resolver.resolve(id) }
        try lockRows(of: changes, on: connection)

        var conflicts: [StoreConflict] = []
        // The values persistent history keeps of deleted rows, by delete position.
        var tombstones: [Int: [PostgreSQLParameter]] = [:]
        for (position, delete) in changes.deletes.enumerated() {
            guard let pk = delete.id.primaryKey else { continue }
            if let history, let kept = try tombstone(of: delete.id, history: history, on: connection) { tombstones[position] = kept }
            let table = schema.table(of: delete.id.entity)
            let deleted: Int
            if let expected = delete.expectedVersion {
                deleted = try connection.execute("DELETE FROM \(table) WHERE \(Self.pk) = $1 AND \(Self.opt) = $2", [.int(pk), .int(expected)]).affectedRows
            } else {
                deleted = try connection.execute("DELETE FROM \(table) WHERE \(Self.pk) = $1", [.int(pk)]).affectedRows // never read: no version to hold it to
            }
            guard deleted > 0 else {
                conflicts.append(StoreConflict(id: delete.id, expectedVersion: delete.expectedVersion ?? 0,
                                               persisted: try readRow(delete.id.entity, pk, on: connection)))
                continue
            }
            let root = ObjectIdentifier(delete.id.entity.rootEntity)
            for join in schema.joinTables {
                for (column, side) in [(join.first, join.firstRoot), (join.second, join.secondRoot)] where side == root {
                    _ = try connection.execute("DELETE FROM \(SQLiteSchema.quoted(join.name)) WHERE \(SQLiteSchema.quoted(column)) = $1", [.int(pk)])
                }
            }
        }
        // Updates before inserts: an update may free a unique value an insert takes.
        for update in changes.updates {
            guard let pk = update.id.primaryKey else { continue }
            let storage = schema.storage(of: update.id.entity)
            var assignments = ["\(Self.opt) = $1"]
            var parameters: [PostgreSQLParameter] = [.int(update.nextVersion)]
            for index in update.changedIndexes {
                let property = update.id.entity.layout.properties[index]
                guard property.isStoredInRow, let column = storage.columns[index] else { continue }
                let slot = SQLiteStore.InsertSlot(property: property, storage: storage)
                if let entityColumn = slot.entityColumn { assignments.append("\(entityColumn) = $\(parameters.count + 1)") }
                assignments.append("\(column) = $\(parameters.count + (slot.entityColumn == nil ? 1 : 2))")
                appendParameters(slot, update.values, to: &parameters, resolve: resolve)
            }
            parameters += [.int(pk), .int(update.expectedVersion)]
            let sql = "UPDATE \(storage.table) SET \(assignments.joined(separator: ", ")) WHERE \(Self.pk) = $\(parameters.count - 1) AND \(Self.opt) = $\(parameters.count)"
            if try connection.execute(sql, parameters).affectedRows == 0 {
                conflicts.append(StoreConflict(id: update.id, expectedVersion: update.expectedVersion,
                                               persisted: try readRow(update.id.entity, pk, on: connection)))
            }
        }
        // Objects marked for conflict detection: their rows must still have the versions read,
        // and keep them until the commit (locked: by ``lockRows(of:on:)`` with the others, or
        // here when it is the save's only row).
        for lock in changes.locks {
            guard let pk = lock.id.primaryKey else { continue }
            let rows = try connection.execute("SELECT \(Self.opt) FROM \(schema.table(of: lock.id.entity)) WHERE \(Self.pk) = $1 FOR UPDATE", [.int(pk)])
            if rows.count == 0 || rows.int64(0, 0) != lock.expectedVersion {
                conflicts.append(StoreConflict(id: lock.id, expectedVersion: lock.expectedVersion,
                                               persisted: try readRow(lock.id.entity, pk, on: connection)))
            }
        }
        // Without history the notification is known now: it goes with the inserts, in their
        // round trip (with history it names the transaction, which is numbered last).
        // (A save that only checked versions writes nothing: no notification.)
        let notification = history == nil && !changes.writesNothing ? commitNotification(transaction: nil) : nil
        // Conflicts first, before any insert: an insert that would meet a unique value the
        // conflicting row still holds (a delete-and-reinsert) must not hide them (133021).
        if !conflicts.isEmpty { throw StoreConflictError(conflicts: conflicts) }
        try insertRows(inserts, keys: insertedKeys, resolve: resolve, then: notification.map { [$0] } ?? [], on: connection)
        for (rows, insert) in [(changes.joinDeletes, false), (changes.joinInserts, true)] {
            for row in rows {
                guard let source = resolve(row.first).primaryKey, let member = resolve(row.second).primaryKey,
                      case let .join(table, sourceColumn, memberColumn, _)? = schema.toManyStorage(of: row.relationship) else { continue }
                let sql = insert
                    ? "INSERT INTO \(table) (\(sourceColumn), \(memberColumn)) VALUES ($1, $2) ON CONFLICT DO NOTHING"
                    : "DELETE FROM \(table) WHERE \(sourceColumn) = $1 AND \(memberColumn) = $2"
                _ = try connection.execute(sql, [.int(source), .int(member)])
            }
        }
        for update in changes.foreignKeyUpdates {
            guard let member = resolve(update.member).primaryKey, let destination = update.relationship.destinationEntity,
                  case let .foreignKey(column, _, true)? = schema.toManyStorage(of: update.relationship) else { continue }
            let owner = update.owner.flatMap { resolve($0).primaryKey }.map(PostgreSQLParameter.int) ?? .null
            _ = try connection.execute("UPDATE \(schema.table(of: destination)) SET \(column) = $1 WHERE \(Self.pk) = $2", [owner, .int(member)])
        }
        for order in changes.orderUpdates {
            guard let owner = resolve(order.owner).primaryKey, let member = resolve(order.member).primaryKey else { continue }
            switch schema.toManyStorage(of: order.relationship) {
            case let .join(table, source, destination, column?)?:
                _ = try connection.execute("UPDATE \(table) SET \(column) = $1 WHERE \(source) = $2 AND \(destination) = $3",
                                           [.int(order.position), .int(owner), .int(member)])
            case let .foreignKey(_, column?, _)?:
                // One-to-many, or to-many without inverse: the order lives in the member's row.
                guard let destination = order.relationship.destinationEntity else { continue }
                _ = try connection.execute("UPDATE \(schema.table(of: destination)) SET \(column) = $1 WHERE \(Self.pk) = $2",
                                           [.int(order.position), .int(member)])
            default:
                continue
            }
        }
        var result = SaveResult(insertedKeys: insertedKeys)
        if let history, !changes.writesNothing {
            let transaction = try recordHistory(changes, insertedKeys: insertedKeys, tombstones: tombstones, history: history, on: connection)
            try notifyCommit(transaction: transaction, on: connection)
            result.historyTransaction = transaction
        }
        try beforeCommitting()
        return result
    }

    /// Appends the parameters of one property of a row to `parameters`: its entity column's
    /// first when it has one (a to-one whose destination has sub-entities), then its value.
    func appendParameters(_ slot: SQLiteStore.InsertSlot, _ values: PropertyValues, to parameters: inout [PostgreSQLParameter],
                          resolve: (NSManagedObjectID) -> NSManagedObjectID) {
        let value = values[slot.index]
        if slot.isObjectIDAttribute {
            // Kept as the ID's URI, as the SQLite store keeps it.
            guard case .objectID(let id) = value, !resolve(id).isTemporaryID else { return parameters.append(.null) }
            return parameters.append(.text(resolve(id).uriRepresentation().absoluteString))
        }
        if case .objectID(let id) = value {
            let target = resolve(id)
            if slot.entityColumn != nil { parameters.append(.int(Int64(schema.number(of: target.entity)))) }
            return parameters.append(target.primaryKey.map(PostgreSQLParameter.int) ?? .null)
        }
        if slot.entityColumn != nil { parameters.append(.null) }
        parameters.append(parameter(value))
    }
}
