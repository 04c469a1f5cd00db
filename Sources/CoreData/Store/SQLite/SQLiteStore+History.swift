import CSQLite
import Foundation

extension SQLiteStore {
    /// Opens read-only, as Apple's store does, a store opened read-write without
    /// ``NSPersistentHistoryTrackingKey`` whose persistent history has rows: saves without the
    /// key would leave holes in the history that other readers rely on. The open succeeds; saves
    /// then fail. (Once the history is purged, the store opens read-write without the key.)
    func openReadOnlyIfHistoryWouldBeLost(_ db: SQLiteConnection) throws {
        guard !isReadOnly, !SQLiteHistory.isRequested(by: options), try SQLiteHistory.hasRows(db) else { return }
        CoreDataLog.warning("Store opened without NSPersistentHistoryTrackingKey but previously had been opened with NSPersistentHistoryTrackingKey - Forcing into Read Only mode store at '\(url?.path ?? "")'")
        isReadOnly = true
    }
}

// Persistent history, recorded (NSPersistentHistoryTrackingKey): Apple's three tables,
// ATRANSACTION, ACHANGE and ATRANSACTIONSTRING, in Apple's layout, and a transaction row with
// one change row per inserted, updated and deleted object written by every save, in the save's
// own SQLite transaction. Apple's framework makes these tables from an ancillary model
// ("PersistentHistory", entities 16001 CHANGE, 16002 TRANSACTION, 16003 TRANSACTIONSTRING); they
// are not the model's entities, so they stay out of its version hashes and of the store's entity
// mapping. `Z_OPT` is NULL on history rows, as in the stores Apple's framework wrote. Reading them: `SQLiteStore+HistoryFetch.swift`.

/// What a store that tracks history knows of the model: each entity's tombstone attributes and
/// the bits of its updated-properties mask. Built once when the store opens; read-only after.
internal final class SQLiteHistory: @unchecked Sendable {
    /// Where Apple numbers its ancillary entities from: `Z_PRIMARYKEY` rows from here on are not the model's.
    static let entityOffset: Int64 = 16000
    /// `Z_ENT` of Apple's ancillary history entities in `Z_PRIMARYKEY`.
    static let changeEntity: Int64 = 16001
    static let transactionEntity: Int64 = 16002
    static let stringEntity: Int64 = 16003
    /// Apple's limit of tombstone attributes per entity.
    static let maxTombstones = 100

    /// Per entity (by model entity number): the attributes kept in `ZTOMBSTONE<i>` on deletion,
    /// by property index, in column order.
    let tombstones: [[Int]]
    /// Per entity (by model entity number): the bits of `ZCOLUMNS`, by property index, each
    /// property's bit positions (a to-one with a destination-entity column has two).
    let bits: [[Int: [Int]]]
    /// Per entity: the property index of each bit (the reverse of ``bits``), and the bit count.
    let propertiesByBit: [[Int?]]
    /// How many `ZTOMBSTONE<i>` columns the model needs: the most any entity keeps.
    let tombstoneCount: Int
    /// The bundle and process names every transaction of this process carries.
    let bundleID: String
    let processID: String
    /// Per entity (by model entity number): whether its changes are recorded; `nil` for all.
    let tracked: [Bool]?

    init(model: NSManagedObjectModel, schema: SQLiteSchema, options: [AnyHashable: Any]? = nil) throws {
        let count = (schema.entities.map(\.layout.entityNumber).max() ?? 0) + 1
        var tombstones = Array(repeating: [Int](), count: count)
        var bits = Array(repeating: [Int: [Int]](), count: count)
        var propertiesByBit = Array(repeating: [Int?](), count: count)
        for entity in schema.entities {
            let layout = entity.layout
            let kept = layout.attributeIndexes.compactMap { index -> (String, Int)? in
                guard let attribute = layout.properties[index] as? NSAttributeDescription,
                      attribute.preservesValueInHistoryOnDeletion || (attribute as? CompositeLeafAttribute)?.composite?.preservesValueInHistoryOnDeletion == true,
                      !attribute.isTransient,
                      !attribute.allowsExternalBinaryDataStorage else { return nil }
                return (attribute.name, index)
            }.sorted { $0.0 < $1.0 }.map(\.1)
            if kept.count > Self.maxTombstones {
                throw CoreDataError.make(.persistentStoreOpen,
                    "NSPersistentHistoryTrackingKey only supports a max of 100 tombstones per entity in the Model (\(entity.name ?? "") has \(kept.count))")
            }
            tombstones[layout.entityNumber] = kept
            (bits[layout.entityNumber], propertiesByBit[layout.entityNumber]) = Self.bitLayout(of: entity, schema: schema)
        }
        self.tombstones = tombstones
        self.bits = bits
        self.propertiesByBit = propertiesByBit
        tombstoneCount = tombstones.map(\.count).max() ?? 0
        processID = ProcessInfo.processInfo.processName
        bundleID = Bundle.main.bundleIdentifier ?? processID
        tracked = try Self.trackedEntities(options?[NSPersistentHistoryTrackingKey], schema: schema, count: count)
    }

