import Foundation

// The values of composite attributes on objects. An object keeps each leaf element's value in
// the leaf's own slot (`CompositeLeafAttribute`), as an ordinary attribute: stores, predicates,
// merges and undo see only leaves. The composite's value is a dictionary assembled from its
// leaves when it is read, and taken apart into them when it is set (`CompositeValues`). The
// composite's own slot stays empty, unless it was set to a value that is not a dictionary of its
// elements: that value is kept there for validation to report at save.

extension NSManagedObject {
    /// The composite attribute at `index`, if the property there is one.
    @inline(__always)
    internal func composite(at index: Int) -> NSCompositeAttributeDescription? {
        guard layout.attributeTypes[index] == .compositeAttributeType else { return nil }
        return layout.properties[index] as? NSCompositeAttributeDescription
    }

    /// The value of the composite at `index`: the dictionary of its leaves, or the value of
    /// another kind it was set to (kept for validation).
    internal func compositeValue(_ composite: NSCompositeAttributeDescription, at index: Int) -> Any? {
        fireFaultIfNeeded(triggeredBy: index)
        if let mistyped = _values[index].objectValue { return mistyped }
        return CompositeValues.assemble(composite) { primitiveValue(at: $0) }
    }

    /// Sets the composite at `index` (or, with a longer `prefix`, a nested composite inside it)
    /// from a dictionary of its elements: each leaf takes the value at its path (`nil` when the
    /// key is missing). A value that is not such a dictionary is kept as it is, and the next
    /// save throws a validation error naming the key (1550), as for any mistyped value.
    internal func setCompositeValue(_ value: Any?, _ composite: NSCompositeAttributeDescription, at index: Int, prefix: [String]? = nil) {
        fireFaultIfNeeded(triggeredBy: index)
        let prefix = prefix ?? [composite.name]
        let leaves = composite.leaves.filter { $0.elementPath.starts(with: prefix) }
        var dictionary: [String: Any] = [:]
        if let value, !(value is NSNull) {
            guard let elements = CompositeValues.elements(of: composite, at: prefix),
                  let checked = CompositeValues.dictionary(value, of: elements) else {
                setMistyped(value, at: index)
                return
            }
            dictionary = checked
        }
        if !_values[index].isNull { _values[index] = .null }
        for leaf in leaves {
            setValue(CompositeValues.value(in: dictionary, at: leaf.elementPath[prefix.count...]), at: leaf.index)
        }
    }

    /// The value at a key path that starts at the composite at `index` (`address.city`,
    /// `address.geo`), or `nil` when the path names nothing inside it.
    internal func compositeValue(_ composite: NSCompositeAttributeDescription, at index: Int, keyPath: String) -> Any? {
        if let leaf = layout.nameTable.index(of: keyPath) { return primitiveValue(at: leaf) }
        let path = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard CompositeValues.elements(of: composite, at: path) != nil else {
            // A key of an element's value (`address.city.length`), as key-value coding reads it.
            guard let leaf = composite.leaves.first(where: { path.starts(with: $0.elementPath) }) else { return nil }
            return PredicateKeyValue.value(of: primitiveValue(at: leaf.index), keyPath: Array(path[leaf.elementPath.count...]))
        }
        fireFaultIfNeeded(triggeredBy: index)
        return CompositeValues.assemble(composite, under: path) { primitiveValue(at: $0) }
    }

    /// Sets the element at a key path that starts at the composite at `index`; `false` when the
    /// path names nothing inside it.
    internal func setCompositeValue(_ value: Any?, _ composite: NSCompositeAttributeDescription, at index: Int, keyPath: String) -> Bool {
        if let leaf = layout.nameTable.index(of: keyPath) {
            setValue(value is NSNull ? nil : value, at: leaf)
            return true
        }
        let path = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard CompositeValues.elements(of: composite, at: path) != nil else { return false }
        setCompositeValue(value, composite, at: index, prefix: path)
        return true
    }

    /// The key under which a change at `index` is reported: a leaf's composite, or the property.
    internal func reportedProperty(at index: Int) -> (name: String, index: Int) {
        if let leaf = layout.properties[index] as? CompositeLeafAttribute, let composite = leaf.composite {
            return (composite.name, composite.index)
        }
        return (layout.properties[index].name, index)
    }
}
