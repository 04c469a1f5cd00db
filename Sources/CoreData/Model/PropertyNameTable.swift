/// Property indexes by name for key-value coding: an open-addressing table hashed with FNV-1a
/// over the name's UTF-8 bytes. `setValue(_:forKey:)` looks a name up on every call; a
/// `Dictionary<String, Int>` spends most of that time seeding and finalizing SipHash.
///
/// In front of it, a table keyed by the name's two words as they are (a `String`'s bit pattern):
/// a key whose bits equal a stored name's is that name (a small string is its bytes; a large one
/// is the same storage, kept alive by ``names``), found without hashing its bytes. Names given as
/// literals or taken from the model are found there; any other spelling of a name misses it and
/// takes the FNV table.
internal struct PropertyNameTable: Sendable {
    private let names: [String]
    /// Property index per slot; -1 for an empty slot.
    private let slots: [Int32]
    private let mask: Int
    /// The names' bit patterns and their indexes, by ``bitsHash(_:)``; index -1 for an empty slot.
    private let bitSlots: [(bits: (UInt64, UInt64), index: Int32)]

    init(_ names: [String]) {
        var capacity = 8
        while capacity < names.count * 2 { capacity *= 2 }
        var slots = [Int32](repeating: -1, count: capacity)
        for (index, name) in names.enumerated() {
            var slot = Self.hash(name) & (capacity - 1)
            while slots[slot] >= 0 {
                if names[Int(slots[slot])] == name { break } // a duplicate name keeps the first index
                slot = (slot + 1) & (capacity - 1)
            }
            if slots[slot] < 0 { slots[slot] = Int32(index) }
        }
        self.names = names
        self.slots = slots
        self.mask = capacity - 1
        var bitSlots = [(bits: (UInt64, UInt64), index: Int32)](repeating: ((0, 0), -1), count: capacity)
        for (index, name) in names.enumerated() {
            let bits = Self.bits(of: name)
            var slot = Self.bitsHash(bits) & (capacity - 1)
            while bitSlots[slot].index >= 0 {
                if bitSlots[slot].bits == bits { break } // a duplicate name keeps the first index
                slot = (slot + 1) & (capacity - 1)
            }
            if bitSlots[slot].index < 0 { bitSlots[slot] = (bits, Int32(index)) }
        }
        self.bitSlots = bitSlots
    }

    @inline(__always)
    private static func bits(of name: String) -> (UInt64, UInt64) {
        unsafeBitCast(name, to: (UInt64, UInt64).self)
    }

    @inline(__always)
    private static func bitsHash(_ bits: (UInt64, UInt64)) -> Int {
        let h = (bits.0 &* 0x9E37_79B9_7F4A_7C15) ^ (bits.1 &* 0xC2B2_AE3D_27D4_EB4F)
        return Int(truncatingIfNeeded: h ^ (h >> 29))
    }

    @inline(__always)
    private static func hash(_ name: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var name = name
        name.withUTF8 { bytes in
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        }
        return Int(truncatingIfNeeded: hash ^ (hash >> 32))
    }

    /// The index of the property named `name`, or `nil`.
    /// (Inlined, so that callers read the tables in place instead of retaining them for a call.)
    @inline(__always)
    func index(of name: String) -> Int? {
        let bits = Self.bits(of: name)
        var bitSlot = Self.bitsHash(bits) & mask
        while true {
            let entry = bitSlots[bitSlot]
            if entry.index < 0 { return indexHashingBytes(of: name) }
            if entry.bits == bits { return Int(entry.index) }
            bitSlot = (bitSlot + 1) & mask
        }
    }

    /// ``index(of:)`` through the FNV table.
    @inline(never)
    private func indexHashingBytes(of name: String) -> Int? {
        var slot = Self.hash(name) & mask
        while true {
            let index = slots[slot]
            if index < 0 { return nil }
            if names[Int(index)] == name { return Int(index) }
            slot = (slot + 1) & mask
        }
    }
}
