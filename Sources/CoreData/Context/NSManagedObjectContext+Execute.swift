import Foundation

/// A request ``NSManagedObjectContext/execute(_:)`` knows how to run.
internal protocol ContextExecutableRequest {
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult
}

extension NSManagedObjectContext {
    /// Runs a request and returns its result: for an `NSFetchRequest`, an
    /// ``NSAsynchronousFetchResult`` whose `finalResult` holds the fetched objects (the fetch has
    /// run); for an ``NSAsynchronousFetchRequest``, at once, an ``NSAsynchronousFetchResult``
    /// whose fetch then runs on the context's queue and ends in the request's completion block.
    ///
    /// ```swift
    /// let result = try context.execute(NSFetchRequest<Car>(entityName: "Car")) as! NSAsynchronousFetchResult<Car>
    /// let cars = result.finalResult ?? []
    /// ```
    ///
    /// Throws `NSPersistentStoreUnsupportedRequestTypeError` (134091) for other requests, and
    /// the fetch's error for a plain fetch request.
    public func execute(_ request: NSPersistentStoreRequest) throws -> NSPersistentStoreResult {
        checkQueue("execute(_:)")
        guard let executable = request as? ContextExecutableRequest else {
            throw CoreDataError.make(.unsupportedRequestType, "execute(_:) can't run a \(type(of: request)) here: only NSFetchRequest and NSAsynchronousFetchRequest are supported")
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
            let objects = loadsGradually(in: context) ? try fetchGradually(result, in: context) : try context.fetch(fetchRequest)
            guard let objects, !result.isCancelled else { result.fail(cancelled); return }
            result.progress?.totalUnitCount = Int64(objects.count)
            result.progress?.completedUnitCount = Int64(objects.count)
            result._finalResult = objects
        } catch {
            result.fail(error as NSError)
        }
    }

    /// Whether the fetch can load its objects a batch at a time: objects with their values,
    /// not already batched, in a context on a coordinator.
    private func loadsGradually(in context: NSManagedObjectContext) -> Bool {
        fetchRequest.resultType == .managedObjectResultType && fetchRequest.fetchBatchSize == 0
            && fetchRequest.includesPropertyValues && context.parent == nil && progressBatchSize > 0
    }

    /// The fetch run as a batched fetch (keys first, so the count is known at once), whose
    /// batches are then loaded one by one, reporting progress and stopping when cancelled
    /// (`nil`). The result is what the plain fetch returns: faults carrying their rows, or
    /// fired objects with `returnsObjectsAsFaults` false.
    private func fetchGradually(_ result: NSAsynchronousFetchResult<ResultType>, in context: NSManagedObjectContext) throws -> [ResultType]? {
        // The request is only ever used on this queue; its batch size is restored before the
        // completion block runs.
        let request = fetchRequest
        let batchSize = request.fetchBatchSize
        request.fetchBatchSize = progressBatchSize
        let objects: [ResultType]
        do {
            defer { request.fetchBatchSize = batchSize }
            objects = try context.fetch(request)
        }
        let progress = result.progress
        progress?.totalUnitCount = Int64(objects.count)
        for (index, item) in objects.enumerated() {
            guard let object = item as? NSManagedObject else { continue }
            if let batch = object._fetchBatch, !batch.isLoaded {
                guard !result.isCancelled else { return nil }
                context.loadBatch(batch)
                progress?.completedUnitCount = Int64(min(index + progressBatchSize, objects.count))
                if let progress { didLoadBatch?(progress) }
            }
            if !request.returnsObjectsAsFaults { object.fireFaultIfNeeded() }
        }
        return objects
    }
}
