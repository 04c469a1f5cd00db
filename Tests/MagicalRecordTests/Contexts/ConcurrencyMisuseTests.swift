import CoreData
import Foundation
import Testing
import MagicalRecord

/// Misuse of MagicalRecord's contexts under Core Data's concurrency checker
/// (`COREDATA_CONCURRENCY_DEBUG=1`), each in a child process that turns the checker on itself.
@Suite struct ConcurrencyMisuseTests {
    @Test func savingTheDefaultContextFromABackgroundThreadStopsWithANamingMessage() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            setenv("COREDATA_CONCURRENCY_DEBUG", "1", 1)
            MagicalRecord.setLoggingLevel(.off)
            NSManagedObjectModel.mr_setDefaultManagedObjectModel(CarModel.make())
            MagicalRecord.setupCoreDataStackWithInMemoryStore()
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                try? NSManagedObjectContext.mr_default().save()
                done.signal()
            }
            thread.start()
            done.wait()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("CoreData concurrency violation: save()"))
        #expect(message.contains("'MagicalRecord Default Context'"), "names the context")
        #expect(message.contains("save() on thread "), "names the thread")
        #expect(message.contains("which lives on the main queue"))
    }

    @Test func theSameSaveThroughMagicalRecordPassesUnderTheChecker() async throws {
        await #expect(processExitsWith: .success) {
            setenv("COREDATA_CONCURRENCY_DEBUG", "1", 1)
            MagicalRecord.setLoggingLevel(.off)
            NSManagedObjectModel.mr_setDefaultManagedObjectModel(CarModel.make())
            MagicalRecord.setupCoreDataStackWithInMemoryStore()
            MagicalRecord.save(blockAndWait: { _ = NSEntityDescription.insertNewObject(forEntityName: "Car", into: $0) })
            let context = NSManagedObjectContext.mr_()
            context.performAndWait { _ = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context) }
            context.mr_saveToPersistentStoreAndWait()
            guard carsInStore() == 2 else { exit(1) }
        }
    }
}
