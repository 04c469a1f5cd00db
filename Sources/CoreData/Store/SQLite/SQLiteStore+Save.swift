import CSQLite
import Foundation

// The SQLite store's write path: every method here runs on the writer connection, under the
// store's write lock.
extension SQLiteStore {
    /// ``allocatePrimaryKeys(for:count:)``: `count` keys from `entity`'s sequence, in their own transaction.
    func allocateKeys(for entity: NSEntityDescription, count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store at \(url?.path ?? "") is read-only") }
        return try withWriter { db in try db.transaction { try allocateKeys(root: entity.rootEntity, count: count, on: db) } }
    }

    /// Hands out keys from the root entity's `Z_MAX` (rows of a hierarchy share one table, so one sequence).
    private func allocateKeys(root: NSEntityDescription, count: Int, on db: SQLiteConnection) throws -> [Int64] {
        let update = try db.cached("UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + ? WHERE Z_ENT = ? RETURNING Z_MAX")
        defer { update.reset() }
        update.bind(Int64(count), at: 1)
        update.bind(Int64(root.layout.entityNumber), at: 2)
        guard try update.step() else {
            throw CoreDataError.make(.persistentStoreSave, "Z_PRIMARYKEY has no row for entity \(root.name ?? "")")
        }
        let max = update.int64(0)
        return Array((max - Int64(count) + 1)...max)
    }

    /// ``save(_:rowCache:)``: the save in one transaction on the writer, then the rows it wrote
    /// recorded in `rowCache` before another save can start (so the cache changes in commit order).
    func saveOnWriter(_ changes: SaveChanges, rowCache: StoreRowCache?) throws -> SaveResult {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store at \(url?.path ?? "") is read-only; nothing was saved") }
        return try withWriter { db in
            let result: SaveResult
            do {
                result = try write(changes, on: db)
            } catch let error as NSError where error.code == NSSQLiteError
                        && (error.userInfo[NSSQLiteErrorDomain] as? Int).map({ $0 == 2067 /* SQLITE_CONSTRAINT_UNIQUE */ || $0 == 1555 /* SQLITE_CONSTRAINT_PRIMARYKEY */ }) == true {
                throw CoreDataError.make(.constraintMerge,
                    "A uniqueness constraint is violated: \(error.localizedDescription). Nothing was saved.",
                    extra: [NSUnderlyingErrorKey: error])
            }
            if let rowCache { recordSaved(changes, result, in: rowCache) }
            return result
        }
    }

    /// A hook for tests: runs on the saving thread inside each save's transaction, after its
    /// writes and before `COMMIT`, holding ``writeLock``.
    var beforeCommit: (@Sendable () -> Void)? {
        get { writeLock.withLock { beforeCommitHook } }
        set { writeLock.withLock { beforeCommitHook = newValue } }
    }

