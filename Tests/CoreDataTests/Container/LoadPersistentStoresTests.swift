import Foundation
import Synchronization
import Testing
@testable import CoreData

@Suite("NSPersistentContainer.loadPersistentStores")
struct LoadPersistentStoresTests {
    typealias Support = ContainerTestSupport

    @Test func synchronousLoadCallsTheHandlerOnTheCallingThreadBeforeReturning() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = Support.carContainer(in: directory)
        let caller = pthread_self()
        var calls: [(NSPersistentStoreDescription, NSError?, Bool)] = []
        container.loadPersistentStores { description, error in
            calls.append((description, error as NSError?, pthread_equal(pthread_self(), caller) != 0))
        }
        #expect(calls.count == 1) // already called: nothing was deferred
        // A copy of the description, as Apple hands (changing it afterwards changes nothing).
        #expect(calls.first?.0 !== container.persistentStoreDescriptions.first)
        #expect(calls.first?.0.url == container.persistentStoreDescriptions.first?.url)
        #expect(calls.first?.1 == nil)
        #expect(calls.first?.2 == true)
        let stores = container.persistentStoreCoordinator.persistentStores
        #expect(stores.count == 1)
        #expect(stores.first?.url?.standardizedFileURL == directory.appendingPathComponent("Car.sqlite").standardizedFileURL)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("Car.sqlite").path))
    }

    @Test func theHandlerIsCalledOncePerDescription() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = Support.carContainer(in: directory)
        let memory = NSPersistentStoreDescription()
        memory.type = NSInMemoryStoreType
        let file = NSPersistentStoreDescription(url: directory.appendingPathComponent("Second.sqlite"))
        container.persistentStoreDescriptions = [memory, file]
        var seen: [NSPersistentStoreDescription] = []
        container.loadPersistentStores { description, error in
            #expect(error == nil)
            seen.append(description)
        }
        #expect(seen.count == 2)
        #expect(seen.first?.type == memory.type && seen.first?.url == URL(fileURLWithPath: "/dev/null"))
        #expect(seen == [memory, file]) // copies, equal to the descriptions set
        #expect(seen.last?.url == file.url)
        #expect(container.persistentStoreCoordinator.persistentStores.map(\.type) == [NSInMemoryStoreType, NSSQLiteStoreType])
    }

    @Test(.timeLimit(.minutes(1)))
    func asynchronousLoadReturnsBeforeTheHandlerRuns() async throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = Support.carContainer(in: directory)
        container.persistentStoreDescriptions.first?.shouldAddStoreAsynchronously = true
        let returned = Locked(false)
        let gate = DispatchSemaphore(value: 0)
        struct Outcome: @unchecked Sendable {
            var released: Bool, returnedFirst: Bool, onCaller: Bool, error: NSError?, storeCount: Int
        }
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let caller = pthread_self()
            container.loadPersistentStores { _, error in
                // Blocks until the caller has got control back. Had the store been added on the
                // calling thread, this wait would time out instead (and `released` be false).
                let released = gate.wait(timeout: .now() + 20) == .success
                continuation.resume(returning: Outcome(
                    released: released, returnedFirst: returned.value, onCaller: pthread_equal(pthread_self(), caller) != 0,
                    error: error as NSError?, storeCount: container.persistentStoreCoordinator.persistentStores.count))
            }
            returned.value = true
            gate.signal()
        }
        #expect(outcome.released)
        #expect(outcome.returnedFirst)
        #expect(!outcome.onCaller)
        #expect(outcome.error == nil)
        #expect(outcome.storeCount == 1) // the store is in place when the handler runs
        try await container.performBackgroundTask { context in try Support.insertCars(["async"], in: context) }
        #expect(try await container.performBackgroundTask { try Support.carNames(in: $0) } == ["async"])
    }

    @Test(.timeLimit(.minutes(1)))
    func asynchronousDescriptionsLoadInOrderAndReportErrors() async throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = Support.carContainer(in: directory)
        let good = container.persistentStoreDescriptions[0]
        let bad = NSPersistentStoreDescription(url: directory.appendingPathComponent("Garbage.sqlite"))
        try Data("definitely not a database".utf8).write(to: bad.url!)
        for description in [good, bad] { description.shouldAddStoreAsynchronously = true }
        container.persistentStoreDescriptions = [good, bad]
        let log = Locked<[(NSPersistentStoreDescription, NSError?)]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            container.loadPersistentStores { description, error in
                log.value.append((description, error as NSError?))
                if log.value.count == 2 { continuation.resume() }
            }
        }
        let calls = log.value
        #expect(calls.map(\.0.url) == [good.url, bad.url])
        #expect(calls[0].1 == nil)
        #expect(calls[1].1?.code == NSFileReadCorruptFileError)
        #expect(try Data(contentsOf: bad.url!) == Data("definitely not a database".utf8)) // left untouched
    }

    @Test func aFileThatIsNotAStoreIsAnErrorInTheHandler() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = Support.carContainer(in: directory)
        try Data(repeating: 0x42, count: 4096).write(to: directory.appendingPathComponent("Car.sqlite"))
        let errors = Support.load(container)
        #expect(errors.count == 1)
        #expect(errors.first??.domain == NSCocoaErrorDomain)
        #expect(errors.first??.code == NSFileReadCorruptFileError)
        #expect(container.persistentStoreCoordinator.persistentStores.isEmpty)
    }

    @Test func aStoreOfAnotherModelIsAnErrorInTheHandler() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let other = NSPersistentContainer(name: "Car", managedObjectModel: TestModel.make())
        other.persistentStoreDescriptions = [NSPersistentStoreDescription(url: directory.appendingPathComponent("Car.sqlite"))]
        #expect(Support.load(other) == [nil])
        let errors = Support.load(Support.carContainer(in: directory))
        #expect(errors.first??.code == NSMigrationMissingSourceModelError)
    }

    @Test func badURLsAreErrorsInTheHandler() throws {
        let container = NSPersistentContainer(name: "Car", modelDirectory: Support.carModelDirectory)
        let web = NSPersistentStoreDescription(url: URL(string: "https://example.com/Car.sqlite")!)
        let none = NSPersistentStoreDescription()
        none.url = nil
        let unknown = NSPersistentStoreDescription(url: URL(fileURLWithPath: "/tmp/x.store"))
        unknown.type = NSBinaryStoreType
        container.persistentStoreDescriptions = [web, none, unknown]
        let errors = Support.load(container)
        #expect(errors.count == 3)
        #expect(errors.allSatisfy { $0?.domain == NSCocoaErrorDomain })
        #expect(errors[0]?.code == NSPersistentStoreOpenError)
        #expect(errors[1]?.code == NSPersistentStoreOpenError)
        #expect(errors[2]?.code == NSPersistentStoreInvalidTypeError)
        #expect(container.persistentStoreCoordinator.persistentStores.isEmpty)
    }

    @Test func aFolderThatCannotBeMadeIsAnErrorInTheHandler() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let blocker = directory.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        let container = Support.carContainer(in: blocker.appendingPathComponent("sub"))
        let errors = Support.load(container)
        #expect(errors.count == 1)
        #expect(errors.first??.domain == NSCocoaErrorDomain)
    }

    @Test func loadingCreatesTheStoresFolder() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nested = directory.appendingPathComponent("a/b/c", isDirectory: true)
        let container = Support.carContainer(in: nested)
        #expect(Support.load(container) == [nil])
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: nested.path, isDirectory: &isDirectory) && isDirectory.boolValue)
        #expect(FileManager.default.fileExists(atPath: nested.appendingPathComponent("Car.sqlite").path))
    }

    @Test("Synchronous descriptions load before asynchronous ones, and a description changed after the call changes nothing")
    func synchronousFirstAndCopies() async throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = Support.carContainer(in: directory)
        let later = NSPersistentStoreDescription(url: directory.appendingPathComponent("Later.sqlite"))
        later.shouldAddStoreAsynchronously = true
        let now = NSPersistentStoreDescription(url: directory.appendingPathComponent("Now.sqlite"))
        container.persistentStoreDescriptions = [later, now]
        let log = Locked<[URL?]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            container.loadPersistentStores { description, _ in
                log.value.append(description.url)
                if log.value.count == 2 { continuation.resume() }
            }
            later.url = directory.appendingPathComponent("Elsewhere.sqlite")
        }
        #expect(log.value.map { $0?.lastPathComponent } == ["Now.sqlite", "Later.sqlite"])
        #expect(Set(container.persistentStoreCoordinator.persistentStores.compactMap { $0.url?.lastPathComponent }) == ["Now.sqlite", "Later.sqlite"])
    }

    @Test("defaultDirectoryURL() creates its folder, so that a seed store can be copied in before loading")
    func theDefaultDirectoryExists() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = NSPersistentContainer.createdDirectory(NSPersistentContainer.defaultDirectoryURL(
            environment: ["XDG_DATA_HOME": directory.appendingPathComponent("data").path], applicationName: "Garage"))
        #expect(url.lastPathComponent == "Garage")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }
}

