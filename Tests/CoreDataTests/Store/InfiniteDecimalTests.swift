import Foundation
import Testing
@testable import CoreData

/// A decimal attribute given an infinity (which `Decimal` cannot hold, and Foundation's
/// conversion stops the process on), or read from a store another tool wrote with one: NaN,
/// never a crash.
@Suite("Infinite decimals")
struct InfiniteDecimalTests {
    @Test(arguments: TestStoreKind.available)
    func anInfinitySetOnADecimalIsNaN(kind: TestStoreKind) throws {
        let stack = try TestStack(kind)
        let car = stack.insert("Car", ["name": "Inf"])
        car.setValue(Double.infinity, forKey: "cost")
        #expect((car.value(forKey: "cost") as? Decimal)?.isNaN == true)
        car.setValue(NSNumber(value: -Double.infinity), forKey: "cost")
        #expect((car.value(forKey: "cost") as? Decimal)?.isNaN == true)
        try stack.context.save()
        let other = try stack.reopen()
        let read = try #require(try other.fetch("Car").first)
        #expect((read.value(forKey: "cost") as? Decimal)?.isNaN == true)
    }

    @Test func anInfinityInTheStoreReadsAsNaN() throws {
        let first = try TestStack()
        first.insert("Car", ["name": "Written elsewhere", "cost": Decimal(2)])
        try first.context.save()
        let stack = try first.rewritten(by: "UPDATE ZCAR SET ZCOST = 1e999")
        try withExtendedLifetime(first) {
            let car = try #require(try stack.fetch("Car").first)
            #expect((car.value(forKey: "cost") as? Decimal)?.isNaN == true)
        }
    }
}
