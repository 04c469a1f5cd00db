import CSQLite
import Foundation

/// Decodes rows of one root table: which column holds which property, per row entity.
///
/// Built for every root entity when the store opens and never changed afterwards, so reader
/// connections on several threads share it without a lock.
internal final class SQLiteRowDecoder: @unchecked Sendable {
    struct Slot { var index: Int; var column: Int32; var kind: Kind; var entityColumn: Int32 }
    enum Kind {
        case int, bool, double, decimal, string, date, data, uuid, url, objectIDAttribute, toOne(NSEntityDescription)
        /// Binary data with external storage: Apple's marker byte first (`SQLiteExternalData.swift`).
        case externalData
    }
    /// What a row of one entity of the family decodes to.
    final class Plan {
        let entity: NSEntityDescription
        let slots: [Slot]
        let propertyCount: Int
        /// The layout of the entity's values (immortal: held without a retain).
        unowned(unsafe) let shape: ValueShape
        /// The property indexes no column fills (to-many relationships, transient properties):
        /// always `.null` in a decoded row.
        let unreadIndexes: [Int]
        init(entity: NSEntityDescription, slots: [Slot], propertyCount: Int) {
            self.entity = entity
            self.slots = slots
            self.propertyCount = propertyCount
            self.shape = entity.layout.valueShape
            let read = Set(slots.map(\.index))
            self.unreadIndexes = (0..<propertyCount).filter { !read.contains($0) }
        }

        /// Whether `values`, as a save bound them, decode back unchanged: the common case, in
        /// which the saved values are the snapshot as they are (no copy).
        func readsBack(_ values: PropertyValues) -> Bool {
            guard values.count == propertyCount else { return false }
            for slot in slots {
                if case .int = slot.kind, values.int64(at: slot.index) != nil { continue } // no `StoreValue` made
                switch (slot.kind, values[slot.index]) {
                case (_, .null), (.int, .int), (.bool, .bool), (.string, .string), (.data, .data), (.externalData, .data), (.uuid, .uuid): continue
                case (.double, .double(let double)) where !double.isNaN: continue
                case (.date, .date(let date)) where !date.timeIntervalSinceReferenceDate.isNaN: continue
                default: return false
                }
            }
            for index in unreadIndexes where !values[index].isNull { return false }
            return true
        }
    }
    let selectList: String
    /// `SELECT <selectList> FROM <table> t0 WHERE t0.Z_PK = ?`: one row by key (faults,
    /// `existingObject(with:)`), made once rather than per lookup.
    let rowByKeySQL: String
    /// The number of columns of ``selectList``: a query may select more after them.
    let columnCount: Int
    /// Plans by the file's `Z_ENT` number (`nil` for numbers outside the family).
    var plans: [Plan?] = []

    init(root: NSEntityDescription, schema: SQLiteSchema) {
        let table = schema.tables.first { $0.root === root }!
        // Quoted, as the schema gives every name.
        let columns = table.columns.map { SQLiteSchema.quoted($0.name) }
        selectList = columns.map { "t0." + $0 }.joined(separator: ", ")
        rowByKeySQL = "SELECT \(selectList) FROM \(schema.table(of: root)) t0 WHERE t0.Z_PK = ?"
        columnCount = columns.count
        var position: [String: Int32] = [:]
        for (offset, name) in columns.enumerated() { position[name] = Int32(offset) }
        for entity in schema.entities where entity.rootEntity === root {
            let storage = schema.storage(of: entity)
            var slots: [Slot] = []
            for index in entity.layout.rowIndexes {
                let property = entity.layout.properties[index]
                guard let name = storage.columns[index], let column = position[name] else { continue }
                let kind: Kind
                var entityColumn: Int32 = -1
                if let relationship = property as? NSRelationshipDescription {
                    kind = .toOne(relationship.destinationEntity!)
                    if let name = storage.entityColumns[index], let p = position[name] { entityColumn = p }
                } else {
                    kind = Self.kind(of: property as! NSAttributeDescription)
                }
                slots.append(Slot(index: index, column: column, kind: kind, entityColumn: entityColumn))
            }
            let number = storage.number
            if plans.count <= number { plans.append(contentsOf: repeatElement(nil, count: number + 1 - plans.count)) }
            plans[number] = Plan(entity: entity, slots: slots, propertyCount: entity.layout.properties.count)
        }
    }