    /// One save in one transaction, under ``writeLock``.
    private func write(_ changes: SaveChanges, on db: SQLiteConnection) throws -> SaveResult {
        try db.transaction {
            // Primary keys in insertion order, one sequence per root table.
            let inserts = changes.inserts
            var insertedKeys = inserts.map { $0.primaryKey ?? 0 }
            // The offsets of the temporary IDs by root entity, roots in order of first use.
            var pending: [(root: NSEntityDescription, offsets: [Int])] = []
            var lastRoot = -1
            // Compared by identity only: no entity is held (nor retained) from one insert to the next.
            var lastEntity: ObjectIdentifier?
            for offset in inserts.indices where inserts[offset].isTemporary {
                if ObjectIdentifier(inserts[offset].entity) != lastEntity {
                    let entity = inserts[offset].entity
                    lastEntity = ObjectIdentifier(entity)
                    let root = entity.rootEntity
                    if let known = pending.firstIndex(where: { $0.root === root }) {
                        lastRoot = known
                    } else {
                        pending.append((root, []))
                        lastRoot = pending.count - 1
                    }
                }
                pending[lastRoot].offsets.append(offset)
            }
            for (root, offsets) in pending {
                let keys = try allocateKeys(root: root, count: offsets.count, on: db)
                for (offset, key) in zip(offsets, keys) { insertedKeys[offset] = key }
            }
            var resolver = TemporaryIDResolver(inserts: inserts, keys: insertedKeys, store: self)
            func resolve(_ id: NSManagedObjectID) -> NSManagedObjectID { resolver.resolve(id) }

            var conflicts: [StoreConflict] = []
            for delete in changes.deletes {
                guard let pk = delete.id.primaryKey else { continue }
                let table = delete.id.entity.layout.tableName
                let statement = try db.cached("DELETE FROM \(table) WHERE Z_PK = ? AND Z_OPT = ?")
                statement.bind(pk, at: 1)
                statement.bind(delete.expectedVersion, at: 2)
                try statement.step()
                statement.reset()
                if db.changes == 0 {
                    conflicts.append(StoreConflict(id: delete.id, expectedVersion: delete.expectedVersion, persisted: try readRow(delete.id, on: db)))
                    continue
                }
                for join in schema.joinTables {
                    for column in [join.first, join.second] where joinColumn(column, refersTo: delete.id.entity) {
                        let statement = try db.cached("DELETE FROM \(join.name) WHERE \(column) = ?")
                        statement.bind(pk, at: 1)
                        try statement.step()
                        statement.reset()
                    }
                }
            }
            // Updates before inserts: an update may free a unique value an insert takes.
            for update in changes.updates {
                guard let pk = update.id.primaryKey else { continue }
                let layout = update.id.entity.layout
                var assignments = ["Z_OPT = ?"]
                var slots: [InsertSlot] = []
                for index in update.changedIndexes {
                    let property = layout.properties[index]
                    guard property.isStoredInRow else { continue }
                    let slot = InsertSlot(property: property)
                    if let entityColumn = slot.entityColumn { assignments.append("\(entityColumn) = ?") }
                    assignments.append("\(property.columnName) = ?")
                    slots.append(slot)
                }
                let statement = try db.cached("UPDATE \(layout.tableName) SET \(assignments.joined(separator: ", ")) WHERE Z_PK = ? AND Z_OPT = ?")
                statement.bind(update.expectedVersion + 1, at: 1)
                var position: Int32 = 2
                for slot in slots {
                    bindSlot(slot, values: update.values, statement: statement, at: &position, resolve: resolve)
                }
                statement.bind(pk, at: position)
                statement.bind(update.expectedVersion, at: position + 1)
                try statement.step()
                statement.reset()
                if db.changes == 0 {
                    conflicts.append(StoreConflict(id: update.id, expectedVersion: update.expectedVersion, persisted: try readRow(update.id, on: db)))
                }
            }
            // The statement is looked up once per run of inserts of one entity, not once per row,
            // and held (as are the slots) for the run, without a retain and release per row.
            var runStart = inserts.startIndex
            while runStart < inserts.endIndex {
                let entity = inserts[runStart].entity
                var runEnd = runStart + 1
                while runEnd < inserts.endIndex && ObjectIdentifier(inserts[runEnd].entity) == ObjectIdentifier(entity) { runEnd += 1 }
                let (statement, slots) = try insertStatement(for: entity, on: db)
                let plain = slots.allSatisfy(\.isPlain)
                let entityNumber = Int64(entity.layout.entityNumber)
                // Each insert is read in place, not copied (a copy retains its entity and values).
                for offset in runStart..<runEnd {
                    statement.bind(insertedKeys[offset], at: 1)
                    statement.bind(entityNumber, at: 2)
                    if plain {
                        // Attributes only: each value binds as it is, read in place (`inserts`
                        // is a constant: its values array is not retained for the row).
                        var position: Int32 = 3
                        for slot in slots {
                            // An integer is bound straight from its 8-byte slot (no `StoreValue`).
                            if let int = inserts[offset].values.int64(at: slot.index) {
                                statement.bind(int, at: position)
                            } else {
                                inserts[offset].values.withValue(at: slot.index) { statement.bind($0, at: position) }
                            }
                            position += 1
                        }
                    } else {
                        var position: Int32 = 3
                        for slot in slots {
                            bindSlot(slot, values: inserts[offset].values, statement: statement, at: &position, resolve: resolve)
                        }
                    }
                    // Every parameter was bound above: no need to clear them.
                    do { try statement.step() } catch { statement.reset(); throw error }
                    statement.resetKeepingBindings()
                }
                runStart = runEnd
            }
            if !conflicts.isEmpty { throw StoreConflictError(conflicts: conflicts) }
            /// Runs `sql(row)` for each join-table row, bound to the row's two keys.
            func write(_ rows: [SaveChanges.JoinRow], _ sql: (SaveChanges.JoinRow) -> String) throws {
                for row in rows {
                    guard let source = resolve(row.first).primaryKey, let destination = resolve(row.second).primaryKey else { continue }
                    let statement = try db.cached(sql(row))
                    statement.bind(source, at: 1)
                    statement.bind(destination, at: 2)
                    try statement.step()
                    statement.reset()
                }
            }
            try write(changes.joinDeletes) { "DELETE FROM \($0.table) WHERE \($0.firstColumn) = ? AND \($0.secondColumn) = ?" }
            try write(changes.joinInserts) { "INSERT OR IGNORE INTO \($0.table) (\($0.firstColumn), \($0.secondColumn)) VALUES (?, ?)" }
            for update in changes.foreignKeyUpdates {
                guard let member = resolve(update.member).primaryKey, let column = update.relationship.hiddenForeignKeyColumn,
                      let destination = update.relationship.destinationEntity else { continue }
                let statement = try db.cached("UPDATE \(destination.layout.tableName) SET \(column) = ? WHERE Z_PK = ?")
                if let owner = update.owner.flatMap({ resolve($0).primaryKey }) { statement.bind(owner, at: 1) } else { statement.bindNull(1) }
                statement.bind(member, at: 2)
                try statement.step()
                statement.reset()
            }
            for order in changes.orderUpdates {
                guard let owner = resolve(order.owner).primaryKey, let member = resolve(order.member).primaryKey else { continue }
                let statement: SQLiteStatement
                if let join = order.relationship.joinTable, let column = join.orderColumn {
                    statement = try db.cached("UPDATE \(join.name) SET \(column) = ? WHERE \(join.sourceColumn) = ? AND \(join.destinationColumn) = ?")
                    statement.bind(order.position, at: 1)
                    statement.bind(owner, at: 2)
                    statement.bind(member, at: 3)
                } else if let column = order.relationship.orderColumn, let destination = order.relationship.destinationEntity {
                    // One-to-many, or to-many without inverse: the order lives in the member's row.
                    statement = try db.cached("UPDATE \(destination.layout.tableName) SET \(column) = ? WHERE Z_PK = ?")
                    statement.bind(order.position, at: 1)
                    statement.bind(member, at: 2)
                } else {
                    continue
                }
                try statement.step()
                statement.reset()
            }
            beforeCommitHook?()
            return SaveResult(insertedKeys: insertedKeys)
        }
    }