    /// Which entities' changes are recorded, from the tracking option's dictionary form, as
    /// Apple's store reads it: `NSPersistentHistoryTrackingEntitiesToInclude` (only these) or
    /// `…ToExclude` (all but these), arrays of entity names, each entity by its own name (a
    /// sub-entity is named on its own). Both at once, a name not a string, or an included name
    /// the model lacks is refused; an excluded name the model lacks is logged and ignored.
    /// `nil` (every entity) without either.
    private static func trackedEntities(_ option: Any?, schema: SQLiteSchema, count: Int) throws -> [Bool]? {
        guard let dictionary = option as? [AnyHashable: Any] ?? (option as? NSDictionary).map({ $0 as! [AnyHashable: Any] }) else { return nil }
        func names(_ key: String) throws -> [String] {
            guard let value = dictionary[key] else { return [] }
            guard let array = value as? [Any], let names = array as? [String] else {
                throw CoreDataError.make(.persistentStoreOpen, "\(key) must be an array of entity names (strings), not \(value)")
            }
            return names
        }
        let included = try names(NSPersistentHistoryTrackingEntitiesToInclude)
        let excluded = try names(NSPersistentHistoryTrackingEntitiesToExclude)
        guard !included.isEmpty || !excluded.isEmpty else { return nil }
        guard included.isEmpty || excluded.isEmpty else {
            throw CoreDataError.make(.persistentStoreOpen,
                "NSPersistentHistoryTrackingEntitiesToExclude & NSPersistentHistoryTrackingEntitiesToInclude are mutually exclusive, you cannot set both options")
        }
        let byName = Dictionary(schema.entities.map { ($0.name ?? "", $0.layout.entityNumber) }, uniquingKeysWith: { first, _ in first })
        var tracked = Array(repeating: included.isEmpty, count: count)
        for name in included + excluded {
            guard let number = byName[name] else {
                if excluded.isEmpty {
                    throw CoreDataError.make(.persistentStoreOpen,
                        "NSPersistentHistoryTrackingEntitiesToInclude has entities not included in the Managed Object Model: '\(name)'")
                }
                CoreDataLog.warning("NSPersistentHistoryTrackingEntitiesToExclude: entity (\(name)) was not found in model.")
                continue
            }
            tracked[number] = !included.isEmpty
        }
        return tracked
    }

    /// Whether the changes of `entity`'s rows are recorded.
    func tracks(_ entity: NSEntityDescription) -> Bool { tracked?[entity.layout.entityNumber] ?? true }

    /// The bits of `ZCOLUMNS` in the order of Apple's `NSSQLEntity`: to-one foreign keys, their
    /// destination-entity columns, their order columns, attributes, to-many relationships,
    /// many-to-many relationships; each group by name. The first bit is the first byte's most
    /// significant.
    private static func bitLayout(of entity: NSEntityDescription, schema: SQLiteSchema) -> ([Int: [Int]], [Int?]) {
        let layout = entity.layout
        let byName = layout.properties.indices.sorted { layout.properties[$0].name < layout.properties[$1].name }
        let toOnes = byName.filter { (layout.properties[$0] as? NSRelationshipDescription).map { !$0.isToMany && !$0.isTransient } ?? false }
        let relationship = { (index: Int) in layout.properties[index] as! NSRelationshipDescription }
        let groups: [[Int]] = [
            toOnes,
            toOnes.filter { schema.storage(of: entity).entityColumns[$0] != nil },
            toOnes.filter { relationship($0).inverseRelationship?.orderColumn != nil },
            // A composite's leaves, each a column (the composite has none).
            byName.filter { (layout.properties[$0] as? NSAttributeDescription).map { !$0.isTransient && !($0 is NSCompositeAttributeDescription) } ?? false },
            byName.filter { (layout.properties[$0] as? NSRelationshipDescription).map { $0.isToMany && $0.joinTable == nil && !$0.isTransient } ?? false },
            byName.filter { (layout.properties[$0] as? NSRelationshipDescription).map { $0.isToMany && $0.joinTable != nil && !$0.isTransient } ?? false },
        ]
        var bits: [Int: [Int]] = [:]
        var properties: [Int?] = []
        for group in groups {
            for index in group {
                bits[index, default: []].append(properties.count)
                properties.append(index)
            }
        }
        return (bits, properties)
    }

