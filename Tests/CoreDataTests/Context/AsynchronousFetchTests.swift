import Foundation
import Testing
@testable import CoreData

@Suite("execute(_:), NSAsynchronousFetchRequest")
struct AsynchronousFetchTests {
    /// A private-queue context on a store holding `count` cars.
    private func seeded(_ count: Int) throws -> (TestStack, NSManagedObjectContext) {
        let stack = try TestStack()
        for index in 0..<count { stack.insert("Car", ["name": "car \(index)"]) }
        try stack.context.save()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        return (stack, context)
    }

    /// What the completion block saw.
    private final class Outcome: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        var names: [String]?
        var error: NSError?
        var onQueue = false
        var sameResult = false
        var progress: (completed: Int64, total: Int64)?

        /// Records what a completion block got, and says it ran.
        func take(_ result: NSAsynchronousFetchResult<NSManagedObject>) {
            names = result.finalResult?.compactMap { $0.value(forKey: "name") as? String }
            error = result.operationError as NSError?
            progress = result.progress.map { ($0.completedUnitCount, $0.totalUnitCount) }
            done.signal()
        }
    }

    @Test func returnsAtOnceAndCompletesOnTheContextsQueue() throws {
        let (stack, context) = try seeded(5)
        defer { withExtendedLifetime(stack) {} }
        let outcome = Outcome()
        let returned = try context.performAndWait { () -> (hadResult: Bool, progressTotal: Int64?) in
            let fetch = NSFetchRequest<NSManagedObject>(entityName: "Car")
            fetch.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            var executed: NSAsynchronousFetchResult<NSManagedObject>?
            let request = NSAsynchronousFetchRequest(fetchRequest: fetch) { result in
                outcome.onQueue = context.isOnQueue
                outcome.sameResult = result === executed
                outcome.take(result)
            }
            request.estimatedResultCount = 3
            #expect(request.fetchRequest === fetch && request.completionBlock != nil)
            let result = try #require(try context.execute(request) as? NSAsynchronousFetchResult<NSManagedObject>)
            executed = result
            #expect(result.managedObjectContext === context && result.fetchRequest === request)
            return (result.finalResult != nil, result.progress?.totalUnitCount)
        }
        #expect(!returned.hadResult)        // the fetch runs after execute has returned
        #expect(returned.progressTotal == 3) // the estimate, until the count is known
        #expect(outcome.done.wait(timeout: .now() + 30) == .success)
        #expect(outcome.onQueue && outcome.sameResult)
        #expect(outcome.names == (0..<5).map { "car \($0)" })
        #expect(outcome.error == nil)
        #expect(outcome.progress?.completed == 5 && outcome.progress?.total == 5)
    }

    /// Executes an asynchronous fetch of `entity` (cancelled at once if `cancel`) and waits for its completion block.
    private func outcome(fetching entity: String, cancel: Bool) throws -> Outcome {
        let (stack, context) = try seeded(3)
        defer { withExtendedLifetime(stack) {} }
        let outcome = Outcome()
        try context.performAndWait {
            let request = NSAsynchronousFetchRequest(fetchRequest: NSFetchRequest<NSManagedObject>(entityName: entity), completionBlock: outcome.take)
            let result = try context.execute(request) as? NSPersistentStoreAsynchronousResult
            if cancel { result?.cancel() }
        }
        #expect(outcome.done.wait(timeout: .now() + 30) == .success)
        return outcome
    }

    @Test func aCancelledFetchCompletesWithAnErrorAndNoResult() throws {
        let outcome = try outcome(fetching: "Car", cancel: true)
        #expect(outcome.names == nil)
        #expect(outcome.error?.domain == NSCocoaErrorDomain && outcome.error?.code == CocoaError.Code.userCancelled.rawValue)
    }

    @Test func aFailingFetchCompletesWithItsError() throws {
        let outcome = try outcome(fetching: "Nope", cancel: false)
        #expect(outcome.names == nil)
        #expect(outcome.error?.domain == NSCocoaErrorDomain && outcome.error?.code == NSCoreDataError)
    }

    @Test func theProgressIsAChildOfTheCurrentProgress() throws {
        let (stack, context) = try seeded(4)
        defer { withExtendedLifetime(stack) {} }
        let outcome = Outcome()
        let parent = Progress(totalUnitCount: 1)
        try context.performAndWait {
            parent.becomeCurrent(withPendingUnitCount: 1)
            defer { parent.resignCurrent() }
            _ = try context.execute(NSAsynchronousFetchRequest(fetchRequest: NSFetchRequest<NSManagedObject>(entityName: "Car")) { _ in
                outcome.done.signal()
            })
        }
        #expect(outcome.done.wait(timeout: .now() + 30) == .success)
        #expect(parent.completedUnitCount == 1)
    }

    @Test func executingAFetchRequestReturnsItsResultsAtOnce() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        let result = try #require(try stack.context.execute(NSFetchRequest<NSManagedObject>(entityName: "Car")) as? NSAsynchronousFetchResult<NSManagedObject>)
        #expect(result.finalResult?.count == 1)   // pending changes included, as fetch(_:)
        #expect(result.operationError == nil && result.progress?.completedUnitCount == 1)
        #expect(throws: NSError.self) { try stack.context.execute(NSFetchRequest<NSManagedObject>(entityName: "Nope")) }
    }

    @Test func otherRequestsAreRefused() throws {
        let stack = try TestStack()
        #expect {
            try stack.context.execute(NSPersistentStoreRequest())
        } throws: { error in
            (error as NSError).domain == NSCocoaErrorDomain && (error as NSError).code == NSPersistentStoreUnsupportedRequestTypeError
        }
    }

    /// Progress reported after each loaded batch.
    private final class Reports: @unchecked Sendable {
        var completed: [Int64] = []
        var totals: [Int64] = []
    }

    @Test func progressGrowsAsTheRowsAreReadAndTheResultIsAPlainFetchs() throws {
        let (stack, context) = try seeded(2_500)
        defer { withExtendedLifetime(stack) {} }
        let outcome = Outcome()
        let reports = Reports()
        var faults: [Bool] = []
        try context.performAndWait {
            let fetch = NSFetchRequest<NSManagedObject>(entityName: "Car")
            fetch.returnsObjectsAsFaults = false
            let request = NSAsynchronousFetchRequest(fetchRequest: fetch) { result in
                faults = result.finalResult?.map(\.isFault) ?? []
                outcome.take(result)
            }
            request.progressStep = 1_000
            request.didReportProgress = { progress in
                reports.completed.append(progress.completedUnitCount)
                reports.totals.append(progress.totalUnitCount)
            }
            _ = try context.execute(request)
            #expect(fetch.fetchBatchSize == 0)   // the request is not changed
        }
        #expect(outcome.done.wait(timeout: .now() + 60) == .success)
        #expect(reports.completed == [1_000, 2_000])
        #expect(reports.totals == [1_000, 2_000])            // the count is known at the end
        #expect(outcome.progress?.completed == 2_500 && outcome.progress?.total == 2_500)
        #expect(outcome.names == (0..<2_500).map { "car \($0)" })
        #expect(faults.count == 2_500 && !faults.contains(true))
    }

    @Test func cancellingStopsTheFetchBetweenSteps() throws {
        let (stack, context) = try seeded(2_500)
        defer { withExtendedLifetime(stack) {} }
        let outcome = Outcome()
        let reports = Reports()
        try context.performAndWait {
            let request = NSAsynchronousFetchRequest(fetchRequest: NSFetchRequest<NSManagedObject>(entityName: "Car"), completionBlock: outcome.take)
            request.progressStep = 500
            request.didReportProgress = { progress in
                reports.completed.append(progress.completedUnitCount)
                if progress.completedUnitCount == 1_000 { progress.cancel() }
            }
            _ = try context.execute(request)
        }
        #expect(outcome.done.wait(timeout: .now() + 60) == .success)
        #expect(reports.completed == [500, 1_000])
        #expect(outcome.names == nil)
        #expect(outcome.error?.code == CocoaError.Code.userCancelled.rawValue)
    }

    /// One read of the store: a save made while the fetch reports its progress does not show
    /// in the result; the request's options (refresh, prefetching errors) are the plain fetch's.
    @Test func oneConsistentReadWithTheRequestsOptions() throws {
        let (stack, context) = try seeded(1_500)
        defer { withExtendedLifetime(stack) {} }
        let outcome = Outcome()
        try context.performAndWait {
            let fetch = NSFetchRequest<NSManagedObject>(entityName: "Car")
            fetch.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let request = NSAsynchronousFetchRequest(fetchRequest: fetch, completionBlock: outcome.take)
            request.progressStep = 500
            request.didReportProgress = { progress in
                guard progress.completedUnitCount == 500 else { return }
                // Another context deletes and renames rows the fetch has not reached yet.
                let other = stack.newContext()
                let rest = try? other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
                if let rest {
                    other.delete(rest[1_400])
                    rest[1_300].setValue("zzz", forKey: "name")
                    try? other.save()
                }
            }
            _ = try context.execute(request)
        }
        #expect(outcome.done.wait(timeout: .now() + 60) == .success)
        #expect(outcome.error == nil)
        #expect(outcome.names == (0..<1_500).map { "car \($0)" }.sorted())
        #expect(try stack.newContext().count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == 1_499)  // the save happened

        let failed = Outcome()
        try context.performAndWait {
            let fetch = NSFetchRequest<NSManagedObject>(entityName: "Car")
            fetch.relationshipKeyPathsForPrefetching = ["nope"]
            _ = try context.execute(NSAsynchronousFetchRequest(fetchRequest: fetch, completionBlock: failed.take))
        }
        #expect(failed.done.wait(timeout: .now() + 60) == .success)
        #expect(failed.names == nil && failed.error != nil)    // as the plain fetch throws
    }
}
