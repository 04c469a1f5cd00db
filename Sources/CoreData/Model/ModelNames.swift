import Foundation

/// The names a model may give its entities, properties and fetch indexes, checked by the Xcode
/// model reader and by ``NSManagedObjectModel/validateForUse()`` (when a coordinator first adds a
/// store for the model).
///
/// A name starts with a letter and goes on with letters, digits and underscores (ASCII), as
/// Xcode's model editor requires: names become table, column and index names in the store, so no
/// other text may reach it. A property may not take the name of a method of `NSObject` or
/// `NSManagedObject` without parameters (`description`, `hash`, `isDeleted`, …): Apple's
/// documentation forbids them, since the property would replace the method.
internal enum ModelNames {
    /// Why `name` cannot name an entity (a clause to follow the name: "which is not …"), or
    /// `nil` if it can.
    static func problem(entityName name: String) -> String? {
        isIdentifier(name) ? nil : invalid
    }

    /// Why `name` cannot name a property, or `nil` if it can.
    static func problem(propertyName name: String) -> String? {
        guard isIdentifier(name) else { return invalid }
        if reservedPropertyNames.contains(name) {
            return "which cannot name a property (it is the name of a method of NSObject or NSManagedObject)"
        }
        return nil
    }

    /// Why `name` cannot name an element of a composite attribute, or `nil` if it can (it names
    /// a column; it is never a key of an object).
    static func problem(elementName name: String) -> String? {
        isIdentifier(name) ? nil : invalid
    }

    /// Why `name` cannot name a fetch index, or `nil` if it can.
    static func problem(indexName name: String) -> String? {
        isIdentifier(name) ? nil : invalid
    }

    private static let invalid = "which is not a valid name (a name starts with a letter, A-Z or a-z, and goes on with letters, digits and underscores)"

    private static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, isLetter(first) else { return false }
        return name.utf8.allSatisfy { isLetter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "_") }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    /// The methods without parameters of `NSObject` and `NSManagedObject` that a property would replace.
    static let reservedPropertyNames: Set<String> = [
        // NSObject
        "autorelease", "class", "classForCoder", "classForKeyedArchiver", "copy", "dealloc", "debugDescription",
        "description", "finalize", "hash", "init", "isProxy", "mutableCopy", "observationInfo", "release", "retain",
        "retainCount", "self", "superclass", "zone",
        // NSManagedObject
        "awakeFromFetch", "awakeFromInsert", "changedValues", "changedValuesForCurrentEvent", "didSave",
        "didTurnIntoFault", "entity", "faultingState", "hasChanges", "hasPersistentChangedValues", "isDeleted",
        "isFault", "isInserted", "isUpdated", "managedObjectContext", "objectID", "prepareForDeletion",
        "validateForDelete", "validateForInsert", "validateForUpdate", "willSave", "willTurnIntoFault",
    ]
}
