import Foundation

/// The in-memory store: the same rows, keys and versions as the SQLite store, without a file.
///
/// Every request takes the store's lock (reads too: they are fast, in memory). The lock is
/// recursive because requests build on each other (a fetch's records read to-many IDs, a save
/// reads rows and allocates keys).
internal final class InMemoryStore: NSPersistentStore, @unchecked Sendable {
    let lock = NSRecursiveLock()
    struct Row {
        var snapshot: RowSnapshot
    }
    /// Rows by root entity number, then primary key (sorted on demand).
    var rows: [Int: [Int64: Row]] = [:]
    var maxKeys: [Int: Int64] = [:]
    /// Many-to-many pairs by join table: (first column key, second column key).
    var joins: [String: Set<JoinPair>] = [:]
    /// Order values by (relationship name, owner key, member key).
    var orders: [OrderKey: Int64] = [:]
    /// Hidden keys of to-many relationships without inverse: (relationship, member) → owner.
    var hiddenKeys: [HiddenKey: Int64] = [:]

    struct JoinPair: Hashable { var source: Int64; var destination: Int64 }
    struct OrderKey: Hashable { var relationship: ObjectIdentifier; var owner: Int64; var member: Int64 }
    struct HiddenKey: Hashable { var relationship: ObjectIdentifier; var member: Int64 }

    override var type: String { NSInMemoryStoreType }

    override func open(model: NSManagedObjectModel) throws {
        identifier = UUID().uuidString
        metadata = SQLiteStore.makeMetadata(model: model, uuid: identifier)
        metadata[NSStoreUUIDKey] = identifier
        metadata[NSStoreTypeKey] = NSInMemoryStoreType
    }

    override func writeMetadata(_ metadata: [String: Any]) throws { locked { self.metadata = metadata } }

    /// Runs `body` holding the store's lock.
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    func id(_ entity: NSEntityDescription, _ pk: Int64) -> NSManagedObjectID {
        NSManagedObjectID(entity: entity, store: self, primaryKey: pk)
    }

    /// A row as a dictionary for predicate evaluation and sorting: attributes, to-one
    /// relationships as IDs, to-many relationships as arrays of IDs.
    func record(_ row: Row, pk: Int64) -> [String: Any] {
        var record: [String: Any] = [:]
        let layout = row.snapshot.entity.layout
        let objectID = id(row.snapshot.entity, pk)
        for index in layout.rowIndexes {
            if let value = row.snapshot.values[index].objectValue { record[layout.properties[index].name] = value }
        }
        CompositeValues.addComposites(of: layout, to: &record) { row.snapshot.values[$0].objectValue }
        for index in layout.relationshipIndexes {
            guard let relationship = layout.properties[index] as? NSRelationshipDescription, relationship.isToMany else { continue }
            record[relationship.name] = relatedIDs(relationship, of: objectID)
        }
        record["self"] = objectID
        return record
    }

    /// The record of the row an ID names, for key paths through relationships.
    func resolve(_ target: NSManagedObjectID) -> [String: Any]? {
        guard let pk = target.primaryKey, let row = rows[target.entity.layout.root.layout.entityNumber]?[pk] else { return nil }
        return record(row, pk: pk)
    }

    func matching(_ plan: FetchPlan) throws -> [(Int64, Row)] {
        let layout = plan.entity.layout
        let numbers = Set(plan.includesSubentities ? layout.entityNumbers : [layout.entityNumber])
        var result: [(Int64, Row)] = []
        for (pk, row) in rows[layout.root.layout.entityNumber] ?? [:] where numbers.contains(row.snapshot.entity.layout.entityNumber) {
            if let predicate = plan.predicate {
                guard try InMemoryEvaluation.matches(predicate, record: record(row, pk: pk), resolve: resolve) else { continue }
            }
            result.append((pk, row))
        }
        result.sort { $0.0 < $1.0 }
        if !plan.sortKeys.isEmpty {
            let records = Dictionary(uniqueKeysWithValues: result.map { ($0.0, record($0.1, pk: $0.0)) })
            result.sort { a, b in
                InMemoryEvaluation.orderedBefore(records[a.0]!, records[b.0]!, keys: plan.sortKeys, tieBreak: a.0 < b.0, resolve: resolve)
            }
        }
        if plan.offset > 0 { result = Array(result.dropFirst(plan.offset)) }
        if plan.limit > 0 { result = Array(result.prefix(plan.limit)) }
        return result
    }

