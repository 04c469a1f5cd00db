import CoreData
import Foundation

// MagicalRecord's `NSAttributeDescription`, `NSEntityDescription` and
// `NSRelationshipDescription (MagicalRecord_DataImport)` categories (2.3): where an attribute's
// value is in imported data, and how it becomes a value of the attribute's type.

extension NSAttributeDescription {
    /// The key path of this attribute's value in `data`: the user info's `mappedKeyName`
    /// (else the attribute's name), then `mappedKeyName.1` … `mappedKeyName.9` while the data has
    /// no value there; nil when none has one. An `NSNull` is a value.
    internal func mr_lookupKey(in data: Any) -> String? {
        var lookupKey = userInfo?[kMagicalRecordImportAttributeKeyMapKey] as? String ?? name
        if MagicalImportFunctions.value(atKeyPath: lookupKey, in: data) != nil { return lookupKey }
        for failover in 1..<10 {
            guard let backup = userInfo?["\(kMagicalRecordImportAttributeKeyMapKey).\(failover)"] as? String else { return nil }
            lookupKey = backup
            if MagicalImportFunctions.value(atKeyPath: lookupKey, in: data) != nil { return lookupKey }
        }
        return nil
    }

    /// The value at `keyPath` in `data`, as a value of this attribute's type, as MagicalRecord
    /// converts it:
    /// - a date from a string in the `dateFormat` of the user info (else
    ///   `yyyy-MM-dd'T'HH:mm:ssz`), UTC; nil when the string does not parse; from a number,
    ///   seconds since 1970 (milliseconds with `dateFormat` `UnixTime`);
    /// - a number from a string's leading number (`-[NSString doubleValue]`: 0 when there is none;
    ///   an integer's digits exactly, for an integer or decimal attribute);
    /// - a Boolean from a string's `-[NSString boolValue]`;
    /// - a string from any other value's description;
    /// - `NSNull` is nil; other types, and attributes with an `attributeValueClassName`, take the
    ///   value as it is (a value of the wrong type then fails the save's validation).
    internal func mr_importedValue(atKeyPath keyPath: String, in data: Any) -> Any? {
        mr_converted(MagicalImportFunctions.value(atKeyPath: keyPath, in: data))
    }

    /// An imported value as a value of this attribute's type (see
    /// ``mr_importedValue(atKeyPath:in:)``).
    internal func mr_converted(_ value: Any?) -> Any? {
        guard let value, !(value is NSNull) else { return nil }
        if userInfo?[kMagicalRecordImportAttributeValueClassNameKey] != nil { return value }
        switch attributeType {
        case .dateAttributeType:
            if value is Date || value is NSDate { return value }
            let format = userInfo?[kMagicalRecordImportCustomDateFormatKey] as? String
            if let seconds = MagicalImportFunctions.doubleValue(value) {
                return MagicalImportFunctions.date(from: seconds, milliseconds: format == kMagicalRecordImportUnixTimeString)
            }
            return MagicalImportFunctions.date(from: "\(value)", format: format ?? kMagicalRecordImportDefaultDateFormatString)
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
             .decimalAttributeType, .doubleAttributeType, .floatAttributeType:
            if MagicalImportFunctions.isNumber(value) { return value }
            // An integer's digits exactly (a 64-bit key sent as a string, `id_str`): through a
            // double, two keys above 2⁵³ would become one, and one record would overwrite another.
            let text = "\(value)".trimmingCharacters(in: .whitespaces)
            if attributeType != .doubleAttributeType && attributeType != .floatAttributeType, let integer = Int64(text) {
                return NSNumber(value: integer)
            }
            return NSNumber(value: NSString(string: text).doubleValue)
        case .booleanAttributeType:
            if MagicalImportFunctions.isNumber(value) { return value }
            return NSNumber(value: MagicalStringValue.bool("\(value)"))
        case .stringAttributeType:
            if MagicalImportFunctions.isString(value) { return value }
            return "\(value)"
        default:
            return value
        }
    }
}

extension NSEntityDescription {
    /// The attribute that identifies an imported object: the user info's `relatedByAttribute`,
    /// else `<entityName>ID` (`personID` for `Person`); nil when the entity has no such attribute.
    /// A `relatedByAttribute` naming no attribute is logged, as MagicalRecord logs it.
    internal func mr_primaryAttributeToRelateBy() -> NSAttributeDescription? {
        let named = userInfo?[kMagicalRecordImportRelationshipLinkedByKey] as? String
        let name = named ?? MagicalImportFunctions.primaryKeyName(forEntityNamed: self.name ?? "")
        guard let attribute = attributesByName[name] else {
            if let named {
                MagicalRecordErrorReport.problem("Invalid value for key '\(kMagicalRecordImportRelationshipLinkedByKey)' in '\(self.name ?? "")' entity. Remove this key or add attribute '\(named)'")
            }
            return nil
        }
        return attribute
    }
}

extension NSRelationshipDescription {
    /// The name of the destination's attribute that identifies a related object: the user
    /// info's `relatedByAttribute`, else `<destinationEntityName>ID`.
    internal func mr_primaryKey() -> String {
        userInfo?[kMagicalRecordImportRelationshipLinkedByKey] as? String
            ?? MagicalImportFunctions.primaryKeyName(forEntityNamed: destinationEntity?.name ?? "")
    }

    /// The value that identifies the related object in its imported data: the data itself when
    /// it is a string or a number (as a value of the primary attribute's type); from a dictionary, the value under the destination's primary
    /// attribute's key (its `mappedKeyName` or the first of its backups `mappedKeyName.1`…`.9` the
    /// data has, else its name), as 2.3's `MR_lookupKeyForAttribute:` finds it.
    internal func mr_relatedValue(in data: Any) -> Any? {
        let attribute = destinationEntity?.attributesByName[mr_primaryKey()]
        guard MagicalImportFunctions.isDictionary(data) else { return attribute?.mr_converted(data) ?? data }
        // (Its mapped key, else its name, as 2.3's `MR_lookupKeyForRelationship:` falls back.)
        guard let attribute,
              let key = attribute.mr_lookupKey(in: data)
                ?? (MagicalImportFunctions.value(atKeyPath: attribute.name, in: data) != nil ? attribute.name : nil) else { return nil }
        return attribute.mr_converted(MagicalImportFunctions.value(atKeyPath: key, in: data))
    }
}
