import Foundation
import Testing
@testable import CoreData

@Suite("Main-queue contexts")
struct MainQueueTests {
    @Test(.timeLimit(.minutes(1)))
    func performRunsOnTheMainQueue() async throws {
        let stack = try TestStack()
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        let (onMain, count) = try await context.perform { () throws -> (Bool, Int) in
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("main", forKey: "name")
            try context.save()
            return (context.isOnQueue, try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")))
        }
        #expect(onMain)
        #expect(count == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    @MainActor
    func performAndWaitOnTheMainQueueRunsInline() throws {
        let stack = try TestStack()
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        var ran = false
        context.performAndWait { ran = context.isOnQueue }
        #expect(ran)
    }
}
