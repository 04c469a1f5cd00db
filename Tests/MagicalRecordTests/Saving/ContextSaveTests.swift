import CoreData
import Foundation
import Testing
@testable import MagicalRecord

extension DefaultStackSuite {
    /// The context save forms: which contexts each saves, and when it returns or completes.
    @Suite struct ContextSaveTests {
        /// A new child of the root saving context holding one new car named `name`.
        private static func contextWithACar(_ name: String) -> NSManagedObjectContext {
            let context = NSManagedObjectContext.mr_()
            context.performAndWait {
                NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue(name, forKey: "name")
            }
            return context
        }

        private static var rootHasChanges: Bool {
            let root = NSManagedObjectContext.mr_rootSaving()
            return root.performAndWait { root.hasChanges }
        }

        @Test func saveToPersistentStoreAndWaitSavesEveryParent() async throws {
            try await withDefaultStack {
                let context = Self.contextWithACar("a")
                context.mr_saveToPersistentStoreAndWait()
                #expect(carsInStore(named: "a") == 1)
                #expect(!Self.rootHasChanges)
                #expect(context.performAndWait { !context.hasChanges })
            }
        }

        /// MagicalRecord 2's `MR_save` saves to the store and waits, as its code does.
        @Test func mrSaveIsSaveToPersistentStoreAndWait() async throws {
            try await withDefaultStack {
                let context = Self.contextWithACar("a")
                context.mr_save()
                #expect(carsInStore(named: "a") == 1)
                #expect(!Self.rootHasChanges)
            }
        }

        /// `mr_observeContext(_:)` merges another context's saves (MagicalRecord's
        /// `MR_observeContext:`), until `mr_stopObservingContext(_:)`.
        @Test func aContextObservingAnotherMergesItsSaves() async throws {
            try await withDefaultStack {
                let root = NSManagedObjectContext.mr_rootSaving()
                let viewer = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                viewer.persistentStoreCoordinator = root.persistentStoreCoordinator
                let shown = try viewer.performAndWait { () throws -> NSManagedObject in
                    let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: viewer)
                    car.setValue("before", forKey: "name")
                    try viewer.save()
                    return car
                }
                let worker = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                worker.persistentStoreCoordinator = root.persistentStoreCoordinator
                viewer.mr_observeContext(worker)
                try worker.performAndWait {
                    let car = try worker.existingObject(with: shown.objectID)
                    car.setValue("after", forKey: "name")
                    try worker.save()
                }
                viewer.performAndWait {} // (the merge was queued on the viewer's queue)
                #expect(viewer.performAndWait { shown.value(forKey: "name") as? String } == "after")
                viewer.mr_stopObservingContext(worker)
                try worker.performAndWait {
                    try worker.existingObject(with: shown.objectID).setValue("ignored", forKey: "name")
                    try worker.save()
                }
                viewer.performAndWait {}
                #expect(viewer.performAndWait { shown.value(forKey: "name") as? String } == "after")
            }
        }

        /// The merge is queued on the observer's queue: a save never waits on an observer that
        /// is itself waiting on the saving context (it deadlocked).
        @Test(.timeLimit(.minutes(1)))
        func anObserverWaitingOnTheSavingContextDoesNotDeadlock() throws {
            let stack = try MagicalTestStack()
            let viewer = stack.newContext(), worker = stack.newContext()
            viewer.mr_observeContext(worker)
            let started = DispatchSemaphore(value: 0)
            let saved = DispatchSemaphore(value: 0)
            worker.perform {
                NSEntityDescription.insertNewObject(forEntityName: "Automobile", into: worker)
                started.signal()
                Thread.sleep(forTimeInterval: 0.1)
                try? worker.save()
                saved.signal()
            }
            started.wait()
            viewer.performAndWait { worker.performAndWait {} } // the viewer's queue waits on the worker
            #expect(saved.wait(timeout: .now() + 10) == .success)
            viewer.performAndWait {}
            #expect(viewer.performAndWait { (try? viewer.count(for: NSFetchRequest<NSManagedObject>(entityName: "Automobile"))) ?? -1 } == 1)
        }

        @Test func saveOnlySelfAndWaitStopsAtTheParent() async throws {
            try await withDefaultStack {
                let context = Self.contextWithACar("a")
                context.mr_saveOnlySelfAndWait()
                #expect(context.performAndWait { !context.hasChanges })
                #expect(Self.rootHasChanges, "the changes are the root's now")
                #expect(carsInStore() == 0, "and not yet the store's")
                NSManagedObjectContext.mr_rootSaving().mr_saveOnlySelfAndWait()
                #expect(carsInStore(named: "a") == 1, "a context on the coordinator saves to the store")
            }
        }

