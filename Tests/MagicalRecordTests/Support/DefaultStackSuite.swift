import CoreData
import Foundation
import Testing
@testable import MagicalRecord

/// The parent of every suite that uses MagicalRecord's default stack, which is process-wide:
/// `.serialized` here runs its nested suites' tests one at a time. Nest a suite that sets up the
/// default stack in an extension of this type, and end each test with `MagicalRecord.cleanUp()`
/// (``withDefaultStack(_:_:)`` does both).
@Suite(.serialized) enum DefaultStackSuite {}

/// The model of these tests: `Car(name: String, year: Integer 32)`, the name required when
/// `requireName` is true.
enum CarModel {
    static func make(requireName: Bool = false) -> NSManagedObjectModel {
        let car = NSEntityDescription()
        car.name = "Car"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        name.isOptional = !requireName
        let year = NSAttributeDescription()
        year.name = "year"
        year.attributeType = .integer32AttributeType
        year.defaultValue = 2000
        car.properties = [name, year]
        let model = NSManagedObjectModel()
        model.entities = [car]
        return model
    }
}

/// Sets up the default stack with `model` (``CarModel`` by default) through `setUp` (the
/// in-memory store by default), logging at `level` (nothing by default), runs `body`, then cleans up.
func withDefaultStack<T>(model: NSManagedObjectModel = CarModel.make(), level: MagicalRecordLoggingLevel = .off,
                         _ setUp: () -> Void = { MagicalRecord.setupCoreDataStackWithInMemoryStore() },
                         _ body: () async throws -> T) async throws -> T {
    let previous = MagicalRecord.loggingLevel()
    MagicalRecord.setLoggingLevel(level)
    NSManagedObjectModel.mr_setDefaultManagedObjectModel(model)
    setUp()
    defer {
        MagicalRecord.cleanUp()
        MagicalRecord.setLoggingLevel(previous)
    }
    return try await body()
}

/// How many cars the store holds, counted by a new context on the default coordinator; -1, and
/// the error recorded as an issue, when the count fails.
func carsInStore(named name: String? = nil) -> Int {
    let context = NSManagedObjectContext.mr_context(with: NSPersistentStoreCoordinator.mr_default()!)
    return context.performAndWait {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        if let name { request.predicate = NSPredicate(format: "name == %@", name) }
        do { return try context.count(for: request) } catch {
            Issue.record(error, "counting the cars in the store")
            return -1
        }
    }
}

/// Waits until the main queue has run what was enqueued on it before the call.
func drainMainQueue() async {
    await withCheckedContinuation { continuation in
        DispatchQueue.main.async { continuation.resume() }
    }
}

/// Whether the caller runs on the main queue (Swift Testing drains it on a thread that is not
/// always the main thread, so the queue is asked, not the thread).
enum MainQueue {
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}

/// A save's completion handler's arguments, and whether it ran on the main queue.
struct Completion: Sendable {
    let contextDidSave: Bool
    let error: NSError?
    let onMainQueue: Bool
}

/// Calls `save` with a completion handler and waits for the handler.
func completion(of save: (@escaping MRSaveCompletionHandler) -> Void) async -> Completion {
    _ = MainQueue.isCurrent // sets the key before any handler can run
    return await withCheckedContinuation { continuation in
        save { contextDidSave, error in
            continuation.resume(returning: Completion(contextDidSave: contextDidSave, error: error.map { $0 as NSError },
                                                      onMainQueue: MainQueue.isCurrent))
        }
    }
}

/// Runs `body` on a new thread of its own (never one of Swift's or Dispatch's pooled threads,
/// which a queue could reuse), and waits for it.
func onNewThread(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread { body(); done.signal() }
    thread.name = "caller"
    thread.start()
    done.wait()
}
