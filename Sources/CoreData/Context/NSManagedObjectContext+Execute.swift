import Foundation

/// A request ``NSManagedObjectContext/execute(_:)`` knows how to run.
internal protocol ContextExecutableRequest {
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult
}

extension NSManagedObjectContext {
    /// Runs a request and returns its result: for an `NSFetchRequest`, an
    /// ``NSAsynchronousFetchResult`` whose `finalResult` holds the fetched objects (the fetch has
    /// run); for an ``NSAsynchronousFetchRequest``, at once, an ``NSAsynchronousFetchResult``
    /// whose fetch then runs on the context's queue and ends in the request's completion block;
    /// for an ``NSBatchInsertRequest``, ``NSBatchUpdateRequest`` or ``NSBatchDeleteRequest``, its
    /// result once the store has run it (the context's objects are not changed: merge the IDs).
    ///
    /// ```swift
    /// let result = try context.execute(NSFetchRequest<Car>(entityName: "Car")) as! NSAsynchronousFetchResult<Car>
    /// let cars = result.finalResult ?? []
    /// ```
    ///
    /// A batch or history request whose store is an ``NSIncrementalStore`` goes to the store's
    /// ``NSIncrementalStore/execute(_:with:)``, whose result (or error) comes back here.
    ///
    /// Throws `NSPersistentStoreUnsupportedRequestTypeError` (134091) for other requests, and
    /// the request's error otherwise.
    @discardableResult
    public func execute(_ request: NSPersistentStoreRequest) throws -> NSPersistentStoreResult {
        checkQueue("execute(_:)")
        // A batch or history request for a store you write goes to its `execute(_:with:)`
        // (NSIncrementalStore+BatchRequests.swift).
        if let coordinator = persistentStoreCoordinator, coordinator.hasIncrementalStores,
           let store = coordinator.incrementalStore(answering: request) {
            return try store.answer(request, context: self)
        }
        guard let executable = request as? ContextExecutableRequest else {
            throw CoreDataError.make(.unsupportedRequestType, "execute(_:) can't run a \(type(of: request)) here: only fetch, asynchronous fetch and batch insert, update and delete requests are supported")
        }
        return try executable.execute(in: self)
    }
}

extension NSFetchRequest: ContextExecutableRequest {
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        let objects = try context.fetch(self)
        let progress = Progress(totalUnitCount: Int64(objects.count))
        progress.completedUnitCount = progress.totalUnitCount
        let result = NSAsynchronousFetchResult(context: context, request: NSAsynchronousFetchRequest(fetchRequest: self), progress: progress)
        result._finalResult = objects
        return result
    }
}

/// A value handed to the context's queue, where only that queue touches it.
private struct OnContextQueue<Value>: @unchecked Sendable {
    let value: Value
}

extension NSAsynchronousFetchRequest: ContextExecutableRequest {
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        let progress = Progress(totalUnitCount: Int64(max(estimatedResultCount, 0))) // a child of the current progress
        progress.isCancellable = true
        let result = NSAsynchronousFetchResult(context: context, request: self, progress: progress)
        let work = OnContextQueue(value: (self, result))
        context.perform { work.value.0.run(work.value.1, in: context) }
        return result
    }

    /// The fetch, on the context's queue.
    private func run(_ result: NSAsynchronousFetchResult<ResultType>, in context: NSManagedObjectContext) {
        defer { completionBlock?(result) }
        let cancelled = CoreDataError.cancelled("The asynchronous fetch was cancelled")
        guard !result.isCancelled else { result.fail(cancelled); return }
        do {
            let objects = try fetchReportingProgress(result, in: context)
            guard !result.isCancelled else { result.fail(cancelled); return }
            result.progress?.totalUnitCount = Int64(objects.count)
            result.progress?.completedUnitCount = Int64(objects.count)
            result._finalResult = objects
        } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code == CocoaError.Code.userCancelled.rawValue {
            result.fail(cancelled)
        } catch {
            result.fail(error as NSError)
        }
    }

    /// The plain fetch — one read of the store, the request's options as they are — with the
    /// progress advanced every ``progressStep`` objects as the rows are read, and the fetch
    /// stopped there when the result has been cancelled. (The count is not known until the end:
    /// until then `totalUnitCount` is the estimate, or what has been counted.)
    private func fetchReportingProgress(_ result: NSAsynchronousFetchResult<ResultType>, in context: NSManagedObjectContext) throws -> [ResultType] {
        let step = progressStep
        let progress = result.progress
        let report = didReportProgress
        let previous = context._fetchRowObserver
        context._fetchRowObserver = step <= 0 ? nil : { made in
            guard made % step == 0 else { return }
            if result.isCancelled { throw CoreDataError.cancelled("The asynchronous fetch was cancelled") }
            if let progress {
                progress.totalUnitCount = max(progress.totalUnitCount, Int64(made))
                progress.completedUnitCount = Int64(made)
                report?(progress)
            }
        }
        defer { context._fetchRowObserver = previous }
        return try context.fetch(fetchRequest)
    }
}