    /// The `ZCOLUMNS` mask of an update of `entity` that changed the properties at `indexes`.
    func mask(of entity: NSEntityDescription, changed indexes: [Int]) -> Data {
        let number = entity.layout.entityNumber
        var bytes = [UInt8](repeating: 0, count: (propertiesByBit[number].count + 7) / 8)
        for index in indexes {
            for bit in bits[number][index] ?? [] { bytes[bit >> 3] |= UInt8(0x80) >> UInt8(bit & 7) }
        }
        return Data(bytes)
    }

    /// The properties a `ZCOLUMNS` mask names (a composite for its leaves' bits); `nil` if the
    /// mask is shorter than the entity's bits.
    func properties(of entity: NSEntityDescription, mask: Data) -> Set<NSPropertyDescription>? {
        let byBit = propertiesByBit[entity.layout.entityNumber]
        guard byBit.count <= mask.count * 8 else { return nil }
        var result = Set<NSPropertyDescription>()
        for (bit, index) in byBit.enumerated() where mask[mask.startIndex + bit >> 3] & (UInt8(0x80) >> UInt8(bit & 7)) != 0 {
            guard let index else { continue }
            let property = entity.layout.properties[index]
            result.insert((property as? CompositeLeafAttribute)?.composite ?? property)
        }
        return result
    }

    /// Whether the store options turn history on: `NSPersistentHistoryTrackingKey` true (a
    /// `Bool` or `NSNumber`), or a dictionary of options.
    static func isRequested(by options: [AnyHashable: Any]?) -> Bool {
        switch options?[NSPersistentHistoryTrackingKey] {
        case let flag as Bool: return flag
        case let number as NSNumber: return number.boolValue
        case is [AnyHashable: Any], is NSDictionary: return true
        default: return false
        }
    }

    // MARK: The tables

    /// Apple's DDL of the three tables, with `tombstones` `ZTOMBSTONE<i>` columns.
    static func createStatements(tombstones: Int) -> [String] {
        let tombstoneColumns = (0..<tombstones).map { ", ZTOMBSTONE\($0) BLOB" }.joined()
        return [
            "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB\(tombstoneColumns) )",
            "CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )",
            "CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
            "CREATE INDEX ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)",
            "CREATE INDEX ATRANSACTION_ZAUTHORTS_INDEX ON ATRANSACTION (ZAUTHORTS)",
            "CREATE INDEX ATRANSACTION_ZBUNDLEIDTS_INDEX ON ATRANSACTION (ZBUNDLEIDTS)",
            "CREATE INDEX ATRANSACTION_ZCONTEXTNAMETS_INDEX ON ATRANSACTION (ZCONTEXTNAMETS)",
            "CREATE INDEX ATRANSACTION_ZPROCESSIDTS_INDEX ON ATRANSACTION (ZPROCESSIDTS)",
            "CREATE INDEX Z_TRANSACTION_TransactionAuthorIndex ON ATRANSACTION (ZAUTHOR COLLATE BINARY ASC)",
            "CREATE INDEX Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP COLLATE BINARY ASC)",
            "CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC)",
        ]
    }

    /// Makes what the tables lack (all of them in a store that never tracked history, the
    /// tombstone and string columns in one an older framework or a smaller model wrote) and
    /// their `Z_PRIMARYKEY` rows, in one transaction on the writer.
    func createMissingTables(on db: SQLiteConnection) throws {
        try db.transaction {
            if try !SQLiteStore.tableExists("ACHANGE", in: db) {
                for statement in Self.createStatements(tombstones: tombstoneCount) { try db.execute(statement) }
            } else {
                let changeColumns = try Self.columns(of: "ACHANGE", on: db)
                for index in 0..<tombstoneCount where !changeColumns.contains("ZTOMBSTONE\(index)") {
                    try db.execute("ALTER TABLE ACHANGE ADD COLUMN ZTOMBSTONE\(index) BLOB")
                }
                if try !SQLiteStore.tableExists("ATRANSACTIONSTRING", in: db) {
                    try db.execute(Self.createStatements(tombstones: 0)[2])
                    try db.execute(Self.createStatements(tombstones: 0)[10])
                }
                let transactionColumns = try Self.columns(of: "ATRANSACTION", on: db)
                for name in ["ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS"] where !transactionColumns.contains(name) {
                    try db.execute("ALTER TABLE ATRANSACTION ADD COLUMN \(name) INTEGER")
                }
            }
            for (number, name) in [(Self.changeEntity, "CHANGE"), (Self.transactionEntity, "TRANSACTION"), (Self.stringEntity, "TRANSACTIONSTRING")] {
                let insert = try db.cached("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) SELECT ?, ?, 0, 0 WHERE NOT EXISTS (SELECT 1 FROM Z_PRIMARYKEY WHERE Z_ENT = ?)")
                defer { insert.reset() }
                insert.bind(number, at: 1)
                insert.bind(name, at: 2)
                insert.bind(number, at: 3)
                try insert.step()
            }
        }
    }

