import CLibPQ
import Foundation

// Results in binary (``LibPQConnection/execute(_:_:binaryResults:)``): integers, floats and
// `bytea` as the server holds them, read without parsing; `numeric` in its base-10,000 digits,
// written out as the server's text output would write it.
extension LibPQRows {
    /// The type OIDs read here.
    enum ColumnType {
        static let bool: Oid = 16, bytea: Oid = 17, int8: Oid = 20, int2: Oid = 21, int4: Oid = 23, oid: Oid = 26
        static let float4: Oid = 700, float8: Oid = 701, numeric: Oid = 1700
    }

    /// A binary integer, float or Boolean value as an `Int64` (floats truncated, as strtoll would).
    static func binaryInt64(_ value: UnsafeRawPointer, length: Int, type: Oid) -> Int64 {
        switch type {
        case ColumnType.float4, ColumnType.float8, ColumnType.numeric:
            let double = binaryDouble(value, length: length, type: type)
            return double.isFinite && abs(double) < 9.2e18 ? Int64(double) : 0
        case ColumnType.oid where length == 4:
            return Int64(UInt32(bigEndian: value.loadUnaligned(as: UInt32.self)))
        default:
            switch length {
            case 8: return Int64(bigEndian: value.loadUnaligned(as: Int64.self))
            case 4: return Int64(Int32(bigEndian: value.loadUnaligned(as: Int32.self)))
            case 2: return Int64(Int16(bigEndian: value.loadUnaligned(as: Int16.self)))
            case 1: return Int64(value.load(as: UInt8.self))
            default: return 0
            }
        }
    }

    /// A binary float, integer or `numeric` value as a `Double`.
    static func binaryDouble(_ value: UnsafeRawPointer, length: Int, type: Oid) -> Double {
        switch type {
        case ColumnType.float8 where length == 8: return Double(bitPattern: UInt64(bigEndian: value.loadUnaligned(as: UInt64.self)))
        case ColumnType.float4 where length == 4: return Double(Float(bitPattern: UInt32(bigEndian: value.loadUnaligned(as: UInt32.self))))
        case ColumnType.numeric: return Double(numericText(value, length: length)) ?? .nan
        default: return Double(binaryInt64(value, length: length, type: ColumnType.int8))
        }
    }

    /// A binary value as text: `numeric` and integers in the server's text form, Booleans as
    /// `t`/`f`, anything else (`text`, `varchar`, `name`) as its UTF-8 bytes.
    static func binaryText(_ value: UnsafeRawPointer, length: Int, type: Oid) -> String {
        switch type {
        case ColumnType.numeric: return numericText(value, length: length)
        case ColumnType.int2, ColumnType.int4, ColumnType.int8, ColumnType.oid: return String(binaryInt64(value, length: length, type: type))
        case ColumnType.bool: return value.load(as: UInt8.self) != 0 ? "t" : "f"
        default: return String(decoding: UnsafeRawBufferPointer(start: value, count: length), as: UTF8.self)
        }
    }

    /// A `numeric` in binary (digit count, weight of the first base-10,000 digit, sign, display
    /// scale, then the digits) written as the server's text output writes it: `-12.50`, `NaN`.
    static func numericText(_ value: UnsafeRawPointer, length: Int) -> String {
        guard length >= 8 else { return "" }
        func word(_ index: Int) -> Int { Int(Int16(bigEndian: value.loadUnaligned(fromByteOffset: 2 * index, as: Int16.self))) }
        let count = word(0), weight = word(1), sign = UInt16(truncatingIfNeeded: word(2)), scale = word(3)
        switch sign {
        case 0xC000: return "NaN"
        case 0xD000: return "Infinity"
        case 0xF000: return "-Infinity"
        default: guard length >= 8 + 2 * count else { return "" }
        }
        func digit(_ index: Int) -> Int { index >= 0 && index < count ? word(4 + index) : 0 }
        func padded(_ digit: Int) -> String {
            let text = String(digit)
            return String(repeating: "0", count: 4 - text.count) + text
        }
        var text = sign == 0x4000 ? "-" : ""
        if weight < 0 {
            text += "0"
        } else {
            text += String(digit(0))
            for index in stride(from: 1, through: weight, by: 1) { text += padded(digit(index)) }
        }
        if scale > 0 {
            var fraction = ""
            var index = weight + 1
            while fraction.count < scale {
                fraction += padded(digit(index))
                index += 1
            }
            text += "." + fraction.prefix(scale)
        }
        return text
    }
}
