import Foundation
import Testing
@testable import CoreData

// Foundation's `#Predicate` and `SortDescriptor` over `@Managed` subclasses: each one gives the
// same objects as the equivalent format predicate or key-based descriptor, from SQLite and
// evaluated in memory on unsaved objects. Classes are prefixed (`TP`) so that other test files
// may declare their own `Car`.

final class TPCar: NSManagedObject {
    @Managed var name: String?
    @Managed var year: Int32
    @Managed var price: Double
    @Managed var electric: Bool
    @Managed var owner: TPPerson?
    @Managed var tags: Set<TPTag>

    /// Not in the model: a stored Swift property.
    var note = 0
    /// Not in the model: computed from a managed property, of another type.
    var isVintage: Bool { year < 1950 }
    /// Not in the model: reads two managed properties.
    var summary: String { "\(name ?? "") \(year)" }
}

final class TPPerson: NSManagedObject {
    @Managed var name: String
    @Managed var age: Int16
    @Managed var cars: Set<TPCar>
}

final class TPTag: NSManagedObject {
    @Managed var label: String?
    @Managed var featured: Bool?
    @Managed var cars: Set<TPCar>
}

enum TypedTestModel {
    static func make() -> NSManagedObjectModel {
        let attribute = { ManagedTestModel.attribute($0, $1) }
        let relationship = { ManagedTestModel.relationship($0, to: $1, toMany: $2) }
        let car = NSEntityDescription(); car.name = "Car"; car.managedObjectClassName = "TPCar"
        let person = NSEntityDescription(); person.name = "Person"; person.managedObjectClassName = "TPPerson"
        let tag = NSEntityDescription(); tag.name = "Tag"; tag.managedObjectClassName = "TPTag"
        let owner = relationship("owner", person, false)
        let cars = relationship("cars", car, true)
        owner.inverseRelationship = cars; cars.inverseRelationship = owner
        let tags = relationship("tags", tag, true)
        let tagged = relationship("cars", car, true)
        tags.inverseRelationship = tagged; tagged.inverseRelationship = tags
        car.properties = [attribute("name", .stringAttributeType), attribute("year", .integer32AttributeType),
                          attribute("price", .doubleAttributeType), attribute("electric", .booleanAttributeType), owner, tags]
        person.properties = [attribute("name", .stringAttributeType), attribute("age", .integer16AttributeType), cars]
        tag.properties = [attribute("label", .stringAttributeType), attribute("featured", .booleanAttributeType), tagged]
        let model = NSManagedObjectModel()
        model.entities = [car, person, tag]
        return model
    }

    /// Ada owns the Model T and the Tesla, Grace the Beetle and a nameless car, Linus nothing;
    /// the Prius and the Élan have no owner.
    static func populate(_ context: NSManagedObjectContext) {
        func person(_ name: String, _ age: Int16) -> TPPerson {
            let person = TPPerson(context: context)
            person.name = name
            person.age = age
            return person
        }
        let ada = person("Ada", 36), grace = person("Grace", 45)
        _ = person("Linus", 20)
        var tags: [String: TPTag] = [:]
        for label in ["classic", "cheap", "electric"] {
            let tag = TPTag(context: context)
            tag.label = label
            tag.featured = label == "classic" ? nil : label == "electric"
            tags[label] = tag
        }
        let cars: [(String?, Int32, Double, Bool, TPPerson?, [String])] = [
            ("Model T", 1908, 850, false, ada, ["classic"]),
            ("Beetle", 1938, 1000, false, grace, ["classic", "cheap"]),
            ("Tesla", 2012, 80000, true, ada, ["electric"]),
            ("Prius", 2001, 20000, true, nil, []),
            (nil, 2005, 5000, false, grace, ["cheap"]),
            ("Élan", 1990, 15000, false, nil, []),
        ]
        for (name, year, price, electric, owner, labels) in cars {
            let car = TPCar(context: context)
            car.name = name
            car.year = year
            car.price = price
            car.electric = electric
            car.owner = owner
            car.tags = Set(labels.compactMap { tags[$0] })
        }
    }
}

