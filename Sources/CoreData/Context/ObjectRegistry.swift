/// A context's objects by ID: an open-addressing hash table keyed by `IDKey` with a
/// multiplicative hash (no SipHash), holding objects unretained. Every fetched object is inserted
/// and every deallocated one removed, so this is on the fetch hot path.
internal struct ObjectRegistry {
    private struct Slot {
        var key: IDKey
        var object: Unmanaged<NSManagedObject>?
        /// A removed entry: probing continues past it.
        var isTombstone: Bool
    }

    private var slots: [Slot]
    private var mask: Int
    private(set) var count = 0
    private var used = 0 // live entries plus tombstones

    init() {
        slots = Array(repeating: Slot(key: IDKey(store: 0, root: 0, value: 0), object: nil, isTombstone: false), count: 16)
        mask = 15
    }

    @inline(__always)
    private static func hash(_ key: IDKey) -> Int {
        var h = UInt64(bitPattern: key.value) &* 0x9E37_79B9_7F4A_7C15
        h ^= UInt64(bitPattern: Int64(key.root &* 31 &+ key.store)) &* 0xC2B2_AE3D_27D4_EB4F
        return Int(truncatingIfNeeded: h ^ (h >> 29))
    }

    subscript(key: IDKey) -> Unmanaged<NSManagedObject>? {
        get {
            var index = Self.hash(key) & mask
            while true {
                let slot = slots[index]
                if slot.object == nil && !slot.isTombstone { return nil }
                if slot.object != nil && slot.key == key { return slot.object }
                index = (index &+ 1) & mask
            }
        }
        set {
            if let newValue { insert(newValue, for: key) } else { remove(key) }
        }
    }

    private mutating func insert(_ object: Unmanaged<NSManagedObject>, for key: IDKey) {
        if (used + 1) * 2 > slots.count { grow() }
        var index = Self.hash(key) & mask
        var firstFree = -1
        while true {
            let slot = slots[index]
            if slot.object != nil {
                if slot.key == key { slots[index].object = object; return }
            } else if slot.isTombstone {
                if firstFree < 0 { firstFree = index }
            } else {
                break
            }
            index = (index &+ 1) & mask
        }
        if firstFree >= 0 {
            slots[firstFree] = Slot(key: key, object: object, isTombstone: false)
        } else {
            slots[index] = Slot(key: key, object: object, isTombstone: false)
            used += 1
        }
        count += 1
    }

    private mutating func remove(_ key: IDKey) {
        var index = Self.hash(key) & mask
        while true {
            let slot = slots[index]
            if slot.object == nil && !slot.isTombstone { return }
            if slot.object != nil && slot.key == key {
                slots[index].object = nil
                slots[index].isTombstone = true
                count -= 1
                return
            }
            index = (index &+ 1) & mask
        }
    }

    private mutating func grow() {
        let old = slots
        let capacity = max(16, (count * 4).nextPowerOfTwo)
        slots = Array(repeating: Slot(key: IDKey(store: 0, root: 0, value: 0), object: nil, isTombstone: false), count: capacity)
        mask = capacity - 1
        count = 0
        used = 0
        for slot in old { if let object = slot.object { insert(object, for: slot.key) } }
    }

    mutating func reserveCapacity(_ additional: Int) {
        while (used + additional) * 2 > slots.count {
            let old = slots
            let capacity = slots.count * 2
            slots = Array(repeating: Slot(key: IDKey(store: 0, root: 0, value: 0), object: nil, isTombstone: false), count: capacity)
            mask = capacity - 1
            count = 0
            used = 0
            for slot in old { if let object = slot.object { insert(object, for: slot.key) } }
        }
    }

    mutating func removeAll() { self = ObjectRegistry() }

    /// The registered objects.
    var values: [Unmanaged<NSManagedObject>] { slots.compactMap(\.object) }
}

extension Int {
    fileprivate var nextPowerOfTwo: Int {
        guard self > 1 else { return 1 }
        return 1 << (Int.bitWidth - (self - 1).leadingZeroBitCount)
    }
}
