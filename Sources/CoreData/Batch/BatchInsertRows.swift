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
        /// For a derived attribute, the value the row is written with, whatever it gives: the
        /// request's time for `now()`, `nil` for the others, which the store then computes
        /// (`BatchDerivedAttributes.swift`).
        let derivedValue: StoreValue?
    }

    let entity: NSEntityDescription
    let slots: [Slot]
    /// Whether a slot is a derived attribute's.
    private let hasDerivedSlots: Bool
    /// The entity's composite attributes: a row gives each as a dictionary of its elements,
    /// whose leaves are slots of their own (named by key path, `address.city`).
    private let composites: [NSCompositeAttributeDescription]
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
        let date = Date()
        slots = layout.attributeIndexes.compactMap { index in
            guard let attribute = layout.properties[index] as? NSAttributeDescription, attribute.isStoredInRow else { return nil }
            // A composite's elements are required only of a composite that has a value (``flattened(_:)``).
            let isOptional = attribute.isOptional || (attribute as? CompositeLeafAttribute)?.composite?.isOptional == true
            var derivedValue: StoreValue?
            if let derived = attribute as? NSDerivedAttributeDescription {
                if case .now? = derived.derivation { derivedValue = .date(date) } else { derivedValue = .null }
            }
            return Slot(index: index, attribute: attribute, type: attribute.attributeType, name: attribute.name, kind: layout.storageKinds[index],
                        defaultValue: layout.defaultValues[index], isOptional: isOptional, derivedValue: derivedValue)
        }
        hasDerivedSlots = slots.contains { $0.derivedValue != nil }
        #if !canImport(Darwin)
        dictionary = BatchRowDictionary(slotNames: slots.map(\.name))
        #endif
        values = ContiguousArray(repeating: .null, count: layout.properties.count)
        composites = layout.properties.compactMap { $0 as? NSCompositeAttributeDescription }.filter { !$0.isTransient }
    }

    /// Reads the next row into ``values``; `false` when there are no more. Throws for a row that
    /// fails the checks (the caller's transaction then writes nothing).
    func next() throws -> Bool {
        row += 1
        switch source {
        case .objects(let objects):
            guard row < objects.count else { return false }
            try read(composites.isEmpty ? objects[row] : flattened(objects[row]))
        case .dictionaryHandler(let handler):
            dictionary.removeAllObjects()
            if handler(dictionary) { return false }
            if !composites.isEmpty {
                var object: [String: Any] = [:]
                for key in dictionary.allKeys { object["\(key)"] = dictionary.object(forKey: key) }
                try read(flattened(object))
                return true
            }
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
            if !composites.isEmpty {
                // Each composite as the object holds it, checked as a row's dictionary is.
                var row: [String: Any] = [:]
                for slot in slots where !(slot.attribute is CompositeLeafAttribute) { row[slot.name] = object.value(forKey: slot.name) }
                for composite in composites { row[composite.name] = object.value(forKey: composite.name) }
                try read(flattened(row))
                return true
            }
            for offset in slots.indices { try set(offset, object.value(forKey: slots[offset].name)) }
        }
        return true
    }

    /// Reads the row `object` (keys are the slots' names) into ``values``.
    private func read(_ object: [String: Any]) throws {
        var found = 0
        for offset in slots.indices {
            let value = object[slots[offset].name]
            if value != nil { found += 1 }
            try set(offset, value)
        }
        if found != object.count { try refuseUnknownKey(in: object.keys) }
    }

    /// `object` with each composite's dictionary replaced by its leaves' values, under their
    /// key paths (`address.city`). Throws for a value that is not a dictionary of the
    /// composite's elements, for a required composite without a value, and for a required
    /// element of a composite that has one.
    private func flattened(_ object: [String: Any]) throws -> [String: Any] {
        var flat = object
        for composite in composites {
            var dictionary: [String: Any] = [:]
            if let value = flat.removeValue(forKey: composite.name), !(value is NSNull) {
                guard let checked = CompositeValues.dictionary(value, of: composite.elements) else {
                    let elements = composite.elements.map(\.name).sorted().joined(separator: ", ")
                    throw BatchErrors.invalid("Batch insert row \(row): the value of '\(composite.name)' is not a dictionary of its elements (\(elements))",
                                              key: composite.name, row: row)
                }
                dictionary = checked
            }
            var present = false
            for leaf in composite.leaves {
                let leafValue = CompositeValues.value(in: dictionary, at: leaf.elementPath.dropFirst()) ?? flat[leaf.name]
                if leaf.defaultValue != nil { present = true }
                if let leafValue {
                    flat[leaf.name] = leafValue
                    if !(leafValue is NSNull) { present = true }
                }
            }
            let missing = present ? composite.leaves.first { !$0.isOptional && $0.defaultValue == nil && (flat[$0.name] == nil || flat[$0.name] is NSNull) }?.name
                                  : composite.isOptional ? nil : composite.name
            if let missing {
                throw CoreDataError.make(.missingMandatoryProperty,
                    "Batch insert row \(row): \(entity.name ?? "").\(missing) is a required value and the row has none",
                    extra: [NSValidationKeyErrorKey: missing, "row": row])
            }
        }
        return flat
    }

    /// Sets the value of `slots[offset]` in ``values``. (The slot is read field by field, not
    /// copied: no retain of its references per value.)
    private func set(_ offset: Int, _ value: Any?) throws {
        if hasDerivedSlots, let derived = slots[offset].derivedValue {
            values[slots[offset].index] = derived
            return
        }
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
            let reason = property is NSRelationshipDescription ? "is a relationship, which batch inserts do not set"
                : property is NSFetchedPropertyDescription ? "is a fetched property, which batch inserts do not set"
                : property?.isTransient == true ? "is a transient attribute, which batch inserts do not set (nothing stores it)"
                : "is not an attribute of \(entity.name ?? "")"
            throw BatchErrors.invalid("Batch insert row \(row): the key '\(key)' \(reason)", key: key, row: row)
        }
    }
}
