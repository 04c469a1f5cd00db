import Foundation

/// The completion block of an asynchronous fetch, as Apple names it.
public typealias NSPersistentStoreAsynchronousFetchResultCompletionBlock = (NSAsynchronousFetchResult<any NSFetchRequestResult>) -> Void

/// A fetch request that runs on its context's queue after ``NSManagedObjectContext/execute(_:)``
/// has returned, reports its progress, can be cancelled, and hands its result to a completion
/// block on the context's queue.
///
/// ```swift
/// let fetch = NSFetchRequest<Car>(entityName: "Car")
/// let request = NSAsynchronousFetchRequest(fetchRequest: fetch) { result in
///     print(result.finalResult?.count ?? 0, result.operationError as Any)
/// }
/// let result = try context.execute(request) as! NSAsynchronousFetchResult<Car>   // at once
/// result.progress?.cancel()   // or result.cancel()
/// ```
///
/// Linux difference: the generic parameter is unconstrained, as `NSFetchRequest`'s is, so that
/// requests of `NSFetchRequestResult` compile; the completion block takes the typed result.
open class NSAsynchronousFetchRequest<ResultType>: NSPersistentStoreRequest {
    /// A copy of the request, with its own copy of the fetch request, the same completion block
    /// and its options.
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSAsynchronousFetchRequest(fetchRequest: request.copy() as! NSFetchRequest<ResultType>, completionBlock: completion)
        copy.affectedStores = affectedStores
        copy.estimatedResultCount = estimatedResultCount
        copy.progressStep = progressStep
        return copy
    }

    private let request: NSFetchRequest<ResultType>
    private let completion: ((NSAsynchronousFetchResult<ResultType>) -> Void)?

    /// A request running `request` asynchronously and calling `blk` with the result.
    public init(fetchRequest request: NSFetchRequest<ResultType>, completionBlock blk: ((NSAsynchronousFetchResult<ResultType>) -> Void)? = nil) {
        self.request = request
        self.completion = blk
        super.init()
    }

    /// The fetch request run.
    open var fetchRequest: NSFetchRequest<ResultType> { request }

    /// Called on the context's queue when the fetch has finished, failed or been cancelled.
    open var completionBlock: ((NSAsynchronousFetchResult<ResultType>) -> Void)? { completion }

    /// How many results are expected: the progress's `totalUnitCount` until the real count is
    /// known (0, the default: unknown).
    open var estimatedResultCount: Int = 0

    /// How many objects are made between two progress reports (and cancellation checks).
    internal var progressStep = 1_000
    /// Called on the context's queue after each progress report, with the progress (tests).
    internal var didReportProgress: ((Progress) -> Void)?

    /// ``NSPersistentStoreRequestType/fetchRequestType``: the request is run as a fetch.
    open override var requestType: NSPersistentStoreRequestType { .fetchRequestType }
}
