import Foundation

// Batch requests on the in-memory store, under its lock, on its dictionaries: the same rows,
// keys, versions, upserts and delete rules as the SQLite store's SQL. Each request works out
// every change first and then applies them, so a refused request changes nothing.
extension InMemoryStore {
    /// ``batchInsert(_:rowCache:)``: keys in the order of the rows; under uniqueness
    /// constraints a row matching a stored one updates it (`version + 1`, its key kept).
    func insertBatch(_ insert: BatchInsert) throws -> BatchOutcome {
        let entity = insert.entity
        let root = entity.layout.rootNumber
        var table = rows[root] ?? [:]
        var maxKey = maxKeys[root] ?? 0
        // The constraints of the entity and its ancestors: property indexes, and the stored rows by their values.
        var constraints: [(owner: NSEntityDescription, indexes: [Int], keys: [[StoreValue]: Int64])] = []
        var current: NSEntityDescription? = entity
        while let owner = current {
            for constraint in owner.uniquenessConstraints {
                let names = owner.names(ofConstraint: constraint)
                let indexes = names.compactMap { owner.layout.nameTable.index(of: $0) }
                guard !indexes.isEmpty, indexes.count == names.count else { continue }
                var keys: [[StoreValue]: Int64] = [:]
                for (pk, row) in table where row.snapshot.entity.isKindOf(entity: owner) {
                    let key = indexes.map { row.snapshot.values[$0] }
                    if !key.contains(where: \.isNull) { keys[key] = pk }
                }
                constraints.append((owner, indexes, keys))
            }
            current = owner.superentity
        }
        var outcome = BatchOutcome()
        var upsertedKeys = Set<Int64>() // the stored rows an upsert updated, for derived attributes
        let constrainedIndexes = Set(constraints.flatMap(\.indexes))
        let rows = insert.rows
        while try rows.next() {
            var values = entity.layout.nullValues()
            for slot in rows.slots { values[slot.index] = rows.values[slot.index] }
            let existing = constraints.lazy.compactMap { constraint -> Int64? in
                let key = constraint.indexes.map { values[$0] }
                return key.contains(where: \.isNull) ? nil : constraint.keys[key]
            }.first
            let pk: Int64
            var keyEntity = entity
            if let existing, var row = table[existing] {
                pk = existing
                upsertedKeys.insert(existing)
                // The row may be of another entity of the family: only the properties it has change;
                // constrained ones keep their values, as SQLite's `DO UPDATE` leaves them (another
                // constraint's value would be taken unchecked).
                keyEntity = row.snapshot.entity
                let properties = keyEntity.layout.properties
                for slot in rows.slots where slot.index < properties.count && properties[slot.index] === entity.layout.properties[slot.index]
                    && !constrainedIndexes.contains(slot.index) {
                    row.snapshot.values[slot.index] = values[slot.index]
                }
                row.snapshot.version += 1
                table[pk] = row
            } else {
                maxKey += 1
                pk = maxKey
                table[pk] = Row(snapshot: RowSnapshot(entity: entity, values: values, version: 1))
                for offset in constraints.indices {
                    let key = constraints[offset].indexes.map { values[$0] }
                    if !key.contains(where: \.isNull) { constraints[offset].keys[key] = pk }
                }
            }
            outcome.count += 1
            if insert.wantsKeys { outcome.keys.append(FetchedKey(entity: keyEntity, primaryKey: pk)) }
        }
        let firstNew = maxKeys[root] ?? 0
        self.rows[root] = table
        maxKeys[root] = maxKey
        if outcome.count > 0 && BatchDerivedAttributes.exist(for: entity) {
            // The rows written: the new ones, and those an upsert updated.
            try recomputeDerivedAttributes(after: .insert(upserted: !upsertedKeys.isEmpty), on: [entity],
                                           rows: (entity.rootEntity, { pk in pk > firstNew || upsertedKeys.contains(pk) }))
        }
        return outcome
    }

    /// ``batchUpdate(_:rowCache:)``: each matching row's new values, constants or expressions
    /// evaluated on the row as it was, and `version + 1`.
    func updateBatch(_ update: BatchUpdate) throws -> BatchOutcome {
        let root = update.plan.entity.layout.rootNumber
        var changed: [(Int64, Row)] = []
        let evaluator = PredicateEvaluator()
        let stamped = BatchDerivedAttributes.stamped(on: update.plan.entity)
        for (pk, row) in try matching(update.plan) {
            var new = row
            let object = StoreRecordObject(record(row, pk: pk), resolve: resolve)
            for (index, value) in update.assignments where !stamped.contains(where: { $0.index == index }) {
                switch value {
                case .constant(let constant):
                    new.snapshot.values[index] = constant
                case .expression(let node):
                    let attribute = update.plan.entity.layout.properties[index] as! NSAttributeDescription // checked by BatchUpdate
                    var computed = evaluator.value(of: node, object: object).walkable
                    // A fraction for an integer attribute is truncated toward zero, as the SQL
                    // stores keep it (SQLite reads the real it stores so).
                    if [.integer16AttributeType, .integer32AttributeType, .integer64AttributeType].contains(attribute.attributeType),
                       let double = computed as? Double, double.isFinite, double.rounded(.towardZero) != double,
                       abs(double) < 9.2e18 {
                        computed = Int64(double.rounded(.towardZero))
                    }
                    // A double for a decimal attribute: its shortest exact digits, as SQLite reads one.
                    if attribute.attributeType == .decimalAttributeType, let double = computed as? Double, double.isFinite,
                       let decimal = Decimal(string: "\(double)", locale: Locale(identifier: "en_US_POSIX")) {
                        computed = decimal
                    }
                    new.snapshot.values[index] = try BatchErrors.storeValue(computed, for: attribute, row: nil)
                }
            }
            // `now()` derived attributes: the request's time.
            for attribute in stamped where row.snapshot.entity.isKindOf(entity: attribute.entity!) {
                new.snapshot.values[attribute.index] = .date(update.date)
            }
            new.snapshot.version += 1
            changed.append((pk, new))
        }
        if update.plan.entity.hierarchyHasUniquenessConstraints {
            // Checked as a save's updates would be: a value that two rows would then share is refused.
            var changes = SaveChanges()
            changes.updates = changed.map { pk, row in
                SaveChanges.Update(id: id(row.snapshot.entity, pk), values: row.snapshot.values,
                                   changedIndexes: update.assignments.map(\.index), expectedVersion: row.snapshot.version - 1)
            }
            try checkUniqueness(changes)
        }
        for (pk, row) in changed { rows[root]?[pk] = row }
        if !changed.isEmpty { try recomputeDerivedAttributes(after: update.change, on: [update.plan.entity]) }
        return BatchOutcome(count: changed.count,
                            keys: update.wantsKeys ? changed.map { FetchedKey(entity: $0.1.snapshot.entity, primaryKey: $0.0) } : [])
    }

