import Foundation

extension Decimal {
    /// The `Double` nearest the decimal, correctly rounded, as SQLite and PostgreSQL convert a
    /// stored decimal (`19.99` is the double `19.99`). Foundation's `doubleValue` divides by ten
    /// digit by digit and misses by an ulp for most decimals with a fraction (`19.990000000000002`),
    /// so a comparison in memory would disagree with the same comparison in a store.
    internal var nearestDouble: Double {
        Double(description) ?? NSDecimalNumber(decimal: self).doubleValue
    }
}
