import Foundation

/// The reference objects of an ``NSIncrementalStore``'s object IDs, and the primary keys that
/// stand for them.
///
/// An object ID here is keyed by an `Int64` primary key (``IDKey``), where Apple's holds the
/// store's reference object. A positive integer reference (`Int`, `Int64`, an integral
/// `NSNumber`, …) is its own key, so such IDs need no table and their URIs
/// (`x-coredata://<store>/<Entity>/p<n>`) hold across launches. Any other reference (a `String`,
/// a `UUID`, …: it must be `Hashable`) gets a negative key from this table, per root entity,
/// which lasts as long as the store: the same reference always gives the same ID. The URIs of
/// string references (`p<text>`) and of other integers (`p%23-7`) name the reference, so they
/// hold across launches too.
internal final class IncrementalStoreReferences: @unchecked Sendable {
    private struct Reference: Hashable {
        var root: Int
        var value: AnyHashable
    }
    private struct Key: Hashable {
        var root: Int
        var value: Int64
    }
    private let lock = NSLock()
    private var keys: [Reference: Int64] = [:]
    private var references: [Key: AnyHashable] = [:]
    private var lastKey: Int64 = 0

    /// The primary key that stands for `reference` among the IDs of `root`'s entity family.
    /// Traps when `reference` is not `Hashable` (a programmer error: Apple's reference objects
    /// are strings and numbers).
    func key(for reference: Any, root: Int) -> Int64 {
        let integer = Self.integer(reference)
        if let integer, integer > 0 { return integer }
        // (Another integer by its value, whatever its type: the same one read back from a URI.)
        guard let hashable = integer.map(AnyHashable.init) ?? reference as? AnyHashable else {
            preconditionFailure("newObjectID(for:referenceObject:): the reference object \(reference) is not Hashable; use a String or a number")
        }
        let entry = Reference(root: root, value: hashable)
        lock.lock()
        defer { lock.unlock() }
        if let key = keys[entry] { return key }
        lastKey -= 1
        keys[entry] = lastKey
        references[Key(root: root, value: lastKey)] = hashable
        return lastKey
    }

    /// The reference object behind `key`: an integer as an `NSNumber` (as Apple's reference
    /// objects are, so `as? Int64` and `as? Int` both read it), else the one `key(for:root:)`
    /// recorded; `nil` if none was.
    func reference(for key: Int64, root: Int) -> Any? {
        if key > 0 { return NSNumber(value: key) }
        lock.lock()
        defer { lock.unlock() }
        let reference = references[Key(root: root, value: key)]?.base
        if let integer = reference as? Int64 { return NSNumber(value: integer) }
        return reference
    }

    /// The URI path form of the reference behind `key` (what follows `p` in an ID's URI): a
    /// string percent-encoded, an integer that is not its own key after ``integerMarker``; `nil`
    /// for another kind of reference (a UUID), whose URI names its key, valid while the store is
    /// added.
    func uriReference(for key: Int64, root: Int) -> String? {
        let reference = reference(for: key, root: root)
        // An integer that is not its own key (0, a negative one): its value, after its marker.
        if key <= 0, let number = reference as? NSNumber, let integer = Self.integer(number) { return Self.integerMarker + String(integer) }
        guard let reference = reference as? String else { return nil }
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove("/")
        guard let encoded = reference.addingPercentEncoding(withAllowedCharacters: allowed) else { return nil }
        // A string that reads as an integer ("42"), or whose form starts with the marker, gets the
        // marker (an encoded quote): "42" is not the integer reference 42.
        let marked = Int64(reference) != nil || encoded.hasPrefix(Self.stringMarker) || encoded.hasPrefix(Self.integerMarker)
        return marked ? Self.stringMarker + encoded : encoded
    }

    /// What ``uriReference(for:root:)`` puts before a string reference that would otherwise read
    /// back as something else.
    static let stringMarker = "%22"
    /// What ``uriReference(for:root:)`` puts before an integer reference that is not its own key
    /// (an encoded `#`): `…/Note/p%23-7` for -7.
    static let integerMarker = "%23"

    /// `value` as an integer when it is one (or an integral `NSNumber`).
    static func integer(_ value: Any) -> Int64? {
        let integer: Int64?
        switch value {
        case let v as Int: integer = Int64(v)
        case let v as Int64: integer = v
        case let v as Int32: integer = Int64(v)
        case let v as Int16: integer = Int64(v)
        case let v as UInt32: integer = Int64(v)
        case let v as UInt64: integer = Int64(exactly: v)
        case let number as NSNumber: integer = Int64(exactly: number.doubleValue).flatMap { NSNumber(value: $0) == number ? $0 : nil }
        default: integer = nil
        }
        return integer
    }
}
