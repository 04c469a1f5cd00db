import Foundation

// Batch inserts (NSBatchInsertRequest) on PostgreSQL, in one transaction on the writer. The rows
// go to the server as arrays, one parameter per column (`unnest($1::bigint[], $2::text[], …)`),
// many rows a statement, so a batch of 100,000 rows is a few dozen round trips and one prepared
// statement. Keys are the root entity's next ones: its `Z_PRIMARYKEY` row is locked once for the
// whole batch (`SELECT … FOR UPDATE`, in `Z_ENT` order before persistent history's rows, as a save
// takes them) and its `Z_MAX` set once at the end.
//
// With uniqueness constraints the insert is an upsert, as on SQLite: a row that conflicts with a
// stored one updates it (its key kept, `Z_OPT + 1`). PostgreSQL's `ON CONFLICT … DO UPDATE` takes
// one constraint and refuses two rows of one statement that update the same row, so an upsert
// goes row by row, in order: `INSERT … ON CONFLICT DO NOTHING RETURNING`, then, if the row was
// not inserted, an `UPDATE` of the row that holds its values under the first constraint that
// matches (the first `ON CONFLICT` clause that SQLite's statement matches). The stored rows an
// upsert updates are locked first, in the global order (`PostgreSQLStore+UpsertLocks.swift`).
extension PostgreSQLStore {
    /// The most bytes of values sent in one statement (and the most rows, ``batchRowsPerStatement``).
    static let bytesPerStatement = 8 << 20

    func batchInsertInTransaction(_ insert: BatchInsert) throws -> BatchOutcome {
        let entity = insert.entity
        let storage = schema.storage(of: entity)
        let rows = insert.rows
        let slots = rows.slots.filter { storage.columns[$0.index] != nil }
        let columns = slots.map { storage.columns[$0.index]! }
        let targets = SQLiteStore.upsertTargets(of: entity, schema: schema, ent: "t0.\(Self.ent)")
        let constrained = Set(targets.flatMap(\.columns))
        // The rows as arrays: the keys, then each column's values.
        func unnest(_ offsets: [Int]) -> String {
            "unnest($1::bigint[]" + offsets.enumerated().map { parameter, offset in
                ", $\(parameter + 2)::\(PostgreSQLLayout.type(of: slots[offset].attribute.attributeType))[]"
            }.joined() + ") AS u(k\(offsets.map { ", " + columns[$0] }.joined()))"
        }
        let source = unnest(Array(slots.indices))
        // An upsert's lock step needs only the constrained columns (`PostgreSQLStore+UpsertLocks.swift`).
        let lockColumns = slots.indices.filter { constrained.contains(columns[$0]) }
        var sql = "INSERT INTO \(storage.table) (\(Self.pk), \(Self.ent), \(Self.opt)\(columns.map { ", " + $0 }.joined())) "
            + "SELECT u.k, \(storage.number), 1\(columns.map { ", u." + $0 }.joined()) FROM \(source)"
        if !targets.isEmpty { sql += " ON CONFLICT DO NOTHING RETURNING \(Self.pk)" }
        let assignments = columns.filter { !constrained.contains($0) }.map { "\($0) = u.\($0)" } + ["\(Self.opt) = t0.\(Self.opt) + 1"]
        // A row of `t0` that holds a row of `u`'s values under each constraint.
        let conflicts = targets.map { target in
            (target.columns.map { "t0.\($0) = u.\($0)" } + (target.condition.map { [$0] } ?? [])).joined(separator: " AND ")
        }
        let updates = conflicts.map { matches in
            "UPDATE \(storage.table) AS t0 SET \(assignments.joined(separator: ", ")) FROM \(source) WHERE \(matches) RETURNING t0.\(Self.pk), t0.\(Self.ent)"
        }
        let transformable = slots.map { $0.type == .transformableAttributeType || $0.type == .undefinedAttributeType }
        let root = entity.rootEntity
        // Never run twice: the rows are read once (``BatchInsertRows`` does not rewind).
        return try inBatchTransaction("batch insert", isRerunnable: false) { connection in
            // The rows take keys above this store's block of the table: later saves' rows go
            // after them (under the writer's lock, where saves keep their blocks).
            keyBlocks.discard(schema.number(of: root))
            let locked = try connection.execute("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_ENT\" = $1 FOR UPDATE", [.int(Int64(schema.number(of: root)))])
            guard locked.count == 1 else {
                throw CoreDataError.make(.persistentStoreSave, "Z_PRIMARYKEY has no row for entity \(root.name ?? "") in the PostgreSQL store at \(location)")
            }
            let first = locked.int64(0, 0)
            var next = try PrimaryKeys.advance(first, table: entity.name)
            var outcome = BatchOutcome()
            var upserted: [Int64] = [] // the keys of rows an upsert updated, kept for history
            var arrays = BatchArrays(columns: slots.count)
            func send(row: Int) throws {
                guard arrays.rows > 0 else { return }
                let result = try connection.execute(sql, arrays.parameters)
                if targets.isEmpty || result.count == 1 {
                    let end = try PrimaryKeys.advance(next, by: Int64(arrays.rows), table: entity.name)
                    if insert.wantsKeys { outcome.keys += (next..<end).map { FetchedKey(entity: entity, primaryKey: $0) } }
                    next = end
                } else {
                    var key: Int64?
                    var keyEntity = entity // the row updated may be of another entity of the family
                    for update in updates where key == nil {
                        let updated = try connection.execute(update, arrays.parameters)
                        if updated.count > 0 {
                            key = updated.int64(0, 0)
                            keyEntity = schema.entity(numbered: updated.int64(0, 1)) ?? entity
                        }
                    }
                    guard let key else {
                        throw CoreDataError.make(.constraintMerge, "Batch insert row \(row): a uniqueness constraint is violated; nothing was inserted")
                    }
                    if insert.wantsKeys { outcome.keys.append(FetchedKey(entity: keyEntity, primaryKey: key)) }
                    upserted.append(key)
                }
                outcome.count += arrays.rows
                arrays = BatchArrays(columns: slots.count)
            }
            // An upsert's rows, read first: the stored rows they update are locked before any is written.
            var upserts: [(row: Int, values: [PostgreSQLParameter])] = []
            func value(_ offset: Int) throws -> PostgreSQLParameter {
                var value = rows.values[slots[offset].index]
                if transformable[offset], case .object(let box) = value {
                    value = .data(try TransformableCoding.encode(box.value, for: slots[offset].attribute))
                }
                return parameter(value)
            }
            while try rows.next() {
                if !targets.isEmpty {
                    upserts.append((rows.row, try slots.indices.map(value)))
                    continue
                }
                arrays.append(key: try PrimaryKeys.advance(next, by: Int64(arrays.rows), table: entity.name))
                for offset in slots.indices { arrays.append(try value(offset), column: offset) }
                if arrays.rows == batchRowsPerStatement || arrays.bytes >= Self.bytesPerStatement { try send(row: rows.row) }
            }
            try send(row: rows.row)
            try lockRowsUpdated(by: upserts.map(\.values), columns: lockColumns, table: storage.table, source: unnest(lockColumns),
                                conflicts: conflicts, on: connection)
            for (row, values) in upserts {
                arrays.append(key: next)
                for (offset, value) in values.enumerated() { arrays.append(value, column: offset) }
                try send(row: row)
            }
            if next > first + 1 {
                _ = try connection.execute("UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = $1 WHERE \"Z_ENT\" = $2", [.int(next - 1), .int(Int64(schema.number(of: root)))])
            }
            if outcome.count > 0 && BatchDerivedAttributes.exist(for: entity) {
                // The rows written: those above the keys before, and those an upsert updated.
                let keys = BatchArrays.keyList(upserted)
                try recomputeDerivedAttributes(after: .insert(upserted: !upserted.isEmpty), on: [entity], on: connection, rows: (root, { row in
                    SQLFragment("(\(row).\(Self.pk) > ? OR \(row).\(Self.pk) = ANY(?::bigint[]))", [.int(first), .string(keys)])
                }))
            }
            guard var recorder = try PostgreSQLBatchHistory(store: self, on: connection) else { return (outcome, nil) }
            try recorder.record(.insert, root: entity, where: "t0.\(Self.pk) > ?", [.int(first)], on: connection)
            if !upserted.isEmpty {
                try recorder.record(.update, root: entity, where: "t0.\(Self.pk) <= ? AND t0.\(Self.pk) = ANY(?::bigint[])",
                                    [.int(first), .text(BatchArrays.keyList(upserted))],
                                    changed: slots.map(\.index).filter { !constrained.contains(storage.columns[$0] ?? "") }, on: connection)
            }
            return (outcome, try recorder.finish(insert.author, on: connection))
        }
    }
}

