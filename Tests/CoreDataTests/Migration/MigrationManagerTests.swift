import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Splits `Person` into `Person` and `Address`, and answers `shout:` in value expressions.
class SplitPersonPolicy: NSEntityMigrationPolicy {
    override func perform(_ selector: String, arguments: [Any?]) throws -> Any? {
        guard selector == "shout:" else { return try super.perform(selector, arguments: arguments) }
        return (arguments.first as? String)?.uppercased()
    }

    override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping,
                                             manager: NSMigrationManager) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        guard let person = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSEntityMigrationPolicyError)
        }
        let address = NSEntityDescription.insertNewObject(forEntityName: "Address", into: manager.destinationContext)
        address.setValue(sInstance.value(forKey: "street"), forKey: "street")
        person.setValue(address, forKey: "address")
    }
}

/// Records the stages it is called for, and the progress at each mapping's end.
final class RecordingPolicy: NSEntityMigrationPolicy {
    nonisolated(unsafe) static var stages: [String] = []
    nonisolated(unsafe) static var progress: [Float] = []

    override func begin(_ mapping: NSEntityMapping, with manager: NSMigrationManager) throws { Self.stages.append("begin") }
    override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        Self.stages.append("create")
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    }
    override func endInstanceCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws { Self.stages.append("endCreation") }
    override func createRelationships(forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        Self.stages.append("relate")
        try super.createRelationships(forDestination: dInstance, in: mapping, manager: manager)
    }
    override func endRelationshipCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws { Self.stages.append("endRelate") }
    override func performCustomValidation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws { Self.stages.append("validate") }
    override func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        Self.stages.append("end")
        Self.progress.append(manager.migrationProgress)
    }
}

/// Splits people as ``SplitPersonPolicy`` does, then cancels the migration once they are made.
final class CancellingPolicy: SplitPersonPolicy {
    override func endInstanceCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        manager.cancelMigrationWithError(NSError(domain: NSCocoaErrorDomain, code: NSMigrationCancelledError))
    }
}

/// Splits people as ``SplitPersonPolicy`` does, but fails on the third, after the first batches are saved.
final class FailingPolicy: SplitPersonPolicy {
    var count = 0
    override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        count += 1
        if count == 3 { throw NSError(domain: NSCocoaErrorDomain, code: NSEntityMigrationPolicyError, userInfo: [NSLocalizedDescriptionKey: "no third"]) }
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    }
}

/// Answers the selectors of the Notes mapping model's file.
/// Gives every migrated car the model "fixed" in the third pass (`performCustomValidation`).
final class FixingPolicy: NSEntityMigrationPolicy {
    override func performCustomValidation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        for car in try manager.destinationContext.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")) {
            car.setValue("fixed", forKey: "model")
        }
    }
}

final class NotesPolicy: NSEntityMigrationPolicy {
    override func perform(_ selector: String, arguments: [Any?]) throws -> Any? {
        switch selector {
        case "toInt16WithValue:": return NSNumber(value: Int16(clamping: (arguments.first as? NSNumber)?.int64Value ?? 0))
        case "fileNameFor:": return "file-\(((arguments.first as? NSManagedObject)?.value(forKey: "data") as? Data)?.count ?? 0).bin"
        default: return try super.perform(selector, arguments: arguments)
        }
    }
}

@Suite(.serialized) struct MigrationManagerTests {
    typealias M = MigrationModels

    // MARK: Models

    /// Version 1: `Person` (name, street, age) with `cars`, `Car` (model) with `owner`.
    static func sourceModel() -> NSManagedObjectModel {
        let person = M.entity("Person", [M.attribute("name", .stringAttributeType), M.attribute("street", .stringAttributeType),
                                         M.attribute("age", .integer16AttributeType)])
        let car = M.entity("Car", [M.attribute("model", .stringAttributeType)])
        M.link(person, car)
        return M.model([person, car])
    }