/// A container whose `defaultDirectoryURL()` counts its calls.
private final class CountingContainer: NSPersistentContainer, @unchecked Sendable {
    static let calls = Mutex(0)
    override class func defaultDirectoryURL() -> URL {
        calls.withLock { $0 += 1 }
        return FileManager.default.temporaryDirectory
    }
}

extension LoadPersistentStoresTests {
    /// Apple's bare description is a SQLite store at /dev/null: it loads, in memory.
    @Test func aBareDescriptionLoadsAStoreInMemory() throws {
        let container = NSPersistentContainer(name: "Car", modelDirectory: Support.carModelDirectory)
        container.persistentStoreDescriptions = [NSPersistentStoreDescription()]
        #expect(Support.load(container) == [nil])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("a", forKey: "name")
            try context.save()
        }
        #expect(try context.performAndWait { try context.count(for: NSFetchRequest<NSFetchRequestResult>(entityName: "Car")) } == 1)
        #expect(container.persistentStoreCoordinator.persistentStores.first?.url == URL(fileURLWithPath: "/dev/null"))
    }

    /// The default description (and its folder) is made only when the descriptions are read
    /// without having been set, as Apple's.
    @Test func theDefaultFolderIsAskedForOnlyWhenTheDefaultDescriptionIsUsed() {
        CountingContainer.calls.withLock { $0 = 0 }
        let replaced = CountingContainer(name: "Car", managedObjectModel: TestModel.make())
        replaced.persistentStoreDescriptions = [NSPersistentStoreDescription()]
        _ = replaced.persistentStoreDescriptions
        #expect(CountingContainer.calls.withLock { $0 } == 0)
        let defaulted = CountingContainer(name: "Car", managedObjectModel: TestModel.make())
        #expect(defaulted.persistentStoreDescriptions.first?.url?.lastPathComponent == "Car.sqlite")
        _ = defaulted.persistentStoreDescriptions
        #expect(CountingContainer.calls.withLock { $0 } == 1)
    }
}
