import Foundation

// Batch inserts (NSBatchInsertRequest) in SQL: one prepared INSERT, each row's values bound
// straight from the reused row of `BatchInsertRows`, keys handed out in the order of the rows
// from the root entity's `Z_PRIMARYKEY` sequence, all in one transaction on the writer.
extension SQLiteStore {
    /// ``batchInsert(_:rowCache:)``: the rows in one transaction; with uniqueness constraints,
    /// `INSERT … ON CONFLICT (…) DO UPDATE` (an upsert, as Apple's), whose updated rows keep
    /// their key and get `Z_OPT + 1`. An updated row may be in `rowCache`: the store's rows are
    /// then dropped from it.
    func batchInsertOnWriter(_ insert: BatchInsert, rowCache: StoreRowCache?) throws -> BatchOutcome {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store at \(url?.path ?? "") is read-only; nothing was inserted") }
        let entity = insert.entity
        let storage = schema.storage(of: entity)
        let rows = insert.rows
        // A file of another model version may lack a column: a value for it is refused.
        let unmapped = rows.slots.filter { storage.columns[$0.index] == nil }
        let slots = rows.slots.filter { storage.columns[$0.index] != nil }
        let columns = slots.compactMap { storage.columns[$0.index] }
        let conflictTargets = Self.upsertTargets(of: entity, schema: schema)
        let constrained = Set(conflictTargets.flatMap(\.columns))
        var sql = "INSERT INTO \(storage.table) (Z_PK, Z_ENT, Z_OPT\(columns.map { ", " + $0 }.joined())) VALUES (?, \(storage.number), 1\(String(repeating: ", ?", count: columns.count)))"
        if !conflictTargets.isEmpty {
            let assignments = columns.filter { !constrained.contains($0) }.map { "\($0) = excluded.\($0)" } + ["Z_OPT = ifnull(Z_OPT, 0) + 1"]
            for target in conflictTargets {
                sql += " ON CONFLICT (\(target.columns.joined(separator: ", ")))\(target.condition.map { " WHERE " + $0 } ?? "") DO UPDATE SET \(assignments.joined(separator: ", "))"
            }
            sql += " RETURNING Z_PK, Z_ENT"
        }
        let upserts = !conflictTargets.isEmpty
        let transformable = slots.map { $0.attribute.attributeType == .transformableAttributeType || $0.attribute.attributeType == .undefinedAttributeType }
        let external = slots.map(\.attribute.storesExternally)
        let indexes = slots.map(\.index)
        // An upsert overwrites stored rows' external-storage columns: the files they named are
        // removed after the commit, as a save's replaced files are.
        let replacesFiles = !conflictTargets.isEmpty && external.contains(true)
        let externalColumns = replacesFiles ? slots.indices.filter { external[$0] }.map { columns[$0] } : []
        let root = Int64(schema.number(of: entity.rootEntity))
        return try withWriter { db in
            let files = schema.hasExternalData ? url.flatMap(Self.externalDataFolder(forStoreAt:)).map(ExternalDataFiles.init) : nil
            externalFiles = files
            defer { externalFiles = nil }
            var outcome = BatchOutcome()
            var updatedExisting = false
            do {
                try db.transaction {
                    let first = try db.scalarInt("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(root)") ?? 0
                    var recorder = try SQLiteBatchHistory(store: self, on: db)
                    var upserted: [Int64] = [] // the keys of rows an upsert updated, kept for history and derived attributes
                    let derived = BatchDerivedAttributes.exist(for: entity)
                    var next = try PrimaryKeys.advance(first, table: entity.name)
                    let filesBefore = try externalFileNames(inTable: storage.table, columns: externalColumns, on: db)
                    let statement = try db.cached(sql)
                    defer { statement.reset() }
                    while try rows.next() {
                        for slot in unmapped where !rows.values[slot.index].isNull { throw SQLiteSchema.unmapped(slot.attribute) }
                        statement.bind(next, at: 1)
                        var position: Int32 = 2
                        for offset in slots.indices {
                            let value = rows.values[indexes[offset]]
                            if transformable[offset], case .object(let box) = value {
                                let archive = try TransformableCoding.encode(box.value, for: slots[offset].attribute)
                                statement.bind(external[offset] ? try externalBytes(archive) : archive, at: position)
                            } else if external[offset], case .data(let data) = value {
                                statement.bind(try externalBytes(data), at: position)
                            } else {
                                statement.bind(value, at: position)
                            }
                            position += 1
                        }
                        var key = next
                        var keyEntity = entity // an upsert may update a row of another entity of the family
                        do {
                            if try statement.step(), upserts {
                                key = statement.int64(0)
                                keyEntity = schema.entity(numbered: statement.int64(1)) ?? entity
                            }
                        } catch {
                            statement.reset()
                            throw Self.rowError(error, row: rows.row)
                        }
                        statement.resetKeepingBindings()
                        if key == next { next = try PrimaryKeys.advance(next, table: entity.name) } else {
                            updatedExisting = true
                            if recorder != nil || derived { upserted.append(key) }
                        }
                        outcome.count += 1
                        if insert.wantsKeys { outcome.keys.append(FetchedKey(entity: keyEntity, primaryKey: key)) }
                    }
                    if next > first + 1 {
                        try db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = \(next - 1) WHERE Z_ENT = \(root)")
                    }
                    if updatedExisting && replacesFiles {
                        let filesAfter = try externalFileNames(inTable: storage.table, columns: externalColumns, on: db)
                        // (A file this batch wrote and a later row of it replaced goes too.)
                        let written = Set(files?.created.map(\.lastPathComponent) ?? [])
                        files?.replaced += filesBefore.union(written).subtracting(filesAfter)
                    }
                    if outcome.count > 0 && derived {
                        // The rows written: those above the keys before, and those an upsert updated.
                        let keys = Self.jsonArray(upserted)
                        try recomputeDerivedAttributes(after: .insert(upserted: !upserted.isEmpty), on: [entity], db: db, rows: (entity.rootEntity, { row in
                            SQLFragment("(\(row).Z_PK > ? OR \(row).Z_PK IN (SELECT value FROM json_each(?)))", [.int(first), .string(keys)])
                        }))
                    }
                    if recorder != nil {
                        try recordHistory(of: insert, &recorder!, inserted: first, upserted: upserted,
                                          changed: slots.map(\.index).filter { !constrained.contains(storage.columns[$0] ?? "") }, on: db)
                    }
                }
                files?.removeReplaced(pinnedExternalData)
            } catch {
                files?.discardCreated()
                throw Self.saveError(error)
            }
            if updatedExisting { rowCache?.forgetRows(ofStore: tag) }
            return outcome
        }
    }

