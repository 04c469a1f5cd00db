import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `allowsExternalBinaryDataStorage` as Apple's store keeps it: a marker byte in the column,
/// large values in files of `.<StoreName>_SUPPORT/_EXTERNAL_DATA/` that follow the transaction.
@Suite("External binary storage")
struct ExternalBinaryStorageTests {
    static func makeModel() -> NSManagedObjectModel {
        let photo = NSEntityDescription()
        photo.name = "Photo"
        let image = attribute("image", .binaryDataAttributeType)
        image.allowsExternalBinaryDataStorage = true
        photo.properties = [attribute("name", .stringAttributeType), image, attribute("thumb", .binaryDataAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [photo]
        return model
    }

    static let large = Data((0..<(SQLiteStore.externalStorageThreshold + 1000)).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    func stack(_ directory: URL? = nil) throws -> TestStack { try TestStack(model: Self.makeModel(), directory: directory) }
    func externalFolder(_ stack: TestStack) -> URL { stack.directory.appendingPathComponent(".Test_SUPPORT/_EXTERNAL_DATA") }
    func files(_ stack: TestStack) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: externalFolder(stack).path)) ?? []).sorted()
    }
    @discardableResult
    func insertPhoto(_ stack: TestStack, _ name: String, _ image: Data?) throws -> NSManagedObject {
        try Self.insert(stack, name, image)
    }
    @discardableResult
    static func insert(_ stack: TestStack, _ name: String, _ image: Data?) throws -> NSManagedObject {
        let photo = stack.insert("Photo", ["name": name])
        photo.setValue(image, forKey: "image")
        photo.setValue(Data([9, 9]), forKey: "thumb")
        try stack.context.save()
        return photo
    }
    func image(_ name: String, in stack: TestStack) throws -> Data? {
        try stack.fetch("Photo") { $0.predicate = NSPredicate(format: "name == %@", name) }.first?.value(forKey: "image") as? Data
    }

    /// A transformable attribute may allow external storage too: its archive is kept as binary
    /// data is (a file when large); opening the store keeps the files its rows name.
    @Test func aTransformableValueIsKeptAsBinaryDataIs() throws {
        let note = NSEntityDescription()
        note.name = "Note"
        let words = attribute("words", .transformableAttributeType)
        words.allowsExternalBinaryDataStorage = true
        note.properties = [attribute("title", .stringAttributeType), words]
        let model = NSManagedObjectModel()
        model.entities = [note]
        let stack = try TestStack(model: model)
        let many = (0..<40_000).map { "word \($0)" }
        stack.insert("Note", ["title": "long", "words": many])
        stack.insert("Note", ["title": "short", "words": ["one"]])
        try stack.context.save()
        let stored = try stack.rows("SELECT ZTITLE, substr(hex(ZWORDS), 1, 2) FROM ZNOTE ORDER BY ZTITLE")
        #expect(stored == [["long", "02"], ["short", "01"]])
        #expect(files(stack).count == 1)
        // Reopened, the file is still there and the values read back.
        let reopened = try stack.reopen()
        #expect(files(stack).count == 1)
        let notes = try reopened.fetch("Note") { $0.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)] }
        #expect(notes.map { ($0.value(forKey: "words") as? [String])?.count } == [40_000, 1])
        // Batch inserts keep them so too.
        _ = try reopened.context.execute(NSBatchInsertRequest(entityName: "Note", objects: [["title": "batch", "words": many]]))
        #expect(files(stack).count == 2)
        let batch = try reopened.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Note")).first { $0.value(forKey: "title") as? String == "batch" }
        #expect((batch?.value(forKey: "words") as? [String])?.last == "word 39999")
    }

    /// The photo `reader` fetches without its values, once pinned to the current generation
    /// (the fetch pins it).
    private func pinnedPhoto(_ reader: NSManagedObjectContext) throws -> NSManagedObject {
        try reader.setQueryGenerationFrom(.current)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Photo")
        request.includesPropertyValues = false
        return try #require(try reader.fetch(request).first)
    }

    /// A context pinned to a query generation reads its generation's values: the file of a value
    /// replaced (or deleted) since stays until the generation is let go.
    @Test func aPinnedContextStillReadsAValueReplacedSince() throws {
        let stack = try stack()
        let original = try insertPhoto(stack, "p", Self.large)
        let reader = stack.newContext()
        let photo = try pinnedPhoto(reader)
        let replacement = Data(repeating: 7, count: Self.large.count)
        original.setValue(replacement, forKey: "image")
        try stack.context.save()
        #expect(files(stack).count == 2)
        #expect(photo.value(forKey: "image") as? Data == Self.large)
        #expect(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Photo")).count == 1)
        // Let go, the old file goes.
        try reader.setQueryGenerationFrom(nil)
        reader.reset()
        #expect(files(stack).count == 1)
        #expect(try image("p", in: stack) == replacement)
    }

    /// The same through two coordinators on the file (an import coordinator beside an app's).
    @Test func aPinnedContextOfAnotherCoordinatorStillReadsAValueReplacedSince() throws {
        let stack = try stack()
        try insertPhoto(stack, "p", Self.large)
        let other = try stack.reopen()
        let reader = other.newContext()
        let photo = try pinnedPhoto(reader)
        let writer = try stack.fetch("Photo")[0]
        writer.setValue(Data(repeating: 9, count: Self.large.count), forKey: "image")
        try stack.context.save()
        #expect(photo.value(forKey: "image") as? Data == Self.large)
    }

    /// Another coordinator opening the file meanwhile removed the files no current row names,
    /// those a pinned snapshot still reads among them: the pinned context's fault then failed.
    @Test func anOpenMeanwhileLeavesThePinnedFiles() throws {
        let stack = try stack()
        let original = try insertPhoto(stack, "p", Self.large)
        let reader = stack.newContext()
        let photo = try pinnedPhoto(reader)
        original.setValue(Data(repeating: 7, count: Self.large.count), forKey: "image")
        try stack.context.save()
        _ = try stack.reopen() // its open cleans up unused files
        #expect(files(stack).count == 2)
        #expect(photo.value(forKey: "image") as? Data == Self.large)
    }

    @Test func aSmallValueStaysInTheRowAfterAppleMarker() throws {
        let stack = try stack()
        try insertPhoto(stack, "small", Data([0xAB, 0xCD]))
        #expect(try stack.rows("SELECT hex(ZIMAGE), hex(ZTHUMB) FROM ZPHOTO") == [["01ABCD", "0909"]])
        #expect(files(stack).isEmpty)
        #expect(try image("small", in: stack.reopen()) == Data([0xAB, 0xCD]))
        // An empty value too keeps its marker.
        try insertPhoto(stack, "empty", Data())
        #expect(try stack.rows("SELECT hex(ZIMAGE) FROM ZPHOTO WHERE ZNAME = 'empty'") == [["01"]])
        #expect(try image("empty", in: stack.reopen()) == Data())
    }

    @Test func aLargeValueGoesToAFileTheRowNames() throws {
        let stack = try stack()
        try insertPhoto(stack, "large", Self.large)
        let stored = try #require(try stack.rows("SELECT hex(ZIMAGE) FROM ZPHOTO").first?.first)
        let names = files(stack)
        #expect(names.count == 1)
        let name = try #require(names.first)
        #expect(UUID(uuidString: name) != nil)
        #expect(stored == "02" + Data(name.utf8).map { String(format: "%02X", $0) }.joined() + "00")
        #expect(try Data(contentsOf: externalFolder(stack).appendingPathComponent(name)) == Self.large)
        let other = try stack.reopen()
        #expect(try image("large", in: other) == Self.large)
        #expect(try other.fetch("Photo") { $0.predicate = NSPredicate(format: "image != nil") }.count == 1)
    }

    @Test func columnsAppleWroteAreRead() throws {
        let stack = try stack()
        let name = "6A1F9C4E-2B8D-4E3A-9C1B-7D2E5F8A0B3C"
        try FileManager.default.createDirectory(at: externalFolder(stack), withIntermediateDirectories: true)
        try Data("from a file".utf8).write(to: externalFolder(stack).appendingPathComponent(name))
        let hexName = Data(name.utf8).map { String(format: "%02X", $0) }.joined()
        try RawSQLite.execute(stack.url.path, """
            INSERT INTO ZPHOTO (Z_PK, Z_ENT, Z_OPT, ZNAME, ZIMAGE) VALUES
                (101, 1, 1, 'inline', X'01414243'), (102, 1, 1, 'file', X'02\(hexName)00'), (103, 1, 1, 'bare', X'414243')
            """)
        let other = try stack.reopen()
        #expect(try image("inline", in: other) == Data("ABC".utf8))
        #expect(try image("file", in: other) == Data("from a file".utf8))
        // Written before this package wrote Apple's marker: the bytes as they are.
        #expect(try image("bare", in: other) == Data("ABC".utf8))
    }

    @Test func replacedAndDeletedValuesLoseTheirFilesOnceSaved() throws {
        let stack = try stack()
        let photo = try insertPhoto(stack, "p", Self.large)
        let first = files(stack)
        var bigger = Self.large
        bigger.append(1)
        photo.setValue(bigger, forKey: "image")
        try stack.context.save()
        let second = files(stack)
        #expect(second.count == 1 && second != first)
        #expect(try image("p", in: stack.reopen()) == bigger)
        photo.setValue(Data([1]), forKey: "image")
        try stack.context.save()
        #expect(files(stack).isEmpty)
        photo.setValue(Self.large, forKey: "image")
        try stack.context.save()
        #expect(files(stack).count == 1)
        stack.context.delete(photo)
        try stack.context.save()
        #expect(files(stack).isEmpty)
    }

    @Test func aSaveThatFailsLeavesNoFile() throws {
        let stack = try stack()
        try RawSQLite.execute(stack.url.path, """
            CREATE TRIGGER refuse BEFORE INSERT ON ZPHOTO WHEN NEW.ZNAME = 'refused' BEGIN SELECT RAISE(ABORT, 'refused'); END
            """)
        let photo = stack.insert("Photo", ["name": "ok"])
        photo.setValue(Self.large, forKey: "image")
        stack.insert("Photo", ["name": "refused"]).setValue(Self.large, forKey: "image")
        #expect(throws: NSError.self) { try stack.context.save() }
        #expect(files(stack).isEmpty)
        #expect(try stack.rows("SELECT count(*) FROM ZPHOTO") == [["0"]])
    }

    @Test func filesNoRowNamesGoWhenTheStoreOpens() throws {
        let folder = try TemporaryFolder()
        do {
            let stack = try stack(folder.url)
            try insertPhoto(stack, "kept", Self.large)
        }
        let stack = try stack(folder.url)
        let kept = files(stack)
        // A process killed after writing a file and before its commit (or after a commit and
        // before removing a replaced value's file) leaves a file no row names.
        try Data([1, 2, 3]).write(to: externalFolder(stack).appendingPathComponent("F00DF00D-0000-0000-0000-000000000000"))
        let reopened = try stack.reopen()
        #expect(files(reopened) == kept)
        #expect(try image("kept", in: reopened) == Self.large)
    }

    @Test func aProcessKilledBeforeItsCommitLeavesNoFileBehind() async throws {
        let folder = try TemporaryFolder()
        await #expect(processExitsWith: .exitCode(3)) { [path = folder.path as String] in
            let stack = try TestStack(model: Self.makeModel(), directory: URL(fileURLWithPath: path))
            try Self.insert(stack, "committed", Self.large)
            let store = stack.coordinator.persistentStores[0] as! SQLiteStore
            // Killed inside the next save's transaction, its file written and its row not committed.
            store.beforeCommit = { exit(3) }
            var bigger = Self.large
            bigger.append(2)
            try Self.insert(stack, "lost", bigger)
        }
        let stack = try stack(folder.url)
        #expect(files(stack).count == 1)
        #expect(try stack.rows("SELECT ZNAME FROM ZPHOTO") == [["committed"]])
        #expect(try image("committed", in: stack) == Self.large)
    }

    @Test("A batch insert's upsert removes the file of the value it replaced, as a save does")
    func anUpsertRemovesTheReplacedFile() throws {
        let model = Self.makeModel()
        model.entitiesByName["Photo"]!.uniquenessConstraints = [["name"]]
        let stack = try TestStack(model: model)
        var other = Self.large
        other[0] ^= 0xFF
        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Photo", objects: [["name": "a", "image": Self.large]]))
        #expect(files(stack).count == 1)
        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Photo", objects: [["name": "a", "image": other]]))
        #expect(files(stack).count == 1, "the first value's file is gone")
        let photo = try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Photo"))
        #expect(photo.count == 1 && photo.first?.value(forKey: "image") as? Data == other)
        // Two rows of one batch with one key: the first's file, replaced by the second, goes too.
        var third = Self.large
        third[1] ^= 0xFF
        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Photo", objects: [["name": "b", "image": Self.large], ["name": "b", "image": third]]))
        #expect(files(stack).count == 2)
        _ = try stack.context.execute(NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Photo")))
        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Photo", objects: [["name": "a", "image": other]]))
        // A small value in place of a file: the file goes too.
        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Photo", objects: [["name": "a", "image": Data([1, 2, 3])]]))
        #expect(files(stack).isEmpty)
    }

    @Test func aMissingFileIsAnErrorNotEmptyData() throws {
        let stack = try stack()
        try insertPhoto(stack, "gone", Self.large)
        for name in files(stack) { try FileManager.default.removeItem(at: externalFolder(stack).appendingPathComponent(name)) }
        let other = try stack.reopen()
        let error = #expect(throws: NSError.self) { _ = try image("gone", in: other) }
        #expect(error?.code == NSFileReadNoSuchFileError)
        #expect(error?.localizedDescription.contains("external data file") == true)
    }

    @Test func aNameThatIsNotAPlainFileNameIsRefused() throws {
        let stack = try stack()
        let hexName = Data("../../Test.sqlite".utf8).map { String(format: "%02X", $0) }.joined()
        try RawSQLite.execute(stack.url.path, "INSERT INTO ZPHOTO (Z_PK, Z_ENT, Z_OPT, ZNAME, ZIMAGE) VALUES (7, 1, 1, 'evil', X'02\(hexName)00')")
        let error = #expect(throws: NSError.self) { _ = try image("evil", in: stack.reopen()) }
        #expect(error?.localizedDescription.contains("not a plain file name") == true)
    }

    @Test func destroyAndReplaceCarryTheSupportFolder() throws {
        let source = try stack()
        try insertPhoto(source, "large", Self.large)
        let target = try TemporaryFolder()
        let destination = target.url.appendingPathComponent("Copy.sqlite")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: source.model)
        try coordinator.replacePersistentStore(at: destination, withPersistentStoreFrom: source.url, ofType: NSSQLiteStoreType)
        let copied = target.url.appendingPathComponent(".Copy_SUPPORT/_EXTERNAL_DATA")
        #expect(try FileManager.default.contentsOfDirectory(atPath: copied.path) == files(source))
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: destination, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        #expect(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Photo")).first?.value(forKey: "image") as? Data == Self.large)
        try coordinator.destroyPersistentStore(at: destination, ofType: NSSQLiteStoreType)
        #expect(!FileManager.default.fileExists(atPath: target.url.appendingPathComponent(".Copy_SUPPORT").path))
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }
}
