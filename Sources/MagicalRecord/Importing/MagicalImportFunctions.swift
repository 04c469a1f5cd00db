import CoreData
import Foundation

// MagicalRecord's import user-info keys (`NSManagedObject+MagicalDataImport.h`, 2.3) and the
// functions of `MagicalImportFunctions.m` that turn imported values into attribute values.

/// The attribute user-info key naming the date format of imported strings
/// (`yyyy-MM-dd'T'HH:mm:ssz` unless set), or `UnixTime` for numbers in milliseconds.
public let kMagicalRecordImportCustomDateFormatKey = "dateFormat"
/// The date format of imported strings when the attribute names none.
public let kMagicalRecordImportDefaultDateFormatString = "yyyy-MM-dd'T'HH:mm:ssz"
/// The `dateFormat` value for numbers that count milliseconds since 1970 (otherwise seconds).
public let kMagicalRecordImportUnixTimeString = "UnixTime"
/// The attribute user-info key naming the key path of the value in the imported data; backups
/// follow as `mappedKeyName.1` to `mappedKeyName.9`.
public let kMagicalRecordImportAttributeKeyMapKey = "mappedKeyName"
/// The attribute user-info key naming the class of the imported value: such a value is set as
/// it is, not converted to the attribute's type.
public let kMagicalRecordImportAttributeValueClassNameKey = "attributeValueClassName"
/// The relationship user-info key naming the key path of the related data.
public let kMagicalRecordImportRelationshipMapKey = "mappedKeyName"
/// The relationship or entity user-info key naming the attribute that identifies an object
/// (the primary attribute; `<entityName>ID` unless set, `personID` for `Person`).
public let kMagicalRecordImportRelationshipLinkedByKey = "relatedByAttribute"
/// The relationship user-info key `type` (read by no import step in MagicalRecord 2.3).
public let kMagicalRecordImportRelationshipTypeKey = "type"
/// The attribute user-info key that, when true, sets the attribute's default value when the
/// data has no value for it.
public let kMagicalRecordImportAttributeUseDefaultValueWhenNotPresent = "useDefaultValueWhenNotPresent"

/// What `MagicalImportFunctions.m` does, and the reading of imported data.
internal enum MagicalImportFunctions {
    /// The primary attribute's default name for an entity: `Person` → `personID`.
    static func primaryKeyName(forEntityNamed name: String) -> String {
        guard let first = name.first else { return "ID" }
        return first.lowercased() + name.dropFirst() + "ID"
    }

    /// A date parsed with a format, in UTC and the POSIX locale; nil if it does not parse.
    static func date(from string: String, format: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = format
        return formatter.date(from: string)
    }

    /// A date from seconds since 1970, or milliseconds.
    static func date(from number: Double, milliseconds: Bool) -> Date {
        Date(timeIntervalSince1970: milliseconds ? number / 1000 : number)
    }

    /// The value at a dotted key path of imported data (dictionaries within dictionaries); nil
    /// where the data is not a dictionary or has no such key (MagicalRecord's undefined keys).
    static func value(atKeyPath keyPath: String, in data: Any) -> Any? {
        var current: Any? = data
        for key in keyPath.split(separator: ".", omittingEmptySubsequences: false) {
            guard let node = current else { return nil }
            current = dictionaryValue(String(key), in: node)
        }
        return current
    }

    private static func dictionaryValue(_ key: String, in data: Any) -> Any? {
        switch data {
        case let dictionary as [String: Any]: return unwrapped(dictionary[key])
        case let dictionary as [AnyHashable: Any]: return unwrapped(dictionary[key])
        case let dictionary as NSDictionary: return unwrapped(dictionary[key])
        default: return nil
        }
    }

    /// A dictionary's value with an optional inside it unwrapped: a Swift dictionary built from
    /// optional properties (`["owner": repo.owner]`) holds `Optional.none` boxed in `Any`, which
    /// Apple platforms bridge to `NSNull`, and so does this: the key is there, its value nil
    /// (MagicalRecord sets the attribute to nil, not keeping the old value or trying another key).
    static func unwrapped(_ value: Any?) -> Any? {
        guard let value else { return nil }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let wrapped = mirror.children.first else { return NSNull() }
        return unwrapped(wrapped.value)
    }

    static func isDictionary(_ data: Any) -> Bool {
        data is [String: Any] || data is [AnyHashable: Any] || data is NSDictionary
    }

    static func isNumber(_ value: Any) -> Bool {
        value is NSNumber || value is any BinaryInteger || value is any BinaryFloatingPoint || value is Bool || value is Decimal
    }

    static func isString(_ value: Any) -> Bool {
        value is String || value is NSString
    }

    static func doubleValue(_ value: Any) -> Double? {
        switch value {
        case let number as NSNumber: return number.doubleValue
        case let double as Double: return double
        case let float as Float: return Double(float)
        case let int as any BinaryInteger: return Double(int)
        case let bool as Bool: return bool ? 1 : 0
        case let decimal as Decimal: return NSDecimalNumber(decimal: decimal).doubleValue
        default: return nil
        }
    }
}
