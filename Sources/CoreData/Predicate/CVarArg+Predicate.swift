import Foundation

// Why these conformances exist
// ----------------------------
// `NSPredicate(format:_:)` takes `CVarArg...`, as on Apple platforms. On Darwin every Objective-C
// object and every bridged Foundation value is `CVarArg`, so client code such as
//
//     NSPredicate(format: "owner == %@", person)          // an NSManagedObject
//     NSPredicate(format: "name IN %@", ["Ada", "Grace"]) // a Swift array
//     NSPredicate(format: "born < %@", Date())             // a Date
//
// compiles there. On Linux `NSObject`, `NSNumber`, `NSDate`, `Array`, `Date`, `UUID`, … are not
// `CVarArg`, and the same code would not compile. The conformances below make it compile, and
// let a Swift key path stand where Apple's code passes `#keyPath(Item.name)` to `%K`.
//
// The predicate parser never passes these values to C: it reads the `CVarArg` existentials as
// Swift values. `_cVarArgEncoding` therefore only matters if one of them reaches a real C variadic
// function (`String(format:)`): objects pass their pointer, which Foundation's `%@` formatting
// understands as on Darwin; value types pass a null pointer, which `%@` prints as `(null)`.

extension NSObject: @retroactive CVarArg {
    /// The object's pointer, as Objective-C passes objects to `%@`.
    public var _cVarArgEncoding: [Int] { [Int(bitPattern: Unmanaged.passUnretained(self).toOpaque())] }
}

extension Array: @retroactive CVarArg {
    /// A null pointer: arrays are read as Swift values by `NSPredicate(format:)`.
    public var _cVarArgEncoding: [Int] { [0] }
}

extension Set: @retroactive CVarArg {
    /// A null pointer: sets are read as Swift values by `NSPredicate(format:)`.
    public var _cVarArgEncoding: [Int] { [0] }
}

extension Dictionary: @retroactive CVarArg {
    /// A null pointer: dictionaries are read as Swift values by `NSPredicate(format:)`.
    public var _cVarArgEncoding: [Int] { [0] }
}

extension Date: @retroactive CVarArg {
    /// A null pointer: dates are read as Swift values by `NSPredicate(format:)`.
    public var _cVarArgEncoding: [Int] { [0] }
}

extension Data: @retroactive CVarArg {
    /// A null pointer: data values are read as Swift values by `NSPredicate(format:)`.
    public var _cVarArgEncoding: [Int] { [0] }
}

extension UUID: @retroactive CVarArg {
    /// A null pointer: UUIDs are read as Swift values by `NSPredicate(format:)`.
    public var _cVarArgEncoding: [Int] { [0] }
}

extension URL: @retroactive CVarArg {
    /// A null pointer: URLs are read as Swift values by `NSPredicate(format:)`.
    public var _cVarArgEncoding: [Int] { [0] }
}

extension Decimal: @retroactive CVarArg {
    /// A null pointer: decimals are read as Swift values by `NSPredicate(format:)`.
    public var _cVarArgEncoding: [Int] { [0] }
}

extension AnyKeyPath: @retroactive CVarArg {
    /// A null pointer: key paths are read as Swift values by `NSPredicate(format:)` (`%K`).
    public var _cVarArgEncoding: [Int] { [0] }
}