    /// Version 2: the street moves to an `Address` of its own; age is 32-bit.
    static func destinationModel() -> NSManagedObjectModel {
        let person = M.entity("Person", [M.attribute("name", .stringAttributeType), M.attribute("age", .integer32AttributeType)])
        let car = M.entity("Car", [M.attribute("model", .stringAttributeType)])
        let address = M.entity("Address", [M.attribute("street", .stringAttributeType)])
        M.link(person, car)
        M.relate(person, "address", toMany: false, address, "person", inverseToMany: false)
        return M.model([person, car, address])
    }

    static func property(_ name: String, _ format: String? = nil) -> NSPropertyMapping {
        let mapping = NSPropertyMapping()
        mapping.name = name
        mapping.valueExpression = format.map { NSExpression(format: $0) }
        return mapping
    }

    static func entityMapping(_ name: String, _ entity: String, policy: NSEntityMigrationPolicy.Type? = nil,
                              attributes: [NSPropertyMapping], relationships: [NSPropertyMapping]) -> NSEntityMapping {
        let mapping = NSEntityMapping()
        mapping.name = name
        mapping.mappingType = .customEntityMappingType
        mapping.sourceEntityName = entity
        mapping.destinationEntityName = entity
        mapping.entityMigrationPolicyClassName = policy.map { String(reflecting: $0) }
        mapping.attributeMappings = attributes
        mapping.relationshipMappings = relationships
        return mapping
    }

    /// The mapping model built in code: people through `personPolicy`, cars through the default policy.
    static func mapping(personPolicy: NSEntityMigrationPolicy.Type = SplitPersonPolicy.self) -> NSMappingModel {
        let model = NSMappingModel()
        model.entityMappings = [
            entityMapping("PersonToPerson", "Person", policy: personPolicy,
                          attributes: [property("name", #"FUNCTION($entityPolicy, "shout:", $source.name)"#), property("age")],
                          relationships: [property("cars", #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "CarToCar", $source.cars)"#)]),
            entityMapping("CarToCar", "Car", attributes: [property("model", "$source.model")], relationships: [property("owner")]),
        ]
        return model
    }

    /// A version 1 store of `people` people with two cars each.
    static func writeSource(at url: URL, people: Int = 2) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: sourceModel())
        let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        for index in 0..<people {
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            person.setValue("person \(index)", forKey: "name")
            person.setValue("\(index) Main Street", forKey: "street")
            person.setValue(NSNumber(value: 30 + index), forKey: "age")
            for model in ["T", "A"] {
                let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
                car.setValue("\(model)\(index)", forKey: "model")
                car.setValue(person, forKey: "owner")
            }
        }
        try context.save()
        try coordinator.remove(store)
    }

    /// The objects of `entity` in the store at `url`, read with `model`, by `key`.
    static func read(_ url: URL, _ model: NSManagedObjectModel, _ entity: String, by key: String,
                     _ body: ([NSManagedObject]) throws -> Void) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        defer { try? coordinator.remove(store) }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)]
        try body(try context.fetch(request))
    }

    static func storeFiles(_ url: URL) -> [String] {
        ["", "-wal", "-shm", "-journal"].map { url.path + $0 }.filter { FileManager.default.fileExists(atPath: $0) }
    }

    /// A temporary folder with a version 1 store of `people` people (`Old.sqlite`), the URL to migrate
    /// it to (`New.sqlite`) and a manager from version 1 to version 2.
    struct Setup {
        let folder: TemporaryFolder
        let old: URL, new: URL
        let manager = NSMigrationManager(sourceModel: sourceModel(), destinationModel: destinationModel())

        init(people: Int = 2) throws {
            folder = try TemporaryFolder()
            old = folder.url.appendingPathComponent("Old.sqlite")
            new = folder.url.appendingPathComponent("New.sqlite")
            try writeSource(at: old, people: people)
        }
    }

    // MARK: Tests

