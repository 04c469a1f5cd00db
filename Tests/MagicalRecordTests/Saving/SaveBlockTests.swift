import CoreData
import Foundation
import Testing
@testable import MagicalRecord

extension DefaultStackSuite {
    /// `MagicalRecord.save(_:)`, `save(_:completion:)` and `save(blockAndWait:)`, and seed 003's
    /// observation of where their blocks run.
    @Suite struct SaveBlockTests {
        /// Seed 003: `saveWithBlockAndWait:` ran its block on the calling thread (there, the main
        /// thread), `saveWithBlock:` on a background thread; both in private-queue contexts.
        @Test func seed003SaveBlockAndWaitRunsOnTheCallingThreadSaveOnABackgroundQueue() async throws {
            try await withDefaultStack {
                let observed = Observations()
                onNewThread {
                    let caller = Thread.current
                    MagicalRecord.save(blockAndWait: { context in
                        observed.record("andWait", sameThread: Thread.current === caller,
                                        privateQueue: context.concurrencyType == .privateQueueConcurrencyType)
                        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("a", forKey: "name")
                    })
                    observed.record("andWait returned", sameThread: true, privateQueue: true)
                }
                let result = await completion { done in
                    let done = Unchecked(done)
                    onNewThread {
                        let caller = Thread.current
                        MagicalRecord.save({ context in
                            observed.record("async", sameThread: Thread.current === caller,
                                            privateQueue: context.concurrencyType == .privateQueueConcurrencyType)
                            NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("b", forKey: "name")
                        }, completion: done.value)
                    }
                }
                #expect(observed.entries == [
                    .init(label: "andWait", sameThread: true, privateQueue: true),
                    .init(label: "andWait returned", sameThread: true, privateQueue: true),
                    .init(label: "async", sameThread: false, privateQueue: true),
                ])
                #expect(result.contextDidSave && result.error == nil && result.onMainQueue)
                #expect(carsInStore() == 2, "both blocks' cars reached the store")
            }
        }

        @Test func saveBlockAndWaitReturnsWithTheChangesInTheStore() async throws {
            try await withDefaultStack {
                MagicalRecord.save(blockAndWait: { context in
                    for name in ["a", "b", "c"] {
                        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue(name, forKey: "name")
                    }
                })
                #expect(carsInStore() == 3)
            }
        }

        /// Seed 000 complained that one save scrambled the insertion order; through a save block
        /// the store keeps it (a fetch without sort descriptors returns the rows in key order).
        @Test func aSaveBlockKeepsTheInsertionOrder() async throws {
            try await withDefaultStack {
                let names = (0..<50).map { "car \($0)" }
                MagicalRecord.save(blockAndWait: { context in
                    for name in names {
                        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue(name, forKey: "name")
                    }
                })
                let context = NSManagedObjectContext.mr_()
                let fetched = try context.performAndWait {
                    try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).map { $0.value(forKey: "name") as? String }
                }
                #expect(fetched == names)
            }
        }

        @Test func saveWithoutACompletionSavesInTheBackground() async throws {
            try await withDefaultStack {
                MagicalRecord.save({ NSEntityDescription.insertNewObject(forEntityName: "Car", into: $0).setValue("x", forKey: "name") })
                let deadline = Date().addingTimeInterval(10)
                while carsInStore() == 0, Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
                #expect(carsInStore(named: "x") == 1)
            }
        }

        @Test func aBlockThatChangesNothingCompletesWithoutSaving() async throws {
            try await withDefaultStack {
                let result = await completion { done in MagicalRecord.save({ _ in }, completion: done) }
                #expect(!result.contextDidSave && result.error == nil && result.onMainQueue)
            }
        }

        @Test func aFailedSaveHandsItsErrorToTheCompletionAndSavesNothing() async throws {
            try await withDefaultStack(model: CarModel.make(requireName: true)) {
                let result = await completion { done in
                    MagicalRecord.save({ _ = NSEntityDescription.insertNewObject(forEntityName: "Car", into: $0) }, completion: done)
                }
                #expect(!result.contextDidSave)
                #expect(result.error?.domain == NSCocoaErrorDomain)
                #expect(result.error?.code == NSValidationMissingMandatoryPropertyError)
                #expect(result.onMainQueue)
                #expect(carsInStore() == 0)
                #expect(NSManagedObjectContext.mr_rootSaving().performAndWait { NSManagedObjectContext.mr_rootSaving().hasChanges } == false)
            }
        }

        @Test func objectsSavedByABlockHavePermanentIDs() async throws {
            try await withDefaultStack {
                let id = IDBox()
                MagicalRecord.save(blockAndWait: { context in
                    let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
                    car.setValue("kept", forKey: "name")
                    id.set(car)
                })
                let objectID = try #require(id.value)
                #expect(!objectID.isTemporaryID)
                let main = NSManagedObjectContext.mr_default()
                let name = try main.performAndWait { try main.existingObject(with: objectID).value(forKey: "name") as? String }
                #expect(name == "kept")
            }
        }

        /// MagicalRecord obtains permanent IDs before a child saves, so an object saved only into
        /// its parent has its permanent ID already.
        @Test func aChildsNewObjectsHavePermanentIDsOnceItSavedIntoItsParent() async throws {
            try await withDefaultStack {
                let context = NSManagedObjectContext.mr_()
                let car = context.performAndWait { NSEntityDescription.insertNewObject(forEntityName: "Car", into: context) }
                context.mr_saveOnlySelfAndWait()
                #expect(!car.objectID.isTemporaryID)
                #expect(carsInStore() == 0, "the store has not seen it yet")
                NSManagedObjectContext.mr_rootSaving().mr_saveToPersistentStoreAndWait()
                #expect(carsInStore() == 1)
                let main = NSManagedObjectContext.mr_default()
                let found = try main.performAndWait { try main.existingObject(with: car.objectID).objectID }
                #expect(found == car.objectID, "the store knows it by that ID")
            }
        }
    }
}

/// What the blocks saw, in order.
final class Observations: @unchecked Sendable {
    struct Entry: Equatable { let label: String; let sameThread: Bool; let privateQueue: Bool }
    private let lock = NSLock()
    private var list: [Entry] = []
    var entries: [Entry] { lock.withLock { list } }
    func record(_ label: String, sameThread: Bool, privateQueue: Bool) {
        lock.withLock { list.append(Entry(label: label, sameThread: sameThread, privateQueue: privateQueue)) }
    }
}

/// An object's ID, read inside a block (after the block's save it is the one the store gave).
final class IDBox: @unchecked Sendable {
    private var object: NSManagedObject?
    private var context: NSManagedObjectContext?
    func set(_ object: NSManagedObject) { self.object = object; context = object.managedObjectContext }
    var value: NSManagedObjectID? { object?.objectID }
}