    /// How a column of `attribute` decodes.
    static func kind(of attribute: NSAttributeDescription) -> Kind {
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType: return .int
        case .booleanAttributeType: return .bool
        case .doubleAttributeType, .floatAttributeType: return .double
        case .decimalAttributeType: return .decimal
        case .stringAttributeType: return .string
        case .dateAttributeType: return .date
        case .UUIDAttributeType: return .uuid
        case .URIAttributeType: return .url
        case .objectIDAttributeType: return .objectIDAttribute
        case .binaryDataAttributeType: return attribute.storesExternally ? .externalData : .data
        case .transformableAttributeType: return attribute.storesExternally ? .externalData : .data // its archive, in a file if large
        case .undefinedAttributeType, .compositeAttributeType: return .data
        }
    }
}

extension SQLiteStore {
    /// Reads the current row of `statement` (whose first columns are Z_PK, Z_ENT, Z_OPT, then the family's columns).
    func decodeRow(_ statement: SQLiteStatement, decoder: SQLiteRowDecoder) throws -> FetchedRow? {
        let pk = statement.int64(0)
        let number = Int(statement.int64(1))
        guard number >= 0, number < decoder.plans.count, let plan = decoder.plans[number] else { return nil }
        let snapshot = RowSnapshot(entity: plan.entity, values: try decodeValues(statement, plan: plan), version: statement.int64(2))
        return FetchedRow(store: self, primaryKey: pk, snapshot: snapshot)
    }

    /// ``decodeRow(_:decoder:)`` for the hot path of a fetch: the row is lent to `body` (see
    /// ``LentRow``), its store and entity not retained, nor its plan, which is read from
    /// `plans` (the decoder's, held by the caller for the whole fetch) without a retain and
    /// release. A row of an entity outside the family is skipped.
    @inline(__always)
    func lendRow(_ statement: SQLiteStatement, plans: [SQLiteRowDecoder.Plan?], to body: (consuming LentRow) throws -> Void) throws {
        let number = Int(statement.int64(1))
        guard number >= 0, number < plans.count else { return }
        try plans.withUnsafeBufferPointer { buffer in
            // `Plan?` and `Unmanaged<Plan>?` have the same layout (a pointer, 0 for nil).
            try buffer.withMemoryRebound(to: Unmanaged<SQLiteRowDecoder.Plan>?.self) { plans in
                try plans[number]?._withUnsafeGuaranteedRef { plan in
                    try body(LentRow(store: self, entity: plan.entity, primaryKey: statement.int64(0),
                                     values: try decodeValues(statement, plan: plan), version: statement.int64(2)))
                }
            }
        }
    }

    /// The values of the current row of `statement`, by property index, as `plan` decodes them.
    @inline(__always)
    func decodeValues(_ statement: SQLiteStatement, plan: SQLiteRowDecoder.Plan) throws -> PropertyValues {
        // Written in place: every slot starts as .null (no payload), so a decoded value may be
        // stored over it without destroying anything.
        if plan.slots.isEmpty { return PropertyValues(nullsOf: plan.shape) }
        let storage = plan.shape.newNulls()
        let writer = PropertyValues.Initializer(storage)
        for slot in plan.slots {
            let column = slot.column
            if case .int = slot.kind {
                // One call per integer column: NULL reads as 0, so the type is checked only then.
                let value = statement.int64(column)
                if value != 0 || !statement.isNull(column) { writer.initializeInt64(value, at: slot.index) }
                continue
            }
            if statement.isNull(column) { continue }
            writer.initialize(try decodeValue(slot, statement), at: slot.index)
        }
        return PropertyValues(consume storage)
    }