    /// The upper-cased column names of `table`.
    static func columns(of table: String, on db: SQLiteConnection) throws -> Set<String> {
        let statement = try db.cached("SELECT name FROM pragma_table_info(?)")
        defer { statement.reset() }
        statement.bind(table, at: 1)
        var names = Set<String>()
        while try statement.step() { names.insert(statement.string(0).uppercased()) }
        return names
    }

    /// Whether the file has persistent history rows (Apple's `hasHistoryRows`).
    static func hasRows(_ db: SQLiteConnection) throws -> Bool {
        guard try SQLiteStore.tableExists("ATRANSACTION", in: db) else { return false }
        return try db.scalarInt("SELECT count(*) FROM (SELECT 1 FROM ATRANSACTION LIMIT 1)") == 1
    }

    // MARK: Recording a save

    /// Writes the history of one save on the writer, inside its transaction: the transaction
    /// row, its strings, and one change row per insert, update and delete. `insertedKeys` are the
    /// inserts' keys; `tombstones` the kept values of deleted rows, by delete position. The
    /// transaction's number, or `nil` when the save changed no tracked entity (and wrote none).
    func record(_ changes: SaveChanges, insertedKeys: [Int64], tombstones: [Int: [StoreValue]], store: SQLiteStore, on db: SQLiteConnection) throws -> Int64? {
        let changeCount = changeCount(of: changes)
        guard changeCount > 0 else { return nil } // a save that changed no tracked entity writes no transaction
        let transaction = try allocate(Self.transactionEntity, count: 1, on: db)
        try writeTransaction(transaction, author: changes.transactionAuthor, contextName: changes.contextName, on: db)

        var key = try allocate(Self.changeEntity, count: changeCount, on: db)
        key = try recordInserts(of: changes, insertedKeys: insertedKeys, firstChange: key, transaction: transaction, store: store, on: db)
        let tombstoneColumns = (0..<tombstoneCount).map { ", ZTOMBSTONE\($0)" }.joined()
        let tombstoneValues = String(repeating: ", ?", count: tombstoneCount)
        let row = try db.cached("INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\(tombstoneColumns)) VALUES (?, \(Self.changeEntity), NULL, ?, ?, ?, ?, ?\(tombstoneValues))")
        defer { row.reset() }
        // The last entity's Z_ENT, looked up once per run of rows of one entity, not per row.
        var lastEntity: NSEntityDescription?, lastNumber: Int64 = 0
        try forEachChange(of: changes, insertedKeys: insertedKeys, includingInserts: false) { type, entity, pk, mask, deletePosition in
            if entity !== lastEntity { lastEntity = entity; lastNumber = Int64(store.schema.number(of: entity)) }
            row.bind(key, at: 1)
            row.bind(type, at: 2)
            row.bind(lastNumber, at: 3)
            row.bind(pk, at: 4)
            row.bind(transaction, at: 5)
            if let mask { row.bind(mask, at: 6) }
            for (offset, value) in (deletePosition.flatMap { tombstones[$0] } ?? []).enumerated() { row.bind(value, at: Int32(7 + offset)) }
            try row.step()
            row.reset()
            key += 1
        }
        return transaction
    }