    override func fetchRows(_ plan: FetchPlan) throws -> [FetchedRow] {
        try locked { try matching(plan).map { FetchedRow(id: id($0.1.snapshot.entity, $0.0), snapshot: $0.1.snapshot) } }
    }

    override func count(_ plan: FetchPlan) throws -> Int { try locked { try matching(plan).count } }

    override func fetchDictionaryRows(_ plan: DictionaryPlan) throws -> [ContiguousArray<StoreValue>] {
        try locked {
            var rowsPlan = plan.fetch
            rowsPlan.limit = 0
            rowsPlan.offset = 0
            if DictionaryEvaluation.sortsResults(plan) { rowsPlan.sortKeys = [] }
            let matched = try matching(rowsPlan).map { pk, row in
                (snapshot: row.snapshot, object: StoreRecordObject(record(row, pk: pk), resolve: resolve))
            }
            return DictionaryEvaluation.answer(plan, rows: matched) { id in
                id.primaryKey.flatMap { rows[id.entity.layout.root.layout.entityNumber]?[$0]?.snapshot }
            }
        }
    }

    override func row(for id: NSManagedObjectID) throws -> RowSnapshot? {
        guard let pk = id.primaryKey else { return nil }
        return locked { rows[id.entity.layout.root.layout.entityNumber]?[pk]?.snapshot }
    }

    override func relatedIDs(for relationship: NSRelationshipDescription, of owner: NSManagedObjectID) throws -> [NSManagedObjectID] {
        locked { relatedIDs(relationship, of: owner) }
    }

    func relatedIDs(_ relationship: NSRelationshipDescription, of owner: NSManagedObjectID) -> [NSManagedObjectID] {
        guard let pk = owner.primaryKey, let destination = relationship.destinationEntity else { return [] }
        let table = rows[destination.layout.root.layout.entityNumber] ?? [:]
        var members: [Int64] = []
        if let join = relationship.joinTable {
            let pairs = joins[join.name] ?? []
            members = join.isOwner ? pairs.filter { $0.source == pk }.map(\.destination) : pairs.filter { $0.destination == pk }.map(\.source)
        } else if relationship.hiddenForeignKeyColumn != nil {
            let key = ObjectIdentifier(relationship)
            members = hiddenKeys.filter { $0.key.relationship == key && $0.value == pk }.map(\.key.member)
        } else if let inverse = relationship.inverseRelationship, !inverse.isToMany {
            members = table.filter { _, row in
                // (A row of an entity without the inverse, declared on a sub-entity, has no slot for it.)
                guard NSManagedObject.has(inverse, row.snapshot.entity) else { return false }
                if case .objectID(let target) = row.snapshot.values[inverse.index], target.primaryKey == pk { return true }
                return false
            }.map(\.key)
        }
        let relationshipKey = ObjectIdentifier(relationship)
        members.sort { a, b in
            let oa = orders[OrderKey(relationship: relationshipKey, owner: pk, member: a)] ?? 0
            let ob = orders[OrderKey(relationship: relationshipKey, owner: pk, member: b)] ?? 0
            return oa != ob ? oa < ob : a < b
        }
        return members.compactMap { key in table[key].map { id($0.snapshot.entity, key) } }
    }

    override func allocatePrimaryKeys(for entity: NSEntityDescription, count: Int) throws -> [Int64] {
        locked {
            let root = entity.layout.root.layout.entityNumber
            let start = (maxKeys[root] ?? 0) + 1
            maxKeys[root] = start + Int64(count) - 1
            return count > 0 ? Array(start...(start + Int64(count) - 1)) : []
        }
    }

    // MARK: Batch requests (InMemoryStore+Batch.swift)

    override func batchInsert(_ insert: BatchInsert, rowCache: StoreRowCache?) throws -> BatchOutcome {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store is read-only; nothing was inserted") }
        return try locked { try atomically(if: insert.entity) { try insertBatch(insert) } }
    }

