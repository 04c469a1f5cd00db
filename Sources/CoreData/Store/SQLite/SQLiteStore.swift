import CSQLite
import Foundation

/// The SQLite store: a file in Core Data's own layout, in WAL mode, written one transaction per save.
internal final class SQLiteStore: NSPersistentStore, @unchecked Sendable {
    private var connection: SQLiteConnection?
    private var schema: SQLiteSchema!
    /// Entities by `Z_ENT` number (index 0 unused): an array, read once per fetched row.
    private var entitiesByNumber: [NSEntityDescription?] = []
    private var decodePlans: [ObjectIdentifier: FamilyDecoder] = [:]

    override var type: String { NSSQLiteStoreType }

    /// The open connection; throws once the store has been removed from its coordinator (objects
    /// and IDs may outlive their store: their faults then read as deleted, their saves fail).
    private var db: SQLiteConnection {
        get throws {
            guard let connection else {
                throw CoreDataError.make(.persistentStoreOperation, "The store at \(url?.path ?? "") has been removed from its coordinator")
            }
            return connection
        }
    }

    // MARK: Opening

    override func open(model: NSManagedObjectModel) throws {
        guard let url else { throw CoreDataError.make(.persistentStoreOpen, "A SQLite store needs a file URL") }
        let path = url.path
        try Self.checkHeader(at: url)
        let fileExists = FileManager.default.fileExists(atPath: path)
        if !fileExists {
            let folder = url.deletingLastPathComponent()
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, readOnly: isReadOnly && fileExists, create: !isReadOnly)
        } catch let error as NSError {
            throw Self.openError(error, url: url)
        }
        schema = SQLiteSchema(model: model)
        let highest = schema.entities.map(\.layout.entityNumber).max() ?? 0
        entitiesByNumber = Array(repeating: nil, count: highest + 1)
        for entity in schema.entities { entitiesByNumber[entity.layout.entityNumber] = entity }
        do {
            if try (connection.scalarInt("SELECT count(*) FROM sqlite_master") ?? 0) == 0 && !isReadOnly {
                // A new store: Apple's page size and incremental auto-vacuum, set before anything is written.
                try connection.execute("PRAGMA page_size = 4096")
                try connection.execute("PRAGMA auto_vacuum = 2")
            }
            try applyPragmas(connection)
            let hasMetadata = try Self.tableExists("Z_METADATA", in: connection)
            if hasMetadata {
                let metadata = try Self.readMetadata(connection)
                try checkCompatibility(metadata, model: model)
                self.metadata = metadata
                self.identifier = metadata[NSStoreUUIDKey] as? String ?? UUID().uuidString
            } else {
                let tableCount = try connection.scalarInt("SELECT count(*) FROM sqlite_master WHERE type = 'table'") ?? 0
                guard tableCount == 0 else {
                    throw CoreDataError.make(.incompatibleSchema,
                        "The SQLite file at \(path) is not a Core Data store (it has tables but no Z_METADATA); it was left untouched",
                        extra: [NSFilePathErrorKey: path])
                }
                guard !isReadOnly else {
                    throw CoreDataError.make(.persistentStoreOpen, "Can't create a read-only store at \(path)")
                }
                let uuid = UUID().uuidString
                let metadata = Self.makeMetadata(model: model, uuid: uuid)
                try connection.transaction {
                    for statement in schema.createStatements { try connection.execute(statement) }
                    let insert = try connection.cached("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)")
                    for entity in schema.entities {
                        insert.reset()
                        insert.bind(Int64(entity.layout.entityNumber), at: 1)
                        insert.bind(entity.name ?? "", at: 2)
                        insert.bind(Int64(entity.superentity?.layout.entityNumber ?? 0), at: 3)
                        try insert.step()
                    }
                    try Self.writeMetadata(metadata, uuid: uuid, to: connection)
                }
                self.metadata = metadata
                self.identifier = uuid
            }
        } catch let error as NSError {
            throw Self.openError(error, url: url)
        }
        self.connection = connection
    }

    override func close() {
        insertStatements.removeAll()
        connection = nil
        decodePlans.removeAll()
    }

    private func applyPragmas(_ connection: SQLiteConnection) throws {
        if !isReadOnly { try connection.execute("PRAGMA journal_mode = WAL") }
        try connection.execute("PRAGMA synchronous = NORMAL")
        try connection.execute("PRAGMA foreign_keys = OFF")
        try connection.execute("PRAGMA recursive_triggers = ON")
        if let seconds = (options?[NSPersistentStoreTimeoutOption] as? NSNumber)?.doubleValue, seconds.isFinite, seconds >= 0 {
            sqlite3_busy_timeout(connection.handle, Int32(min(seconds, 2_000_000) * 1000)) // how long to wait for a lock
        }
        if let pragmas = options?[NSSQLitePragmasOption] as? [String: Any] {
            for (name, value) in pragmas.sorted(by: { $0.key < $1.key }) {
                guard name.allSatisfy({ $0.isLetter || $0 == "_" }) else { continue }
                let text = "\(value)"
                guard text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else { continue }
                try connection.execute("PRAGMA \(name) = \(text)")
            }
        }
    }

    /// Rejects files that are not SQLite databases before SQLite touches them.
    static func checkHeader(at url: URL) throws {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return }
        defer { try? handle.close() }
        let header = handle.readData(ofLength: 16)
        guard !header.isEmpty else { return } // an empty file becomes a new store
        if header != Data("SQLite format 3\0".utf8) {
            throw NSError(domain: NSCocoaErrorDomain, code: 259, userInfo: [
                NSLocalizedDescriptionKey: "The file at \(url.path) is not a SQLite database, so it can't be opened as a Core Data store; it was left untouched.",
                NSFilePathErrorKey: url.path, NSSQLiteErrorDomain: 26,
            ])
        }
    }

    /// Maps SQLite's "not a database" and "corrupt" failures to Core Data's file errors.
    private static func openError(_ error: NSError, url: URL) -> NSError {
        guard error.domain == NSCocoaErrorDomain, error.code == NSSQLiteError,
              let sqliteCode = error.userInfo[NSSQLiteErrorDomain] as? Int else { return error }
        let primary = sqliteCode & 0xff
        if primary == Int(SQLITE_CORRUPT) || primary == Int(SQLITE_NOTADB) {
            return NSError(domain: NSCocoaErrorDomain, code: 259, userInfo: [
                NSLocalizedDescriptionKey: "The store at \(url.path) is damaged (truncated or corrupted) and can't be opened; it was left untouched. SQLite said: \(error.localizedDescription)",
                NSFilePathErrorKey: url.path, NSSQLiteErrorDomain: sqliteCode, NSUnderlyingErrorKey: error,
            ])
        }
        return error
    }

    static func tableExists(_ name: String, in connection: SQLiteConnection) throws -> Bool {
        let statement = try connection.cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        defer { statement.reset() }
        statement.bind(name, at: 1)
        return try statement.step()
    }

    // MARK: Metadata

    static func makeMetadata(model: NSManagedObjectModel, uuid: String) -> [String: Any] {
        var identifiers = model.versionIdentifiers.compactMap { $0 as? String }.sorted()
        if identifiers.isEmpty { identifiers = [""] }
        return [
            NSStoreUUIDKey: uuid,
            NSStoreTypeKey: NSSQLiteStoreType,
            NSStoreModelVersionHashesKey: model.entityVersionHashesByName,
            NSStoreModelVersionHashesVersionKey: 3,
            NSStoreModelVersionIdentifiersKey: identifiers,
            NSStoreModelVersionHashesDigestKey: VersionHash.hashesDigest(model),
            NSStoreModelVersionChecksumKey: model.versionChecksum,
            NSPersistenceFrameworkVersionKey: 1414,
            "_NSAutoVacuumLevel": "2",
        ]
    }

    static func readMetadata(_ connection: SQLiteConnection) throws -> [String: Any] {
        let statement = try connection.cached("SELECT Z_UUID, Z_PLIST FROM Z_METADATA WHERE Z_VERSION = 1")
        defer { statement.reset() }
        guard try statement.step() else { return [:] }
        let uuid = statement.isNull(0) ? nil : statement.string(0)
        var metadata: [String: Any] = [:]
        if !statement.isNull(1) {
            let data = statement.data(1)
            if let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] {
                metadata = plist
            } else if let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [AnyHashable: Any] {
                for (key, value) in plist { if let key = key as? String { metadata[key] = value } }
            }
        }
        if metadata[NSStoreUUIDKey] == nil, let uuid { metadata[NSStoreUUIDKey] = uuid }
        if metadata[NSStoreTypeKey] == nil { metadata[NSStoreTypeKey] = NSSQLiteStoreType }
        return metadata
    }

    static func writeMetadata(_ metadata: [String: Any], uuid: String, to connection: SQLiteConnection) throws {
        // Apple keeps the UUID in Z_UUID only; the metadata API adds it back when reading.
        var plist = metadata
        plist[NSStoreUUIDKey] = nil
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        let statement = try connection.cached("INSERT OR REPLACE INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)")
        defer { statement.reset() }
        statement.bind(uuid, at: 1)
        statement.bind(data, at: 2)
        try statement.step()
    }

    /// Reads a store file's metadata without opening it as a store.
    static func readMetadata(at url: URL) throws -> [String: Any] {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw NSError(domain: NSCocoaErrorDomain, code: 260, userInfo: [
                NSLocalizedDescriptionKey: "There is no store at \(url.path)", NSFilePathErrorKey: url.path])
        }
        try checkHeader(at: url)
        do {
            let connection = try SQLiteConnection(path: url.path, readOnly: true, create: false)
            guard try tableExists("Z_METADATA", in: connection) else {
                throw CoreDataError.make(.incompatibleSchema, "The SQLite file at \(url.path) is not a Core Data store (no Z_METADATA table)")
            }
            return try readMetadata(connection)
        } catch let error as NSError {
            throw openError(error, url: url)
        }
    }

    override func writeMetadata(_ metadata: [String: Any]) throws {
        try db.transaction { try Self.writeMetadata(metadata, uuid: identifier, to: db) }
        self.metadata = metadata
    }

    /// Throws `NSPersistentStoreIncompatibleVersionHashError` (134100) naming the entities whose
    /// hashes differ between the store and the model.
    private func checkCompatibility(_ metadata: [String: Any], model: NSManagedObjectModel) throws {
        if let type = metadata[NSStoreTypeKey] as? String, type != NSSQLiteStoreType {
            throw CoreDataError.make(.persistentStoreTypeMismatch, "The store at \(url?.path ?? "") has type \(type), not SQLite")
        }
        let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]
        let current = model.entityVersionHashesByName
        var differences: [String] = []
        for name in Set(stored.keys).union(current.keys).sorted() {
            let storedHash = stored[name] as? Data
            let currentHash = current[name]
            switch (storedHash, currentHash) {
            case (nil, _?): differences.append("\(name) (not in the store)")
            case (_?, nil): differences.append("\(name) (not in the model)")
            case let (a?, b?) where a != b: differences.append("\(name) (changed)")
            default: break
            }
        }
        guard differences.isEmpty else {
            throw CoreDataError.make(.incompatibleVersionHash,
                "The model used to open the store is incompatible with the one used to create the store at \(url?.path ?? ""); entities that differ: \(differences.joined(separator: ", ")). The store was left untouched.",
                extra: ["metadata": metadata, "reason": "The model used to open the store is incompatible with the one used to create the store",
                        "NSAffectedEntitiesKey": differences, NSFilePathErrorKey: url?.path ?? ""])
        }
    }

    // MARK: Reading

    /// Decodes rows of one root table: which column holds which property, per row entity.
    private final class FamilyDecoder {
        struct Slot { var index: Int; var column: Int32; var kind: Kind; var entityColumn: Int32 }
        enum Kind { case int, bool, double, decimal, string, date, data, uuid, url, objectIDAttribute, toOne(NSEntityDescription) }
        /// What a row of one entity of the family decodes to.
        final class Plan {
            let entity: NSEntityDescription
            let slots: [Slot]
            let propertyCount: Int
            init(entity: NSEntityDescription, slots: [Slot], propertyCount: Int) {
                self.entity = entity
                self.slots = slots
                self.propertyCount = propertyCount
            }
        }
        let selectList: String
        /// Plans by `Z_ENT` number (`nil` for numbers outside the family).
        var plans: [Plan?] = []

        init(root: NSEntityDescription, schema: SQLiteSchema) {
            let table = schema.tables.first { $0.root === root }!
            let columns = table.columns.map(\.name)
            selectList = columns.map { "t0." + $0 }.joined(separator: ", ")
            var position: [String: Int32] = [:]
            for (offset, name) in columns.enumerated() { position[name] = Int32(offset) }
            for entity in schema.entities where entity.rootEntity === root {
                var slots: [Slot] = []
                for index in entity.layout.rowIndexes {
                    let property = entity.layout.properties[index]
                    guard let column = position[property.columnName] else { continue }
                    let kind: Kind
                    var entityColumn: Int32 = -1
                    if let relationship = property as? NSRelationshipDescription {
                        kind = .toOne(relationship.destinationEntity!)
                        if let name = relationship.entityColumn, let p = position[name] { entityColumn = p }
                    } else {
                        switch (property as! NSAttributeDescription).attributeType {
                        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType: kind = .int
                        case .booleanAttributeType: kind = .bool
                        case .doubleAttributeType, .floatAttributeType: kind = .double
                        case .decimalAttributeType: kind = .decimal
                        case .stringAttributeType: kind = .string
                        case .dateAttributeType: kind = .date
                        case .UUIDAttributeType: kind = .uuid
                        case .URIAttributeType: kind = .url
                        case .objectIDAttributeType: kind = .objectIDAttribute
                        case .binaryDataAttributeType, .transformableAttributeType, .undefinedAttributeType, .compositeAttributeType: kind = .data
                        }
                    }
                    slots.append(Slot(index: index, column: column, kind: kind, entityColumn: entityColumn))
                }
                let number = entity.layout.entityNumber
                if plans.count <= number { plans.append(contentsOf: repeatElement(nil, count: number + 1 - plans.count)) }
                plans[number] = Plan(entity: entity, slots: slots, propertyCount: entity.layout.properties.count)
            }
        }
    }

    private func decoder(for entity: NSEntityDescription) -> FamilyDecoder {
        let root = entity.rootEntity
        if let decoder = decodePlans[ObjectIdentifier(root)] { return decoder }
        let decoder = FamilyDecoder(root: root, schema: schema)
        decodePlans[ObjectIdentifier(root)] = decoder
        return decoder
    }

    /// The entity whose `Z_ENT` is `number`, if the model has one.
    private func entity(numbered number: Int64) -> NSEntityDescription? {
        number >= 0 && number < entitiesByNumber.count ? entitiesByNumber[Int(number)] : nil
    }

    /// Reads the current row of `statement` (whose first columns are Z_PK, Z_ENT, Z_OPT, then the family's columns).
    private func decodeRow(_ statement: SQLiteStatement, decoder: FamilyDecoder) -> FetchedRow? {
        let pk = statement.int64(0)
        let number = Int(statement.int64(1))
        guard number >= 0, number < decoder.plans.count, let plan = decoder.plans[number] else { return nil }
        let entity = plan.entity
        // Written in place: every slot starts as .null (no payload), so a decoded value may be
        // stored over it without destroying anything.
        let values = ContiguousArray<StoreValue>(unsafeUninitializedCapacity: plan.propertyCount) { buffer, count in
            count = plan.propertyCount
            guard count > 0, let base = buffer.baseAddress else { return }
            base.initialize(repeating: .null, count: count)
            for slot in plan.slots {
                let column = slot.column
                if case .int = slot.kind {
                    // One call per integer column: NULL reads as 0, so the type is checked only then.
                    let value = statement.int64(column)
                    if value != 0 || !statement.isNull(column) { (base + slot.index).initialize(to: .int(value)) }
                    continue
                }
                if statement.isNull(column) { continue }
                (base + slot.index).initialize(to: decodeValue(slot, statement))
            }
        }
        let snapshot = RowSnapshot(entity: entity, values: values, version: statement.int64(2))
        return FetchedRow(store: self, primaryKey: pk, snapshot: snapshot)
    }

    /// The value of a non-NULL column in the storage form of its property (`.null` if unreadable).
    private func decodeValue(_ slot: FamilyDecoder.Slot, _ statement: SQLiteStatement) -> StoreValue {
        let column = slot.column
        switch slot.kind {
        case .int: return .int(statement.int64(column))
        case .bool: return .bool(statement.int64(column) != 0)
        case .double: return .double(statement.double(column))
        case .decimal:
            if statement.columnType(column) == SQLITE_TEXT, let d = Decimal(string: statement.string(column), locale: Locale(identifier: "en_US_POSIX")) {
                return .decimal(d)
            } else if statement.columnType(column) == SQLITE_INTEGER {
                return .decimal(Decimal(statement.int64(column)))
            } else {
                // The shortest decimal text of the double is the value that was written.
                let double = statement.double(column)
                return .decimal(Decimal(string: "\(double)", locale: Locale(identifier: "en_US_POSIX")) ?? Decimal(double))
            }
        case .string: return .string(statement.string(column))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: statement.double(column)))
        case .data: return .data(statement.data(column))
        case .uuid:
            let data = statement.data(column)
            if data.count == 16 {
                return .uuid(data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
            } else if let uuid = UUID(uuidString: statement.string(column)) {
                return .uuid(uuid)
            }
        case .url:
            if let url = URL(string: statement.string(column)) { return .url(url) }
        case .objectIDAttribute:
            if let url = URL(string: statement.string(column)), let id = persistentStoreCoordinator?.managedObjectID(forURIRepresentation: url) {
                return .objectID(id)
            }
        case .toOne(let destination):
            var target = destination
            if slot.entityColumn >= 0, !statement.isNull(slot.entityColumn),
               let exact = self.entity(numbered: statement.int64(slot.entityColumn)) {
                target = exact
            }
            return .objectID(NSManagedObjectID(entity: target, store: self, primaryKey: statement.int64(column)))
        }
        return .null
    }

    /// The SQL and bindings of a plan's query, selecting `columns`.
    private func query(_ plan: FetchPlan, columns: String, countOnly: Bool = false) throws -> (String, [StoreValue]) {
        let layout = plan.entity.layout
        var compiler = PredicateSQLCompiler(entity: plan.entity)
        var conditions: [String] = []
        var bindings: [StoreValue] = []
        let family = schema.entities.filter { $0.rootEntity === layout.root }
        let numbers = plan.includesSubentities ? layout.entityNumbers : [layout.entityNumber]
        if numbers.count != family.count {
            conditions.append("t0.Z_ENT IN (" + numbers.map(String.init).joined(separator: ", ") + ")")
        }
        if let predicate = plan.predicate {
            let fragment = try compiler.compile(predicate)
            conditions.append("(" + fragment.sql + ")")
            bindings.append(contentsOf: fragment.bindings)
        }
        var order: [String] = []
        if !countOnly {
            for key in plan.sortKeys {
                let fragment = try compiler.orderBy(key)
                order.append(fragment.sql)
                bindings.append(contentsOf: fragment.bindings)
            }
            order.append("t0.Z_PK")
        }
        let whereBindings = bindings
        var sql = "SELECT \(columns) FROM \(layout.tableName) t0"
        if !compiler.joins.isEmpty { sql += " " + compiler.joins.joined(separator: " ") }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        if !countOnly && (plan.limit > 0 || plan.offset > 0) {
            sql += " LIMIT \(plan.limit > 0 ? plan.limit : -1) OFFSET \(max(plan.offset, 0))"
        }
        return (sql, whereBindings)
    }

    override func fetchRows(_ plan: FetchPlan) throws -> [FetchedRow] {
        let decoder = self.decoder(for: plan.entity)
        let (sql, bindings) = try query(plan, columns: decoder.selectList)
        let statement = try db.cached(sql)
        defer { statement.reset() }
        for (offset, value) in bindings.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
        var rows: [FetchedRow] = []
        while try statement.step() {
            if let row = decodeRow(statement, decoder: decoder) { rows.append(row) }
        }
        return rows
    }

    override func fetchIDs(_ plan: FetchPlan) throws -> [NSManagedObjectID] {
        let (sql, bindings) = try query(plan, columns: "t0.Z_PK, t0.Z_ENT")
        let statement = try db.cached(sql)
        defer { statement.reset() }
        for (offset, value) in bindings.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
        var ids: [NSManagedObjectID] = []
        while try statement.step() {
            guard let entity = self.entity(numbered: statement.int64(1)) else { continue }
            ids.append(NSManagedObjectID(entity: entity, store: self, primaryKey: statement.int64(0)))
        }
        return ids
    }

    override func count(_ plan: FetchPlan) throws -> Int {
        var inner = plan
        inner.sortKeys = []
        let (sql, bindings) = try query(inner, columns: "t0.Z_PK", countOnly: true)
        var wrapped = "SELECT count(*) FROM (\(sql)"
        if plan.limit > 0 || plan.offset > 0 { wrapped += " LIMIT \(plan.limit > 0 ? plan.limit : -1) OFFSET \(max(plan.offset, 0))" }
        wrapped += ")"
        let statement = try db.cached(wrapped)
        defer { statement.reset() }
        for (offset, value) in bindings.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
        guard try statement.step() else { return 0 }
        return Int(statement.int64(0))
    }

    override func row(for id: NSManagedObjectID) throws -> RowSnapshot? {
        guard let pk = id.primaryKey else { return nil }
        let decoder = self.decoder(for: id.entity)
        let statement = try db.cached("SELECT \(decoder.selectList) FROM \(id.entity.layout.tableName) t0 WHERE t0.Z_PK = ?")
        defer { statement.reset() }
        statement.bind(pk, at: 1)
        guard try statement.step(), let row = decodeRow(statement, decoder: decoder) else { return nil }
        return row.snapshot
    }

    override func relatedIDs(for relationship: NSRelationshipDescription, of id: NSManagedObjectID) throws -> [NSManagedObjectID] {
        guard let pk = id.primaryKey, let destination = relationship.destinationEntity else { return [] }
        let sql: String
        if let join = relationship.joinTable {
            let order = join.orderColumn.map { "j.\($0), " } ?? ""
            sql = "SELECT t.Z_PK, t.Z_ENT FROM \(join.name) j JOIN \(destination.layout.tableName) t ON t.Z_PK = j.\(join.destinationColumn) WHERE j.\(join.sourceColumn) = ? ORDER BY \(order)t.Z_PK"
        } else if let hidden = relationship.hiddenForeignKeyColumn {
            let order = relationship.orderColumn.map { "\($0), " } ?? ""
            sql = "SELECT Z_PK, Z_ENT FROM \(destination.layout.tableName) WHERE \(hidden) = ? ORDER BY \(order)Z_PK"
        } else if let inverse = relationship.inverseRelationship, !inverse.isToMany {
            let order = relationship.orderColumn.map { "\($0), " } ?? ""
            sql = "SELECT Z_PK, Z_ENT FROM \(destination.layout.tableName) WHERE \(inverse.columnName) = ? ORDER BY \(order)Z_PK"
        } else {
            return []
        }
        let statement = try db.cached(sql)
        defer { statement.reset() }
        statement.bind(pk, at: 1)
        var ids: [NSManagedObjectID] = []
        while try statement.step() {
            guard let entity = self.entity(numbered: statement.int64(1)) else { continue }
            ids.append(NSManagedObjectID(entity: entity, store: self, primaryKey: statement.int64(0)))
        }
        return ids
    }

    // MARK: Writing

    override func allocatePrimaryKeys(for entity: NSEntityDescription, count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store at \(url?.path ?? "") is read-only") }
        return try db.transaction { try allocateKeys(root: entity.rootEntity, count: count) }
    }

    /// Hands out keys from the root entity's `Z_MAX` (rows of a hierarchy share one table, so one sequence).
    private func allocateKeys(root: NSEntityDescription, count: Int) throws -> [Int64] {
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

    override func save(_ changes: SaveChanges) throws -> SaveResult {
        guard !isReadOnly else { throw CoreDataError.make(.persistentStoreSave, "The store at \(url?.path ?? "") is read-only; nothing was saved") }
        do {
            return try write(changes)
        } catch let error as NSError where error.code == NSSQLiteError
                    && (error.userInfo[NSSQLiteErrorDomain] as? Int).map({ $0 == 2067 /* SQLITE_CONSTRAINT_UNIQUE */ || $0 == 1555 /* SQLITE_CONSTRAINT_PRIMARYKEY */ }) == true {
            throw CoreDataError.make(.constraintMerge,
                "A uniqueness constraint is violated: \(error.localizedDescription). Nothing was saved.",
                extra: [NSUnderlyingErrorKey: error])
        }
    }

    /// One save in one transaction.
    private func write(_ changes: SaveChanges) throws -> SaveResult {
        let db = try self.db
        return try db.transaction {
            // Primary keys in insertion order, one sequence per root table.
            var insertedIDs = changes.inserts.map(\.id)
            var pending: [ObjectIdentifier: [Int]] = [:]
            var roots: [NSEntityDescription] = []
            for (offset, insert) in changes.inserts.enumerated() where insert.id.isTemporaryID {
                let root = insert.id.entity.rootEntity
                if pending[ObjectIdentifier(root)] == nil { roots.append(root) }
                pending[ObjectIdentifier(root), default: []].append(offset)
            }
            for root in roots {
                let offsets = pending[ObjectIdentifier(root)]!
                let keys = try allocateKeys(root: root, count: offsets.count)
                for (offset, key) in zip(offsets, keys) {
                    insertedIDs[offset] = NSManagedObjectID(entity: changes.inserts[offset].id.entity, store: self, primaryKey: key)
                }
            }
            var resolver = TemporaryIDResolver(inserts: changes.inserts, permanent: insertedIDs)
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
                    conflicts.append(StoreConflict(id: delete.id, expectedVersion: delete.expectedVersion, persisted: try row(for: delete.id)))
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
            for (offset, insert) in changes.inserts.enumerated() {
                let id = insertedIDs[offset]
                let layout = id.entity.layout
                let (statement, slots) = try insertStatement(for: id.entity)
                statement.bind(id.primaryKey!, at: 1)
                statement.bind(Int64(layout.entityNumber), at: 2)
                var position: Int32 = 3
                for slot in slots {
                    bindSlot(slot, values: insert.values, statement: statement, at: &position, resolve: resolve)
                }
                // Every parameter was bound above: no need to clear them.
                do { try statement.step() } catch { statement.reset(); throw error }
                statement.resetKeepingBindings()
            }
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
                    conflicts.append(StoreConflict(id: update.id, expectedVersion: update.expectedVersion, persisted: try row(for: update.id)))
                }
            }
            if !conflicts.isEmpty { throw StoreConflictError(conflicts: conflicts) }
            for row in changes.joinDeletes {
                guard let source = resolve(row.first).primaryKey, let destination = resolve(row.second).primaryKey else { continue }
                let statement = try db.cached("DELETE FROM \(row.table) WHERE \(row.firstColumn) = ? AND \(row.secondColumn) = ?")
                statement.bind(source, at: 1)
                statement.bind(destination, at: 2)
                try statement.step()
                statement.reset()
            }
            for row in changes.joinInserts {
                guard let source = resolve(row.first).primaryKey, let destination = resolve(row.second).primaryKey else { continue }
                let statement = try db.cached("INSERT OR IGNORE INTO \(row.table) (\(row.firstColumn), \(row.secondColumn)) VALUES (?, ?)")
                statement.bind(source, at: 1)
                statement.bind(destination, at: 2)
                try statement.step()
                statement.reset()
            }
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
            return SaveResult(insertedIDs: insertedIDs)
        }
    }

    private func joinColumn(_ column: String, refersTo entity: NSEntityDescription) -> Bool {
        // Join columns are named Z_<entity number><NAME>; the number identifies the side's entity.
        let digits = column.dropFirst(2).prefix { $0.isNumber }
        guard let number = Int64(digits), let side = self.entity(numbered: number) else { return true }
        return side.rootEntity === entity.rootEntity
    }

    private struct InsertSlot {
        var index: Int
        var entityColumn: String?
        init(property: NSPropertyDescription) {
            index = property.index
            entityColumn = (property as? NSRelationshipDescription)?.entityColumn
        }
    }

    /// Each entity's INSERT, prepared once (looked up by entity number, not by SQL text).
    private var insertStatements: [Int: (SQLiteStatement, [InsertSlot])] = [:]

    private func insertStatement(for entity: NSEntityDescription) throws -> (SQLiteStatement, [InsertSlot]) {
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

    private func bindSlot(_ slot: InsertSlot, values: ContiguousArray<StoreValue>, statement: SQLiteStatement,
                          at position: inout Int32, resolve: (NSManagedObjectID) -> NSManagedObjectID) {
        let value = values[slot.index]
        if case .objectID(let id) = value {
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