    @Test func aMappingBuiltInCodeChangesValuesSplitsAnEntityAndKeepsRelationships() throws {
        let setup = try Setup(people: 3)
        let (old, new, manager) = (setup.old, setup.new, setup.manager)
        let before = try Data(contentsOf: old)
        manager.batchSize = 2
        try manager.migrateStore(from: old, type: .sqlite, mapping: Self.mapping(), to: new, type: .sqlite)
        #expect(manager.migrationProgress == 1)
        #expect(try Data(contentsOf: old) == before)
        try Self.read(new, Self.destinationModel(), "Person", by: "name") { people in
            #expect(people.map { $0.value(forKey: "name") as? String } == ["PERSON 0", "PERSON 1", "PERSON 2"])
            #expect(people.map { ($0.value(forKey: "age") as? NSNumber)?.intValue } == [30, 31, 32])
            #expect(people.map { ($0.value(forKey: "address") as? NSManagedObject)?.value(forKey: "street") as? String }
                    == ["0 Main Street", "1 Main Street", "2 Main Street"])
            #expect(people.map { (($0.value(forKey: "cars") as? Set<NSManagedObject>) ?? []).compactMap { $0.value(forKey: "model") as? String }.sorted() }
                    == [["A0", "T0"], ["A1", "T1"], ["A2", "T2"]])
        }
        try Self.read(new, Self.destinationModel(), "Car", by: "model") { cars in
            #expect(cars.count == 6)
            #expect(cars.allSatisfy { ($0.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String == "PERSON \(($0.value(forKey: "model") as? String ?? "").dropFirst())" })
        }
    }

    @Test func requiredRelationshipsAreSetBeforeObjectsAreValidated() throws {
        // Version 2 with each car's owner required: set in the second pass, checked in the third.
        func destination(carModelRequired: Bool = false) -> NSManagedObjectModel {
            let model = Self.destinationModel()
            model.entitiesByName["Car"]!.relationshipsByName["owner"]!.isOptional = false
            model.entitiesByName["Car"]!.attributesByName["model"]!.isOptional = !carModelRequired
            return model
        }
        let setup = try Setup(people: 2)
        let manager = NSMigrationManager(sourceModel: Self.sourceModel(), destinationModel: destination())
        manager.batchSize = 1
        try manager.migrateStore(from: setup.old, type: .sqlite, mapping: Self.mapping(), to: setup.new, type: .sqlite)
        try Self.read(setup.new, destination(), "Car", by: "model") { cars in
            #expect(cars.count == 4)
            #expect(cars.allSatisfy { $0.value(forKey: "owner") != nil })
        }

        // What is still invalid after the second pass fails the migration (134110), no file left.
        let mapping = Self.mapping()
        mapping.entityMappings![1].attributeMappings = []
        let failing = NSMigrationManager(sourceModel: Self.sourceModel(), destinationModel: destination(carModelRequired: true))
        let other = setup.folder.url.appendingPathComponent("Other.sqlite")
        #expect {
            try failing.migrateStore(from: setup.old, type: .sqlite, mapping: mapping, to: other, type: .sqlite)
        } throws: { error in
            let error = error as NSError
            return error.code == NSMigrationError && "\(error.userInfo[NSUnderlyingErrorKey] ?? "")".contains("1570")
        }
        #expect(Self.storeFiles(other).isEmpty)
    }

    /// An ordered relationship keeps its order through an inferred mapping run by a manager,
    /// with members of two sub-entities (two entity mappings) and members whose mappings run
    /// before the owner's (they were grouped by mapping, or in the order their mappings ran).
    @Test func anOrderedRelationshipKeepsItsOrder() throws {
        func model(withNote: Bool) -> NSManagedObjectModel {
            let playlist = M.entity("Playlist", [M.attribute("name", .stringAttributeType)] + (withNote ? [M.attribute("note", .stringAttributeType)] : []))
            let item = M.entity("Item", [M.attribute("title", .stringAttributeType)])
            let song = M.entity("Song", [])
            let video = M.entity("Video", [])
            item.subentities = [song, video]
            M.relate(playlist, "items", toMany: true, item, "playlist", inverseToMany: false)
            (playlist.relationshipsByName["items"]!).isOrdered = true
            return M.model([playlist, item, song, video])
        }
        let folder = try TemporaryFolder()
        let old = folder.url.appendingPathComponent("Old.sqlite"), new = folder.url.appendingPathComponent("New.sqlite")
        let titles = ["s1", "v1", "s2", "v2", "s3"]
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model(withNote: false))
            let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: old)
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            let playlist = NSEntityDescription.insertNewObject(forEntityName: "Playlist", into: context)
            playlist.setValue("mix", forKey: "name")
            let items = titles.map { title -> NSManagedObject in
                let item = NSEntityDescription.insertNewObject(forEntityName: title.hasPrefix("s") ? "Song" : "Video", into: context)
                item.setValue(title, forKey: "title")
                return item
            }
            playlist.setValue(NSOrderedSet(array: items.reversed()), forKey: "items")
            try context.save()
            try coordinator.remove(store)
        }
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: model(withNote: false), destinationModel: model(withNote: true))
        let manager = NSMigrationManager(sourceModel: model(withNote: false), destinationModel: model(withNote: true))
        try manager.migrateStore(from: old, type: .sqlite, mapping: mapping, to: new, type: .sqlite)
        try Self.read(new, model(withNote: true), "Playlist", by: "name") { playlists in
            let items = (playlists.first?.value(forKey: "items") as? NSOrderedSet)?.array as? [NSManagedObject]
            #expect(items?.map { $0.value(forKey: "title") as? String } == titles.reversed())
        }
    }

    /// What a policy changes in `performCustomValidation` is saved (it was validated, then let go).
    @Test func changesMadeInTheThirdPassAreSaved() throws {
        let setup = try Setup(people: 1)
        let mapping = Self.mapping()
        mapping.entityMappings![1].entityMigrationPolicyClassName = String(reflecting: FixingPolicy.self)
        try setup.manager.migrateStore(from: setup.old, type: .sqlite, mapping: mapping, to: setup.new, type: .sqlite)
        try Self.read(setup.new, Self.destinationModel(), "Car", by: "model") { cars in
            #expect(cars.count == 2 && cars.allSatisfy { $0.value(forKey: "model") as? String == "fixed" })
        }
    }

    @Test func theStagesRunInApplesOrderAndTheProgressReachesOne() throws {
        let setup = try Setup(people: 1)
        let (old, new, manager) = (setup.old, setup.new, setup.manager)
        let model = NSMappingModel()
        model.entityMappings = [Self.entityMapping("PersonToPerson", "Person", policy: RecordingPolicy.self, attributes: [Self.property("name")], relationships: []),
                                Self.entityMapping("CarToCar", "Car", policy: RecordingPolicy.self, attributes: [Self.property("model")], relationships: [])]
        RecordingPolicy.stages = []; RecordingPolicy.progress = []
        try manager.migrateStore(from: old, sourceType: NSSQLiteStoreType, options: nil, with: model,
                                 toDestinationURL: new, destinationType: NSSQLiteStoreType, destinationOptions: nil)
        #expect(RecordingPolicy.stages == ["begin", "create", "endCreation", "begin", "create", "create", "endCreation",
                                           "relate", "endRelate", "relate", "relate", "endRelate",
                                           "validate", "end", "validate", "end"])
        #expect(RecordingPolicy.progress == [Float(4) / 6, Float(5) / 6])
        #expect(manager.migrationProgress == 1)
        try Self.read(new, Self.destinationModel(), "Car", by: "model") { #expect($0.map { $0.value(forKey: "model") as? String } == ["A0", "T0"]) }
    }

    @Test func aMappingModelFileMigratesWithPoliciesNamedInIt() throws {
        let folder = try TemporaryFolder()
        let old = folder.url.appendingPathComponent("Old.sqlite"), new = folder.url.appendingPathComponent("New.sqlite")
        let v1 = Self.notesModel(version: 1), v2 = Self.notesModel(version: 2)
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v1)
            let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: old, options: nil)
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            person.setValue("Ada", forKey: "name")
            person.setValue(NSNumber(value: 70_000), forKey: "bonusPoints")
            let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
            note.setValue("Engines", forKey: "title")
            note.setValue(person, forKey: "owner")
            let attachment = NSEntityDescription.insertNewObject(forEntityName: "Attachment", into: context)
            attachment.setValue(Data([1, 2, 3]), forKey: "data")
            attachment.setValue(note, forKey: "note")
            NSEntityDescription.insertNewObject(forEntityName: "Draft", into: context).setValue("gone", forKey: "title")
            try context.save()
            try coordinator.remove(store)
        }
        let mapping = try #require(NSMappingModel(contentsOf: NSMappingModelFilesTests.fixture))
        // The file names `MyApp.AttachmentPolicy`; this test's module is `CoreDataTests`. `PersonToPerson`
        // calls `toInt16WithValue:` on its policy, which the file leaves the default one.
        for name in ["AttachmentToAttachment", "PersonToPerson"] {
            mapping.entityMappingsByName[name]?.entityMigrationPolicyClassName = String(reflecting: NotesPolicy.self)
        }
        let manager = NSMigrationManager(sourceModel: v1, destinationModel: v2)
        try manager.migrateStore(from: old, type: .sqlite, mapping: mapping, to: new, type: .sqlite)
        #expect(manager.migrationProgress == 1)
        try Self.read(new, v2, "Note", by: "title") { notes in
            let note = try #require(notes.first)
            #expect(notes.count == 1)
            #expect(note.value(forKey: "ownerName") as? String == "Ada")
            let owner = try #require(note.value(forKey: "owner") as? NSManagedObject)
            #expect(owner.value(forKey: "name") as? String == "Ada")
            #expect((owner.value(forKey: "bonusPoints") as? NSNumber)?.intValue == Int(Int16.max))
            #expect((note.value(forKey: "previousOwners") as? Set<NSManagedObject>)?.count == 1)
            let attachment = try #require((note.value(forKey: "attachments") as? Set<NSManagedObject>)?.first)
            #expect(attachment.value(forKey: "fileName") as? String == "file-3.bin")
            #expect(attachment.value(forKey: "data") as? Data == Data([1, 2, 3]))
        }
    }

    @Test func aSourceFilterPredicateMigratesOnlyTheObjectsItKeeps() throws {
        let setup = try Setup(people: 3)
        let mapping = Self.mapping()
        mapping.entityMappings[0].sourceFilterPredicate = "age > 30"
        try setup.manager.migrateStore(from: setup.old, type: .sqlite, mapping: mapping, to: setup.new, type: .sqlite)
        try Self.read(setup.new, Self.destinationModel(), "Person", by: "name") { people in
            #expect(people.map { $0.value(forKey: "name") as? String } == ["PERSON 1", "PERSON 2"])
        }
        // Every car migrates; person 0's lose their owner.
        try Self.read(setup.new, Self.destinationModel(), "Car", by: "model") { cars in
            #expect(cars.map { ($0.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String }
                    == [nil, "PERSON 1", "PERSON 2", nil, "PERSON 1", "PERSON 2"])
        }
    }

    /// A source expression set in code was ignored: every instance migrated. Xcode's form is run;
    /// another is refused, nothing left at the destination.
    @Test func aSourceExpressionFiltersTheSourceInstances() throws {
        let setup = try Setup(people: 3)
        let mapping = Self.mapping()
        let sourceName = mapping.entityMappings[0].sourceEntityName ?? ""
        mapping.entityMappings[0].sourceExpression = NSExpression(format: """
            FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "\(sourceName)", "age > 30"), $manager.sourceContext, NO)
            """)
        try setup.manager.migrateStore(from: setup.old, type: .sqlite, mapping: mapping, to: setup.new, type: .sqlite)
        try Self.read(setup.new, Self.destinationModel(), "Person", by: "name") { people in
            #expect(people.map { $0.value(forKey: "name") as? String } == ["PERSON 1", "PERSON 2"])
        }

        let other = try Setup(people: 3)
        let refused = Self.mapping()
        refused.entityMappings[0].sourceExpression = NSExpression(format: "FETCH($request, $manager.sourceContext, NO)")
        let error = #expect(throws: NSError.self) {
            try other.manager.migrateStore(from: other.old, type: .sqlite, mapping: refused, to: other.new, type: .sqlite)
        }
        #expect(error?.code == NSMigrationError)
        #expect(!FileManager.default.fileExists(atPath: other.new.path))
    }

    /// A car's owner given as both cars of its owner, or as the car itself.
    @Test(arguments: [("$source.owner.cars", "More than one relationship destination for a toOne relationship"),
                      ("$source", "Unknown/unsupported type for relationship destination: Car for Car.owner (a relationship to Person)")])
    func aRelationshipValueThatDoesNotFitFailsTheMigration(sources: String, message: String) throws {
        let setup = try Setup()
        let mapping = Self.mapping()
        mapping.entityMappings[1].relationshipMappings = [
            Self.property("owner", #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "CarToCar", "# + sources + ")"),
        ]
        let error = #expect(throws: NSError.self) {
            try setup.manager.migrateStore(from: setup.old, type: .sqlite, mapping: mapping, to: setup.new, type: .sqlite)
        }
        #expect(error?.code == NSMigrationError && error?.localizedDescription == message)
        #expect(Self.storeFiles(setup.new).isEmpty)
    }

    @Test func cancellingFailsWithTheGivenErrorAndLeavesNoFile() throws {
        let setup = try Setup()
        let (old, new, manager) = (setup.old, setup.new, setup.manager)
        let error = #expect(throws: NSError.self) {
            try manager.migrateStore(from: old, type: .sqlite, mapping: Self.mapping(personPolicy: CancellingPolicy.self), to: new, type: .sqlite)
        }
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSMigrationCancelledError)
        #expect(manager.migrationProgress < 1)
        #expect(Self.storeFiles(new).isEmpty)
    }

    @Test func aFailingPolicyLeavesNoFileAndTheSourceUntouched() throws {
        let setup = try Setup(people: 4)
        let (old, new, manager) = (setup.old, setup.new, setup.manager)
        let before = try Data(contentsOf: old)
        manager.batchSize = 1
        let error = #expect(throws: NSError.self) {
            try manager.migrateStore(from: old, type: .sqlite, mapping: Self.mapping(personPolicy: FailingPolicy.self), to: new, type: .sqlite)
        }
        #expect(error?.code == NSEntityMigrationPolicyError && error?.localizedDescription == "no third")
        #expect(Self.storeFiles(new).isEmpty)
        #expect(try Data(contentsOf: old) == before)
    }

    @Test func anUnknownSelectorOrPolicyClassFailsWithAnError() throws {
        let setup = try Setup()
        let (old, new, manager) = (setup.old, setup.new, setup.manager)
        // The default policy answers no `shout:`.
        let unanswered = #expect(throws: NSError.self) {
            try manager.migrateStore(from: old, type: .sqlite, mapping: Self.mapping(personPolicy: NSEntityMigrationPolicy.self), to: new, type: .sqlite)
        }
        #expect(unanswered?.code == NSEntityMigrationPolicyError && unanswered?.localizedDescription.contains("shout:") == true)
        let mapping = Self.mapping()
        mapping.entityMappings[0].entityMigrationPolicyClassName = "MyApp.NoSuchPolicy"
        let unknown = #expect(throws: NSError.self) { try manager.migrateStore(from: old, type: .sqlite, mapping: mapping, to: new, type: .sqlite) }
        #expect(unknown?.code == NSEntityMigrationPolicyError && unknown?.localizedDescription.contains("MyApp.NoSuchPolicy") == true)
        #expect(Self.storeFiles(new).isEmpty)
    }

    @Test func theDestinationMustBeANewFile() throws {
        let setup = try Setup()
        let (folder, old, new, manager) = (setup.folder, setup.old, setup.new, setup.manager)
        try Data("keep".utf8).write(to: new)
        let exists = #expect(throws: NSError.self) { try manager.migrateStore(from: old, type: .sqlite, mapping: Self.mapping(), to: new, type: .sqlite) }
        #expect(exists?.code == NSFileWriteFileExistsError)
        #expect(try Data(contentsOf: new) == Data("keep".utf8))
        let same = #expect(throws: NSError.self) { try manager.migrateStore(from: old, type: .sqlite, mapping: Self.mapping(), to: old, type: .sqlite) }
        #expect(same?.code == NSMigrationError)
        let missing = #expect(throws: NSError.self) {
            try manager.migrateStore(from: folder.url.appendingPathComponent("None.sqlite"), type: .sqlite, mapping: Self.mapping(),
                                     to: folder.url.appendingPathComponent("Other.sqlite"), type: .sqlite)
        }
        #expect(missing?.code == NSMigrationError && missing?.localizedDescription == "Can't add source store")
    }

    /// Models that fit `NotesV1ToV2.xcmappingmodel`.
    static func notesModel(version: Int) -> NSManagedObjectModel {
        let person = M.entity("Person", [M.attribute("name", .stringAttributeType),
                                         M.attribute("bonusPoints", version == 1 ? .integer64AttributeType : .integer16AttributeType)])
        var noteAttributes = [M.attribute("title", .stringAttributeType)]
        if version == 2 { noteAttributes += [M.attribute("ownerName", .stringAttributeType), M.attribute("createdAt", .dateAttributeType)] }
        let note = M.entity("Note", noteAttributes)
        var attachmentAttributes = [M.attribute("data", .binaryDataAttributeType)]
        if version == 2 { attachmentAttributes.append(M.attribute("fileName", .stringAttributeType)) }
        let attachment = M.entity("Attachment", attachmentAttributes)
        M.relate(person, "notes", toMany: true, note, "owner", inverseToMany: false)
        M.relate(note, "attachments", toMany: true, attachment, "note", inverseToMany: false)
        if version == 2 { M.relate(note, "previousOwners", toMany: true, person, "formerNotes", inverseToMany: true) }
        let last = version == 1 ? M.entity("Draft", [M.attribute("title", .stringAttributeType)]) : M.entity("Tag", [M.attribute("label", .stringAttributeType)])
        return M.model([person, note, attachment, last])
    }
}