    override func batchUpdate(_ update: BatchUpdate, rowCache: StoreRowCache?, beforeCommitting: (() throws -> Void)?) throws -> BatchOutcome {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store is read-only; nothing was updated") }
        return try locked { try atomically(if: update.plan.entity, then: beforeCommitting) { try updateBatch(update) } }
    }

    override func batchDelete(_ delete: BatchDelete, rowCache: StoreRowCache?, beforeCommitting: (() throws -> Void)?) throws -> BatchOutcome {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store is read-only; nothing was deleted") }
        return try locked { try atomically(if: delete.plan.entity, then: beforeCommitting) { try deleteBatch(delete) } }
    }

    /// `body`'s result, then `beforeCommitting` run; if either throws, the store as it was
    /// before. (A batch request checks its rows before changing any; derived attributes, when
    /// the model of `entity` has some, are computed after, and may fail, as may the other stores
    /// of the request that `beforeCommitting` writes. Without either nothing is kept: the copy
    /// would cost a table.)
    private func atomically<T>(if entity: NSEntityDescription, then beforeCommitting: (() throws -> Void)? = nil,
                               _ body: () throws -> T) throws -> T {
        guard BatchDerivedAttributes.exist(for: entity) || beforeCommitting != nil else { return try body() }
        let before = (rows, maxKeys, joins, orders, hiddenKeys)
        do {
            let result = try body()
            try beforeCommitting?()
            return result
        } catch {
            (rows, maxKeys, joins, orders, hiddenKeys) = before
            throw error
        }
    }

    /// The rows are in memory already: no row cache.
    override func save(_ changes: SaveChanges, rowCache: StoreRowCache?, beforeCommitting: () throws -> Void) throws -> SaveResult {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store is read-only; nothing was saved") }
        return try locked { try write(changes, beforeCommitting: beforeCommitting) }
    }

    /// One save, all or nothing, under the lock: everything is checked, then `beforeCommitting`
    /// runs, then the rows change.
    private func write(_ changes: SaveChanges, beforeCommitting: () throws -> Void) throws -> SaveResult {
        // Check everything first so that a failed save changes nothing.
        var conflicts: [StoreConflict] = []
        /// The row of `id` must still have `expectedVersion` (an update, or a lock: `detectConflicts(for:)`).
        func check(_ id: NSManagedObjectID, _ expectedVersion: Int64) throws {
            let current = try row(for: id)
            if current?.version != expectedVersion {
                conflicts.append(StoreConflict(id: id, expectedVersion: expectedVersion, persisted: current))
            }
        }
        for update in changes.updates { try check(update.id, update.expectedVersion) }
        for delete in changes.deletes {
            let current = try row(for: delete.id)
            // (Without an expected version, the object never read the row: any version goes.)
            if current == nil || (delete.expectedVersion != nil && current?.version != delete.expectedVersion) {
                conflicts.append(StoreConflict(id: delete.id, expectedVersion: delete.expectedVersion ?? 0, persisted: current))
            }
        }
        for lock in changes.locks { try check(lock.id, lock.expectedVersion) }
        if !conflicts.isEmpty { throw StoreConflictError(conflicts: conflicts) }
        try checkUniqueness(changes)
        try beforeCommitting()

        var insertedKeys = changes.inserts.map { $0.primaryKey ?? 0 }
        for (offset, insert) in changes.inserts.enumerated() where insert.isTemporary {
            insertedKeys[offset] = try allocatePrimaryKeys(for: insert.entity, count: 1)[0]
        }
        var resolver = TemporaryIDResolver(inserts: changes.inserts, keys: insertedKeys, store: self)
        func resolve(_ id: NSManagedObjectID) -> NSManagedObjectID { resolver.resolve(id) }
        func resolved(_ values: PropertyValues, _ entity: NSEntityDescription) -> PropertyValues {
            var values = values
            for index in entity.layout.properties.indices where !entity.layout.properties[index].isStoredInRow { values[index] = .null }
            for index in values.indices { if case .objectID(let target) = values[index] { values[index] = .objectID(resolve(target)) } }
            return values
        }
        for delete in changes.deletes {
            guard let pk = delete.id.primaryKey else { continue }
            rows[delete.id.entity.layout.root.layout.entityNumber]?[pk] = nil
        }
        for (insert, pk) in zip(changes.inserts, insertedKeys) {
            rows[insert.entity.layout.root.layout.entityNumber, default: [:]][pk] =
                Row(snapshot: RowSnapshot(entity: insert.entity, values: resolved(insert.values, insert.entity), version: 1))
        }
        for update in changes.updates {
            let root = update.id.entity.layout.root.layout.entityNumber
            guard let pk = update.id.primaryKey, var row = rows[root]?[pk] else { continue }
            let values = resolved(update.values, update.id.entity)
            for index in update.changedIndexes { row.snapshot.values[index] = values[index] }
            row.snapshot.version = update.nextVersion
            rows[root]?[pk] = row
        }
        for pair in changes.joinDeletes {
            guard let a = resolve(pair.first).primaryKey, let b = resolve(pair.second).primaryKey else { continue }
            joins[pair.relationship.joinTable!.name]?.remove(JoinPair(source: a, destination: b))
        }
        for pair in changes.joinInserts {
            guard let a = resolve(pair.first).primaryKey, let b = resolve(pair.second).primaryKey else { continue }
            joins[pair.relationship.joinTable!.name, default: []].insert(JoinPair(source: a, destination: b))
        }
        for update in changes.foreignKeyUpdates {
            guard let member = resolve(update.member).primaryKey else { continue }
            hiddenKeys[HiddenKey(relationship: ObjectIdentifier(update.relationship), member: member)] = update.owner.flatMap { resolve($0).primaryKey }
        }
        for order in changes.orderUpdates {
            guard let owner = resolve(order.owner).primaryKey, let member = resolve(order.member).primaryKey else { continue }
            orders[OrderKey(relationship: ObjectIdentifier(order.relationship), owner: owner, member: member)] = order.position
        }
        return SaveResult(insertedKeys: insertedKeys)
    }

