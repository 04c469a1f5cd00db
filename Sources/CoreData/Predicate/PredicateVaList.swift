internal import CoreDataShims
import Foundation

/// The arguments of a format string read from a C `va_list` (`NSPredicate(format:arguments:)`,
/// `NSExpression(format:arguments:)`), as the `[Any]` the parser takes.
///
/// Swift cannot read a `va_list`, so the format is tokenized first to learn each argument's kind
/// from its specifier, and the C shim `coredata_read_va_args` reads them all in one call. Swift's
/// `withVaList` passes every integer in a full 64-bit word, so all integer specifiers are read
/// as 64-bit values; `%@` and `%K` take object pointers (Foundation's objects, strings, and this
/// package's Foundation values, which `withVaList` passes as bridged objects: see
/// `CVarArg+Predicate.swift`); `%s` a C string.
internal enum PredicateVaList {
    /// The arguments for `format`'s specifiers, read from `list`; `[]` when the format does not
    /// tokenize (the parser then reports why).
    static func arguments(for format: String, from list: CVaListPointer) -> [Any] {
        guard let tokens = try? PredicateLexer.tokenize(format) else { return [] }
        let specifiers = tokens.compactMap { token -> FormatSpecifier? in
            if case .format(let specifier) = token.kind { return specifier }
            return nil
        }
        guard !specifiers.isEmpty else { return [] }
        let kinds = specifiers.map { specifier -> CChar in
            switch specifier {
            case .object, .keyPath, .string: return CChar(UInt8(ascii: "p"))
            case .floatingPoint: return CChar(UInt8(ascii: "d"))
            case .signedInteger, .unsignedInteger, .character: return CChar(UInt8(ascii: "i"))
            }
        }
        var values = [coredata_va_value](repeating: coredata_va_value(), count: specifiers.count)
        kinds.withUnsafeBufferPointer { kinds in
            values.withUnsafeMutableBufferPointer { values in
                coredata_read_va_args(kinds.baseAddress, specifiers.count, list, values.baseAddress)
            }
        }
        return zip(specifiers, values).map { specifier, value -> Any in
            switch specifier {
            case .object, .keyPath:
                guard let pointer = value.pointer else { return NSNull() }
                let object = Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue()
                return (object as? KeyPathArgument)?.keyPath ?? object
            case .string:
                guard let pointer = value.pointer else { return NSNull() }
                return String(cString: pointer.assumingMemoryBound(to: CChar.self))
            case .floatingPoint: return value.real
            case .unsignedInteger: return UInt64(bitPattern: Int64(value.integer))
            case .signedInteger, .character: return Int64(value.integer)
            }
        }
    }
}