    private func joinColumn(_ column: String, refersTo entity: NSEntityDescription) -> Bool {
        // Join columns are named Z_<entity number><NAME>; the number identifies the side's entity.
        let digits = column.dropFirst(2).prefix { $0.isNumber }
        guard let number = Int64(digits), let side = self.entity(numbered: number) else { return true }
        return side.rootEntity === entity.rootEntity
    }

    /// A property bound by an `INSERT` or `UPDATE`, with its entity column if it has one.
    struct InsertSlot {
        var index: Int
        var entityColumn: String?
        /// An attribute of type object ID: stored as the ID's URI (the row decoder reads it back
        /// so), not as a primary key as a to-one relationship is.
        var isObjectIDAttribute: Bool
        /// A value bound as it is: neither an ID to resolve nor a relationship.
        var isPlain: Bool
        init(property: NSPropertyDescription) {
            index = property.index
            entityColumn = (property as? NSRelationshipDescription)?.entityColumn
            isObjectIDAttribute = (property as? NSAttributeDescription)?.attributeType == .objectIDAttributeType
            isPlain = property is NSAttributeDescription && !isObjectIDAttribute
        }
    }

    /// The entity's INSERT on the writer, prepared once (looked up by entity number, not by SQL text).
    private func insertStatement(for entity: NSEntityDescription, on db: SQLiteConnection) throws -> (SQLiteStatement, [InsertSlot]) {
        let number = entity.layout.entityNumber
        if let cached = insertStatements[number] {
            cached.0.reset() // a failed step of an earlier save may have left it mid-run
            return cached
        }
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        var slots: [InsertSlot] = []
        for index in entity.layout.rowIndexes {
            let property = entity.layout.properties[index]
            let slot = InsertSlot(property: property)
            if let entityColumn = slot.entityColumn { columns.append(entityColumn) }
            columns.append(property.columnName)
            slots.append(slot)
        }
        let placeholders = ["?", "?", "1"] + Array(repeating: "?", count: columns.count - 3)
        let sql = "INSERT INTO \(entity.layout.tableName) (\(columns.joined(separator: ", "))) VALUES (\(placeholders.joined(separator: ", ")))"
        let statement = try db.cached(sql)
        insertStatements[number] = (statement, slots)
        return (statement, slots)
    }

    private func bindSlot(_ slot: InsertSlot, values: PropertyValues, statement: SQLiteStatement,
                          at position: inout Int32, resolve: (NSManagedObjectID) -> NSManagedObjectID) {
        // An integer attribute is bound straight from its 8-byte slot (no `StoreValue`).
        if slot.entityColumn == nil, !slot.isObjectIDAttribute, let int = values.int64(at: slot.index) {
            statement.bind(int, at: position)
            position += 1
            return
        }
        let value = values[slot.index]
        if slot.isObjectIDAttribute {
            if case .objectID(let id) = value, !resolve(id).isTemporaryID {
                statement.bind(resolve(id).uriRepresentation().absoluteString, at: position)
            } else {
                statement.bindNull(position)
            }
        } else if case .objectID(let id) = value {
            let target = resolve(id)
            if slot.entityColumn != nil {
                statement.bind(Int64(target.entity.layout.entityNumber), at: position)
                position += 1
            }
            statement.bind(.objectID(target), at: position)
        } else {
            if slot.entityColumn != nil {
                statement.bindNull(position)
                position += 1
            }
            statement.bind(value, at: position)
        }
        position += 1
    }
}