/// The rows of a batch as PostgreSQL array literals (`{1,2,3}`, `{"a","b"}`), one per column
/// after the keys', bound as text and cast by the statement to the column's array type.
internal struct BatchArrays {
    private var keys = "{"
    private var columns: [String]
    private(set) var rows = 0
    /// How long the literals are, in UTF-8 bytes (about).
    private(set) var bytes = 0

    init(columns: Int) {
        self.columns = Array(repeating: "{", count: columns)
    }

    /// Starts a row with its key.
    mutating func append(key: Int64) {
        if rows > 0 { keys += "," }
        keys += String(key)
        rows += 1
    }

    /// The current row's value of `column`.
    mutating func append(_ value: PostgreSQLParameter, column: Int) {
        let element = Self.element(value)
        bytes += element.utf8.count + 1
        if rows > 1 { columns[column] += "," }
        columns[column] += element
    }

    /// The parameters of a statement on ``rows``: the keys, then each column.
    var parameters: [PostgreSQLParameter] {
        ([keys] + columns).map { .text($0 + "}") }
    }

    /// `keys` as an array literal.
    static func keyList(_ keys: [Int64]) -> String {
        "{" + keys.map(String.init).joined(separator: ",") + "}"
    }

    /// A value as an element of an array literal: `NULL`, a number, or a quoted string (`\` and
    /// `"` escaped; data as `\x…` hex, which `bytea` reads).
    private static func element(_ value: PostgreSQLParameter) -> String {
        switch value {
        case .null: return "NULL"
        case .int(let v): return String(v)
        case .double(let v):
            if v.isNaN { return "NaN" }
            if v.isInfinite { return v < 0 ? "-Infinity" : "Infinity" }
            return String(v)
        case .numeric(let v): return v
        case .text(let v): return quoted(v)
        case .bytes(let v): return quoted("\\x" + PredicateSQLCompiler.hex(v))
        }
    }

    private static func quoted(_ text: String) -> String {
        var result = "\""
        for character in text.unicodeScalars {
            if character == "\\" || character == "\"" { result.unicodeScalars.append("\\") }
            result.unicodeScalars.append(character)
        }
        return result + "\""
    }
}
