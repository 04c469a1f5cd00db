import CSQLite
import Foundation

/// Decodes rows of one root table: which column holds which property, per row entity.
///
/// Built for every root entity when the store opens and never changed afterwards, so reader
/// connections on several threads share it without a lock.
internal final class SQLiteRowDecoder: @unchecked Sendable {
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

extension SQLiteStore {
    /// Reads the current row of `statement` (whose first columns are Z_PK, Z_ENT, Z_OPT, then the family's columns).
    func decodeRow(_ statement: SQLiteStatement, decoder: SQLiteRowDecoder) -> FetchedRow? {
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
    private func decodeValue(_ slot: SQLiteRowDecoder.Slot, _ statement: SQLiteStatement) -> StoreValue {
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
}
