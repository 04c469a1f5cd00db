import Foundation

// Xcode's mapping models hold their value expressions as NSKeyedArchiver archives: binary
// property lists whose object references are UIDs. swift-corelibs-foundation's
// `PropertyListSerialization` reads UIDs into a private class whose value cannot be read, so the
// archive is read here, by the format's own rules: an 8-byte header `bplist00`, the objects, a
// table of their offsets, and a 32-byte trailer that says where the table is, how wide its
// entries and the object references are, how many objects there are and which one is the top.
// Every offset, length and reference is checked against the data, and a reference cycle or
// a nesting deeper than ``BinaryPropertyListReader/maximumDepth`` is refused, and an object
// referred to many times is read once, so a damaged file is a thrown problem, never a trap or a hang.

/// A value read from a binary property list.
internal indirect enum BinaryPropertyListValue: Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case real(Double)
    /// Seconds since 2001-01-01 (Core Foundation's reference date).
    case date(Double)
    case data(Data)
    case string(String)
    /// A keyed archive's reference to another object of its `$objects` array.
    case uid(Int)
    case array([BinaryPropertyListValue])
    case set([BinaryPropertyListValue])
    case dictionary([String: BinaryPropertyListValue])

    /// What the value is, for messages.
    var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "a Boolean"
        case .int: return "an integer"
        case .real: return "a real number"
        case .date: return "a date"
        case .data: return "data"
        case .string: return "a string"
        case .uid: return "a UID"
        case .array: return "an array"
        case .set: return "a set"
        case .dictionary: return "a dictionary"
        }
    }
}

/// Reads the binary property list format (`bplist00`).
internal enum BinaryPropertyListReader {
    /// Why a property list could not be read.
    struct Problem: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// How deeply containers may nest.
    static let maximumDepth = 256

    /// The top object of a binary property list.
    static func read(_ data: Data) throws(Problem) -> BinaryPropertyListValue {
        var reader = try Reader(bytes: [UInt8](data))
        return try reader.object(reader.topObject, depth: 0)
    }

    private struct Reader {
        let bytes: [UInt8]
        let offsetSize: Int
        let referenceSize: Int
        let offsets: [Int]
        let topObject: Int
        /// The containers being read, to refuse a container that holds itself.
        var open: Set<Int> = []
        /// The objects read so far: an object referred to many times is read once, so that
        /// shared references cannot make the work grow exponentially.
        var done: [Int: BinaryPropertyListValue] = [:]

        init(bytes: [UInt8]) throws(Problem) {
            self.bytes = bytes
            guard bytes.count >= 8 + 32, bytes.prefix(8).elementsEqual("bplist00".utf8) else {
                throw Problem("it is not a binary property list (no 'bplist00' header)")
            }
            let trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            let count = Self.unsigned(bytes, at: trailer + 8, size: 8)
            let top = Self.unsigned(bytes, at: trailer + 16, size: 8)
            let tableStart = Self.unsigned(bytes, at: trailer + 24, size: 8)
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
                throw Problem("its trailer gives invalid offset or reference sizes (\(offsetSize), \(referenceSize))")
            }
            guard count > 0, top < count, tableStart >= 8, tableStart <= UInt64(trailer),
                  count <= (UInt64(trailer) - tableStart) / UInt64(offsetSize) else {
                throw Problem("its trailer does not fit the data (\(count) objects, top object \(top), offset table at \(tableStart))")
            }
            var offsets: [Int] = []
            offsets.reserveCapacity(Int(count))
            for index in 0..<Int(count) {
                let offset = Self.unsigned(bytes, at: Int(tableStart) + index * offsetSize, size: offsetSize)
                guard offset >= 8, offset < tableStart else {
                    throw Problem("the offset of object \(index) (\(offset)) lies outside the object area")
                }
                offsets.append(Int(offset))
            }
            self.offsets = offsets
            topObject = Int(top)
        }

        /// A big-endian unsigned integer; the caller has checked the bounds.
        static func unsigned(_ bytes: [UInt8], at start: Int, size: Int) -> UInt64 {
            var value: UInt64 = 0
            for byte in bytes[start..<start + size] { value = value << 8 | UInt64(byte) }
            return value
        }

        func take(_ start: Int, _ length: Int, for what: String) throws(Problem) -> ArraySlice<UInt8> {
            guard length >= 0, start <= bytes.count - 32, length <= bytes.count - 32 - start else {
                throw Problem("\(what) runs past the end of the data")
            }
            return bytes[start..<start + length]
        }

        /// The length of an object whose low marker nibble is `nibble`, and where its content starts.
        func length(_ nibble: UInt8, at position: Int, index: Int) throws(Problem) -> (length: Int, start: Int) {
            guard nibble == 0x0F else { return (Int(nibble), position + 1) }
            let marker = try take(position + 1, 1, for: "the length of object \(index)").first!
            guard marker >> 4 == 0x1, marker & 0x0F <= 3 else {
                throw Problem("object \(index) has an invalid length marker 0x\(String(marker, radix: 16))")
            }
            let size = 1 << Int(marker & 0x0F)
            let value = Self.unsigned(Array(try take(position + 2, size, for: "the length of object \(index)")), at: 0, size: size)
            guard value <= UInt64(bytes.count) else { throw Problem("object \(index) claims a length of \(value), longer than the data") }
            return (Int(value), position + 2 + size)
        }

