import CoreData
import Foundation
import Testing
@testable import MagicalRecord

extension DefaultStackSuite {
    /// The save blocks on a context (`mr_save(_:completion:)`, `mr_save(blockAndWait:)`).
    @Suite struct ChainSaveTests {
        @Test func saveBlockAndWaitOnTheDefaultContextRunsInItsChildOnTheCallingThread() async throws {
            try await withDefaultStack {
                let seen = Observations()
                onNewThread {
                    let caller = Thread.current
                    NSManagedObjectContext.mr_default().mr_save(blockAndWait: { context in
                        seen.record(context.parent === NSManagedObjectContext.mr_default() ? "child of the default context" : "other",
                                    sameThread: Thread.current === caller,
                                    privateQueue: context.concurrencyType == .privateQueueConcurrencyType)
                        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("chained", forKey: "name")
                    })
                }
                #expect(seen.entries == [.init(label: "child of the default context", sameThread: true, privateQueue: true)])
                #expect(carsInStore(named: "chained") == 1, "saved through the default and root contexts")
                let main = NSManagedObjectContext.mr_default()
                #expect(main.performAndWait { main.hasChanges } == false)
            }
        }

        @Test func saveWithoutACompletionSavesInTheBackground() async throws {
            try await withDefaultStack {
                NSManagedObjectContext.mr_rootSaving().mr_save({ localContext in
                    NSEntityDescription.insertNewObject(forEntityName: "Car", into: localContext).setValue("quiet", forKey: "name")
                })
                var count = 0
                for _ in 0..<500 where count == 0 {
                    count = carsInStore(named: "quiet")
                    if count == 0 { try await Task.sleep(for: .milliseconds(10)) }
                }
                #expect(count == 1, "saved to the store within 5 s, with no completion to call")
            }
        }

        @Test func saveWithACompletionOnAContextCompletesOnTheMainQueue() async throws {
            try await withDefaultStack {
                let root = NSManagedObjectContext.mr_rootSaving()
                let result = await completion { done in
                    root.mr_save({ NSEntityDescription.insertNewObject(forEntityName: "Car", into: $0).setValue("async", forKey: "name") },
                                 completion: done)
                }
                #expect(result.contextDidSave && result.error == nil && result.onMainQueue)
                #expect(carsInStore(named: "async") == 1)
            }
        }
    }
}
