import Foundation

/// The rows of an ``NSBatchInsertRequest``, read one at a time into one reused array of store
/// values (by property index), each checked as Apple's batch insert checks it: only the entity's
/// attributes, each of its type, a non-optional one present or defaulted. The stores bind
/// ``values`` straight into their insert; no object is made for the dictionary forms.
internal final class BatchInsertRows {
    /// Where the rows come from.
    enum Source {
        case objects([[String: Any]])
        case dictionaryHandler((NSMutableDictionary) -> Bool)
        case managedObjectHandler((NSManagedObject) -> Bool)
    }

    /// One attribute the rows set.
    struct Slot {
        let index: Int
        let attribute: NSAttributeDescription
        let name: String
        /// The name as the key of an `NSMutableDictionary` (bridged once, not per row).
        let key: NSString
        /// The attribute's default (`.null` for none).
        let defaultValue: StoreValue
        let isOptional: Bool
    }

    let entity: NSEntityDescription
    let slots: [Slot]
    /// The current row's values by property index (only the slots' are set).
    private(set) var values: ContiguousArray<StoreValue>
    /// The index of the current row (0 for the first).
    private(set) var row = -1
    private let source: Source
    private let dictionary = NSMutableDictionary()

    init(entity: NSEntityDescription, source: Source) {
        self.entity = entity
        self.source = source
        let layout = entity.layout
        slots = layout.attributeIndexes.compactMap { index in
            guard let attribute = layout.properties[index] as? NSAttributeDescription, attribute.isStoredInRow else { return nil }
            return Slot(index: index, attribute: attribute, name: attribute.name, key: NSString(string: attribute.name),
                        defaultValue: layout.defaultValues[index], isOptional: attribute.isOptional)
        }
        values = ContiguousArray(repeating: .null, count: layout.properties.count)
    }

    /// Reads the next row into ``values``; `false` when there are no more. Throws for a row that
    /// fails the checks (the caller's transaction then writes nothing).
    func next() throws -> Bool {
        row += 1
        switch source {
        case .objects(let objects):
            guard row < objects.count else { return false }
            let object = objects[row]
            var found = 0
            for slot in slots {
                let value = object[slot.name]
                if value != nil { found += 1 }
                try set(slot, value)
            }
            if found != object.count { try refuseUnknownKey(in: object.keys) }
        case .dictionaryHandler(let handler):
            dictionary.removeAllObjects()
            if handler(dictionary) { return false }
            var found = 0
            for slot in slots {
                let value = dictionary.object(forKey: slot.key)
                if value != nil { found += 1 }
                try set(slot, value)
            }
            if found != dictionary.count { try refuseUnknownKey(in: dictionary.allKeys.map { "\($0)" }) }
        case .managedObjectHandler(let handler):
            let object = NSManagedObject(entity: entity, insertInto: nil)
            if handler(object) { return false }
            for slot in slots { try set(slot, object.value(forKey: slot.name)) }
        }
        return true
    }

    private func set(_ slot: Slot, _ value: Any?) throws {
        var stored = try BatchErrors.storeValue(value, for: slot.attribute, row: row)
        if stored.isNull { stored = slot.defaultValue }
        if stored.isNull && !slot.isOptional {
            throw CoreDataError.make(.missingMandatoryProperty,
                "Batch insert row \(row): \(entity.name ?? "").\(slot.name) is a required value and the row has none",
                extra: [NSValidationKeyErrorKey: slot.name, "row": row])
        }
        values[slot.index] = stored
    }

    /// Throws for the first key of the row that is not an attribute of the entity.
    private func refuseUnknownKey<Keys: Sequence>(in keys: Keys) throws where Keys.Element == String {
        for key in keys where !slots.contains(where: { $0.name == key }) {
            let property = entity.layout.nameTable.index(of: key).map { entity.layout.properties[$0] }
            let reason = property is NSRelationshipDescription ? "is a relationship, which batch inserts do not set" : "is not an attribute of \(entity.name ?? "")"
            throw BatchErrors.invalid("Batch insert row \(row): the key '\(key)' \(reason)", key: key, row: row)
        }
    }
}
