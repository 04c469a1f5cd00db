/// Property indexes by name for key-value coding: an open-addressing table hashed with FNV-1a
/// over the name's UTF-8 bytes. `setValue(_:forKey:)` looks a name up on every call; a
/// `Dictionary<String, Int>` spends most of that time seeding and finalizing SipHash.
internal struct PropertyNameTable: Sendable {
    private let names: [String]
    /// Property index per slot; -1 for an empty slot.
    private let slots: [Int32]
    private let mask: Int

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
    func index(of name: String) -> Int? {
        var slot = Self.hash(name) & mask
        while true {
            let index = slots[slot]
            if index < 0 { return nil }
            if names[Int(index)] == name { return Int(index) }
            slot = (slot + 1) & mask
        }
    }
}
