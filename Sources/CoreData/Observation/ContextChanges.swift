import Foundation

/// The `AsyncSequence` of ``NSManagedObjectContext/changes``: a context's change notifications
/// as `Sendable` object IDs.
///
/// ```swift
/// for await change in context.changes where !change.deleted.isEmpty {
///     print("deleted:", change.deleted)
/// }
/// ```
public struct ContextChanges: AsyncSequence, Sendable {
    public typealias Element = ManagedObjectIDChanges
    public typealias AsyncIterator = AsyncStream<ManagedObjectIDChanges>.Iterator

    let stream: AsyncStream<ManagedObjectIDChanges>

    /// The iterator; its end (or its task's cancellation) removes the observer.
    ///
    /// ```swift
    /// var iterator = context.changes.makeAsyncIterator()
    /// let first = await iterator.next()
    /// ```
    public func makeAsyncIterator() -> AsyncIterator { stream.makeAsyncIterator() }
}
