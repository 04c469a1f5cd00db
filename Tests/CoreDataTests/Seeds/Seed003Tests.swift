import Foundation
import Testing
@testable import CoreData

/// Seed 003: MagicalRecord's stack — a private `rootContext` on the coordinator, a main-queue
/// `defaultContext` as its child — and `saveWithBlock:` / `saveWithBlockAndWait:`, which run the
/// block in a new private child of the default context with `performBlock:` /
/// `performBlockAndWait:` and then save up the chain synchronously. The seed's finding:
/// `performBlockAndWait:` runs the block on the *calling* thread, `performBlock:` on another one.
@Suite("Seed 003: MagicalRecord's save blocks")
struct Seed003Tests {
    /// MagicalRecord's two static contexts and its save helpers, as a Swift client writes them.
    final class MagicalRecord: @unchecked Sendable {
        let rootContext = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        let defaultContext = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)

        init(coordinator: NSPersistentStoreCoordinator) {
            rootContext.persistentStoreCoordinator = coordinator
            defaultContext.parent = rootContext
        }

        private func contextWithParent(_ parent: NSManagedObjectContext) -> NSManagedObjectContext {
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.parent = parent
            return context
        }

        /// `MR_saveWithOptions:MRSaveParentContexts|MRSaveSynchronously`: this context, then each parent, waiting.
        private static func saveToStore(_ context: NSManagedObjectContext) throws {
            var current: NSManagedObjectContext? = context
            while let saving = current {
                try saving.performAndWait { try saving.save() }
                current = saving.parent
            }
        }

        func saveWithBlockAndWait(_ block: (NSManagedObjectContext) -> Void) throws {
            let local = contextWithParent(defaultContext)
            try local.performAndWait {
                block(local)
                try Self.saveToStore(local)
            }
        }

        func saveWithBlock(_ block: @escaping @Sendable (NSManagedObjectContext) -> Void,
                           completion: @escaping @Sendable (Error?) -> Void) {
            let local = contextWithParent(defaultContext)
            local.perform {
                block(local)
                do { try Self.saveToStore(local); completion(nil) } catch { completion(error) }
            }
        }
    }

    private static func threadID() -> UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }


    @Test(.timeLimit(.minutes(1)), arguments: TestStoreKind.available)
    func saveWithBlockAndWaitRunsOnTheCallingThreadAndReachesTheStore(_ kind: TestStoreKind) throws {
        let stack = try TestStack(kind)
        let records = MagicalRecord(coordinator: stack.coordinator)
        let caller = Self.threadID()
        var blockThread: UInt = 0
        try records.saveWithBlockAndWait { local in
            blockThread = Self.threadID()
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: local).setValue("code a", forKey: "name")
        }
        #expect(blockThread == caller, "performAndWait runs the block on the calling thread (code a)")
        #expect(try stack.storedCarNames() == ["code a"])
    }

    @Test(.timeLimit(.minutes(1)), arguments: TestStoreKind.available)
    func saveWithBlockRunsOnTheContextsQueueAndReachesTheStore(_ kind: TestStoreKind) async throws {
        let stack = try TestStack(kind)
        let records = MagicalRecord(coordinator: stack.coordinator)
        let caller = Self.threadID()
        let (blockThread, error): (UInt, Error?) = await withCheckedContinuation { continuation in
            let thread = LockedValue<UInt>(0)
            records.saveWithBlock({ local in
                thread.set(Self.threadID())
                NSEntityDescription.insertNewObject(forEntityName: "Car", into: local).setValue("code b", forKey: "name")
            }, completion: { error in continuation.resume(returning: (thread.get(), error)) })
        }
        #expect(error == nil)
        #expect(blockThread != caller, "perform runs the block on the context's queue, another thread (code b)")
        #expect(try stack.storedCarNames() == ["code b"])
        // The default (main-queue) context sees the saved object through its parent.
        let seen = try records.defaultContext.performAndWait {
            try records.defaultContext.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).count
        }
        #expect(seen == 1)
    }

    /// A small thread-safe box for values set on another queue.
    final class LockedValue<T: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: T
        init(_ value: T) { self.value = value }
        func set(_ newValue: T) { lock.withLock { value = newValue } }
        func get() -> T { lock.withLock { value } }
    }
}
