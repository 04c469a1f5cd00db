import Foundation

extension NSManagedObjectContext {
    /// The context's changes, as an `AsyncSequence` of object IDs: one ``ManagedObjectIDChanges``
    /// per `NSManagedObjectContextObjectsDidChange` the context posts from now on.
    ///
    /// A Linux/Swift addition; Apple's Core Data has only the notification. Iterate it from any
    /// isolation: the sequence and its elements are `Sendable`, and carry IDs, never objects.
    ///
    /// - Which notifications: `ObjectsDidChange` only, which covers the context's own edits (at
    ///   `processPendingChanges`, which a save runs first), merges (`mergeChanges(fromContextDidSave:)`,
    ///   automatic merges, history and batch-request merges), refreshes and `reset()`. Not the
    ///   did-save notifications: a save's changes were already reported when they were made, and
    ///   would come twice.
    /// - Nothing missed: the sequence observes from the moment it is made (this property's
    ///   read), not from the first `next()`, and buffers without bound, so no change is lost
    ///   however slowly it is read.
    /// - Ending: the observer is removed when the iterating task is cancelled, or when the
    ///   iterator (or the sequence, never iterated) goes away. Iterate it once. The sequence does
    ///   not keep the context alive: it ends when the context is deallocated.
    ///
    /// ```swift
    /// let changes = context.changes
    /// Task {
    ///     for await change in changes {
    ///         print("inserted:", change.inserted, "deleted:", change.deleted)
    ///     }
    /// }
    /// ```
    public var changes: ContextChanges {
        let (stream, continuation) = AsyncStream.makeStream(of: ManagedObjectIDChanges.self, bufferingPolicy: .unbounded)
        let observers = NotificationObservers(observing: self, [(.NSManagedObjectContextObjectsDidChange, self)],
                                              ended: { continuation.finish() }) { notification in
            continuation.yield(ManagedObjectIDChanges(userInfo: notification.userInfo ?? [:]))
        }
        continuation.onTermination = { _ in observers.remove() }
        return ContextChanges(stream: stream)
    }
}