/// A manager subclass as CoreStore and CoreDataPlus write them: progress through
/// `didChangeValue(forKey:)`, and overrides of the manager's properties with Apple's types.
final class ReportingMigrationManager: NSMigrationManager {
    private(set) var reported: [Float] = []

    override func didChangeValue(forKey key: String) {
        super.didChangeValue(forKey: key)
        if key == "migrationProgress" { reported.append(migrationProgress) }
    }
    override var mappingModel: NSMappingModel { super.mappingModel }
    override var sourceContext: NSManagedObjectContext { super.sourceContext }
    override var destinationContext: NSManagedObjectContext { super.destinationContext }
    override var currentEntityMapping: NSEntityMapping { super.currentEntityMapping }
    override func destinationInstances(forEntityMappingName mappingName: String, sourceInstances: [NSManagedObject]?) -> [NSManagedObject] {
        super.destinationInstances(forEntityMappingName: mappingName, sourceInstances: sourceInstances)
    }
}

extension MigrationManagerTests {
    @Test func aSubclassFollowsProgressAndOverridesThePropertiesWithApplesTypes() throws {
        let setup = try Setup(people: 3)
        let manager = ReportingMigrationManager(sourceModel: Self.sourceModel(), destinationModel: Self.destinationModel())
        try manager.migrateStore(from: setup.old, type: .sqlite, mapping: Self.mapping(), to: setup.new, type: .sqlite)
        #expect(manager.reported.last == 1)
        #expect(manager.reported.count > 2 && manager.reported == manager.reported.sorted())
    }

    @Test func modelsWithTheSameEntitiesAreEqual() {
        #expect(Self.sourceModel() == Self.sourceModel())
        #expect(Self.sourceModel().hash == Self.sourceModel().hash)
        #expect(Self.sourceModel() != Self.destinationModel())
        let versions = [Self.destinationModel(), Self.sourceModel()]
        #expect(versions.firstIndex(of: Self.sourceModel()) == 1)
        #expect(Set([Self.sourceModel(), Self.sourceModel(), Self.destinationModel()]).count == 2)
    }
}
