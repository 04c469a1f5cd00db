import Foundation

/// The `AsyncSequence` of ``NSManagedObjectContext/observeResults(of:)``: a fetch request's
/// results, as object IDs, first as they are now, then after every change that alters them.
///
/// Its elements are `[NSManagedObjectID]`, `Sendable`: map them to objects on the context's
/// queue (`context.perform { ids.map(context.object(with:)) }`). It throws the fetch's error,
/// if the request cannot be fetched, and ends.
///
/// ```swift
/// for try await ids in context.observeResults(of: request) {
///     let names = await context.perform { ids.map { context.object(with: $0).value(forKey: "name") as? String } }
///     print(names)
/// }
/// ```
public struct ObservedResults: AsyncSequence, Sendable {
    public typealias Element = [NSManagedObjectID]
    public typealias AsyncIterator = AsyncThrowingStream<[NSManagedObjectID], any Error>.Iterator

    let stream: AsyncThrowingStream<[NSManagedObjectID], any Error>

    /// The iterator; its end (or its task's cancellation) stops the observation.
    ///
    /// ```swift
    /// var iterator = context.observeResults(of: request).makeAsyncIterator()
    /// let current = try await iterator.next()
    /// ```
    public func makeAsyncIterator() -> AsyncIterator { stream.makeAsyncIterator() }
}