    /// ``batchDelete(_:rowCache:)``: the matching rows and, by the cascade rule, their related
    /// rows; deny refuses; whatever pointed at a deleted row (to-one values, join pairs, hidden
    /// keys of to-many relationships without inverse) is cleared.
    func deleteBatch(_ delete: BatchDelete) throws -> BatchOutcome {
        var pending = try matching(delete.plan).map { FetchedKey(entity: $0.1.snapshot.entity, primaryKey: $0.0) }
        var deleted: [FetchedKey] = []
        var gone: [Int: Set<Int64>] = [:]
        var denied: [(entity: NSEntityDescription, relationship: String, related: [NSManagedObjectID])] = []
        while !pending.isEmpty {
            let key = pending.removeFirst()
            guard gone[key.entity.layout.rootNumber, default: []].insert(key.primaryKey).inserted else { continue }
            deleted.append(key)
            let owner = id(key.entity, key.primaryKey)
            for index in key.entity.layout.relationshipIndexes {
                guard let relationship = key.entity.layout.properties[index] as? NSRelationshipDescription,
                      relationship.deleteRule == .cascadeDeleteRule || relationship.deleteRule == .denyDeleteRule else { continue }
                var related: [NSManagedObjectID] = []
                if relationship.isToMany {
                    related = relatedIDs(relationship, of: owner)
                } else if case .objectID(let target)? = rows[key.entity.layout.rootNumber]?[key.primaryKey]?.snapshot.values[index] {
                    related = [target]
                }
                if relationship.deleteRule == .denyDeleteRule, !related.isEmpty {
                    // Judged once every row the request deletes is known: those don't count, as
                    // in a context's delete (and the SQL stores').
                    denied.append((key.entity, relationship.name, related))
                }
                if relationship.deleteRule == .cascadeDeleteRule {
                    pending += related.compactMap { id in
                        guard let pk = id.primaryKey, let row = rows[id.entity.layout.rootNumber]?[pk] else { return nil }
                        return FetchedKey(entity: row.snapshot.entity, primaryKey: pk)
                    }
                }
            }
        }
        func isGone(_ id: NSManagedObjectID) -> Bool {
            id.primaryKey.map { gone[id.entity.layout.rootNumber]?.contains($0) ?? false } ?? false
        }
        for denial in denied where denial.related.contains(where: { !isGone($0) }) {
            throw CoreDataError.make(.relationshipDeniedDelete,
                "An object of \(denial.entity.name ?? "") can't be deleted: its relationship '\(denial.relationship)' has the deny rule and still has objects; nothing was deleted",
                extra: [NSValidationKeyErrorKey: denial.relationship])
        }
        for (root, keys) in gone { for pk in keys { rows[root]?[pk] = nil } }
        for root in rows.keys {
            for (pk, row) in rows[root]! {
                var cleared = row
                for index in row.snapshot.entity.layout.relationshipIndexes {
                    if case .objectID(let target) = row.snapshot.values[index], isGone(target) { cleared.snapshot.values[index] = .null }
                }
                if cleared.snapshot.values != row.snapshot.values {
                    cleared.snapshot.version += 1 // (as SQLite's Z_OPT + 1: a context holding the row meets a conflict)
                    rows[root]![pk] = cleared
                }
            }
        }
        for entity in model.entities {
            for case let relationship as NSRelationshipDescription in entity.ownProperties {
                guard let destination = relationship.destinationEntity else { continue }
                let ownerGone = gone[entity.layout.rootNumber] ?? [], memberGone = gone[destination.layout.rootNumber] ?? []
                if let join = relationship.joinTable, join.isOwner {
                    joins[join.name] = joins[join.name]?.filter { !ownerGone.contains($0.source) && !memberGone.contains($0.destination) }
                } else if relationship.isToMany, relationship.hiddenForeignKeyColumn != nil {
                    let key = ObjectIdentifier(relationship)
                    hiddenKeys = hiddenKeys.filter { entry in
                        entry.key.relationship != key || (!memberGone.contains(entry.key.member) && !ownerGone.contains(entry.value))
                    }
                }
            }
        }
        if BatchDerivedAttributes.exist(for: delete.plan.entity) {
            try recomputeDerivedAttributes(after: .delete, on: BatchDerivedAttributes.families(of: deleted))
        }
        return BatchOutcome(count: deleted.count, keys: delete.wantsKeys ? deleted : [])
    }
}