    /// The value of a non-NULL column in the storage form of its property (`.null` if unreadable;
    /// throws only for an external data file that cannot be read).
    func decodeValue(_ slot: SQLiteRowDecoder.Slot, _ statement: SQLiteStatement) throws -> StoreValue {
        let column = slot.column
        switch slot.kind {
        case .int: return .int(statement.int64(column))
        case .bool: return .bool(statement.int64(column) != 0)
        case .double: return .double(statement.double(column))
        case .decimal:
            if statement.columnType(column) == SQLITE_TEXT {
                return Decimal(storedText: statement.string(column)).map(StoreValue.decimal) ?? .null
            } else if statement.columnType(column) == SQLITE_INTEGER {
                return .decimal(Decimal(statement.int64(column)))
            } else {
                // The shortest decimal text of the double is the value that was written.
                let double = statement.double(column)
                return .decimal(Decimal(string: "\(double)", locale: Locale(identifier: "en_US_POSIX")) ?? Decimal(storing: double))
            }
        case .string: return .string(statement.string(column))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: statement.double(column)))
        case .data: return .data(statement.data(column))
        case .externalData: return try externalValue(statement.data(column))
        case .uuid:
            if let uuid = UUID(storedBytes: statement.data(column)) {
                return .uuid(uuid)
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
}
// MARK: Rows just written, as a reader would decode them (for the row cache)

extension SQLiteStore {
    /// Records in `cache` the rows a committed save wrote, as a reader would now decode them,
    /// and makes the cache forget the rows the save deleted or changed without recording them.
    /// Runs under ``writeLock``, right after the commit.
    func recordSaved(_ changes: SaveChanges, _ result: SaveResult, in cache: StoreRowCache) {
        func key(_ id: NSManagedObjectID) -> IDKey? {
            id.primaryKey.map { IDKey(store: tag, root: id.entity.layout.rootNumber, value: $0) }
        }
        let inserts = changes.inserts, updates = changes.updates
        var stale = changes.deletes.compactMap { key($0.id) }
        // Only the newest `capacity` rows would stay in the cache: the others are not decoded,
        // and those of them that were updated are forgotten instead. Of a bulk insert, only
        // the last quarter of that is recorded (new rows are not in the cache: leaving some
        // out costs nothing but a read if another context faults them).
        let skipped = max(0, inserts.count + updates.count - cache.capacity)
        let firstInsert = max(skipped, inserts.count - cache.capacity / 4)
        var rows: [CachedRow] = []
        rows.reserveCapacity(inserts.count - firstInsert + updates.count)
        var resolver = TemporaryIDResolver(inserts: inserts, keys: result.insertedKeys, store: self)
        if firstInsert < inserts.count, result.insertedKeys.count == inserts.count {
            // The plan is looked up once per run of inserts of one entity.
            var lastEntity: ObjectIdentifier?
            var plan: SQLiteRowDecoder.Plan?
            var root = 0
            for offset in firstInsert..<inserts.count {
                if ObjectIdentifier(inserts[offset].entity) != lastEntity {
                    let entity = inserts[offset].entity
                    lastEntity = ObjectIdentifier(entity)
                    plan = writtenRowPlan(of: entity)
                    root = entity.layout.rootNumber
                }
                guard let plan, let row = writtenRow(plan, values: inserts[offset].values, version: 1, resolve: { resolver.resolve($0) })
                else { continue }
                rows.append(CachedRow(key: IDKey(store: tag, root: root, value: result.insertedKeys[offset]), row: row))
            }
        }
        for offset in updates.indices {
            let update = updates[offset]
            guard let key = key(update.id) else { continue }
            if offset + inserts.count >= skipped,
               let values = updatedValues(update, cached: { cache.row(for: key) }),
               let plan = writtenRowPlan(of: update.id.entity),
               let row = writtenRow(plan, values: values, version: update.nextVersion, resolve: { resolver.resolve($0) }) {
                rows.append(CachedRow(key: key, row: row))
            } else {
                stale.append(key)
            }
        }
        if stale.count > cache.capacity {
            cache.forgetRows(ofStore: tag)
            stale.removeAll()
        }
        cache.record(rows, forgetting: stale)
    }

