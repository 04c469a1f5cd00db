import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Fails on the first attachment, after the people and notes are made.
final class FailingNotesPolicy: NSEntityMigrationPolicy {
    override func perform(_ selector: String, arguments: [Any?]) throws -> Any? {
        try NotesPolicy().perform(selector, arguments: arguments)
    }

    override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager) throws {
        guard mapping.name != "AttachmentToAttachment" else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSEntityMigrationPolicyError, userInfo: [NSLocalizedDescriptionKey: "no attachments today"])
        }
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    }
}

/// Issue 22: a store opened with automatic migration is migrated through the mapping model the
/// app ships (a heavyweight migration with its policies, into a new file then moved into the store), and
/// progressive migration across three versions, as apps write it.
@Suite("Migration: mapping models at store open, and across versions")
struct HeavyweightMigrationTests {
    /// `Notes.xcdatamodeld` in Xcode's format, its versions fitting `NotesV1ToV2.xcmappingmodel`:
    /// - `Notes`: Person (name, bonusPoints Integer 64, notes), Note (title, owner, attachments),
    ///   Attachment (data, stored externally when large; note), Draft (title);
    /// - `Notes 2`: bonusPoints an Integer 16; Note gains ownerName, createdAt and previousOwners
    ///   (many-to-many with Person.formerNotes); Attachment gains fileName; Tag (label) replaces Draft;
    /// - `Notes 3`: Note gains pinned (Boolean, non-optional, default NO), Tag gains color.
    ///
    /// The mapping model is copied beside the bundle with its policy classes replaced by `policy`
    /// (for Person and Attachment, the mappings that call the policy's selectors).
    static func writeNotes(in folder: URL, policy: String = String(reflecting: NotesPolicy.self)) throws -> URL {
        func attribute(_ name: String, _ type: String, _ extra: String = "") -> String {
            #"<attribute name="\#(name)" optional="YES" attributeType="\#(type)"\#(extra)/>"#
        }
        func relationship(_ name: String, _ destination: String, inverse: String, toMany: Bool) -> String {
            #"<relationship name="\#(name)" optional="YES"\#(toMany ? #" toMany="YES""# : #" maxCount="1""#) deletionRule="Nullify" destinationEntity="\#(destination)" inverseName="\#(inverse)" inverseEntity="\#(destination)"/>"#
        }
        func version(_ number: Int) -> String {
            let later = number >= 2
            var person = [attribute("name", "String"), attribute("bonusPoints", later ? "Integer 16" : "Integer 64", #" usesScalarValueType="NO""#),
                          relationship("notes", "Note", inverse: "owner", toMany: true)]
            if later { person.append(relationship("formerNotes", "Note", inverse: "previousOwners", toMany: true)) }
            var note = [attribute("title", "String"), relationship("owner", "Person", inverse: "notes", toMany: false),
                        relationship("attachments", "Attachment", inverse: "note", toMany: true)]
            if later {
                note += [attribute("ownerName", "String"), attribute("createdAt", "Date"),
                         relationship("previousOwners", "Person", inverse: "formerNotes", toMany: true)]
            }
            if number == 3 { note.append(#"<attribute name="pinned" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>"#) }
            var attachment = [attribute("data", "Binary", #" allowsExternalBinaryDataStorage="YES""#),
                              relationship("note", "Note", inverse: "attachments", toMany: false)]
            if later { attachment.append(attribute("fileName", "String")) }
            let last = later ? XcodeModelFiles.entity("Tag", [attribute("label", "String")] + (number == 3 ? [attribute("color", "String")] : []))
                             : XcodeModelFiles.entity("Draft", [attribute("title", "String")])
            return XcodeModelFiles.entity("Person", person) + XcodeModelFiles.entity("Note", note)
                + XcodeModelFiles.entity("Attachment", attachment) + last
        }
        let bundle = try XcodeModelFiles.writeBundle("Notes", in: folder, versions: [("Notes", version(1)), ("Notes 2", version(2)), ("Notes 3", version(3))],
                                                     current: "Notes 2")
        let mapping = folder.appendingPathComponent("NotesV1ToV2.xcmappingmodel")
        try FileManager.default.createDirectory(at: mapping, withIntermediateDirectories: true)
        var xml = try String(contentsOf: NSMappingModelFilesTests.fixture.appendingPathComponent("xcmapping.xml"), encoding: .utf8)
        xml = xml.replacingOccurrences(of: "MyApp.AttachmentPolicy", with: policy)
        let person = #"<object type="XDDEVENTITYMAPPING" id="z103">"#
        xml = xml.replacingOccurrences(of: person, with: person + #"<attribute name="migrationpolicyclassname" type="string">\#(policy)</attribute>"#)
        try Data(xml.utf8).write(to: mapping.appendingPathComponent("xcmapping.xml"))
        return bundle
    }

    static func model(_ bundle: URL, _ version: String) throws -> NSManagedObjectModel {
        try #require(NSManagedObjectModel(contentsOf: bundle.appendingPathComponent("\(version).xcdatamodel")))
    }

    /// A large attachment's size: stored in a file of its own.
    static let largeData = Data(repeating: 7, count: 200 * 1024)

    /// A version-1 store of `people` people, each with a note with an attachment (the first one
    /// large, stored externally; the others three bytes), and a draft; a SQLite store unless `type`
    /// says otherwise, added with `options`.
    static func writeVersion1Store(at url: URL, bundle: URL, people: Int = 1, type: String = NSSQLiteStoreType,
                                   options: [AnyHashable: Any]? = nil) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: try model(bundle, "Notes"))
        let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: options)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        for index in 0..<people {
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            person.setValue(index == 0 ? "Ada" : "Person \(index)", forKey: "name")
            person.setValue(NSNumber(value: 70_000 + index), forKey: "bonusPoints")
            let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
            note.setValue("Note \(index)", forKey: "title")
            note.setValue(person, forKey: "owner")
            let attachment = NSEntityDescription.insertNewObject(forEntityName: "Attachment", into: context)
            attachment.setValue(index == 0 ? largeData : Data([1, 2, 3]), forKey: "data")
            attachment.setValue(note, forKey: "note")
            if index % 500 == 499 { try context.save() }
        }
        NSEntityDescription.insertNewObject(forEntityName: "Draft", into: context).setValue("gone", forKey: "title")
        try context.save()
        try coordinator.remove(store)
    }

    /// The files beside the store (the store file, its support folder, a staging folder), by name;
    /// not its `-wal` and `-shm`, which a store's read-only connections leave, as Apple's do.
    static func files(besides url: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
            .filter { ($0.hasPrefix(url.lastPathComponent) || $0.hasPrefix(".")) && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }.sorted()
    }

    static func externalFiles(of url: URL) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: SQLiteStore.supportFolder(forStoreAt: url).appendingPathComponent("_EXTERNAL_DATA").path)) ?? []
    }

    /// Opens the store at `url` (of `type`) with `model` and `options`, and hands `body` a context on it.
    static func open<T>(_ url: URL, _ model: NSManagedObjectModel, options: [AnyHashable: Any]?, type: String = NSSQLiteStoreType,
                        _ body: (NSManagedObjectContext) throws -> T) throws -> T {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: options)
        defer { try? coordinator.remove(store) }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return try body(context)
    }

    static func objects(_ entity: String, in context: NSManagedObjectContext, by key: String) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)]
        return try context.fetch(request)
    }

    /// What the mapping model and its policy make of Ada's note: checked on a version-2 (or later) store.
    static func expectMigratedThroughTheMapping(_ context: NSManagedObjectContext) throws {
        let note = try #require(try objects("Note", in: context, by: "title").first)
        #expect(note.value(forKey: "ownerName") as? String == "Ada")
        let owner = try #require(note.value(forKey: "owner") as? NSManagedObject)
        // The policy's `toInt16WithValue:` clamps; an inferred mapping would have kept 70,000.
        #expect((owner.value(forKey: "bonusPoints") as? NSNumber)?.intValue == Int(Int16.max))
        #expect((note.value(forKey: "previousOwners") as? Set<NSManagedObject>)?.count == 1)
        let attachment = try #require((note.value(forKey: "attachments") as? Set<NSManagedObject>)?.first)
        #expect(attachment.value(forKey: "fileName") as? String == "file-\(largeData.count).bin")
        #expect(attachment.value(forKey: "data") as? Data == largeData)
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Tag")) == 0)
    }

    @Test(arguments: [false, true])
    func aMappingModelTheAppShipsMigratesTheStoreAtOpenWithItsPolicies(alsoInferring: Bool) throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeNotes(in: folder.url)
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        try Self.writeVersion1Store(at: url, bundle: bundle)
        let oldExternal = Self.externalFiles(of: url)
        #expect(oldExternal.count == 1)

        // Apple's order: the mapping model found for the two versions comes before inference.
        var options: [AnyHashable: Any] = [NSMigratePersistentStoresAutomaticallyOption: true]
        if alsoInferring { options[NSInferMappingModelAutomaticallyOption] = true }
        let progress = Progress(totalUnitCount: 1)
        progress.becomeCurrent(withPendingUnitCount: 1)
        try Self.open(url, try Self.model(bundle, "Notes 2"), options: options) { try Self.expectMigratedThroughTheMapping($0) }
        progress.resignCurrent()
        #expect(progress.fractionCompleted == 1)

        // One new external file in the store's support folder, the old one gone with the old
        // file; nothing else left beside the store.
        let newExternal = Self.externalFiles(of: url)
        #expect(newExternal.count == 1 && newExternal != oldExternal)
        #expect(try Self.files(besides: url) == [".Notes_SUPPORT", "Notes.sqlite"])
        // The new file is a store of version 2, which opens without the options.
        try Self.open(url, try Self.model(bundle, "Notes 2"), options: nil) { try Self.expectMigratedThroughTheMapping($0) }
        withExtendedLifetime(folder) {}
    }

    @Test func withoutAMappingModelOrInferenceTheOpenFailsWith134140AndTheFileIsUntouched() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeNotes(in: folder.url)
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        try Self.writeVersion1Store(at: url, bundle: bundle)
        let before = try Data(contentsOf: url)
        // No mapping model maps version 1 to version 3.
        let error = #expect(throws: NSError.self) {
            try Self.open(url, try Self.model(bundle, "Notes 3"), options: [NSMigratePersistentStoresAutomaticallyOption: true]) { _ in }
        }
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSMigrationMissingMappingModelError)
        #expect(error?.userInfo["reason"] as? String == "Can't find mapping model for migration")
        #expect(try Data(contentsOf: url) == before)
        #expect(try Self.files(besides: url) == [".Notes_SUPPORT", "Notes.sqlite"])
        // With inference allowed, version 1 goes to version 3 in place, without the policies.
        try Self.open(url, try Self.model(bundle, "Notes 3"),
                      options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true]) { context in
            let attachment = try #require(try Self.objects("Attachment", in: context, by: "fileName").first)
            #expect(attachment.value(forKey: "fileName") == nil && attachment.value(forKey: "data") as? Data == Self.largeData)
        }
        withExtendedLifetime(folder) {}
    }

    @Test func aFailingPolicyLeavesTheStoreAsItWasAndNothingBesideIt() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeNotes(in: folder.url, policy: String(reflecting: FailingNotesPolicy.self))
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        try Self.writeVersion1Store(at: url, bundle: bundle, people: 3)
        let before = try Data(contentsOf: url), external = Self.externalFiles(of: url)
        let error = #expect(throws: NSError.self) {
            try Self.open(url, try Self.model(bundle, "Notes 2"), options: [NSMigratePersistentStoresAutomaticallyOption: true]) { _ in }
        }
        #expect(error?.code == NSEntityMigrationPolicyError && error?.localizedDescription == "no attachments today")
        #expect(try Data(contentsOf: url) == before)
        #expect(Self.externalFiles(of: url) == external)
        #expect(try Self.files(besides: url) == [".Notes_SUPPORT", "Notes.sqlite"])
        let people = try Self.open(url, try Self.model(bundle, "Notes"), options: nil) { try Self.objects("Person", in: $0, by: "name").count }
        #expect(people == 3)
        withExtendedLifetime(folder) {}
    }

    @Test func theStoreKeepsItsIdentifierAndItsOwnMetadata() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeNotes(in: folder.url)
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        try Self.writeVersion1Store(at: url, bundle: bundle)
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url, options: nil)
        let identifier = try #require(metadata[NSStoreUUIDKey] as? String)
        metadata["importedFrom"] = "legacy"
        try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSSQLiteStoreType, at: url, options: nil)
        // A table of the app's own, not Core Data's (not named Z…), stays as it was.
        try RawSQLite.execute(url.path, "CREATE TABLE app_log (line TEXT); INSERT INTO app_log VALUES ('kept')")

        try Self.open(url, try Self.model(bundle, "Notes 2"), options: [NSMigratePersistentStoresAutomaticallyOption: true]) { context in
            let store = try #require(context.persistentStoreCoordinator?.persistentStores.first)
            #expect(store.identifier == identifier)
            #expect(store.metadata["importedFrom"] as? String == "legacy")
        }
        #expect(try RawSQLite.query(url.path, "SELECT line FROM app_log") == [["kept"]])

        // Core Data's schema is the one a new store of version 2 has: its tables, columns and indexes.
        let fresh = folder.url.appendingPathComponent("Fresh.sqlite")
        try Self.open(fresh, try Self.model(bundle, "Notes 2"), options: nil) { _ in }
        let schema = "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name <> 'app_log' ORDER BY type, name"
        #expect(try RawSQLite.query(url.path, schema) == RawSQLite.query(fresh.path, schema))
        withExtendedLifetime(folder) {}
    }

    /// A store that tracks persistent history keeps it through a heavyweight migration (Apple's
    /// `A…` tables and their `Z_PRIMARYKEY` rows stay), and goes on recording after it.
    @Test func theStoresHistoryStaysAndGoesOn() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeNotes(in: folder.url)
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        try Self.open(url, try Self.model(bundle, "Notes"), options: [NSPersistentHistoryTrackingKey: true]) { context in
            for title in ["a", "b"] {
                NSEntityDescription.insertNewObject(forEntityName: "Draft", into: context).setValue(title, forKey: "title")
                try context.save()
            }
        }
        let options: [AnyHashable: Any] = [NSMigratePersistentStoresAutomaticallyOption: true, NSPersistentHistoryTrackingKey: true]
        let transactions = try Self.open(url, try Self.model(bundle, "Notes 2"), options: options) { context -> [Int64] in
            NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context).setValue("new", forKey: "label")
            try context.save()
            let result = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)) as? NSPersistentHistoryResult
            return (result?.result as? [NSPersistentHistoryTransaction] ?? []).map(\.transactionNumber)
        }
        // The two saves before the migration, none by the migration itself, the one after it.
        #expect(transactions == [1, 2, 3])
        #expect(try RawSQLite.query(url.path, "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT").first == ["16001", "3"])
        withExtendedLifetime(folder) {}
    }

    @Test func anAppsOwnTablesStayWhateverTheirNames() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeNotes(in: folder.url)
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        try Self.writeVersion1Store(at: url, bundle: bundle)
        // Tables the app keeps in the store file, named like Core Data's (case aside).
        try RawSQLite.execute(url.path, "CREATE TABLE ZIPCODES (code TEXT); INSERT INTO ZIPCODES VALUES ('75001'); CREATE TABLE zones (name TEXT); INSERT INTO zones VALUES ('a')")
        let notes = try Self.open(url, try Self.model(bundle, "Notes 2"), options: [NSMigratePersistentStoresAutomaticallyOption: true]) { context in
            try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Note"))
        }
        #expect(notes > 0)
        #expect(try RawSQLite.query(url.path, "SELECT code FROM ZIPCODES") == [["75001"]])
        #expect(try RawSQLite.query(url.path, "SELECT name FROM zones") == [["a"]])
        // Core Data's own tables of the old version are gone (Draft became Tag).
        #expect(try RawSQLite.query(url.path, "SELECT name FROM sqlite_master WHERE name = 'ZDRAFT'").isEmpty)
        withExtendedLifetime(folder) {}
    }

    @Test func whatAKilledMigrationLeftIsRemovedByTheNextOpen() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeNotes(in: folder.url)
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        try Self.writeVersion1Store(at: url, bundle: bundle)
        // A staging folder with a half-written store, and an external data file no row names (one
        // moved in before the kill).
        let staging = SQLiteHeavyweightMigration.stagingFolder(forStoreAt: url)
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        try Data("half".utf8).write(to: staging.appendingPathComponent("Notes.sqlite"))
        let stray = try #require(SQLiteStore.externalDataFolder(forStoreAt: url)).appendingPathComponent(UUID().uuidString)
        try Data("stray".utf8).write(to: stray)

        // A refused open changes nothing; an open that succeeds removes both.
        let refused = #expect(throws: NSError.self) { try Self.open(url, try Self.model(bundle, "Notes 2"), options: nil) { _ in } }
        #expect(refused?.code == NSPersistentStoreIncompatibleVersionHashError)
        #expect(FileManager.default.fileExists(atPath: staging.path) && FileManager.default.fileExists(atPath: stray.path))
        try Self.open(url, try Self.model(bundle, "Notes"), options: nil) { _ in }
        #expect(try Self.files(besides: url) == [".Notes_SUPPORT", "Notes.sqlite"])
        #expect(Self.externalFiles(of: url).count == 1)
        withExtendedLifetime(folder) {}
    }

    @Test func twoCoordinatorsOpeningTheStoreAtOnceMigrateItOnce() async throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeNotes(in: folder.url)
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        try Self.writeVersion1Store(at: url, bundle: bundle, people: 200)
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try Self.open(url, try Self.model(bundle, "Notes 2"), options: [NSMigratePersistentStoresAutomaticallyOption: true]) {
                        try Self.objects("Note", in: $0, by: "title").count
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts == [200, 200])
        try Self.open(url, try Self.model(bundle, "Notes 2"), options: nil) { try Self.expectMigratedThroughTheMapping($0) }
        withExtendedLifetime(folder) {}
    }

    /// An inferred mapping run by a manager (as the progressive loop below runs one): an optional
    /// attribute renamed and made non-optional gets the source's value, or the default where it had none.
    @Test func aManagerRunsAnInferredMappingWithDefaultsForAttributesMadeNonOptional() throws {
        let folder = try TemporaryFolder()
        _ = try MigrationKillTests.writeBundle(in: folder.url)
        let (v1, v2) = (try MigrationKillTests.model(1, in: folder.path), try MigrationKillTests.model(2, in: folder.path))
        let old = folder.url.appendingPathComponent("Old.sqlite"), new = folder.url.appendingPathComponent("New.sqlite")
        try Self.open(old, v1, options: nil) { context in
            for n in [5, nil, 7] as [Int?] {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue(n.map { NSNumber(value: $0) }, forKey: "n")
            }
            try context.save()
        }
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
        try NSMigrationManager(sourceModel: v1, destinationModel: v2).migrateStore(from: old, type: .sqlite, mapping: mapping, to: new, type: .sqlite)
        let counts = try Self.open(new, v2, options: nil) { try Self.objects("Item", in: $0, by: "count").map { $0.value(forKey: "count") as? Int } }
        #expect(counts == [0, 5, 7])
        withExtendedLifetime(folder) {}
    }

    /// The loop apps write for progressive migration (one step per model version, each through the
    /// mapping model the app ships or else the inferred one, each into a new file that then
    /// replaces the store), from version 1 to version 3.
    @Test func progressiveMigrationAcrossThreeVersionsThroughAMappingModelAndAPolicy() throws {
        let folder = try TemporaryFolder()
        let bundle = try Self.writeNotes(in: folder.url)
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        try Self.writeVersion1Store(at: url, bundle: bundle, people: 3)
        let versions = try ["Notes", "Notes 2", "Notes 3"].map { try Self.model(bundle, $0) }

        var steps: [String] = []
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: versions[2])
        while true {
            let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url, options: nil)
            let index = try #require(versions.firstIndex { $0.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) })
            guard index < versions.count - 1 else { break }
            let (source, destination) = (versions[index], versions[index + 1])
            let found = NSMappingModel(from: nil, forSourceModel: source, destinationModel: destination)
            steps.append(found == nil ? "inferred" : "mapping model")
            let mapping = try found ?? NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
            let next = folder.url.appendingPathComponent("Notes-step\(index + 1).sqlite")
            let manager = NSMigrationManager(sourceModel: source, destinationModel: destination)
            try manager.migrateStore(from: url, type: .sqlite, mapping: mapping, to: next, type: .sqlite)
            try coordinator.replacePersistentStore(at: url, withPersistentStoreFrom: next, type: .sqlite)
            try coordinator.destroyPersistentStore(at: next, type: .sqlite)
        }
        #expect(steps == ["mapping model", "inferred"])
        try Self.open(url, versions[2], options: nil) { context in
            try Self.expectMigratedThroughTheMapping(context)
            let notes = try Self.objects("Note", in: context, by: "title")
            #expect(notes.count == 3 && notes.allSatisfy { $0.value(forKey: "pinned") as? Bool == false })
            #expect(notes.map { ($0.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String } == ["Ada", "Person 1", "Person 2"])
        }
        #expect(try Self.files(besides: url) == [".Notes_SUPPORT", "Notes.sqlite"])
        #expect(Self.externalFiles(of: url).count == 1)
        withExtendedLifetime(folder) {}
    }
}
