import CSQLite
import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Opening a SQLite store: new files made once however many open them at the same moment,
/// paths that are not files refused, and refused files left exactly as they were.
@Suite("Opening SQLite stores")
struct StoreOpeningTests {
    private func addStore(_ model: NSManagedObjectModel, at url: URL, options: [AnyHashable: Any]? = nil) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        return coordinator
    }

    private func openError(_ model: NSManagedObjectModel = TestModel.make(), at url: URL, options: [AnyHashable: Any]? = nil) -> NSError? {
        do {
            _ = try addStore(model, at: url, options: options)
            return nil
        } catch {
            return error as NSError
        }
    }

    // MARK: A new store opened by several at once

    /// Several coordinators (each on its own thread) add the same new file at the same moment:
    /// one makes the store, the others find it made inside their write transaction and open it.
    @Test func coordinatorsOpeningTheSameNewStoreAtOnceAllSucceed() throws {
        let folder = try TemporaryFolder("coredata-opening")
        let model = TestModel.make()
        for round in 0..<20 {
            let url = folder.url.appendingPathComponent("Race\(round).sqlite")
            let opened = LockedResults()
            let openers = 8
            let barrier = Barrier(openers)
            let threads = (0..<openers).map { _ in
                onNewThread("opener") {
                    barrier.arriveAndWait()
                    do {
                        let coordinator = try addStore(model, at: url)
                        opened.append(.success(coordinator.persistentStores[0].identifier ?? ""))
                    } catch {
                        opened.append(.failure(error as NSError))
                    }
                }
            }
            for thread in threads { #expect(finished(thread)) }
            let results = opened.all
            let identifiers = Set(results.compactMap { try? $0.get() })
            let errors: [NSError] = results.compactMap { if case .failure(let error) = $0 { error } else { nil } }
            #expect(errors.isEmpty, "round \(round): \(errors.map(\.localizedDescription))")
            #expect(identifiers.count == 1, "one store, one UUID: \(identifiers)")
            #expect(try RawSQLite.query(url.path, "SELECT count(*) FROM Z_METADATA") == [["1"]])
            #expect(try RawSQLite.query(url.path, "SELECT count(*) FROM Z_PRIMARYKEY") == [["\(model.entities.count)"]])
        }
    }

    /// Two processes add the same new files at the same moment (each starts at an agreed time
    /// and opens the files in the same order), as two apps sharing a store would.
    @Test func processesOpeningTheSameNewStoresAtOnceAllSucceed() async throws {
        let folder = try TemporaryFolder("coredata-opening")
        let path: String = folder.path
        let startTime = Date().timeIntervalSince1970 + 2
        async let first = #expect(processExitsWith: .success) { [path = path as String, startTime = startTime as TimeInterval] in
            try! StoreOpeningTests.openNewStoresAt(startTime, in: path)
        }
        async let second = #expect(processExitsWith: .success) { [path = path as String, startTime = startTime as TimeInterval] in
            try! StoreOpeningTests.openNewStoresAt(startTime, in: path)
        }
        _ = await (first, second)
        let identifiers = try (0..<20).map { try RawSQLite.query(folder.url.appendingPathComponent("Shared\($0).sqlite").path, "SELECT Z_UUID FROM Z_METADATA") }
        #expect(identifiers.allSatisfy { $0.count == 1 })
        withExtendedLifetime(folder) {}
    }

    /// Waits until `time`, then adds twenty new stores in `folder`, one after the other.
    static func openNewStoresAt(_ time: TimeInterval, in folder: String) throws {
        Thread.sleep(forTimeInterval: max(0, time - Date().timeIntervalSince1970))
        let model = TestModel.make()
        for index in 0..<20 {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil,
                                               at: URL(fileURLWithPath: folder).appendingPathComponent("Shared\(index).sqlite"), options: nil)
        }
    }

    // MARK: Paths that are not store files

    @Test func aDirectoryIsRefusedWithAnError() throws {
        let folder = try TemporaryFolder("coredata-opening")
        let directory = folder.url.appendingPathComponent("Store.sqlite")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let error = try #require(openError(at: directory))
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == NSFileReadUnknownError)
        #expect(error.userInfo[NSFilePathErrorKey] as? String == directory.path)
        #expect(error.localizedDescription.contains("directory"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(throws: NSError.self) {
            try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: directory)
        }
    }

    /// A FIFO would block SQLite forever (reading its header waits for a writer).
    @Test func aFIFOIsRefusedAtOnce() throws {
        let folder = try TemporaryFolder("coredata-opening")
        let fifo = folder.url.appendingPathComponent("Store.sqlite")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let outcome = Locked<NSError?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            outcome.value = openError(at: fifo)
            done.signal()
        }
        guard done.wait(timeout: .now() + 20) == .success else {
            Issue.record("opening a FIFO as a store did not return")
            return
        }
        let error = try #require(outcome.value)
        #expect(error.code == NSFileReadUnknownError)
        #expect(error.localizedDescription.contains("FIFO"))
    }

    @Test func aLinkToAStoreFileOpensTheStore() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "linked"])
        try stack.context.save()
        let link = stack.directory.appendingPathComponent("Link.sqlite")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: stack.url)
        let coordinator = try addStore(stack.model, at: link)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let cars = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
        #expect(cars.map { $0.value(forKey: "name") as? String } == ["linked"])
    }

    // MARK: A refused file is left exactly as it was

    /// The bytes of the file and which of its companion files exist.
    private struct FileState: Equatable {
        var bytes: Data
        var companions: [String]

        init(_ url: URL) throws {
            bytes = try Data(contentsOf: url)
            companions = ["-wal", "-shm", "-journal"].filter { FileManager.default.fileExists(atPath: url.path + $0) }
        }
    }

    /// A store of `model` in rollback-journal mode (so that a switch to WAL would show in its
    /// header), closed.
    private func rollbackModeStore(_ model: NSManagedObjectModel, at url: URL) throws {
        let options = [NSSQLitePragmasOption: ["journal_mode": "DELETE"]]
        let coordinator = try addStore(model, at: url, options: options)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
        car.setValue("kept", forKey: "name")
        try context.save()
        try coordinator.remove(coordinator.persistentStores[0])
    }

    @Test("A refused file is byte for byte as it was, with no -wal or -shm left", arguments: [
        "a SQLite database that is not a Core Data store", "a store of another model", "a store whose metadata is corrupt",
        "a text file", "an empty file opened read-only", "a store of another model opened read-only",
    ])
    func refusedFilesAreLeftUntouched(kind: String) throws {
        let folder = try TemporaryFolder("coredata-opening")
        let url = folder.url.appendingPathComponent("Refused.sqlite")
        var options: [AnyHashable: Any]?
        let expectedCode: Int
        let otherModel = TestModel.make()
        let color = NSAttributeDescription()
        color.name = "color"
        color.attributeType = .stringAttributeType
        otherModel.entitiesByName["Car"]!.properties += [color]
        switch kind {
        case "a SQLite database that is not a Core Data store":
            try RawSQLite.execute(url.path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'keep me')")
            expectedCode = NSPersistentStoreIncompatibleSchemaError
        case "a store of another model", "a store of another model opened read-only":
            try rollbackModeStore(otherModel, at: url)
            if kind.hasSuffix("read-only") { options = [NSReadOnlyPersistentStoreOption: true] }
            expectedCode = NSPersistentStoreIncompatibleVersionHashError
        case "a store whose metadata is corrupt":
            try rollbackModeStore(TestModel.make(), at: url)
            try RawSQLite.execute(url.path, "UPDATE Z_METADATA SET Z_PLIST = X'0102030405'")
            expectedCode = NSFileReadCorruptFileError
        case "a text file":
            try Data("not a database\n".utf8).write(to: url)
            expectedCode = NSFileReadCorruptFileError
        default: // an empty file opened read-only: nothing to read, and nothing may be made
            try Data().write(to: url)
            options = [NSReadOnlyPersistentStoreOption: true]
            expectedCode = NSPersistentStoreOpenError
        }
        let before = try FileState(url)
        let error = try #require(openError(at: url, options: options), "\(kind) is refused")
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == expectedCode, "\(kind): \(error)")
        #expect(try FileState(url) == before, "\(kind) is left as it was")
        _ = try? NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(try FileState(url) == before, "reading the metadata of \(kind) leaves it as it was")
    }

    /// An empty file is where a store is to be made (Apple's convention for file-based stores).
    @Test func anEmptyFileBecomesANewStore() throws {
        let folder = try TemporaryFolder("coredata-opening")
        let url = folder.url.appendingPathComponent("Empty.sqlite")
        try Data().write(to: url)
        let coordinator = try addStore(TestModel.make(), at: url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("new", forKey: "name")
        try context.save()
        #expect(try RawSQLite.query(url.path, "SELECT ZNAME FROM ZCAR") == [["new"]])
    }

    /// A store's metadata that is not a property list is an error, not an empty dictionary.
    @Test func corruptMetadataIsAnError() throws {
        let stack = try TestStack()
        try stack.coordinator.remove(stack.coordinator.persistentStores[0])
        try RawSQLite.execute(stack.url.path, "UPDATE Z_METADATA SET Z_PLIST = X'00'")
        let error = try #require(openError(at: stack.url))
        #expect(error.code == NSFileReadCorruptFileError)
        #expect(error.localizedDescription.contains("Z_METADATA"))
        #expect(throws: NSError.self) { try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: stack.url) }
    }
}

/// The outcomes of openers on several threads.
private final class LockedResults: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<String, NSError>] = []
    func append(_ result: Result<String, NSError>) { lock.withLock { results.append(result) } }
    var all: [Result<String, NSError>] { lock.withLock { results } }
}

/// Holds threads until all of them have arrived, then lets them all go at once.
private final class Barrier: @unchecked Sendable {
    private let condition = NSCondition()
    private let count: Int
    private var arrived = 0

    init(_ count: Int) { self.count = count }

    func arriveAndWait() {
        condition.lock()
        arrived += 1
        if arrived == count { condition.broadcast() }
        while arrived < count { condition.wait() }
        condition.unlock()
    }
}
