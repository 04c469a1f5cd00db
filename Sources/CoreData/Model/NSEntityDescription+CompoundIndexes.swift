import Foundation

// Compound indexes, deprecated since iOS 11 and macOS 10.13 for `indexes`: code that builds its
// model in code sets them. They are `indexes` under their old name, read and written as arrays.

extension NSEntityDescription {
    /// The entity's indexes as arrays of the properties (descriptions, or names) each one covers,
    /// in order: another spelling of ``indexes``.
    ///
    /// Setting it replaces ``indexes`` with one ascending, binary index per array, named
    /// `<Entity>_compoundIndex_<n>`; a name is looked up when the model is used.
    ///
    /// ```swift
    /// car.compoundIndexes = [["name", "year"]]   // one index over ZNAME, ZYEAR
    /// ```
    ///
    /// An element that is neither a property description nor a name is a programmer error (Apple
    /// raises an exception): it stops the process. So does setting it once the model is in use.
    @available(*, deprecated, message: "Use NSEntityDescription.indexes instead")
    public var compoundIndexes: [[Any]] {
        get {
            indexes.map { index in
                index.elements.map { element -> Any in
                    if let property = element.property { return property }
                    let name = element.propertyName ?? ""
                    return propertiesByName[name] ?? name
                }
            }
        }
        set {
            indexes = newValue.enumerated().map { offset, items in
                let elements = items.map { item -> NSFetchIndexElementDescription in
                    switch item {
                    case let property as NSPropertyDescription: return NSFetchIndexElementDescription(property: property, collationType: .binary)
                    case let name as String: return NSFetchIndexElementDescription(propertyName: name, ascending: true)
                    default: preconditionFailure("NSEntityDescription.compoundIndexes of '\(name ?? "")': \(type(of: item)) is neither a property description nor a property name")
                    }
                }
                return NSFetchIndexDescription(name: "\(name ?? "")_compoundIndex_\(offset + 1)", elements: elements)
            }
        }
    }
}
