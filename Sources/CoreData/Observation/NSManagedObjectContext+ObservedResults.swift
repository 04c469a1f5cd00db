import Foundation

extension NSManagedObjectContext {
    /// A fetch request's results as an `AsyncSequence` of object IDs: first the current
    /// results, then the results again after each change that alters them (the role of GRDB's
    /// `ValueObservation`).
    ///
    /// A Linux/Swift addition; Apple's Core Data has no such sequence. Iterate it from any
    /// isolation: its elements are `[NSManagedObjectID]`, `Sendable`, never objects. To read
    /// objects, map the IDs on the context's queue.
    ///
    /// - What counts as a change: the context's own `NSManagedObjectContextObjectsDidChange`
    ///   (its edits at `processPendingChanges`, merges, refreshes, `reset()`), and the did-save
    ///   of this context or of any context that saves to the same coordinator's stores. Each
    ///   runs a fetch (`resultType` `.managedObjectIDResultType`) on the context's queue;
    ///   changes that come before that fetch starts share it. A batch request's changes count
    ///   once merged into the context.
    /// - No doubled element: an element is yielded only when it differs from the one before.
    /// - No missed change: a change during a fetch is followed by another fetch, so the last
    ///   element is what a fetch after the last change gives.
    /// - The context must have a queue (`.privateQueueConcurrencyType` or
    ///   `.mainQueueConcurrencyType`); for a confinement context, or a request that cannot be
    ///   fetched, the sequence throws the error (`NSCocoaErrorDomain`) and ends.
    /// - Ending: the observers are removed when the iterating task is cancelled, or when the
    ///   iterator (or the sequence, never iterated) goes away. Iterate it once.
    ///
    /// The request is copied: changing it afterwards does not change the observation.
    ///
    /// ```swift
    /// let request = NSFetchRequest<NSManagedObject>(entityName: "Note")
    /// request.sortDescriptors = [NSSortDescriptor(key: "date", ascending: false)]
    /// for try await ids in context.observeResults(of: request) {
    ///     print("\(ids.count) notes")
    /// }
    /// ```
    public func observeResults<T>(of request: NSFetchRequest<T>) -> ObservedResults {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [NSManagedObjectID].self, throwing: (any Error).self,
                                                                    bufferingPolicy: .unbounded)
        guard concurrencyType != .confinementConcurrencyType else {
            continuation.finish(throwing: CoreDataError.make(.coreData,
                "observeResults(of:) needs a context with a queue (private or main), not a confinement context"))
            return ObservedResults(stream: stream)
        }
        let idRequest = request.copiedRequest(as: NSManagedObjectID.self)
        idRequest.resultType = .managedObjectIDResultType
        let observation = ResultsObservation(context: self, request: idRequest, continuation: continuation)
        let names: [(Notification.Name, AnyObject?)] = [(.NSManagedObjectContextObjectsDidChange, self), (.NSManagedObjectContextDidSave, nil),
                                                        (NSManagedObjectContext.didMergeUnregisteredUpdatesNotification, self)]
        let observers = NotificationObservers(observing: self, names, ended: { continuation.finish() }) { notification in
            if notification.name == .NSManagedObjectContextDidSave && !observation.isRelevant(saveBy: notification.object) { return }
            observation.changed()
        }
        observation.attach(observers)
        continuation.onTermination = { _ in observers.remove() }
        observation.changed()
        return ObservedResults(stream: stream)
    }
}
