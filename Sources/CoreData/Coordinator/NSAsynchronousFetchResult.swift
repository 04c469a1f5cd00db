import Foundation

/// The result of an ``NSAsynchronousFetchRequest`` (and of a plain `NSFetchRequest` run with
/// ``NSManagedObjectContext/execute(_:)``): the fetched objects in ``finalResult`` once the fetch
/// has run.
///
/// ```swift
/// let request = NSAsynchronousFetchRequest(fetchRequest: NSFetchRequest<Car>(entityName: "Car")) { result in
///     for car in result.finalResult ?? [] { print(car.name ?? "") }   // on the context's queue
/// }
/// try context.execute(request)
/// ```
open class NSAsynchronousFetchResult<ResultType>: NSPersistentStoreAsynchronousResult, @unchecked Sendable {
    private let request: NSAsynchronousFetchRequest<ResultType>
    /// Written once on the context's queue before the completion block runs.
    internal var _finalResult: [ResultType]?

    internal init(context: NSManagedObjectContext, request: NSAsynchronousFetchRequest<ResultType>, progress: Progress?) {
        self.request = request
        super.init(context: context, progress: progress)
    }

    /// The asynchronous request this is the result of.
    open var fetchRequest: NSAsynchronousFetchRequest<ResultType> { request }

    /// The fetched results; `nil` until the fetch has finished, and when it failed or was cancelled.
    open var finalResult: [ResultType]? { _finalResult }
}
