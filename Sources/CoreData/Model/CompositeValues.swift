import Foundation

// The values of composite attributes (`NSCompositeAttributeDescription`) as dictionaries. A
// composite's value is assembled from its leaf elements' values (`CompositeLeafAttribute`, each a
// column of its own) and taken apart into them: by objects (`NSManagedObject+Composites.swift`),
// by requests (batch insert and update, dictionary fetches) and by stores that keep the
// dictionary (atomic and incremental stores, history tombstones).

/// Assembles and takes apart the dictionaries of composite attributes.
internal enum CompositeValues {
    /// The dictionary of `composite` whose leaf values `value(leafIndex)` gives: the non-nil
    /// leaves under their element names, nested composites as nested dictionaries (left out when
    /// all their leaves are nil). `nil` when every leaf is nil, as no column stores the composite
    /// itself.
    static func assemble(_ composite: NSCompositeAttributeDescription, under prefix: [String] = [],
                         _ value: (Int) -> Any?) -> [String: Any]? {
        var result: [String: Any] = [:]
        let depth = prefix.isEmpty ? 1 : prefix.count
        for leaf in composite.leaves where prefix.isEmpty || leaf.elementPath.starts(with: prefix) {
            guard let leafValue = value(leaf.index) else { continue }
            insert(leafValue, at: leaf.elementPath[depth...], into: &result)
        }
        return result.isEmpty ? nil : result
    }

    private static func insert(_ value: Any, at path: ArraySlice<String>, into dictionary: inout [String: Any]) {
        guard let key = path.first else { return }
        if path.count == 1 {
            dictionary[key] = value
        } else {
            var nested = dictionary[key] as? [String: Any] ?? [:]
            insert(value, at: path.dropFirst(), into: &nested)
            dictionary[key] = nested
        }
    }

    /// The elements of `composite` at `prefix` (its root: `[name]`), or `nil` if `prefix` names
    /// no composite inside it.
    static func elements(of composite: NSCompositeAttributeDescription, at prefix: [String]) -> [NSAttributeDescription]? {
        var elements = composite.elements
        for name in prefix.dropFirst() {
            guard let nested = elements.first(where: { $0.name == name }) as? NSCompositeAttributeDescription else { return nil }
            elements = nested.elements
        }
        return elements
    }

    /// `value` as a dictionary of `elements`, or `nil` if it is not one: a key that names no
    /// element, or a nested composite's value that is not a dictionary. `NSNull` counts as nil.
    static func dictionary(_ value: Any, of elements: [NSAttributeDescription]) -> [String: Any]? {
        guard let dictionary = stringKeyed(value) else { return nil }
        for (key, element) in dictionary {
            guard let description = elements.first(where: { $0.name == key }) else { return nil }
            if let nested = description as? NSCompositeAttributeDescription, !(element is NSNull),
               self.dictionary(element, of: nested.elements) == nil {
                return nil
            }
        }
        return dictionary
    }

    /// `value` as a dictionary with string keys (`[String: Any]`, `NSDictionary`), or `nil`.
    static func stringKeyed(_ value: Any) -> [String: Any]? {
        if let swift = value as? [String: Any] { return swift }
        guard let any = value as? [AnyHashable: Any] else { return nil }
        var keyed: [String: Any] = [:]
        for (key, element) in any {
            guard let key = key.base as? String else { return nil }
            keyed[key] = element
        }
        return keyed
    }

    /// Adds the value of each composite of `layout` to `record` (a row as a dictionary, by
    /// property name), assembled from the leaf values `value(leafIndex)` gives.
    static func addComposites(of layout: EntityLayout, to record: inout [String: Any], _ value: (Int) -> Any?) {
        for index in layout.compositeIndexes {
            guard let composite = layout.properties[index] as? NSCompositeAttributeDescription,
                  let assembled = assemble(composite, value) else { continue }
            record[composite.name] = assembled
        }
    }

    /// The value `dictionary` holds for the leaf at `path` below its level (`nil` for a missing
    /// key or `NSNull`).
    static func value(in dictionary: [String: Any], at path: ArraySlice<String>) -> Any? {
        guard let key = path.first, let value = dictionary[key], !(value is NSNull) else { return nil }
        if path.count == 1 { return value }
        guard let nested = stringKeyed(value) else { return nil }
        return self.value(in: nested, at: path.dropFirst())
    }
}

extension CompositeValues {
    /// The value of `leaf` in `value`, a dictionary of its composite (as a store you write
    /// keeps it), or `nil`. The dictionary holds the part of the composite at `prefix` (its
    /// root: `[name]`).
    static func value(of leaf: CompositeLeafAttribute, in value: Any?, prefix: Int = 1) -> Any? {
        guard let composite = leaf.composite, let value,
              let elements = elements(of: composite, at: Array(leaf.elementPath.prefix(prefix))),
              let dictionary = dictionary(value, of: elements) else { return nil }
        return self.value(in: dictionary, at: leaf.elementPath[prefix...])
    }
}
