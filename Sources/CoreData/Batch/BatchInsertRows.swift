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
        let type: NSAttributeType
        let name: String
        /// How a value of the attribute is recognized without a dynamic cast.
        let kind: ManagedStorageKind
        /// The attribute's default (`.null` for none).
        let defaultValue: StoreValue
        let isOptional: Bool
    }

    let entity: NSEntityDescription
    let slots: [Slot]
    /// The current row's values by property index (only the slots' are set).
    @exclusivity(unchecked) private(set) var values: ContiguousArray<StoreValue> // read per value by the store's loop
    /// The index of the current row (0 for the first).
    private(set) var row = -1
    private let source: Source
    #if canImport(Darwin)
    private let dictionary = NSMutableDictionary()
    #else
    private let dictionary: BatchRowDictionary
    #endif

    init(entity: NSEntityDescription, source: Source) {
        self.entity = entity
        self.source = source
        let layout = entity.layout
        slots = layout.attributeIndexes.compactMap { index in
            guard let attribute = layout.properties[index] as? NSAttributeDescription, attribute.isStoredInRow else { return nil }
            return Slot(index: index, attribute: attribute, type: attribute.attributeType, name: attribute.name, kind: layout.storageKinds[index],
                        defaultValue: layout.defaultValues[index], isOptional: attribute.isOptional)
        }
        #if !canImport(Darwin)
        dictionary = BatchRowDictionary(slotNames: slots.map(\.name))
        #endif
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
            for offset in slots.indices {
                let value = object[slots[offset].name]
                if value != nil { found += 1 }
                try set(offset, value)
            }
            if found != object.count { try refuseUnknownKey(in: object.keys) }
        case .dictionaryHandler(let handler):
            dictionary.removeAllObjects()
            if handler(dictionary) { return false }
            #if canImport(Darwin)
            var found = 0
            for offset in slots.indices {
                let value = dictionary.object(forKey: slots[offset].name)
                if value != nil { found += 1 }
                try set(offset, value)
            }
            if found != dictionary.count { try refuseUnknownKey(in: dictionary.allKeys.map { "\($0)" }) }
            #else
            for offset in slots.indices { try set(offset, dictionary.isSet[offset] ? dictionary.slotValues[offset] : nil) }
            if !dictionary.otherKeys.isEmpty { try refuseUnknownKey(in: dictionary.otherKeys.map { "\($0.base)" }) }
            #endif
        case .managedObjectHandler(let handler):
            let object = entity.layout.instanceClass.init(entity: entity, insertInto: nil) // the entity's class, in no context
            if handler(object) { return false }
            for offset in slots.indices { try set(offset, object.value(forKey: slots[offset].name)) }
        }
        return true
    }

    /// Sets the value of `slots[offset]` in ``values``. (The slot is read field by field, not
    /// copied: no retain of its references per value.)
    private func set(_ offset: Int, _ value: Any?) throws {
        var stored = StoreValue.fastConvert(borrowing: value, kind: slots[offset].kind) ?? StoreValue.storage(of: value, for: slots[offset].type)
        if stored == nil { stored = try BatchErrors.storeValue(value, for: slots[offset].attribute, row: row) } // throws
        if stored!.isNull {
            stored = slots[offset].defaultValue
            if stored!.isNull && !slots[offset].isOptional {
                let name = slots[offset].name
                throw CoreDataError.make(.missingMandatoryProperty,
                    "Batch insert row \(row): \(entity.name ?? "").\(name) is a required value and the row has none",
                    extra: [NSValidationKeyErrorKey: name, "row": row])
            }
        }
        values[slots[offset].index] = stored!
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
