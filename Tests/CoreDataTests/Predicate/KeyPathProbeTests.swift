import Foundation
import Testing
@testable import CoreData
import TestSupport

// How Swift key paths of `@Managed` classes are mapped to keys (TypedKeyPaths.swift), enum-typed
// `@Managed` properties, and the checks of typed fetches and to-many setters.

enum KPStatus: Int16 { case open = 0, started = 1, done = 2 }
enum KPPriority: String { case low, high }
/// No case of raw value 1, and its attribute has no default.
enum KPLevel: Int16 { case low = 10, high = 20 }
/// Kept whole in a transformable attribute.
enum KPColor: String { case red, blue }

/// KPColor to and from its raw value's UTF-8 bytes.
final class KPColorTransformer: ValueTransformer, @unchecked Sendable {
    override class func allowsReverseTransformation() -> Bool { true }
    override func transformedValue(_ value: Any?) -> Any? { (value as? KPColor).map { Data($0.rawValue.utf8) } }
    override func reverseTransformedValue(_ value: Any?) -> Any? {
        (value as? Data).flatMap { KPColor(rawValue: String(decoding: $0, as: UTF8.self)) }
    }
}

final class KPItem: NSManagedObject {
    @Managed var name: String?
    @Managed var age: Int16
    @Managed var link: URL
    @Managed var status: KPStatus
    @Managed var priority: KPPriority?
    @Managed var parts: NSSet?
    @Managed var level: KPLevel
    @Managed var color: KPColor?

    /// Derived from one managed property: another value than the attribute holds.
    var ageInMonths: Int { Int(age) * 12 }
    var title: String { name?.capitalized ?? "Untitled" }
    /// The attribute itself, as another number type.
    var plainAge: Int { Int(age) }
    /// Reads an enumeration the probe's value has no case of.
    var isUrgent: Bool { priority == .high }
}

/// Its model is loaded only inside one test, after a predicate over it was made.
final class KPLate: NSManagedObject {
    @Managed var label: String?
}

/// Its model is never loaded.
final class KPNever: NSManagedObject {
    @Managed var label: String?
}

private enum KPModel {
    static func item() -> NSManagedObjectModel {
        let item = NSEntityDescription(); item.name = "KPItem"; item.managedObjectClassName = String(reflecting: KPItem.self)
        let parts = ManagedTestModel.relationship("parts", to: item, toMany: true)
        ValueTransformer.setValueTransformer(KPColorTransformer(), forName: NSValueTransformerName("KPColorTransformer"))
        let color = ManagedTestModel.attribute("color", .transformableAttributeType)
        color.valueTransformerName = "KPColorTransformer"
        item.properties = [ManagedTestModel.attribute("name", .stringAttributeType), ManagedTestModel.attribute("age", .integer16AttributeType),
                           ManagedTestModel.attribute("link", .URIAttributeType), ManagedTestModel.attribute("status", .integer16AttributeType),
                           ManagedTestModel.attribute("priority", .stringAttributeType), ManagedTestModel.attribute("level", .integer16AttributeType),
                           color, parts]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }

    static func late() -> NSManagedObjectModel {
        let late = NSEntityDescription(); late.name = "KPLate"; late.managedObjectClassName = String(reflecting: KPLate.self)
        late.properties = [ManagedTestModel.attribute("label", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [late]
        return model
    }

    static func context(_ model: NSManagedObjectModel, in folder: TemporaryFolder) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: folder.url.appendingPathComponent("kp.sqlite"), options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Ada (36, started, high), bob (20, done), Cy (20, open, low), saved.
    static func populated(in folder: TemporaryFolder) throws -> NSManagedObjectContext {
        let context = try context(item(), in: folder)
        for (name, age, status, priority) in [("Ada", 36, KPStatus.started, KPPriority.high), ("bob", 20, .done, nil), ("Cy", 20, .open, .low)] {
            let item = KPItem(context: context)
            item.name = name
            item.age = Int16(age)
            item.link = URL(string: "https://example.com/\(name)")!
            item.status = status
            item.priority = priority
            item.level = age > 30 ? .high : .low
            item.color = name == "Ada" ? .blue : nil
        }
        try context.save()
        context.reset()
        return context
    }
}

@Suite("Swift key paths: the probe, enums, typed checks")
struct KeyPathProbeTests {
    private func names(_ context: NSManagedObjectContext, _ predicate: NSPredicate?, _ sort: [NSSortDescriptor] = []) throws -> [String] {
        let request = NSFetchRequest<KPItem>(entityName: "KPItem")
        request.predicate = predicate
        request.sortDescriptors = sort + [NSSortDescriptor(key: "name", ascending: true)]
        return try context.fetch(request).map { $0.name ?? "" }
    }

    /// A computed property deriving another value from the one attribute it reads was taken for
    /// that attribute: `ageInMonths > 24` ran as `age > 24`.
    @Test func aComputedPropertyDerivedFromAnAttributeIsRefused() throws {
        let folder = try TemporaryFolder()
        let context = try KPModel.populated(in: folder)
        for predicate in [NSPredicate(format: "%K > 24", \KPItem.ageInMonths), NSPredicate(format: "%K == 'Untitled'", \KPItem.title)] {
            let error = #expect(throws: NSError.self) { try names(context, predicate) }
            #expect(error?.code == NSPersistentStoreUnsupportedRequestTypeError)
            #expect(error?.localizedDescription.contains("computed property derived") == true, "\(error?.localizedDescription ?? "")")
        }
        // The attribute read as another number type is the attribute.
        #expect(try names(context, NSPredicate(format: "%K > 24", \KPItem.plainAge)) == ["Ada"])
    }

    /// A non-optional `URL` with no default made the probe stop the process.
    @Test func aKeyPathToANonOptionalURLSorts() throws {
        let folder = try TemporaryFolder()
        let context = try KPModel.populated(in: folder)
        #expect(try names(context, nil, [NSSortDescriptor(keyPath: \KPItem.link, ascending: false)]) == ["bob", "Cy", "Ada"])
        #expect(NSSortDescriptor(keyPath: \KPItem.link, ascending: true).key == "link")
    }

    /// `@Managed var status: KPStatus` compiled, then failed validation at save and trapped on read.
    @Test func enumPropertiesAreStoredAsTheirRawValues() throws {
        let folder = try TemporaryFolder()
        let context = try KPModel.populated(in: folder)
        let items = try context.fetch(NSFetchRequest<KPItem>(entityName: "KPItem")).sorted { ($0.name ?? "") < ($1.name ?? "") }
        #expect(items.map(\.status) == [.started, .open, .done])
        #expect(items.map(\.priority) == [.high, .low, nil])
        #expect(items[0].value(forKey: "status") as? Int16 == 1 || (items[0].value(forKey: "status") as? NSNumber)?.int16Value == 1)
        #expect(items[0].value(forKey: "priority") as? String == "high")
        items[0].priority = nil
        items[0].status = .done
        try context.save()
        // Key paths to them map to their keys; values compare as raw values.
        #expect(try names(context, NSPredicate(format: "%K == %d", \KPItem.status, KPStatus.done.rawValue)) == ["Ada", "bob"])
        #expect(try names(context, NSPredicate(format: "%K == nil", \KPItem.priority)) == ["Ada", "bob"])
        #expect(throws: NSError.self) { try names(context, NSPredicate(format: "%K == YES", \KPItem.isUrgent)) }
    }

    /// A key path to an integer enumeration with no case of the probe's value and no default
    /// stopped the process while it was mapped; an enumeration in a transformable attribute was
    /// stored as its raw value (and read back stopped the process).
    @Test func enumerationsWithoutACaseForTheProbeAndTransformableOnes() throws {
        let folder = try TemporaryFolder()
        let context = try KPModel.populated(in: folder)
        #expect(try names(context, nil, [NSSortDescriptor(keyPath: \KPItem.level, ascending: false)]) == ["Ada", "Cy", "bob"])
        let items = try context.fetch(NSFetchRequest<KPItem>(entityName: "KPItem")).sorted { ($0.name ?? "") < ($1.name ?? "") }
        #expect(items.map(\.level) == [.high, .low, .low])
        #expect(items.map(\.color) == [.blue, nil, nil])
        #expect(items[0].value(forKey: "color") as? KPColor == .blue)
    }

    /// A malformed format with a key path of a model in use is a malformed predicate (2048), not
    /// one parsed again on every use; predicates waiting for their model hash alike.
    @Test func onlyAKeyPathWaitingForItsModelDefersTheParse() throws {
        let folder = try TemporaryFolder()
        let context = try KPModel.populated(in: folder) // (its model in use while it lives)
        let malformed = NSPredicate(format: "%K ==", \KPItem.name)
        #expect(!(malformed is KeyPathFormatPredicate))
        withExtendedLifetime(context) {}
        let waiting = NSPredicate(format: "%K == 'a'", \KPNever.label), other = NSPredicate(format: "%K == 'b'", \KPNever.label)
        #expect(waiting is KeyPathFormatPredicate && waiting.hash == other.hash && !waiting.isEqual(other))
    }

    /// `%K` with a Swift key path made before its model was in use was a malformed predicate for good.
    @Test func aPercentKKeyPathMadeBeforeItsModelLoadsWorksOnceItHas() throws {
        let predicate = NSPredicate(format: "%K BEGINSWITH 'a'", \KPLate.label)
        let folder = try TemporaryFolder()
        let context = try KPModel.context(KPModel.late(), in: folder)
        for label in ["apple", "banana", "avocado"] {
            let late = KPLate(context: context)
            late.label = label
        }
        try context.save()
        let request = NSFetchRequest<KPLate>(entityName: "KPLate")
        request.predicate = predicate
        request.sortDescriptors = [NSSortDescriptor(key: "label", ascending: true)]
        #expect(try context.fetch(request).map(\.label) == ["apple", "avocado"])
        #expect(predicate.description == "label BEGINSWITH \"a\"")
        // One whose model never loads throws the key path's error (134091) from a fetch.
        let never = NSPredicate(format: "%K == 'x'", \KPNever.label)
        request.predicate = never
        let error = #expect(throws: NSError.self) { try context.fetch(request) }
        #expect(error?.code == NSPersistentStoreUnsupportedRequestTypeError)
        #expect(!never.evaluate(with: nil))
    }

    /// Two `#Predicate`s that can't be translated yet were equal (both `BLOCKPREDICATE`), and a
    /// predicate's hash changed once its model loaded.
    @Test func untranslatedSwiftPredicatesAreNotEqual() throws {
        let first = try #require(NSPredicate(#Predicate<KPNever> { $0.label == "a" }))
        let second = try #require(NSPredicate(#Predicate<KPNever> { $0.label == "b" }))
        #expect(!first.isEqual(second))
        #expect(first.isEqual(first))
        #expect(first.hash == second.hash)
    }

    /// A typed fetch bit-cast its results: an object of the entity that is not of the class
    /// (made with `NSManagedObject(entity:insertInto:)`) became a `KPItem` that is not one.
    @Test func aTypedFetchChecksEachObject() throws {
        let folder = try TemporaryFolder()
        let context = try KPModel.populated(in: folder)
        let plain = NSManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["KPItem"]!, insertInto: context)
        #expect(!(plain is KPItem))
        let error = #expect(throws: NSError.self) { try context.fetch(NSFetchRequest<KPItem>(entityName: "KPItem")) }
        #expect(error?.localizedDescription.contains("not a") == true, "\(error?.localizedDescription ?? "")")
        #expect(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "KPItem")).count == 4)
    }

    /// `parts = NSSet(array: objectIDs)` emptied the relationship silently; it stops the process
    /// as `setValue(_:forKey:)` does.
    @Test func aToManySetterGivenObjectIDsStopsTheProcess() async throws {
        await #expect(processExitsWith: .failure) {
            let folder = try TemporaryFolder()
            let context = try KPModel.populated(in: folder)
            let items = try context.fetch(NSFetchRequest<KPItem>(entityName: "KPItem"))
            items[0].parts = NSSet(array: items.dropFirst().map(\.objectID))
        }
    }
}
