import Foundation
import Testing
@testable import CoreData
import TestSupport

// Swift key paths where Apple's code writes `#keyPath(Item.name)` (ManagedKeyPaths.swift), and
// `NSSortDescriptor(keyPath:ascending:)` for any key path: each gives what the key string gives.
// The classes and data are TypedPredicateTests' (`TPCar`, `TypedStacks`).

/// A Swift base class with no entity of its own, shared by the classes of two entities.
class MKStamped: NSManagedObject {
    @Managed var createdAt: Date?
}
final class MKMemo: MKStamped {}
final class MKTask: MKStamped {}

@Suite("Swift key paths for key strings")
struct ManagedKeyPathTests {
    @Test func keyPathStringsOfManagedProperties() throws {
        let stacks = try TypedStacks()
        _ = stacks // the model is in use from here on
        #expect(TPCar.keyPath(\.name) == "name")
        #expect(TPCar.keyPath(\.year) == "year")
        #expect(TPCar.keyPath(\.owner?.name) == "owner.name")
        #expect(TPCar.keyPath(\.tags) == "tags")
        #expect(TPPerson.keyPath(\.cars) == "cars")
        // Past a to-many: its count is @count (it was cut off at "cars"); a fetch sorts by it.
        #expect(TPPerson.keyPath(\.cars.count) == "cars.@count")
        let people = try stacks.saved.newContext().fetch({
            let request = NSFetchRequest<TPPerson>(entityName: "Person")
            request.predicate = NSPredicate(format: "%K > 0", TPPerson.keyPath(\.cars.count))
            return request
        }())
        #expect(Set(people.map(\.name)) == ["Ada", "Grace"])
    }

    @Test func sortDescriptorsFromKeyPathsOfAnyValueSortFetches() throws {
        let stacks = try TypedStacks()
        // An optional string (no Comparable value), a Comparable one, a chain through a to-one.
        let cases: [(NSSortDescriptor, NSSortDescriptor)] = [
            (NSSortDescriptor(keyPath: \TPCar.name, ascending: true), NSSortDescriptor(key: "name", ascending: true)),
            (NSSortDescriptor(keyPath: \TPCar.year, ascending: false), NSSortDescriptor(key: "year", ascending: false)),
            (NSSortDescriptor(keyPath: \TPCar.owner?.name, ascending: true), NSSortDescriptor(key: "owner.name", ascending: true)),
        ]
        for (typed, keyed) in cases {
            let tiebreak = NSSortDescriptor(key: "year", ascending: true)
            for stack in [stacks.saved, stacks.unsaved] {
                let expected = try stacks.fetch("Car", from: stack, predicate: nil, sort: [keyed, tiebreak])
                #expect(try stacks.fetch("Car", from: stack, predicate: nil, sort: [typed, tiebreak]) == expected, "\(keyed.key ?? "")")
            }
            #expect(typed.key == keyed.key)
        }
        // In memory, without a fetch.
        let cars = try stacks.unsaved.context.fetch(NSFetchRequest<TPCar>(entityName: "Car"))
        let byYear = NSSortDescriptor(keyPath: \TPCar.year, ascending: true)
        #expect(cars.sorted { byYear.compare($0, to: $1) == .orderedAscending }.map(\.year) == cars.map(\.year).sorted())
        let reversed = byYear.reversedSortDescriptor as! NSSortDescriptor
        #expect(try stacks.fetch("Car", from: stacks.saved, predicate: nil, sort: [reversed]).first == "Tesla/2012")
    }