/// One store with the data saved, one with the same data unsaved (evaluated in memory).
final class TypedStacks {
    let saved: TestStack
    let unsaved: TestStack

    init() throws {
        saved = try TestStack(model: TypedTestModel.make())
        TypedTestModel.populate(saved.context)
        try saved.context.save()
        unsaved = try TestStack(model: TypedTestModel.make())
        TypedTestModel.populate(unsaved.context)
    }

    /// What a fetch of `entity` returns, described by `describe`, in order if sorted.
    func fetch(_ entity: String, from stack: TestStack, predicate: NSPredicate?, sort: [NSSortDescriptor]? = nil,
               fresh: Bool = true) throws -> [String] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = predicate
        request.sortDescriptors = sort
        let context = fresh && stack === saved ? stack.newContext() : stack.context
        let objects = try context.fetch(request)
        let names = objects.map { object -> String in
            let name = object.value(forKey: object.entity.propertiesByName["name"] != nil ? "name" : "label") as? String ?? "nil"
            return object is TPCar ? "\(name)/\((object as! TPCar).year)" : name
        }
        return sort == nil ? names.sorted() : names
    }

    /// What `predicate` accepts among the unsaved objects of `entity`, evaluated in memory.
    func evaluate(_ entity: String, _ predicate: NSPredicate?) throws -> [String] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        let objects = try unsaved.context.fetch(request).filter { predicate?.evaluate(with: $0) ?? false }
        return objects.map { object in
            let name = object.value(forKey: "name") as? String ?? "nil"
            return object is TPCar ? "\(name)/\((object as! TPCar).year)" : name
        }.sorted()
    }

    /// Checks the typed predicate against the format predicate on both stacks (unsaved objects
    /// evaluated in memory, saved rows fetched from SQLite); returns the result.
    @discardableResult
    func expectSame(_ entity: String, _ typed: NSPredicate?, _ format: NSPredicate,
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        let memory = try fetch(entity, from: unsaved, predicate: typed)
        #expect(memory == (try fetch(entity, from: unsaved, predicate: format)), sourceLocation: sourceLocation)
        do {
            let stored = try fetch(entity, from: saved, predicate: typed)
            #expect(stored == (try fetch(entity, from: saved, predicate: format)), sourceLocation: sourceLocation)
            #expect(stored == memory, sourceLocation: sourceLocation)
        }
        return memory
    }
}