    /// Persistent history of a batch insert: an insert for each row above `first` (the keys
    /// before it), an update for each row an upsert changed that was there before.
    private func recordHistory(of insert: BatchInsert, _ history: inout SQLiteBatchHistory, inserted first: Int64, upserted: [Int64],
                               changed: [Int], on db: SQLiteConnection) throws {
        try history.record(.insert, root: insert.entity, where: "t0.Z_PK > ?", [.int(first)], on: db)
        if !upserted.isEmpty {
            let keys = "[" + upserted.map(String.init).joined(separator: ",") + "]"
            try history.record(.update, root: insert.entity, where: "t0.Z_PK <= ? AND t0.Z_PK IN (SELECT value FROM json_each(?))",
                               [.int(first), .string(keys)], changed: changed, on: db)
        }
        try history.finish(insert.author, on: db)
    }

    /// An error of SQLite on one row of a batch, its message naming the row.
    private static func rowError(_ error: Error, row: Int) -> Error {
        let nsError = error as NSError
        guard nsError.domain == NSCocoaErrorDomain, nsError.code == NSSQLiteError else { return error }
        var info = nsError.userInfo
        info[NSLocalizedDescriptionKey] = "Batch insert row \(row): \(nsError.localizedDescription)"
        info["row"] = row
        return NSError(domain: nsError.domain, code: nsError.code, userInfo: info)
    }

    /// The `ON CONFLICT` targets of `entity`'s uniqueness constraints (its own and its
    /// ancestors'), matching the unique indexes the schema makes for them: their columns, and
    /// the condition `Z_ENT IN (…)` of a partial index (`ent` names the column).
    static func upsertTargets(of entity: NSEntityDescription, schema: SQLiteSchema, ent: String = "Z_ENT") -> [(columns: [String], condition: String?)] {
        var targets: [(columns: [String], condition: String?)] = []
        let family = entity.rootEntity.layout.entityNumbers.count
        var current: NSEntityDescription? = entity
        while let owner = current {
            let storage = schema.storage(of: owner)
            for constraint in owner.uniquenessConstraints {
                let names = owner.names(ofConstraint: constraint)
                let columns = names.compactMap { owner.layout.nameTable.index(of: $0).flatMap { storage.columns[$0] } }
                guard !columns.isEmpty, columns.count == names.count else { continue }
                let condition = family > 1 && owner.layout.entityNumbers.count != family
                    ? "\(ent) IN (" + owner.layout.entityNumbers.map(String.init).joined(separator: ", ") + ")" : nil
                targets.append((columns, condition))
            }
            current = owner.superentity
        }
        return targets
    }
}
