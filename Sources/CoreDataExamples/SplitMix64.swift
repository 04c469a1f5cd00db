/// A small deterministic random generator (SplitMix64): the same sequence for a seed on every
/// machine and run. The benchmark makes its data with it, the tests their random cases.
public struct SplitMix64: Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64-bit value of the sequence.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound` (`bound` > 0).
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A value in `[0, 1)`.
    public mutating func unit() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }
}