        func reference(at position: Int, of index: Int) throws(Problem) -> Int {
            let value = Self.unsigned(Array(try take(position, referenceSize, for: "a reference in object \(index)")), at: 0, size: referenceSize)
            guard value < UInt64(offsets.count) else {
                throw Problem("object \(index) refers to object \(value), but there are only \(offsets.count)")
            }
            return Int(value)
        }

        mutating func object(_ index: Int, depth: Int) throws(Problem) -> BinaryPropertyListValue {
            if let value = done[index] { return value }
            let value = try read(index, depth: depth)
            done[index] = value
            return value
        }

        private mutating func read(_ index: Int, depth: Int) throws(Problem) -> BinaryPropertyListValue {
            guard depth <= BinaryPropertyListReader.maximumDepth else {
                throw Problem("its containers nest more than \(BinaryPropertyListReader.maximumDepth) deep")
            }
            let position = offsets[index]
            let marker = bytes[position]
            let nibble = marker & 0x0F
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x00: return .null
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: throw Problem("object \(index) has an unknown marker 0x\(String(marker, radix: 16))")
                }
            case 0x1:
                guard nibble <= 3 else { throw Problem("object \(index) is an integer wider than 8 bytes") }
                let size = 1 << Int(nibble)
                let raw = Self.unsigned(Array(try take(position + 1, size, for: "object \(index)")), at: 0, size: size)
                return .int(size == 8 ? Int64(bitPattern: raw) : Int64(raw))
            case 0x2, 0x3:
                let size = marker >> 4 == 0x3 ? 8 : 1 << Int(nibble)
                guard size == 4 || size == 8, marker >> 4 == 0x2 || marker == 0x33 else {
                    throw Problem("object \(index) has an unknown marker 0x\(String(marker, radix: 16))")
                }
                let raw = Self.unsigned(Array(try take(position + 1, size, for: "object \(index)")), at: 0, size: size)
                let value = size == 4 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw)
                return marker >> 4 == 0x3 ? .date(value) : .real(value)
            case 0x4:
                let (count, start) = try length(nibble, at: position, index: index)
                return .data(Data(try take(start, count, for: "object \(index)")))
            case 0x5:
                let (count, start) = try length(nibble, at: position, index: index)
                let content = try take(start, count, for: "object \(index)")
                guard content.allSatisfy({ $0 < 0x80 }), let string = String(bytes: content, encoding: .ascii) else {
                    throw Problem("object \(index) is an ASCII string with bytes outside ASCII")
                }
                return .string(string)
            case 0x6:
                let (count, start) = try length(nibble, at: position, index: index)
                guard count <= Int.max / 2 else { throw Problem("object \(index) claims an impossible length") }
                let content = Array(try take(start, count * 2, for: "object \(index)"))
                let units = stride(from: 0, to: content.count, by: 2).map { UInt16(content[$0]) << 8 | UInt16(content[$0 + 1]) }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x8:
                let size = Int(nibble) + 1
                guard size <= 8 else { throw Problem("object \(index) is a UID wider than 8 bytes") }
                let raw = Self.unsigned(Array(try take(position + 1, size, for: "object \(index)")), at: 0, size: size)
                guard raw <= UInt64(Int32.max) else { throw Problem("object \(index) is a UID out of range (\(raw))") }
                return .uid(Int(raw))
            case 0xA, 0xC, 0xD:
                let (count, start) = try length(nibble, at: position, index: index)
                let isDictionary = marker >> 4 == 0xD
                guard count <= (bytes.count / referenceSize) / (isDictionary ? 2 : 1) else {
                    throw Problem("object \(index) claims \(count) entries, more than the data can hold")
                }
                guard open.insert(index).inserted else { throw Problem("object \(index) contains itself") }
                defer { open.remove(index) }
                var elements: [BinaryPropertyListValue] = []
                for slot in 0..<(isDictionary ? count * 2 : count) {
                    elements.append(try object(try reference(at: start + slot * referenceSize, of: index), depth: depth + 1))
                }
                switch marker >> 4 {
                case 0xA: return .array(elements)
                case 0xC: return .set(elements)
                default:
                    var dictionary: [String: BinaryPropertyListValue] = [:]
                    for (key, value) in zip(elements[..<count], elements[count...]) {
                        guard case .string(let name) = key else {
                            throw Problem("object \(index) is a dictionary with a key that is \(key.kind), not a string")
                        }
                        dictionary[name] = value
                    }
                    return .dictionary(dictionary)
                }
            default:
                throw Problem("object \(index) has an unknown marker 0x\(String(marker, radix: 16))")
            }
        }
    }
}
