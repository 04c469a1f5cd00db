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
// `NSPredicate(format:_:)` never passes these values to C: it reads the `CVarArg` existentials as
// Swift values. They reach C when a variadic function of the app's hands its arguments on with
// `withVaList` (`NSPredicate(format:arguments:)`, `String(format:)`): objects pass their pointer,
// which `%@` reads as on Darwin, and the value types pass their bridged Foundation object
// (`NSArray`, `NSDate`, …) through the standard library's `_CVarArgObject`, which `withVaList`
// keeps alive until its closure returns, so that `%@` reads them as Darwin reads its bridged values.

extension NSObject: @retroactive CVarArg {
    /// The object's pointer, as Objective-C passes objects to `%@`.
    public var _cVarArgEncoding: [Int] { [Int(bitPattern: Unmanaged.passUnretained(self).toOpaque())] }
}

extension Array: @retroactive _CVarArgObject {
    /// Unused: `withVaList` passes ``_cVarArgObject`` instead.
    public var _cVarArgEncoding: [Int] { [0] }
    /// The bridged `NSArray`, passed to C in the value's place.
    public var _cVarArgObject: CVarArg { _bridgeToObjectiveC() }
}

extension Set: @retroactive _CVarArgObject {
    /// Unused: `withVaList` passes ``_cVarArgObject`` instead.
    public var _cVarArgEncoding: [Int] { [0] }
    /// The bridged `NSSet`, passed to C in the value's place.
    public var _cVarArgObject: CVarArg { _bridgeToObjectiveC() }
}

extension Dictionary: @retroactive _CVarArgObject {
    /// Unused: `withVaList` passes ``_cVarArgObject`` instead.
    public var _cVarArgEncoding: [Int] { [0] }
    /// The bridged `NSDictionary`, passed to C in the value's place.
    public var _cVarArgObject: CVarArg { _bridgeToObjectiveC() }
}

extension Date: @retroactive _CVarArgObject {
    /// Unused: `withVaList` passes ``_cVarArgObject`` instead.
    public var _cVarArgEncoding: [Int] { [0] }
    /// The bridged `NSDate`, passed to C in the value's place.
    public var _cVarArgObject: CVarArg { _bridgeToObjectiveC() }
}

extension Data: @retroactive _CVarArgObject {
    /// Unused: `withVaList` passes ``_cVarArgObject`` instead.
    public var _cVarArgEncoding: [Int] { [0] }
    /// The bridged `NSData`, passed to C in the value's place.
    public var _cVarArgObject: CVarArg { _bridgeToObjectiveC() }
}

extension UUID: @retroactive _CVarArgObject {
    /// Unused: `withVaList` passes ``_cVarArgObject`` instead.
    public var _cVarArgEncoding: [Int] { [0] }
    /// The bridged `NSUUID`, passed to C in the value's place.
    public var _cVarArgObject: CVarArg { _bridgeToObjectiveC() }
}

extension URL: @retroactive _CVarArgObject {
    /// Unused: `withVaList` passes ``_cVarArgObject`` instead.
    public var _cVarArgEncoding: [Int] { [0] }
    /// The bridged `NSURL`, passed to C in the value's place.
    public var _cVarArgObject: CVarArg { _bridgeToObjectiveC() }
}

extension Decimal: @retroactive _CVarArgObject {
    /// Unused: `withVaList` passes ``_cVarArgObject`` instead.
    public var _cVarArgEncoding: [Int] { [0] }
    /// An `NSDecimalNumber`, passed to C in the value's place.
    public var _cVarArgObject: CVarArg { NSDecimalNumber(decimal: self) }
}

extension AnyKeyPath: @retroactive _CVarArgObject {
    /// Unused: `withVaList` passes ``_cVarArgObject`` instead.
    public var _cVarArgEncoding: [Int] { [0] }
    /// An object holding the key path (a key path is no `NSObject`), passed to C in its place.
    public var _cVarArgObject: CVarArg { KeyPathArgument(self) }
}

/// A Swift key path given to `%K` of `NSPredicate(format:arguments:)` through `withVaList`: the
/// object C is handed in the key path's place.
internal final class KeyPathArgument: NSObject {
    let keyPath: AnyKeyPath
    init(_ keyPath: AnyKeyPath) { self.keyPath = keyPath }
    override var description: String { keyPath.debugDescription }
}