    /// Writes the change rows of a save's inserts, numbered from `firstChange`; the number after
    /// the last. One `INSERT … SELECT` per run of inserts into one table with consecutive keys
    /// copies each row's key and `Z_ENT` from the row the save has just written. A save's new
    /// objects take their keys in insertion order, so its inserts into a table are normally one
    /// run, and SQLite writes their change rows without a round through Swift per row (a save of
    /// 100,000 objects records its history in less than half the time of a statement per row:
    /// BENCHMARKS.md, (bh)). The change rows keep the inserts' order. A run that finds fewer rows
    /// than it has inserts (none should) fails the save rather than leave history out.
    private func recordInserts(of changes: SaveChanges, insertedKeys: [Int64], firstChange: Int64, transaction: Int64,
                               store: SQLiteStore, on db: SQLiteConnection) throws -> Int64 {
        let inserts = changes.inserts
        var next = firstChange, start = 0
        while start < inserts.count {
            let entity = inserts[start].entity
            guard tracks(entity) else { start += 1; continue }
            let table = store.schema.table(of: entity)
            var end = start + 1
            while end < inserts.count, insertedKeys[end] == insertedKeys[end - 1] + 1 {
                let other = inserts[end].entity
                guard other === entity || (tracks(other) && store.schema.table(of: other) == table) else { break }
                end += 1
            }
            let run = try db.cached("INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID) SELECT ?1 + (Z_PK - ?2), \(Self.changeEntity), NULL, 0, Z_ENT, Z_PK, ?3 FROM \(table) WHERE Z_PK BETWEEN ?2 AND ?4")
            defer { run.reset() }
            run.bind(next, at: 1)
            run.bind(insertedKeys[start], at: 2)
            run.bind(transaction, at: 3)
            run.bind(insertedKeys[end - 1], at: 4)
            try run.step()
            guard db.changes == end - start else {
                throw CoreDataError.make(.persistentStoreSave, "Persistent history expected the \(end - start) rows just inserted into \(table) with keys \(insertedKeys[start]) to \(insertedKeys[end - 1]), and found \(db.changes)")
            }
            next += Int64(end - start)
            start = end
        }
        return next
    }

    /// Writes the transaction row `number` (its key already allocated): the author and context
    /// name of the context that saved or ran the batch request, this process's bundle and
    /// process names (interned in `ATRANSACTIONSTRING`), and the time.
    func writeTransaction(_ number: Int64, author: String?, contextName: String?, on db: SQLiteConnection) throws {
        let insert = try db.cached("INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP) VALUES (?, \(Self.transactionEntity), NULL, ?, ?, ?, ?, ?)")
        defer { insert.reset() }
        insert.bind(number, at: 1)
        for (position, name) in [author, bundleID, contextName, processID].enumerated() {
            if let name { insert.bind(try intern(name, on: db), at: Int32(position + 2)) } else { insert.bindNull(Int32(position + 2)) }
        }
        insert.bind(Date().timeIntervalSinceReferenceDate, at: 6)
        try insert.step()
    }

    /// The kept values of a row about to be deleted, read on the writer; `nil` when its entity
    /// keeps none (no read) or the row is gone.
    func tombstone(of id: NSManagedObjectID, store: SQLiteStore, on db: SQLiteConnection) throws -> [StoreValue]? {
        let kept = tombstones[id.entity.layout.entityNumber]
        guard !kept.isEmpty, tracks(id.entity), let row = try store.readRow(id, on: db) else { return nil }
        return kept.map { row.values[$0] }
    }

    /// `count` keys from the `Z_MAX` of the ancillary entity `number`: the first of them.
    func allocate(_ number: Int64, count: Int, on db: SQLiteConnection) throws -> Int64 {
        let update = try db.cached("UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + ? WHERE Z_ENT = ? RETURNING Z_MAX")
        defer { update.reset() }
        update.bind(Int64(count), at: 1)
        update.bind(number, at: 2)
        guard try update.step() else {
            throw CoreDataError.make(.persistentStoreSave, "Z_PRIMARYKEY has no row for the persistent history entity \(number)")
        }
        let last = update.columnType(0) == SQLITE_INTEGER ? update.int64(0) : .max // (a REAL past the largest integer)
        _ = try PrimaryKeys.advance(last, by: 0, table: "persistent history entity \(number)")
        return last - Int64(count) + 1
    }

    /// The `ATRANSACTIONSTRING` key of `name`, added if new.
    private func intern(_ name: String, on db: SQLiteConnection) throws -> Int64 {
        let find = try db.cached("SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ?")
        find.bind(name, at: 1)
        let found = try find.step() ? find.int64(0) : nil
        find.reset()
        if let found { return found }
        let key = try allocate(Self.stringEntity, count: 1, on: db)
        let insert = try db.cached("INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, \(Self.stringEntity), NULL, ?)")
        defer { insert.reset() }
        insert.bind(key, at: 1)
        insert.bind(name, at: 2)
        try insert.step()
        return key
    }
}