    /// Refuses a save that would leave two rows with the same values for a uniqueness constraint,
    /// judged on the rows as they would be after the whole save (as SQLite's unique index judges
    /// them): deletes free a value for an insert of the same save; NULLs never clash.
    func checkUniqueness(_ changes: SaveChanges) throws {
        var constrained: [NSEntityDescription] = []
        for entity in (changes.inserts.map(\.entity) + changes.updates.map(\.id.entity)) {
            var current: NSEntityDescription? = entity
            while let candidate = current {
                if !candidate.uniquenessConstraints.isEmpty, !constrained.contains(where: { $0 === candidate }) { constrained.append(candidate) }
                current = candidate.superentity
            }
        }
        guard !constrained.isEmpty else { return }
        // The rows of the affected tables after the save, keyed by primary key (new rows by negative keys).
        var after: [Int: [Int64: RowSnapshot]] = [:]
        for root in Set(constrained.map { $0.layout.rootNumber }) {
            after[root] = (rows[root] ?? [:]).mapValues(\.snapshot)
        }
        for delete in changes.deletes {
            if let pk = delete.id.primaryKey { after[delete.id.entity.layout.rootNumber]?[pk] = nil }
        }
        for update in changes.updates {
            guard let pk = update.id.primaryKey, var row = after[update.id.entity.layout.rootNumber]?[pk] else { continue }
            for index in update.changedIndexes { row.values[index] = update.values[index] }
            after[update.id.entity.layout.rootNumber]?[pk] = row
        }
        for (offset, insert) in changes.inserts.enumerated() {
            let key = insert.primaryKey ?? -Int64(offset + 1)
            after[insert.entity.layout.rootNumber]?[key] = RowSnapshot(entity: insert.entity, values: insert.values, version: 1)
        }
        for entity in constrained {
            for constraint in entity.uniquenessConstraints {
                let indexes = entity.names(ofConstraint: constraint).compactMap { entity.layout.nameTable.index(of: $0) }
                guard !indexes.isEmpty else { continue }
                var seen = Set<[StoreValue]>()
                for row in (after[entity.layout.rootNumber] ?? [:]).values where row.entity.isKindOf(entity: entity) {
                    let key = indexes.map { row.values[$0] }
                    if key.contains(where: \.isNull) { continue }
                    if !seen.insert(key).inserted {
                        throw CoreDataError.make(.constraintMerge,
                            "A uniqueness constraint of \(entity.name ?? "") (\(constraint.map { "\($0)" }.joined(separator: ", "))) is violated; nothing was saved")
                    }
                }
            }
        }
    }
}