        @Test func saveOnlySelfCompletesOnTheMainQueueWithTheParentChanged() async throws {
            try await withDefaultStack {
                let context = Self.contextWithACar("a")
                let result = await completion { context.mr_saveOnlySelf(completion: $0) }
                #expect(result.contextDidSave && result.error == nil && result.onMainQueue)
                #expect(Self.rootHasChanges)
                #expect(carsInStore() == 0)
            }
        }

        @Test func saveToPersistentStoreCompletesOnTheMainQueueWithTheStoreChanged() async throws {
            try await withDefaultStack {
                let context = Self.contextWithACar("a")
                let result = await completion { context.mr_saveToPersistentStore(completion: $0) }
                #expect(result.contextDidSave && result.error == nil && result.onMainQueue)
                #expect(carsInStore(named: "a") == 1)
            }
        }

        /// Which of the two saves ran on the calling thread, for `options`.
        private static func savesOnTheCallingThread(_ options: MRSaveOptions) async throws -> (child: Bool, root: Bool) {
            let context = contextWithACar("a")
            let root = NSManagedObjectContext.mr_rootSaving()
            let caller = ThreadBox()
            let saved = Observations()
            let observed: [NSManagedObjectContext] = [context, root]
            let observers = observed.map { observed in
                NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: observed, queue: nil) { _ in
                    saved.record(observed === root ? "root" : "child", sameThread: caller.isCurrent, privateQueue: true)
                }
            }
            defer { observers.forEach(NotificationCenter.default.removeObserver) }
            let completed = Flag()
            let contextBox = Unchecked(context)
            onNewThread {
                caller.setCurrent()
                contextBox.value.mr_save(options: options) { _, _ in completed.set() }
            }
            await drainUntil { completed.isSet }
            #expect(carsInStore(named: "a") == 1)
            let entries = saved.entries
            #expect(entries.map(\.label) == ["child", "root"])
            return (entries.first?.sameThread == true, entries.last?.sameThread == true)
        }

        @Test func synchronouslySavesEveryContextOnTheCallingThread() async throws {
            try await withDefaultStack {
                let onCaller = try await Self.savesOnTheCallingThread([.parentContexts, .synchronously])
                #expect(onCaller.child && onCaller.root)
            }
        }

        @Test func synchronouslyExceptRootContextSavesTheRootOnItsQueue() async throws {
            try await withDefaultStack {
                let onCaller = try await Self.savesOnTheCallingThread([.parentContexts, .synchronouslyExceptRootContext])
                #expect(onCaller.child && !onCaller.root)
            }
        }

        @Test func withoutSynchronouslyNothingSavesOnTheCallingThread() async throws {
            try await withDefaultStack {
                let onCaller = try await Self.savesOnTheCallingThread(.parentContexts)
                #expect(!onCaller.child && !onCaller.root)
            }
        }

        @Test func optionsOfNoneSaveOnlyTheContextAsynchronously() async throws {
            try await withDefaultStack {
                let context = Self.contextWithACar("a")
                let result = await completion { context.mr_save(options: [], completion: $0) }
                #expect(result.contextDidSave && result.onMainQueue)
                #expect(Self.rootHasChanges)
                #expect(carsInStore() == 0)
            }
        }

        @Test func theDefaultContextSavesToTheStoreFromItsQueue() async throws {
            try await withDefaultStack {
                let main = NSManagedObjectContext.mr_default()
                main.performAndWait {
                    NSEntityDescription.insertNewObject(forEntityName: "Car", into: main).setValue("ui", forKey: "name")
                }
                main.mr_saveToPersistentStoreAndWait()
                #expect(carsInStore(named: "ui") == 1)
            }
        }

        @Test func aContextWithoutChangesCompletesWithFalseAndNoError() async throws {
            try await withDefaultStack {
                let result = await completion { NSManagedObjectContext.mr_().mr_saveToPersistentStore(completion: $0) }
                #expect(!result.contextDidSave && result.error == nil && result.onMainQueue)
            }
        }
    }
}

/// A flag set on one thread and read on another.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// A thread, remembered to be compared with the current one later.
final class ThreadBox: @unchecked Sendable {
    private let lock = NSLock()
    private var thread: Thread?
    func setCurrent() { lock.withLock { thread = Thread.current } }
    var isCurrent: Bool { lock.withLock { thread === Thread.current } }
}

/// Lets the main queue run until `condition` holds (at most 10 s).
func drainUntil(_ condition: () -> Bool) async {
    let deadline = Date().addingTimeInterval(10)
    while !condition(), Date() < deadline { await drainMainQueue() }
}
