import Foundation

// How migrations carry a composite attribute's elements over: each destination element comes
// from the source element it matches, by renaming identifier first and then by name, as the
// entities and properties around it are matched (`InferredMapping.match`).

extension InferredMapping {
    /// Each of `elements`' match among `sourceElements` (the elements of the composite it
    /// migrates from, at the same depth): by renaming identifier, then by name.
    static func elementMatches(_ elements: [NSAttributeDescription],
                               in sourceElements: [NSAttributeDescription]) -> [ObjectIdentifier: NSAttributeDescription] {
        match(elements, in: sourceElements, name: \.name, renamingIdentifier: \.renamingIdentifier)
    }

    /// The leaf of `source` that the leaf at `path` of `composite` (its element names below the
    /// composite: `["address", "city"]` without the root) comes from, or `nil` for a new element.
    static func sourceLeaf(at path: ArraySlice<String>, of composite: NSCompositeAttributeDescription,
                           from source: NSCompositeAttributeDescription) -> CompositeLeafAttribute? {
        var elements = composite.elements
        var sourceElements = source.elements
        var sourcePath = [source.name]
        for name in path {
            guard let element = elements.first(where: { $0.name == name }),
                  let match = elementMatches(elements, in: sourceElements)[ObjectIdentifier(element)] else { return nil }
            sourcePath.append(match.name)
            if let nested = element as? NSCompositeAttributeDescription {
                guard let sourceNested = match as? NSCompositeAttributeDescription else { return nil }
                elements = nested.elements
                sourceElements = sourceNested.elements
            }
        }
        return source.leaf(named: sourcePath.joined(separator: "."))
    }
}

extension CompositeValues {
    /// A source composite's dictionary (`value`, of a composite with `sourceElements`) made a
    /// value of a destination composite with `elements`, as a migration carries it over. Each
    /// destination element takes the value of the source element it matches (by renaming
    /// identifier, then by name; by name alone when `sourceElements` is `nil`), `nil` included;
    /// an element with no match keeps its value in `current` (the destination object's: its
    /// default); keys that name no destination element are dropped. Anything but a dictionary is
    /// returned as it is.
    static func migrated(_ value: Any?, from sourceElements: [NSAttributeDescription]?, to elements: [NSAttributeDescription],
                         over current: [String: Any]?) -> Any? {
        guard let value, !(value is NSNull), let source = stringKeyed(value) else { return value }
        let matches = sourceElements.map { InferredMapping.elementMatches(elements, in: $0) }
        var result = current ?? [:]
        for element in elements {
            let sourceElement = matches?[ObjectIdentifier(element)]
            if matches != nil && sourceElement == nil { continue }
            guard let elementValue = source[sourceElement?.name ?? element.name] else {
                result[element.name] = nil
                continue
            }
            if let nested = element as? NSCompositeAttributeDescription {
                result[element.name] = migrated(elementValue, from: (sourceElement as? NSCompositeAttributeDescription)?.elements,
                                                to: nested.elements, over: result[element.name].flatMap(stringKeyed))
            } else {
                result[element.name] = elementValue
            }
        }
        return result
    }
}
