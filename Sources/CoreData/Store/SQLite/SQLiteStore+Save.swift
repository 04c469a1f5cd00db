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
        let first = try allocateFirstKey(root: root, count: count, on: db)
        return Array(first..<first + Int64(count))
    }

    /// Hands out `count` keys from the root entity's `Z_MAX`: the first of them (they follow each other).
    private func allocateFirstKey(root: NSEntityDescription, count: Int, on db: SQLiteConnection) throws -> Int64 {
        let update = try db.cached("UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + ? WHERE Z_ENT = ? RETURNING Z_MAX")
        defer { update.reset() }
        update.bind(Int64(count), at: 1)
        update.bind(Int64(schema.number(of: root)), at: 2)
        guard try update.step() else {
            throw CoreDataError.make(.persistentStoreSave, "Z_PRIMARYKEY has no row for entity \(root.name ?? "")")
        }
        // Past the largest integer SQLite's sum is a REAL: the keys have run out (the transaction rolls back).
        guard update.columnType(0) != SQLITE_NULL, update.columnType(0) != SQLITE_TEXT, update.columnType(0) != SQLITE_BLOB else {
            throw PrimaryKeys.missingMaximum(table: root.name)
        }
        let last = update.columnType(0) == SQLITE_INTEGER ? update.int64(0) : .max
        _ = try PrimaryKeys.advance(last, by: 0, table: root.name)
        return last - Int64(count) + 1
    }

    /// ``save(_:rowCache:beforeCommitting:)``: the save in one transaction on the writer, then
    /// the rows it wrote recorded in `rowCache` before another save can start (so the cache
    /// changes in commit order).
    func saveOnWriter(_ changes: SaveChanges, rowCache: StoreRowCache?, beforeCommitting: () throws -> Void) throws -> SaveResult {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store at \(url?.path ?? "") is read-only; nothing was saved") }
        return try withWriter { db in
            let result: SaveResult
            // The external data files of the save: written in its transaction, removed if it rolls back.
            let files = schema.hasExternalData ? url.flatMap(Self.externalDataFolder(forStoreAt:)).map(ExternalDataFiles.init) : nil
            externalFiles = files
            defer { externalFiles = nil }
            do {
                do {
                    result = try write(changes, on: db, implicitKeys: !implicitKeysRefused, beforeCommitting: beforeCommitting)
                } catch is ImplicitKeyMismatch {
                    // Rolled back (before `beforeCommitting` ran): written again with every key
                    // bound, as are later saves.
                    files?.discardCreated()
                    implicitKeysRefused = true
                    result = try write(changes, on: db, implicitKeys: false, beforeCommitting: beforeCommitting)
                }
                files?.removeReplaced(pinnedExternalData)
            } catch {
                files?.discardCreated()
                throw Self.saveError(error)
            }
            if let rowCache { recordSaved(changes, result, in: rowCache) }
            return result
        }
    }

    /// A failed save's error: a uniqueness violation as Core Data's 133021, others as they are.
    static func saveError(_ error: Error) -> Error {
        let sqlite = error as NSError
        // SQLITE_CONSTRAINT_UNIQUE (2067) or SQLITE_CONSTRAINT_PRIMARYKEY (1555).
        guard sqlite.code == NSSQLiteError, let code = sqlite.userInfo[NSSQLiteErrorDomain] as? Int, code == 2067 || code == 1555 else {
            return error
        }
        return CoreDataError.make(.constraintMerge,
            "A uniqueness constraint is violated: \(sqlite.localizedDescription). Nothing was saved.",
            extra: [NSUnderlyingErrorKey: sqlite])
    }

    /// A hook for tests: runs on the saving thread inside each save's transaction, after its
    /// writes and before `COMMIT`, holding ``writeLock``.
    var beforeCommit: (@Sendable () -> Void)? {
        get { writeLock.withLock { beforeCommitHook } }
        set { writeLock.withLock { beforeCommitHook = newValue } }
    }

    /// The fewest new keys a table gets in a save for its rows to be appended without `Z_PK`.
    static let appendingMinimum = 16
    /// How many appended rows one INSERT writes at most: a statement's own work (opening the
    /// table, ending the statement, resetting it) is then done once for them, not per row.
    static let appendBatch = 16

    /// Thrown inside a save's transaction (which it rolls back) when a row inserted without
    /// `Z_PK` did not get the key handed out for it.
    private struct ImplicitKeyMismatch: Error {}

    /// One save in one transaction, under ``writeLock``. With `implicitKeys`, a new row whose
    /// key is one more than the largest in its table is inserted without `Z_PK` (see the inserts).
    private func write(_ changes: SaveChanges, on db: SQLiteConnection, implicitKeys: Bool, beforeCommitting: () throws -> Void) throws -> SaveResult {
        try db.transaction {
            let inserts = changes.inserts
            // The root entities of the temporary IDs, in order of first use, with how many new
            // keys each gets, and then the next of them to hand out. (Passed to the walks, not
            // captured by them: a captured variable is checked for exclusive access at run time.)
            var roots = TemporaryRoots()
            roots.forEachTemporaryInsert(of: inserts) { roots, _, root in roots.list[root].count += 1 }
            // How many new keys each root table gets (by root entity number).
            var newKeyCounts: [Int: Int] = [:]
            for index in roots.list.indices {
                roots.list[index].next = try allocateFirstKey(root: roots.list[index].root, count: roots.list[index].count, on: db)
                newKeyCounts[roots.list[index].root.layout.entityNumber] = roots.list[index].count
            }
            // Primary keys in insertion order, one sequence per root table.
            var insertedKeys = inserts.map { $0.primaryKey ?? 0 }
            roots.forEachTemporaryInsert(of: inserts) { roots, offset, root in
                insertedKeys[offset] = roots.list[root].next
                roots.list[root].next += 1
            }
            var resolver = TemporaryIDResolver(inserts: inserts, keys: insertedKeys, store: self)
            func resolve(_ id: NSManagedObjectID) -> NSManagedObjectID { resolver.resolve(id) }

            var conflicts: [StoreConflict] = []
            // The values persistent history keeps of deleted rows, by delete position.
            var tombstones: [Int: [StoreValue]] = [:]
            for (position, delete) in changes.deletes.enumerated() {
                guard let pk = delete.id.primaryKey else { continue }
                if let history, let kept = try history.tombstone(of: delete.id, store: self, on: db) { tombstones[position] = kept }
                let noted = try noteExternalFiles(of: delete.id.entity, primaryKey: pk, indexes: nil, on: db)
                let table = schema.table(of: delete.id.entity)
                let statement: SQLiteStatement
                if let expectedVersion = delete.expectedVersion {
                    statement = try db.cached("DELETE FROM \(table) WHERE Z_PK = ? AND ifnull(Z_OPT, 0) = ?")
                    statement.bind(expectedVersion, at: 2)
                } else {
                    statement = try db.cached("DELETE FROM \(table) WHERE Z_PK = ?") // never read: no version to hold it to
                }
                statement.bind(pk, at: 1)
                try statement.step()
                statement.reset()
                if db.changes == 0 {
                    externalFiles?.replaced.removeLast(noted)
                    conflicts.append(StoreConflict(id: delete.id, expectedVersion: delete.expectedVersion ?? 0, persisted: try readRow(delete.id, on: db)))
                    continue
                }
                let root = ObjectIdentifier(delete.id.entity.rootEntity)
                for join in schema.joinTables {
                    for (column, side) in [(join.first, join.firstRoot), (join.second, join.secondRoot)] where side == root {
                        let statement = try db.cached("DELETE FROM \(SQLiteSchema.quoted(join.name)) WHERE \(SQLiteSchema.quoted(column)) = ?")
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
                let storage = schema.storage(of: update.id.entity)
                var assignments = ["Z_OPT = ?"]
                var slots: [InsertSlot] = []
                for index in update.changedIndexes {
                    let property = layout.properties[index]
                    guard property.isStoredInRow else { continue }
                    guard let column = storage.columns[index] else { throw SQLiteSchema.unmapped(property) }
                    let slot = InsertSlot(property: property, storage: storage)
                    if let entityColumn = slot.entityColumn { assignments.append("\(entityColumn) = ?") }
                    assignments.append("\(column) = ?")
                    slots.append(slot)
                }
                let noted = try noteExternalFiles(of: update.id.entity, primaryKey: pk, indexes: update.changedIndexes, on: db)
                let statement = try db.cached("UPDATE \(storage.table) SET \(assignments.joined(separator: ", ")) WHERE Z_PK = ? AND ifnull(Z_OPT, 0) = ?")
                statement.bind(update.nextVersion, at: 1)
                var position: Int32 = 2
                for slot in slots {
                    try bindSlot(slot, values: update.values, statement: statement, at: &position, resolve: resolve)
                }
                statement.bind(pk, at: position)
                statement.bind(update.expectedVersion, at: position + 1)
                try statement.step()
                statement.reset()
                if db.changes == 0 {
                    externalFiles?.replaced.removeLast(noted)
                    conflicts.append(StoreConflict(id: update.id, expectedVersion: update.expectedVersion, persisted: try readRow(update.id, on: db)))
                }
            }
            // Objects marked for conflict detection: their rows must still have the versions read.
            for lock in changes.locks {
                guard let pk = lock.id.primaryKey else { continue }
                let statement = try db.cached("SELECT Z_OPT FROM \(schema.table(of: lock.id.entity)) WHERE Z_PK = ?")
                statement.bind(pk, at: 1)
                let version = try statement.step() ? statement.int64(0) : nil
                statement.reset()
                if version != lock.expectedVersion {
                    conflicts.append(StoreConflict(id: lock.id, expectedVersion: lock.expectedVersion, persisted: try readRow(lock.id, on: db)))
                }
            }
            // Conflicts first, before any insert: an insert that would meet a unique value the
            // conflicting row still holds (a delete-and-reinsert) must not hide them (133021).
            if !conflicts.isEmpty { throw StoreConflictError(conflicts: conflicts) }
            // Keys are handed out in insertion order, so new rows mostly go at the end of their
            // table: a row whose key is one more than the table's largest is inserted without
            // `Z_PK`, and SQLite gives it that very key (the largest rowid + 1) by appending to
            // the table's b-tree, where an explicit key seeks it from the root. The key it got
            // is checked; if it differs, the transaction is rolled back and written again with
            // every key bound. Other rows (keys below the largest, as after deleting the last
            // rows, or obtained earlier) bind their key. Reading the table's largest key costs
            // about as much as ten seeks: it is done only for tables that get at least
            // ``appendingMinimum`` new keys in the save; the rows of the others bind their key.
            // Appended rows of one entity whose keys follow each other go ``appendBatch`` to a
            // statement (`INSERT … VALUES (…), (…), …`), checked by the statement's row count and
            // the last key.
            // The largest key of each such table (by root entity number), read at its first
            // insert (after the deletes) and kept up to date.
            var largestKeys: [Int: Int64] = [:]
            // The statements are looked up once per run of inserts of one entity, not once per
            // row, and held (as are the slots) for the run, without a retain and release per row.
            var runStart = inserts.startIndex
            while runStart < inserts.endIndex {
                let entity = inserts[runStart].entity
                var runEnd = runStart + 1
                while runEnd < inserts.endIndex && ObjectIdentifier(inserts[runEnd].entity) == ObjectIdentifier(entity) { runEnd += 1 }
                let statements = insertStatements(for: entity, on: db)
                // A file of another model version may have no column for a property: its new
                // objects may not give it a value.
                if !statements.unmapped.isEmpty {
                    for offset in runStart..<runEnd {
                        for index in statements.unmapped where !inserts[offset].values[index].isNull {
                            throw SQLiteSchema.unmapped(entity.layout.properties[index])
                        }
                    }
                }
                let slots = statements.slots, plain = statements.plain, batch = statements.batchSize
                // Each looked up (and prepared, the first time) when the run first needs it.
                var implicitStatement: SQLiteStatement?, explicitStatement: SQLiteStatement?
                let root = entity.layout.rootNumber
                var largest = Int64.max // no key is inserted without Z_PK
                if implicitKeys {
                    if let known = largestKeys[root] {
                        largest = known
                    } else if newKeyCounts[root] ?? 0 >= Self.appendingMinimum {
                        largest = try db.scalarInt("SELECT max(Z_PK) FROM \(schema.table(of: entity))") ?? 0
                    }
                }
                var batchStatement: SQLiteStatement?
                let plan = plain ? inserts[runStart].values.slotPlan(for: slots.map(\.index)) : nil
                /// Binds the values of `inserts[offset]` from `position` on.
                @inline(__always)
                func bindValues(of offset: Int, to statement: SQLiteStatement, from position: inout Int32) throws {
                    if plain {
                        // Attributes only: each value binds as it is, read in place (`inserts`
                        // is a constant: its values array is not retained for the row). Rows
                        // of the run's shape read their slots by the plan.
                        if let plan, inserts.withUnsafeBufferPointer({ rows -> Bool in
                            let values = (rows.baseAddress! + offset).pointer(to: \.values)!
                            var at = position
                            guard PropertyValues.forEachInteger(at: values, plan, integer: { int in
                                statement.bind(int, at: at)
                                at += 1
                            }, other: { n in
                                values.pointee.withValue(at: slots[n].index) { statement.bind($0, at: at) }
                                at += 1
                            }) else { return false }
                            position = at
                            return true
                        }) {
                            return
                        }
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
                        for slot in slots {
                            try bindSlot(slot, values: inserts[offset].values, statement: statement, at: &position, resolve: resolve)
                        }
                    }
                }
                // Each insert is read in place, not copied (a copy retains its entity and values).
                var offset = runStart
                while offset < runEnd {
                    let key = insertedKeys[offset]
                    let appends = largest < Int64.max && key == largest + 1
                    // A batch of appended rows in one statement: their keys follow each other.
                    if appends && batch > 1 && runEnd - offset >= batch
                        && (1..<batch).allSatisfy({ insertedKeys[offset + $0] == key + Int64($0) }) {
                        let statement: SQLiteStatement
                        if let batchStatement {
                            statement = batchStatement
                        } else {
                            statement = try statements.statement(.batch, on: db)
                            batchStatement = statement
                        }
                        var position: Int32 = 1
                        for row in offset..<offset + batch { try bindValues(of: row, to: statement, from: &position) }
                        // The next batch's values, written long before the save and no longer
                        // cached, come in while SQLite inserts this one.
                        inserts.withUnsafeBufferPointer { rows in
                            for row in offset + batch..<min(offset + 2 * batch, runEnd) {
                                PropertyValues.prefetch(at: (rows.baseAddress! + row).pointer(to: \.values)!)
                            }
                        }
                        do { try statement.step() } catch { statement.reset(); throw error }
                        statement.resetKeepingBindings()
                        // The statement's own rows (not a trigger's) got the keys from `key` on.
                        let last = key + Int64(batch - 1)
                        guard db.changes == batch && db.lastInsertRowID == last else { throw ImplicitKeyMismatch() }
                        largest = last
                        offset += batch
                        continue
                    }
                    let statement: SQLiteStatement
                    if appends {
                        if let implicitStatement {
                            statement = implicitStatement
                        } else {
                            statement = try statements.statement(.implicit, on: db)
                            implicitStatement = statement
                        }
                    } else if let explicitStatement {
                        statement = explicitStatement
                    } else {
                        statement = try statements.statement(.explicit, on: db)
                        explicitStatement = statement
                    }
                    var position: Int32 = 1
                    if !appends {
                        statement.bind(key, at: 1)
                        position = 2
                    }
                    try bindValues(of: offset, to: statement, from: &position)
                    // Every parameter was bound above: no need to clear them.
                    do { try statement.step() } catch { statement.reset(); throw error }
                    statement.resetKeepingBindings()
                    if appends {
                        guard db.lastInsertRowID == key else { throw ImplicitKeyMismatch() }
                        largest = key
                    } else if largest < Int64.max && key > largest {
                        largest = key
                    }
                    offset += 1
                }
                if largest < Int64.max { largestKeys[root] = largest }
                runStart = runEnd
            }
            /// Runs `sql(table, source column, member column)` for each join-table row, bound to
            /// the row's two keys.
            func write(_ rows: [SaveChanges.JoinRow], _ sql: (String, String, String) -> String) throws {
                for row in rows {
                    guard let source = resolve(row.first).primaryKey, let destination = resolve(row.second).primaryKey,
                          case let .join(table, sourceColumn, memberColumn, _)? = try toManyStorage(of: row.relationship) else { continue }
                    let statement = try db.cached(sql(table, sourceColumn, memberColumn))
                    statement.bind(source, at: 1)
                    statement.bind(destination, at: 2)
                    try statement.step()
                    statement.reset()
                }
            }
            try write(changes.joinDeletes) { "DELETE FROM \($0) WHERE \($1) = ? AND \($2) = ?" }
            try write(changes.joinInserts) { "INSERT OR IGNORE INTO \($0) (\($1), \($2)) VALUES (?, ?)" }
            for update in changes.foreignKeyUpdates {
                guard let member = resolve(update.member).primaryKey, let destination = update.relationship.destinationEntity,
                      case let .foreignKey(column, _, true)? = try toManyStorage(of: update.relationship) else { continue }
                let statement = try db.cached("UPDATE \(schema.table(of: destination)) SET \(column) = ? WHERE Z_PK = ?")
                if let owner = update.owner.flatMap({ resolve($0).primaryKey }) { statement.bind(owner, at: 1) } else { statement.bindNull(1) }
                statement.bind(member, at: 2)
                try statement.step()
                statement.reset()
            }
            for order in changes.orderUpdates {
                guard let owner = resolve(order.owner).primaryKey, let member = resolve(order.member).primaryKey else { continue }
                let statement: SQLiteStatement
                switch try toManyStorage(of: order.relationship) {
                case let .join(table, source, destination, column?)?:
                    statement = try db.cached("UPDATE \(table) SET \(column) = ? WHERE \(source) = ? AND \(destination) = ?")
                    statement.bind(order.position, at: 1)
                    statement.bind(owner, at: 2)
                    statement.bind(member, at: 3)
                case let .foreignKey(_, column?, _)?:
                    // One-to-many, or to-many without inverse: the order lives in the member's row.
                    guard let destination = order.relationship.destinationEntity else { continue }
                    statement = try db.cached("UPDATE \(schema.table(of: destination)) SET \(column) = ? WHERE Z_PK = ?")
                    statement.bind(order.position, at: 1)
                    statement.bind(member, at: 2)
                default:
                    continue
                }
                try statement.step()
                statement.reset()
            }
            var result = SaveResult(insertedKeys: insertedKeys)
            if let history { result.historyTransaction = try history.record(changes, insertedKeys: insertedKeys, tombstones: tombstones, store: self, on: db) }
            beforeCommitHook?()
            try beforeCommitting()
            return result
        }
    }

    /// Notes the external data files that a row's external-storage columns name (those of
    /// `indexes` only, if given) before the row is overwritten or deleted; how many it noted.
    private func noteExternalFiles(of entity: NSEntityDescription, primaryKey: Int64, indexes: [Int]?, on db: SQLiteConnection) throws -> Int {
        guard let files = externalFiles else { return 0 }
        let storage = schema.storage(of: entity)
        guard !storage.externalIndexes.isEmpty else { return 0 }
        let columns = storage.externalIndexes.filter { indexes?.contains($0) ?? true }.compactMap { storage.columns[$0] }
        let before = files.replaced.count
        try noteReplacedExternalFiles(of: entity, primaryKey: primaryKey, columns: columns, on: db)
        return files.replaced.count - before
    }

    /// Where a to-many relationship's rows are written; throws for a relationship this file has
    /// no table or column for (`nil` only for a transient one).
    private func toManyStorage(of relationship: NSRelationshipDescription) throws -> SQLiteSchema.ToManyStorage? {
        if let storage = schema.toManyStorage(of: relationship) { return storage }
        if relationship.isTransient { return nil }
        throw SQLiteSchema.unmapped(relationship)
    }

    /// A property bound by an `INSERT` or `UPDATE`, with its entity column if it has one.
    struct InsertSlot {
        var index: Int
        var entityColumn: String?
        /// An attribute of type object ID: stored as the ID's URI (the row decoder reads it back
        /// so), not as a primary key as a to-one relationship is.
        var isObjectIDAttribute: Bool
        /// Binary data kept with external storage: bound with Apple's marker (`SQLiteExternalData.swift`).
        var isExternalData: Bool
        /// A value bound as it is: neither an ID to resolve nor a relationship nor external data.
        var isPlain: Bool
        init(property: NSPropertyDescription, storage: SQLiteSchema.EntityStorage) {
            index = property.index
            entityColumn = storage.entityColumns[property.index]
            isObjectIDAttribute = (property as? NSAttributeDescription)?.attributeType == .objectIDAttributeType
            isExternalData = (property as? NSAttributeDescription)?.storesExternally ?? false
            isPlain = property is NSAttributeDescription && !isObjectIDAttribute && !isExternalData
        }
    }

    /// An entity's INSERTs: with `Z_PK` bound first, without it (SQLite takes the largest key
    /// + 1), and several rows without it. `Z_ENT` and `Z_OPT` are constants; then the slots'
    /// columns. Each is prepared on the writer when a save first needs it.
    final class InsertStatements {
        enum Kind: Int {
            /// Binds `Z_PK` first.
            case explicit
            /// Leaves `Z_PK` to SQLite.
            case implicit
            /// ``batchSize`` rows without `Z_PK`.
            case batch
        }
        let sql: [String]
        /// ``appendBatch``, or fewer if the rows' parameters would pass SQLite's limit.
        let batchSize: Int
        let slots: [InsertSlot]
        /// Every slot is a value bound as it is (``InsertSlot/isPlain``).
        let plain: Bool
        /// ``SQLiteSchema/EntityStorage/unmappedIndexes`` of the entity.
        let unmapped: [Int]
        /// The statements prepared so far, by kind (owned by the writer's statement cache).
        private var prepared: [SQLiteStatement?] = [nil, nil, nil]

        init(sql: [String], batchSize: Int, slots: [InsertSlot], plain: Bool, unmapped: [Int]) {
            self.unmapped = unmapped
            self.sql = sql
            self.batchSize = batchSize
            self.slots = slots
            self.plain = plain
        }

        /// The statement of `kind` on the writer `db`, prepared at its first use. A failed step
        /// resets its statement, so a statement is never left mid-run for the next save.
        func statement(_ kind: Kind, on db: SQLiteConnection) throws -> SQLiteStatement {
            if let statement = prepared[kind.rawValue] { return statement }
            let statement = try db.cached(sql[kind.rawValue])
            prepared[kind.rawValue] = statement
            return statement
        }
    }

    /// The entity's INSERTs, made once (looked up by the model's entity number).
    private func insertStatements(for entity: NSEntityDescription, on db: SQLiteConnection) -> InsertStatements {
        let number = entity.layout.entityNumber
        if let cached = insertStatements[number] { return cached }
        let storage = schema.storage(of: entity)
        var columns: [String] = []
        var slots: [InsertSlot] = []
        for index in entity.layout.rowIndexes {
            guard let column = storage.columns[index] else { continue }
            let slot = InsertSlot(property: entity.layout.properties[index], storage: storage)
            if let entityColumn = slot.entityColumn { columns.append(entityColumn) }
            columns.append(column)
            slots.append(slot)
        }
        let names = (["Z_ENT", "Z_OPT"] + columns).joined(separator: ", ")
        let values = (["\(storage.number)", "1"] + Array(repeating: "?", count: columns.count)).joined(separator: ", ")
        let table = storage.table
        let parameterLimit = Int(sqlite3_limit(db.handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
        let batchSize = columns.isEmpty ? Self.appendBatch : min(Self.appendBatch, parameterLimit / columns.count)
        let statements = InsertStatements(
            sql: ["INSERT INTO \(table) (Z_PK, \(names)) VALUES (?, \(values))",
                  "INSERT INTO \(table) (\(names)) VALUES (\(values))",
                  "INSERT INTO \(table) (\(names)) VALUES " + Array(repeating: "(\(values))", count: max(batchSize, 1)).joined(separator: ", ")],
            batchSize: batchSize, slots: slots, plain: slots.allSatisfy(\.isPlain), unmapped: storage.unmappedIndexes)
        insertStatements[number] = statements
        return statements
    }

    private func bindSlot(_ slot: InsertSlot, values: PropertyValues, statement: SQLiteStatement,
                          at position: inout Int32, resolve: (NSManagedObjectID) -> NSManagedObjectID) throws {
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
        } else if slot.isExternalData, case .data(let data) = value {
            statement.bind(try externalBytes(data), at: position)
        } else if case .objectID(let id) = value {
            let target = resolve(id)
            if slot.entityColumn != nil {
                statement.bind(Int64(schema.number(of: target.entity)), at: position)
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

/// The root entities of a save's temporary IDs, in order of first use, with how many new keys
/// each gets and the next of them to hand out.
private struct TemporaryRoots {
    var list: [(root: NSEntityDescription, count: Int, next: Int64)] = []

    /// Calls `body` with the table itself (to change it in place), the offset of each insert
    /// with a temporary ID and the position of its root in ``list`` (added if new). The last
    /// root found is tried first, by entity identity: no entity is held, nor retained, from one
    /// insert to the next.
    mutating func forEachTemporaryInsert(of inserts: [SaveChanges.Insert],
                                         _ body: (inout TemporaryRoots, _ offset: Int, _ root: Int) -> Void) {
        var lastEntity: ObjectIdentifier?
        var lastRoot = -1
        for offset in inserts.indices where inserts[offset].isTemporary {
            if ObjectIdentifier(inserts[offset].entity) != lastEntity {
                let entity = inserts[offset].entity
                lastEntity = ObjectIdentifier(entity)
                let root = entity.rootEntity
                if let known = list.firstIndex(where: { $0.root === root }) {
                    lastRoot = known
                } else {
                    list.append((root, 0, 0))
                    lastRoot = list.count - 1
                }
            }
            body(&self, offset, lastRoot)
        }
    }
}
