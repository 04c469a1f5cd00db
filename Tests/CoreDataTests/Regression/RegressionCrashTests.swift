import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Each body must run to completion; a trap fails the test.
@Suite("Review: crash risks")
struct ReviewCrashTests {
    @Test func touchingAFaultAfterRemovingItsStore() async throws {
        let folder = try TemporaryFolder() // made and removed here: a child that stops leaves nothing behind
        defer { withExtendedLifetime(folder) {} } // until the child has ended
        await #expect(processExitsWith: .success) { [path = folder.path as String] in
            let stack = try! TestStack(directory: URL(fileURLWithPath: path))
            stack.insert("Car", ["name": "a"]); try! stack.context.save()
            let id = try! stack.fetch("Car")[0].objectID
            let context = stack.newContext()
            let fault = context.object(with: id)                 // data-less fault
            try! stack.coordinator.remove(stack.coordinator.persistentStores[0])
            _ = fault.value(forKey: "name")                        // SQLiteStore.db: preconditionFailure
        }
    }

    @Test func savingAnUpdateAfterRemovingTheStore() async throws {
        let folder = try TemporaryFolder() // made and removed here: a child that stops leaves nothing behind
        defer { withExtendedLifetime(folder) {} } // until the child has ended
        await #expect(processExitsWith: .success) { [path = folder.path as String] in
            let stack = try! TestStack(directory: URL(fileURLWithPath: path))
            let car = stack.insert("Car", ["name": "a"]); try! stack.context.save()
            car.setValue("b", forKey: "name")
            try! stack.coordinator.remove(stack.coordinator.persistentStores[0])
            _ = try? stack.context.save()                          // should throw, traps instead
        }
    }

    @Test func existingObjectAfterDestroyingTheStore() async throws {
        let folder = try TemporaryFolder() // made and removed here: a child that stops leaves nothing behind
        defer { withExtendedLifetime(folder) {} } // until the child has ended
        await #expect(processExitsWith: .success) { [path = folder.path as String] in
            let stack = try! TestStack(directory: URL(fileURLWithPath: path))
            stack.insert("Car", ["name": "a"]); try! stack.context.save()
            let id = try! stack.fetch("Car")[0].objectID
            try! stack.coordinator.destroyPersistentStore(at: stack.url, ofType: NSSQLiteStoreType)
            _ = try? stack.newContext().existingObject(with: id)  // API throws; traps instead
        }
    }

    @Test func insertedThenDeletedObjectOutlivesItsContext() async {
        await #expect(processExitsWith: .success) {
            let model = TestModel.make()
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            _ = try! coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
            var context: NSManagedObjectContext? = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context!.persistentStoreCoordinator = coordinator
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context!)
            context!.delete(car)
            try! context!.save()
            context = nil                                       // car._context is unowned(unsafe): dangling
            for _ in 0..<1000 { _ = NSManagedObjectContext() }   // reuse the freed memory
            precondition(car.managedObjectContext == nil, "dangling context pointer")
        }
    }
}
