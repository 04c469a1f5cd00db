import Foundation
import Testing
@testable import CoreData

/// `NSPredicate(format:arguments:)` and `NSExpression(format:arguments:)`: arguments in a C
/// `va_list`, as a variadic wrapper of the app's passes them on.
@Suite("Format arguments from a va_list")
struct VaListFormatTests {
    private func predicate(_ format: String, _ args: CVarArg...) -> NSPredicate {
        withVaList(args) { NSPredicate(format: format, arguments: $0) }
    }

    private func expression(_ format: String, _ args: CVarArg...) -> CoreData.NSExpression {
        withVaList(args) { CoreData.NSExpression(format: format, arguments: $0) }
    }

    @Test func readsEachArgumentAsItsSpecifierSays() throws {
        let date = Date(timeIntervalSinceReferenceDate: 1000)
        let uuid = UUID()
        let cases: [(NSPredicate, NSPredicate)] = [
            (predicate("name == %@ AND year > %d", "Model T", 1900), NSPredicate(format: "name == %@ AND year > %d", "Model T", 1900)),
            (predicate("%K BEGINSWITH %@", "name", "Mo"), NSPredicate(format: "name BEGINSWITH 'Mo'")),
            (predicate("price < %f AND year <= %ld AND year >= %u", 99.5, Int64(2000), UInt32(7)),
             NSPredicate(format: "price < 99.5 AND year <= 2000 AND year >= 7")),
            (predicate("name IN %@", ["Ada", "Grace"]), NSPredicate(format: "name IN %@", ["Ada", "Grace"])),
            (predicate("built < %@ AND vin == %@", date, uuid), NSPredicate(format: "built < %@ AND vin == %@", date, uuid)),
            (predicate("year == %@", NSNumber(value: 12)), NSPredicate(format: "year == 12")),
            (predicate("name == %c", 65), NSPredicate(format: "name == 'A'")),
            (predicate("TRUEPREDICATE"), NSPredicate(value: true)),
        ]
        for (read, expected) in cases {
            #expect(read.formatText == expected.formatText)
        }
        "C string".withCString { text in
            #expect(predicate("name == %s", text).formatText == NSPredicate(format: "name == 'C string'").formatText)
        }
        #expect(expression("%K * %d", "price", 2) == CoreData.NSExpression(format: "price * 2"))
    }

    @Test func objectsAndKeyPathsEvaluate() throws {
        let stacks = try TypedStacks()
        let context = stacks.unsaved.context
        let ada = try #require(try context.fetch(NSFetchRequest<TPPerson>(entityName: "Person")).first { $0.name == "Ada" })
        let owned = predicate("%K == %@", \TPCar.owner, ada)
        let cars = try context.fetch(NSFetchRequest<TPCar>(entityName: "Car")).filter { owned.evaluate(with: $0) }
        #expect(Set(cars.compactMap(\.name)) == ["Model T", "Tesla"])
    }

    @Test func aMalformedFormatIsAFetchError() throws {
        let stacks = try TypedStacks()
        let broken = predicate("name == == %@", "x")
        #expect(throws: NSError.self) { try stacks.fetch("Car", from: stacks.saved, predicate: broken) }
    }
}
