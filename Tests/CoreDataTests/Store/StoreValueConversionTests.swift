import Foundation
import Testing
@testable import CoreData

/// The fast conversions of `setValue(_:forKey:)` agree with the general one wherever they answer.
@Suite("StoreValue fast conversions")
struct StoreValueConversionTests {
    nonisolated(unsafe) static let values: [Any?] = [nil, 0, 7, -3, Int(Int16.max) + 1, Int(Int32.max) + 1, Int64(42), Int64.min, 2.5, -0.0, Double.nan,
                                 true, false, "text", Date(timeIntervalSinceReferenceDate: 12), Int16(5), Int32(6), UInt8(1),
                                 NSNumber(value: 9), NSNull(), Float(1.5), Decimal(3)]
    static let kinds: [(ManagedStorageKind, NSAttributeType)] = [
        (.integer16, .integer16AttributeType), (.integer32, .integer32AttributeType), (.integer64, .integer64AttributeType),
        (.double, .doubleAttributeType), (.bool, .booleanAttributeType), (.string, .stringAttributeType), (.date, .dateAttributeType),
    ]

    @Test(arguments: 0..<kinds.count)
    func fastPathsAgreeWithTheGeneralConversion(kindIndex: Int) {
        let (kind, type) = Self.kinds[kindIndex]
        for value in Self.values {
            let general: StoreValue? = value.flatMap { StoreValue.isNull($0) ? nil : StoreValue.convert($0, to: type) }
            if let fast = StoreValue.fastConvert(borrowing: value, kind: kind) {
                #expect(fast.isNaNSafeEqual(general), "in place: \(String(describing: value)) as \(kind)")
            }
            if let fast = StoreValue.fastInteger(borrowing: value, kind: kind) {
                #expect(StoreValue.int(fast).isNaNSafeEqual(general), "integer in place: \(String(describing: value)) as \(kind)")
            }
            if let value, let fast = StoreValue.fastConvert(value, kind: kind) {
                #expect(fast.isNaNSafeEqual(general), "by type: \(value) as \(kind)")
            }
        }
    }

    @Test func nilAndOtherTypesTakeTheGeneralPath() {
        #expect(StoreValue.fastConvert(borrowing: nil, kind: .integer64) == nil)
        #expect(StoreValue.fastInteger(borrowing: nil, kind: .integer64) == nil)
        #expect(StoreValue.fastConvert(borrowing: 7, kind: .integer64) == .int(7))
        #expect(StoreValue.fastInteger(borrowing: 7, kind: .integer64) == 7)
        #expect(StoreValue.fastInteger(borrowing: Int64(-8), kind: .integer32) == -8)
        #expect(StoreValue.fastInteger(borrowing: 2.5, kind: .integer64) == nil)
        #expect(StoreValue.fastInteger(borrowing: 7, kind: .double) == nil, "not an integer kind")
        #expect(StoreValue.fastInteger(borrowing: Int(Int16.max) + 1, kind: .integer16) == nil, "out of range: the general path reports it")
        #expect(StoreValue.fastInteger(borrowing: Int(Int32.min) - 1, kind: .integer32) == nil, "out of range: the general path reports it")
        #expect(StoreValue.fastConvert(borrowing: "1", kind: .integer64) == nil)
        #expect(StoreValue.fastConvert(borrowing: Int(Int16.max) + 1, kind: .integer16) == nil, "out of range: the general path reports it")
    }

    /// `setValue(NSNumber(value: i), forKey:)`, as much Core Data code writes it: read in place,
    /// as an integer only if the number was made from one; anything else takes the general path.
    @Test func numbersAreReadInPlace() {
        #expect(StoreValue.fastConvert(borrowing: NSNumber(value: 1), kind: .integer64) == .int(1))
        #expect(StoreValue.fastInteger(borrowing: NSNumber(value: Int32(-5)), kind: .integer16) == -5)
        #expect(StoreValue.fastInteger(borrowing: NSNumber(value: true), kind: .integer64) == 1)
        #expect(StoreValue.fastInteger(borrowing: NSNumber(value: Int64.max), kind: .integer64) == .max)
        #expect(StoreValue.fastInteger(borrowing: NSNumber(value: 40_000), kind: .integer16) == nil, "out of range")
        #expect(StoreValue.fastInteger(borrowing: NSNumber(value: 3.0), kind: .integer64) == nil, "a double: the general path")
        #expect(StoreValue.fastInteger(borrowing: NSNumber(value: UInt64.max), kind: .integer64) == nil, "past Int64.max")
        let decimal: NSNumber = NSDecimalNumber(string: "2.5")
        #expect(StoreValue.fastInteger(borrowing: decimal, kind: .integer64) == nil, "a decimal number: the general path")
        #expect(StoreValue.fastConvert(borrowing: NSNumber(value: 2.5), kind: .double) == .double(2.5))
        #expect(StoreValue.fastConvert(borrowing: NSNumber(value: false), kind: .bool) == .bool(false))
        #expect(StoreValue.fastConvert(borrowing: NSNumber(value: 1), kind: .string) == nil)
        // The general path keeps Apple's answers for what the fast path leaves to it.
        #expect(StoreValue.storage(of: NSNumber(value: 3.0), for: .integer64AttributeType) == .int(3))
        #expect(StoreValue.storage(of: NSNumber(value: 2.5), for: .integer64AttributeType) == nil)
    }
}

extension StoreValue {
    /// Equality that treats two NaN doubles as equal.
    func isNaNSafeEqual(_ other: StoreValue?) -> Bool {
        if case .double(let a) = self, case .double(let b)? = other, a.isNaN && b.isNaN { return true }
        return self == other
    }
}
