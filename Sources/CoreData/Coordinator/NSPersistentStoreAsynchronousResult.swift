import Foundation

/// The result of an asynchronous request: its context, its progress, and its error once it has
/// run; ``cancel()`` stops it if it has not finished.
///
/// ```swift
/// let result = try context.execute(asyncRequest) as! NSPersistentStoreAsynchronousResult
/// result.progress?.totalUnitCount   // the number of results, once known
/// result.cancel()                   // the completion block then gets an operationError
/// ```
open class NSPersistentStoreAsynchronousResult: NSPersistentStoreResult, @unchecked Sendable {
    private let context: NSManagedObjectContext
    private let _progress: Progress?
    private let _error = Locked<NSError?>(nil)

    internal init(context: NSManagedObjectContext, progress: Progress?) {
        self.context = context
        self._progress = progress
        super.init()
    }

    /// The context the request was executed in; the completion block runs on its queue.
    open var managedObjectContext: NSManagedObjectContext { context }

    /// Why the request failed or was cancelled (`NSUserCancelledError`, 3072, in
    /// `NSCocoaErrorDomain`, for a cancelled one); `nil` while it runs and after a success.
    open var operationError: (any Error)? { _error.withLock { $0 } }

    /// The request's progress: `totalUnitCount` is the number of results once the fetch has
    /// run (the request's `estimatedResultCount` before), and `completedUnitCount` reaches it
    /// when the results are ready. Made a child of the progress current on the thread that
    /// executed the request, if any. Cancelling it cancels the request.
    open var progress: Progress? { _progress }

    /// Cancels the request: if it has not finished, its completion block gets no result and an
    /// ``operationError``.
    open func cancel() { _progress?.cancel() }

    internal var isCancelled: Bool { _progress?.isCancelled ?? false }

    internal func fail(_ error: NSError) { _error.withLock { $0 = error } }
}
