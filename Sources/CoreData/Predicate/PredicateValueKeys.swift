import Foundation

/// The keys that key-value coding gives Foundation's value classes on Apple platforms and that
/// predicates read from values: Linux has no key-value coding, so they are listed here.
///
/// Xcode's model compiler turns an attribute's length and date bounds into validation predicates
/// on the value itself (`length >= 3`, `timeIntervalSinceReferenceDate <= 7e8`, evaluated with the
/// value as `SELF`), and fetches and validation predicates written by hand use the same keys
/// (`name.length > 0`). An unknown key reads as `nil`, as before.
///
/// | value | keys |
/// | --- | --- |
/// | `String`, `NSString` | `length` (UTF-16 units, as `NSString` counts), `uppercaseString`, `lowercaseString` |
/// | `Data`, `NSData` | `length` (bytes) |
/// | `Date`, `NSDate` | `timeIntervalSinceReferenceDate`, `timeIntervalSince1970` |
/// | numbers | `intValue`, `integerValue`, `longLongValue`, `doubleValue`, `floatValue`, `boolValue`, `stringValue` |
/// | `URL`, `NSURL` | `absoluteString`, `path`, `lastPathComponent`, `pathExtension`, `host`, `scheme` |
/// | `UUID`, `NSUUID` | `UUIDString` |
internal enum PredicateValueKeys {
    /// The value of `key` of a Foundation value, or `nil` when the value has no such key.
    static func value(of object: Any, forKey key: String) -> Any? {
        switch object {
        case let text as String: return string(text, key)
        case let text as NSString: return string(text as String, key)
        case let data as Data: return key == "length" ? data.count : nil
        case let data as NSData: return key == "length" ? data.length : nil
        case let date as Date: return self.date(date, key)
        case let date as NSDate: return self.date(date as Date, key)
        case let url as URL: return self.url(url, key)
        case let url as NSURL: return self.url(url as URL, key)
        case let uuid as UUID: return key == "UUIDString" ? uuid.uuidString : nil
        case let uuid as NSUUID: return key == "UUIDString" ? uuid.uuidString : nil
        case let number as NSNumber: return self.number(number, key)
        default: return nil
        }
    }

    private static func string(_ text: String, _ key: String) -> Any? {
        switch key {
        case "length": return text.utf16.count
        case "uppercaseString": return text.uppercased()
        case "lowercaseString": return text.lowercased()
        default: return nil
        }
    }

    private static func date(_ date: Date, _ key: String) -> Any? {
        switch key {
        case "timeIntervalSinceReferenceDate": return date.timeIntervalSinceReferenceDate
        case "timeIntervalSince1970": return date.timeIntervalSince1970
        default: return nil
        }
    }

    private static func url(_ url: URL, _ key: String) -> Any? {
        switch key {
        case "absoluteString": return url.absoluteString
        case "path": return url.path
        case "lastPathComponent": return url.lastPathComponent
        case "pathExtension": return url.pathExtension
        case "host": return url.host
        case "scheme": return url.scheme
        default: return nil
        }
    }

    private static func number(_ number: NSNumber, _ key: String) -> Any? {
        switch key {
        case "intValue": return Int(number.int32Value)
        case "integerValue": return number.intValue
        case "longLongValue": return number.int64Value
        case "doubleValue": return number.doubleValue
        case "floatValue": return Double(number.floatValue)
        case "boolValue": return number.boolValue
        case "stringValue": return number.stringValue
        default: return nil
        }
    }
}
