/// A set of property indexes: a bit mask for the first 64 properties, a set beyond. Recording a
/// change is a bit operation on the hot path (every `setValue`).
internal struct PropertyMask: Sequence {
    private var bits: UInt64 = 0
    private var overflow: Set<Int>?

    init() {}

    /// A mask of `bits` (indexes below 64) and `overflow` (the others).
    init(bits: UInt64, overflow: Set<Int>?) {
        self.bits = bits
        self.overflow = overflow
    }

    var isEmpty: Bool { bits == 0 && (overflow?.isEmpty ?? true) }

    @inline(__always)
    mutating func insert(_ index: Int) {
        if index < 64 {
            bits |= 1 << UInt64(index)
        } else {
            var set = overflow ?? []
            set.insert(index)
            overflow = set
        }
    }

    @inline(__always)
    func contains(_ index: Int) -> Bool {
        index < 64 ? bits & (1 << UInt64(index)) != 0 : (overflow?.contains(index) ?? false)
    }

    /// Whether any index is in both masks.
    func intersects(_ other: PropertyMask) -> Bool {
        if bits & other.bits != 0 { return true }
        guard let overflow, let others = other.overflow else { return false }
        return !overflow.isDisjoint(with: others)
    }

    mutating func remove(_ index: Int) {
        if index < 64 {
            bits &= ~(1 << UInt64(index))
        } else {
            overflow?.remove(index)
        }
    }

    mutating func removeAll() {
        bits = 0
        overflow = nil
    }

    /// The indexes in ascending order.
    func makeIterator() -> IndexingIterator<[Int]> {
        var result: [Int] = []
        var remaining = bits
        while remaining != 0 {
            let index = remaining.trailingZeroBitCount
            result.append(index)
            remaining &= remaining - 1
        }
        if let overflow { result.append(contentsOf: overflow.sorted()) }
        return result.makeIterator()
    }
}