@Suite("Typed predicates and sort descriptors")
struct TypedPredicateTests {
    @Test func comparisonsOfAttributes() throws {
        let stacks = try TypedStacks()
        let minimum: Int32 = 2000
        #expect(try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.year > minimum }), NSPredicate(format: "year > 2000"))
                == ["Prius/2001", "Tesla/2012", "nil/2005"])
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.year >= 1938 && $0.year <= 2001 }),
                              NSPredicate(format: "year >= 1938 AND year <= 2001"))
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.year < 1920 || $0.electric }),
                              NSPredicate(format: "year < 1920 OR electric == YES"))
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { !($0.price < 10000) }), NSPredicate(format: "NOT price < 10000"))
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.price == 850 }), NSPredicate(format: "price == 850"))
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.electric == false }), NSPredicate(format: "electric == NO"))
    }

    /// Swift's integer division truncates (it was divided as reals: 1908 / 100 was 19.08); a
    /// copied typed predicate is the same predicate (it became FALSEPREDICATE); `flag ?? false`
    /// is a condition.
    @Test func integerDivisionCopiesAndCoalescedConditions() throws {
        let stacks = try TypedStacks()
        let typed = try #require(NSPredicate(#Predicate<TPCar> { $0.year / 100 == 19 }))
        #expect(try stacks.expectSame("Car", typed, NSPredicate(format: "year >= 1900 AND year < 2000")).count > 0)
        let copy = try #require(typed.copy() as? NSPredicate)
        #expect(try stacks.fetch("Car", from: stacks.saved, predicate: copy) == stacks.fetch("Car", from: stacks.saved, predicate: typed))
        #expect(copy.isEqual(typed) && !typed.isEqual(NSPredicate(value: false)))
        let format = NSPredicate(format: "year > 2000")
        #expect((format.copy() as? NSPredicate)?.description == format.description)
        try stacks.expectSame("Tag", NSPredicate(#Predicate<TPTag> { $0.featured ?? false }), NSPredicate(format: "featured == YES"))
        try stacks.expectSame("Tag", NSPredicate(#Predicate<TPTag> { $0.featured ?? true }), NSPredicate(format: "featured == nil OR featured == YES"))
    }

    struct Limits: Codable, Sendable { var min: Int32 }
    struct Filter: Codable, Sendable { var limits: Limits }

    /// Members of captured values read no object: their values when the predicate is translated
    /// (`names.isEmpty || …` made the fetch throw 134091, as did `filter.limits.min`).
    @Test func membersOfCapturedValues() throws {
        let stacks = try TypedStacks()
        let none: [String?] = []
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { none.isEmpty || none.contains($0.name) }), NSPredicate(value: true))
        let some: [String?] = ["Tesla"]
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { some.isEmpty || some.contains($0.name) }),
                              NSPredicate(format: "name IN %@", ["Tesla"]))
        let filter = Filter(limits: Limits(min: 2000))
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.year > filter.limits.min }), NSPredicate(format: "year > 2000"))
    }

    @Test func equalityWithStringsAndNil() throws {
        let stacks = try TypedStacks()
        #expect(try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.name == "Beetle" }), NSPredicate(format: "name == 'Beetle'"))
                == ["Beetle/1938"])
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.name != "Beetle" }), NSPredicate(format: "name != 'Beetle'"))
        #expect(try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.name == nil }), NSPredicate(format: "name == nil"))
                == ["nil/2005"])
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.name != nil }), NSPredicate(format: "name != nil"))
        let names: [String?] = ["Tesla", "Prius", "Nope"]
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { names.contains($0.name) }),
                              NSPredicate(format: "name IN %@", ["Tesla", "Prius", "Nope"]))
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { (1990...2005).contains($0.year) }),
                              NSPredicate(format: "year BETWEEN {1990, 2005}"))
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { (1990..<2005).contains($0.year) }),
                              NSPredicate(format: "year >= 1990 AND year < 2005"))
    }

    @Test func stringOperators() throws {
        let stacks = try TypedStacks()
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { ($0.name ?? "").contains("e") }), NSPredicate(format: "name CONTAINS 'e'"))
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { ($0.name ?? "").starts(with: "Be") }), NSPredicate(format: "name BEGINSWITH 'Be'"))
        #expect(try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { ($0.name ?? "").localizedStandardContains("ELAN") }),
                                      NSPredicate(format: "name CONTAINS[cd] 'ELAN'")) == ["Élan/1990"])
        // A fallback that matches: cars without a name match too.
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { ($0.name ?? "Tesla") == "Tesla" }),
                              NSPredicate(format: "name == nil OR name == 'Tesla'"))
        let same = ComparisonResult.orderedSame
        #expect(try stacks.expectSame("Person", NSPredicate(#Predicate<TPPerson> { $0.name.caseInsensitiveCompare("ADA") == same }),
                                      NSPredicate(format: "name ==[c] 'ADA'")) == ["Ada"])
    }

    @Test func toOneKeyPathsJoin() throws {
        let stacks = try TypedStacks()
        #expect(try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.owner?.name == "Ada" }), NSPredicate(format: "owner.name == 'Ada'"))
                == ["Model T/1908", "Tesla/2012"])
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.owner == nil }), NSPredicate(format: "owner == nil"))
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { ($0.owner?.age ?? 0) > 40 }), NSPredicate(format: "owner.age > 40"))
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.owner!.age < 40 }), NSPredicate(format: "owner.age < 40"))
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.owner?.name == $0.name }), NSPredicate(format: "owner.name == name"))
    }

    @Test func toManyAnyAllAndCount() throws {
        let stacks = try TypedStacks()
        #expect(try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.tags.contains { $0.label == "classic" } }),
                                      NSPredicate(format: "ANY tags.label == 'classic'")) == ["Beetle/1938", "Model T/1908"])
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.tags.allSatisfy { $0.label == "classic" } }),
                              NSPredicate(format: "ALL tags.label == 'classic'"))
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { !$0.tags.contains { "cheap" == $0.label } }),
                              NSPredicate(format: "NONE tags.label == 'cheap'"))
        try stacks.expectSame("Person", NSPredicate(#Predicate<TPPerson> { $0.cars.contains { $0.year > 2010 } }),
                              NSPredicate(format: "ANY cars.year > 2010"))
        #expect(try stacks.expectSame("Person", NSPredicate(#Predicate<TPPerson> { $0.cars.contains { $0.price > 50000 } == false }),
                                      NSPredicate(format: "NOT ANY cars.price > 50000")) == ["Grace", "Linus"])
        // (`#Predicate` cannot capture a managed object: `Value` needs a Codable, Sendable value.)
        // `count` and `isEmpty` are `@count`, a subquery in SQLite.
        #expect(try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.tags.count >= 2 }), NSPredicate(format: "tags.@count >= 2"))
                == ["Beetle/1938"])
        #expect(try stacks.expectSame("Person", NSPredicate(#Predicate<TPPerson> { $0.cars.isEmpty }), NSPredicate(format: "cars.@count == 0"))
                == ["Linus"])
    }

    @Test func arithmeticOnKeyPaths() throws {
        let stacks = try TypedStacks()
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.price * 2 > 30000 }), NSPredicate(format: "price * 2 > 30000"))
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.year - 1900 < 50 }), NSPredicate(format: "year - 1900 < 50"))
        // Constants fold: this compiles to SQL.
        let base: Int32 = 1000
        try stacks.expectSame("Car", NSPredicate(#Predicate<TPCar> { $0.year > base * 2 }), NSPredicate(format: "year > 2000"))
    }

    @Test func evaluateWithObject() throws {
        let stacks = try TypedStacks()
        let cars = try stacks.unsaved.context.fetch(NSFetchRequest<TPCar>(entityName: "Car"))
        let predicate = try #require(NSPredicate(#Predicate<TPCar> { $0.owner?.name == "Grace" && $0.year > 1950 }))
        #expect(cars.filter { predicate.evaluate(with: $0) }.map(\.year) == [2005])
    }

    @Test func sortDescriptors() throws {
        let stacks = try TypedStacks()
        func same(_ typed: [NSSortDescriptor], _ keyed: [NSSortDescriptor], sourceLocation: SourceLocation = #_sourceLocation) throws {
            for stack in [stacks.saved, stacks.unsaved] {
                let a = try stacks.fetch("Car", from: stack, predicate: nil, sort: typed)
                #expect(a == (try stacks.fetch("Car", from: stack, predicate: nil, sort: keyed)), sourceLocation: sourceLocation)
            }
        }
        try same([NSSortDescriptor(SortDescriptor<TPCar>(\.year, order: .reverse))], [NSSortDescriptor(key: "year", ascending: false)])
        try same([NSSortDescriptor(SortDescriptor(\TPCar.owner?.name)), NSSortDescriptor(SortDescriptor(\TPCar.price))],
                 [NSSortDescriptor(key: "owner.name", ascending: true), NSSortDescriptor(key: "price", ascending: true)])
        try same([NSSortDescriptor(SortDescriptor(\TPCar.name, comparator: .lexical, order: .reverse))],
                 [NSSortDescriptor(key: "name", ascending: false)])
        #expect(try stacks.fetch("Car", from: stacks.saved, predicate: nil, sort: [NSSortDescriptor(SortDescriptor<TPCar>(\.year))]).first
                == "Model T/1908")

        let owner = NSSortDescriptor(SortDescriptor(\TPCar.owner?.name))
        #expect(owner.key == "owner.name")
        #expect(try owner.sortKey().comparison == .compare)
        #expect(try NSSortDescriptor(SortDescriptor(\TPCar.name, comparator: .lexical)).sortKey().comparison == .compare)
        // Apple's `.localized` and `.localizedStandard` (not declared by Foundation on Linux yet).
        #expect(TypedSortResolution.comparison(options: [], localized: true) == .localizedCompare)
        #expect(TypedSortResolution.comparison(options: [.numeric, .caseInsensitive, .widthInsensitive, .forcedOrdering],
                                                      localized: true) == .localizedStandardCompare)
        let lexical = String.StandardComparator.lexical.typedSortOptions
        #expect(lexical.0.isEmpty && !lexical.1)
    }

    @Test func sameTreeAsTheFormat() throws {
        // Kept alive: key paths map through the models coordinators use (held weakly), and
        // with `_ =` the model could be gone before the first mapping (a flaky failure when no
        // other test had mapped these key paths yet).
        let stacks = try TypedStacks()
        defer { withExtendedLifetime(stacks) {} }
        let typed = try #require(NSPredicate(#Predicate<TPCar> { $0.owner?.name == "Ada" && $0.year > 2000 }))
        let format = NSPredicate(format: "owner.name == 'Ada' AND year > 2000")
        #expect(try typed.predicateTree().description == format.predicateTree().description)
    }

    @Test func unmappableKeyPathsThrowNamingThem() throws {
        let stacks = try TypedStacks()
        func error(_ predicate: NSPredicate?) -> NSError? {
            do {
                _ = try stacks.fetch("Car", from: stacks.saved, predicate: predicate)
                return nil
            } catch {
                return error as NSError
            }
        }
        let stored = try #require(error(NSPredicate(#Predicate<TPCar> { $0.note > 0 })))
        #expect(stored.domain == NSCocoaErrorDomain && stored.code == 134091)
        #expect(stored.localizedDescription.contains("TPCar.note"))
        #expect(stored.localizedDescription.contains("reads no managed property"))
        let derived = try #require(error(NSPredicate(#Predicate<TPCar> { $0.isVintage })))
        #expect(derived.code == 134091 && derived.localizedDescription.contains("TPCar") && derived.localizedDescription.contains("Bool"))
        let several = try #require(error(NSPredicate(#Predicate<TPCar> { $0.summary == "x" })))
        #expect(several.code == 134091 && several.localizedDescription.contains("several managed properties"))
        // The same from the in-memory path (unsaved objects).
        #expect(throws: NSError.self) {
            _ = try stacks.fetch("Car", from: stacks.unsaved, predicate: NSPredicate(#Predicate<TPCar> { $0.note > 0 }))
        }
        // A sort descriptor too.
        #expect(throws: NSError.self) {
            _ = try stacks.fetch("Car", from: stacks.saved, predicate: nil, sort: [NSSortDescriptor(SortDescriptor(\TPCar.note))])
        }
        #expect(NSSortDescriptor(SortDescriptor(\TPCar.note)).key == nil)
    }

    @Test func untranslatableConstructsThrowNamingThem() throws {
        let stacks = try TypedStacks()
        do {
            _ = try stacks.fetch("Car", from: stacks.saved, predicate: NSPredicate(#Predicate<TPCar> { ($0.name ?? "").contains(/B.*e/) }))
            Issue.record("expected an error")
        } catch {
            let error = error as NSError
            #expect(error.code == 134091)
            #expect(error.localizedDescription.contains("StringContainsRegex"))
        }
        do {
            _ = try stacks.fetch("Car", from: stacks.saved,
                                 predicate: NSPredicate(#Predicate<TPCar> { $0.tags.contains { $0.label == "a" || $0.label == "b" } }))
            Issue.record("expected an error")
        } catch {
            #expect((error as NSError).localizedDescription.contains("contains(where:)"))
        }
    }
}
