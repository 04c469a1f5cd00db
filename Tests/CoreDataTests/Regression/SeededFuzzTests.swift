import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Small, seeded versions of the fuzzing that found session 29's crashes: the same inputs on
/// every run, so a failure names its round and can be replayed. Each keeps the package's
/// promise for bad input: a thrown error or a value, never a stopped process, and a store that
/// holds what the saving context holds.
@Suite("Seeded fuzzing", .serialized)
struct SeededFuzzTests {
    /// Predicate formats mutated a character or a word at a time: parsed (or refused with an
    /// error), printed, parsed again, evaluated and fetched.
    @Test func mutatedPredicateFormats() throws {
        let seeds = ["name == 'Model T'", "name BEGINSWITH[c] 'model' AND year BETWEEN {1900, 2000}", "owner.name == 'Ada' OR ANY tags.label == 'x'",
                     "SUBQUERY(tags, $t, $t.label == nil).@count > 1", "TERNARY(year > 2000, 'new', 'old') == 'new'", "owner.cars.@sum.year > 10",
                     "CAST(year, 'NSString') == '1908'", "year + 1 * 2 ** 3 / 4 - 5 > 0", "{1,2,3}[LAST] == 3", "$X == 1 AND name MATCHES '[A-Z].*'"]
        let words = ["AND", "OR", "NOT", "ANY", "SUBQUERY(", "FETCH(", "TERNARY(", "FUNCTION(", "@count", "[SIZE]", "$t", "%@", "%K", "{", "}", "nil", "**", "1e999"]
        let alphabet = Array("()[]{}'\"$%@.,=<>!&|*+-/^~#:0123456789aZ \\é".unicodeScalars)
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada", "age": 36])
        let car = stack.insert("Car", ["name": "Model T", "year": 1908])
        car.setValue(ada, forKey: "owner")
        try stack.context.save()
        var rng = SeededGenerator(seed: 29)
        for _ in 0..<3_000 {
            var scalars = Array(seeds.randomElement(using: &rng)!.unicodeScalars)
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let position = Int.random(in: 0...scalars.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: scalars.insert(alphabet.randomElement(using: &rng)!, at: position)
                case 1: if position < scalars.count { scalars.remove(at: position) }
                default: scalars.insert(contentsOf: words.randomElement(using: &rng)!.unicodeScalars, at: position)
                }
            }
            var format = ""
            format.unicodeScalars.append(contentsOf: scalars)
            guard let predicate = try? NSPredicate(validatingFormat: format, argumentArray: ["x", 1, "name"]) else { continue }
            _ = try? NSPredicate(validatingFormat: predicate.description, argumentArray: [])
            _ = predicate.evaluate(with: car, substitutionVariables: ["X": 1])
            _ = try? stack.fetch("Car") { $0.predicate = predicate.withSubstitutionVariables(["X": 1]) }
        }
    }

    /// Stores whose values another tool changed (every value of a list of wrong types and
    /// extremes in every column of the tables, the bookkeeping ones included): opened, read,
    /// changed and saved, with errors where they cannot be.
    @Test func storesChangedByAnotherTool() throws {
        let tables = [("ZCAR", ["ZNAME", "ZYEAR", "ZPRICE", "ZBUILT", "ZVIN", "ZPHOTO", "ZSITE", "ZCOST", "ZEXTRAS", "ZOWNER", "Z_ENT", "Z_OPT"]),
                      ("ZPERSON", ["ZNAME", "ZAGE", "Z_OPT"]), ("Z_PRIMARYKEY", ["Z_MAX"]), ("Z_METADATA", ["Z_PLIST", "Z_UUID"])]
        let values = ["NULL", "'text'", "x'00ff'", "x'01'", "x'02414243'", "-1", "9223372036854775807", "1e999", "'NaN'", "0", "randomblob(17)"]
        for (table, columns) in tables {
            for column in columns {
                for value in values {
                    let first = try TestStack()
                    let ada = first.insert("Person", ["name": "Ada", "age": 36])
                    first.insert("Car", ["name": "C", "year": 1908, "price": 1.5, "built": Date(), "vin": UUID(), "photo": Data([1]),
                                         "site": URL(string: "http://a")!, "cost": Decimal(3), "extras": ["a": 1] as NSDictionary]).setValue(ada, forKey: "owner")
                    try first.context.save()
                    guard let stack = try? first.rewritten(by: "UPDATE \(table) SET \(column) = \(value)") else { continue }
                    withExtendedLifetime(first) {
                        for entity in ["Car", "Person"] {
                            for object in (try? stack.fetch(entity)) ?? [] {
                                for key in object.entity.propertiesByName.keys { _ = object.value(forKey: key) }
                            }
                        }
                        stack.insert("Car", ["name": "new"]).setValue(stack.insert("Person", ["name": "P"]), forKey: "owner")
                        for car in (try? stack.fetch("Car")) ?? [] { car.setValue("changed", forKey: "name") }
                        for person in (try? stack.fetch("Person")) ?? [] { person.setValue(40, forKey: "age") }
                        _ = try? stack.context.save()
                    }
                }
            }
        }
    }

    /// One context doing random inserts, changes, deletes, relationship edits, saves, rollbacks,
    /// refreshes and resets: after a final save, no key points at a missing row and a fresh
    /// context reads what the saving context holds.
    @Test func oneContextsRandomWork() throws {
        for round in 0..<40 {
            var rng = SeededGenerator(seed: UInt64(round) &* 0x9E37_79B9_7F4A_7C15 &+ 7_919)
            let stack = try TestStack()
            let context = stack.context
            for step in 0..<120 {
                let cars = (try? stack.fetch("Car")) ?? []
                let people = (try? stack.fetch("Person")) ?? []
                let tags = (try? stack.fetch("Tag")) ?? []
                switch Int.random(in: 0..<12, using: &rng) {
                case 0, 1: stack.insert("Car", ["name": "car \(step)", "year": Int.random(in: 1886...2100, using: &rng)])
                case 2: stack.insert("Person", ["name": "p\(step)"])
                case 3: cars.randomElement(using: &rng)?.setValue(people.randomElement(using: &rng), forKey: "owner")
                case 4: cars.randomElement(using: &rng)?.setValue("renamed \(step)", forKey: "name")
                case 5: if let object = (cars + people + tags).randomElement(using: &rng) { context.delete(object) }
                case 6:
                    let tag = stack.insert("Tag", ["label": "t\(step)"])
                    cars.randomElement(using: &rng)?.mutableSetValue(forKey: "tags").add(tag)
                case 7:
                    if let car = cars.randomElement(using: &rng), let tag = tags.randomElement(using: &rng) {
                        if Bool.random(using: &rng) { car.mutableSetValue(forKey: "tags").add(tag) } else { car.mutableSetValue(forKey: "tags").remove(tag) }
                    }
                case 8: do { try context.save() } catch { context.rollback() }
                case 9: context.rollback()
                case 10:
                    if let object = (cars + people).randomElement(using: &rng) { context.refresh(object, mergeChanges: object.hasChanges || Bool.random(using: &rng)) }
                default: if Bool.random(using: &rng) { context.reset() } else { context.refreshAllObjects() }
                }
            }
            do { try context.save() } catch { context.rollback() }
            #expect(try stack.rawRows("SELECT count(*) FROM ZCAR WHERE ZOWNER IS NOT NULL AND ZOWNER NOT IN (SELECT Z_PK FROM ZPERSON)") == [["0"]], "round \(round)")
            func view(_ context: NSManagedObjectContext) throws -> [String] {
                try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).map { car in
                    let tags = ((car.value(forKey: "tags") as? Set<NSManagedObject>) ?? []).compactMap { $0.value(forKey: "label") as? String }.sorted()
                    let owner = (car.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String
                    return "\(car.value(forKey: "name") as? String ?? "-")|\(owner ?? "-")|\(tags)"
                }.sorted()
            }
            #expect(try view(context) == view(stack.newContext()), "round \(round)")
        }
    }
}