    /// The values of a row after `update`, or `nil` when they cannot be told without reading.
    ///
    /// An update carries all of the object's values but writes only the changed ones. The
    /// others are the row's (the update matched its `Z_OPT`), except transformable values, which
    /// the context encodes again at every save (the bytes may differ from the stored ones):
    /// those are taken from `cached()`, the row as the cache holds it, if that is the version
    /// the update replaced.
    private func updatedValues(_ update: SaveChanges.Update, cached: () -> RowSnapshot?) -> PropertyValues? {
        let entity = update.id.entity
        // The ID of an update may name a super-entity of the row's (an ID made from a URI): only
        // a leaf entity is surely the row's own.
        guard entity.subentities.isEmpty else { return nil }
        let unchanged = entity.layout.objectAttributeIndexes.filter { !update.changedIndexes.contains($0) }
        guard !unchanged.isEmpty else { return update.values }
        guard let cached = cached(), cached.version == update.expectedVersion, cached.entity === entity,
              cached.values.count == update.values.count else { return nil }
        var values = update.values
        for index in unchanged { values[index] = cached.values[index] }
        return values
    }

    /// How a reader decodes a row of `entity`.
    private func writtenRowPlan(of entity: NSEntityDescription) -> SQLiteRowDecoder.Plan? {
        let decoder = self.decoder(for: entity)
        let number = schema.number(of: entity)
        return number < decoder.plans.count ? decoder.plans[number] : nil
    }

    /// The snapshot a reader decodes, by `plan`, from a row just written with `values` (in the
    /// form the save bound them), or `nil` when the store would not read a value back as it was
    /// written (the row is then left to be read from disk). Mirrors `decodeRow` and `decodeValue`.
    private func writtenRow(_ plan: SQLiteRowDecoder.Plan, values: PropertyValues, version: Int64,
                            resolve: (NSManagedObjectID) -> NSManagedObjectID) -> RowSnapshot? {
        guard values.count == plan.propertyCount else { return nil }
        if plan.readsBack(values) { return RowSnapshot(entity: plan.entity, values: values, version: version) }
        var row = plan.entity.layout.nullValues()
        for slot in plan.slots {
            let value = values[slot.index]
            switch (slot.kind, value) {
            case (_, .null):
                continue
            case (.int, .int), (.bool, .bool), (.string, .string), (.data, .data), (.externalData, .data), (.uuid, .uuid):
                row[slot.index] = value
            case (.double, .double(let double)):
                row[slot.index] = double.isNaN ? .null : value // SQLite stores NaN as NULL
            case (.date, .date(let date)):
                row[slot.index] = date.timeIntervalSinceReferenceDate.isNaN ? .null : value
            case (.decimal, .decimal(let decimal)):
                // Written as its text, which the column (`DECIMAL`: numeric affinity) keeps as an
                // integer, else as a double: cached only when the value reads back as it is, an
                // integer or a double's shortest text (`0.1`); one with more digits than a double
                // holds is read back rounded, so the row is left to be read from the file.
                guard !decimal.isNaN else { return nil }
                let posix = Locale(identifier: "en_US_POSIX")
                let text = decimal.description
                if let integer = Int64(text) {
                    row[slot.index] = .decimal(Decimal(integer))
                } else if let double = Double(text), Decimal(string: "\(double)", locale: posix) == decimal {
                    row[slot.index] = .decimal(decimal)
                } else {
                    return nil
                }
            case (.url, .url(let url)):
                row[slot.index] = URL(string: url.absoluteString).map(StoreValue.url) ?? .null
            case (.toOne(let destination), .objectID(let id)):
                let target = resolve(id)
                guard let pk = target.primaryKey else { return nil }
                // Read back with the destination entity, or the exact one where an entity column keeps it.
                let entity = slot.entityColumn >= 0 ? target.entity : destination
                row[slot.index] = target.entity === entity && target.persistentStore === self
                    ? .objectID(target) : .objectID(NSManagedObjectID(entity: entity, store: self, primaryKey: pk))
            default:
                return nil // object-ID attributes, unencoded objects, a value of another type than the column's
            }
        }
        return RowSnapshot(entity: plan.entity, values: row, version: version)
    }
}