    @Test func aKeyPathThatIsNoCoreDataPropertyMakesTheFetchThrow() throws {
        let stacks = try TypedStacks()
        let error = #expect(throws: NSError.self) {
            try stacks.fetch("Car", from: stacks.saved, predicate: nil, sort: [NSSortDescriptor(keyPath: \TPCar.note, ascending: true)])
        }
        #expect(error?.code == NSPersistentStoreUnsupportedRequestTypeError)
        #expect(error?.localizedDescription.contains("TPCar") == true)
    }

    @Test func keyPathsForPercentK() throws {
        let stacks = try TypedStacks()
        try stacks.expectSame("Car", NSPredicate(format: "%K == %@", \TPCar.owner?.name, "Ada"), NSPredicate(format: "owner.name == 'Ada'"))
        try stacks.expectSame("Car", NSPredicate(format: "%K > %d", \TPCar.year, 2000), NSPredicate(format: "year > 2000"))
        let refused = NSPredicate(format: "%K == 1", \TPCar.isVintage)
        let error = #expect(throws: NSError.self) { try stacks.fetch("Car", from: stacks.saved, predicate: refused) }
        #expect(error?.localizedDescription.contains("isVintage") == true || error?.localizedDescription.contains("Bool") == true)
    }

    @Test func keyValueCodingThroughKeyPaths() throws {
        let stacks = try TypedStacks()
        let context = stacks.unsaved.context
        let request = NSFetchRequest<TPCar>(entityName: "Car")
        request.predicate = NSPredicate(format: "name == 'Beetle'")
        let beetle = try #require(try context.fetch(request).first)
        #expect(beetle.value(forKey: \.name) as? String == "Beetle")
        #expect(beetle.value(forKey: \.owner?.name) as? String == "Grace")
        beetle.setValue("Käfer", forKey: \.name)
        #expect(beetle.name == "Käfer")
        let tag = TPTag(context: context)
        tag.label = "new"
        beetle.mutableSetValue(forKey: \.tags).add(tag)
        #expect(beetle.tags.contains(tag))
        #expect(tag.cars.contains(beetle))
    }

    @Test func expressionsAndDictionaryColumnsFromKeyPaths() throws {
        let stacks = try TypedStacks()
        #expect(CoreData.NSExpression(forKeyPath: \TPCar.owner?.name) == CoreData.NSExpression(forKeyPath: "owner.name"))

        let request = NSFetchRequest<NSDictionary>(entityName: "Car")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = [\TPCar.owner?.name]
        request.propertiesToGroupBy = [\TPCar.owner?.name]
        request.sortDescriptors = [NSSortDescriptor(keyPath: \TPCar.owner?.name, ascending: true)]
        let keyed = NSFetchRequest<NSDictionary>(entityName: "Car")
        keyed.resultType = .dictionaryResultType
        keyed.propertiesToFetch = ["owner.name"]
        keyed.propertiesToGroupBy = ["owner.name"]
        keyed.sortDescriptors = [NSSortDescriptor(key: "owner.name", ascending: true)]
        let context = stacks.saved.newContext()
        #expect(try context.fetch(request) == (try context.fetch(keyed)))
        #expect(try context.fetch(request).count == 3)
    }

    @Test func aKeyPathThatIsNoCoreDataPropertyStopsKeyPathStrings() async throws {
        let folder = try TemporaryFolder()
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = folder.path as String] in
            let stack = try TestStack(model: TypedTestModel.make(), directory: URL(fileURLWithPath: path))
            _ = stack
            _ = TPCar.keyPath(\.summary)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("TPCar.keyPath(_:)"), "\(message)")
        #expect(message.contains("reads several managed properties"), "\(message)")
        withExtendedLifetime(folder) {}
    }

    /// Key paths rooted at a Swift base class that no entity names (each entity's class is a
    /// subclass): read on an entity of a subclass (they were refused, 134091 or a stop).
    @Test func keyPathsOfASharedSwiftBaseClass() throws {
        func entity(_ name: String, _ cls: AnyClass) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.managedObjectClassName = NSStringFromClass(cls)
            let created = NSAttributeDescription(); created.name = "createdAt"; created.attributeType = .dateAttributeType
            let title = NSAttributeDescription(); title.name = "title"; title.attributeType = .stringAttributeType
            entity.properties = [created, title]
            return entity
        }
        let model = NSManagedObjectModel()
        model.entities = [entity("Memo", MKMemo.self), entity("Task", MKTask.self)]
        let stack = try TestStack(model: model, inMemory: true)
        #expect(MKStamped.keyPath(\.createdAt) == "createdAt")
        for (title, seconds) in [("b", 20.0), ("a", 10.0), ("c", 30.0)] {
            stack.insert("Memo", ["title": title, "createdAt": Date(timeIntervalSinceReferenceDate: seconds)])
        }
        try stack.context.save()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Memo")
        request.sortDescriptors = [NSSortDescriptor(keyPath: \MKStamped.createdAt, ascending: false)]
        #expect(try stack.newContext().fetch(request).map { $0.value(forKey: "title") as? String } == ["c", "b", "a"])
    }
}
