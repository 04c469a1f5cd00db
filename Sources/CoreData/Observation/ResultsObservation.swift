import Foundation

/// The work behind one ``ObservedResults``: re-fetches the request's IDs on the context's queue
/// after each change that may alter them, and yields those that differ from the last yielded.
///
/// Changes come from any thread; a re-fetch is scheduled for the first change after the last
/// re-fetch started, and the changes that come before it runs share it. A change that comes
/// while a re-fetch runs schedules another, so the last re-fetch starts after the last change:
/// the last element is what a fetch after the changes gives.
internal final class ResultsObservation: @unchecked Sendable {
    private struct State {
        /// Whether a re-fetch is scheduled and has not started.
        var scheduled = false
        /// The last element yielded.
        var last: [NSManagedObjectID]?
        /// The notification observers that call ``changed()``.
        var observers: NotificationObservers?
    }

    /// Not held: the sequence ends when the context goes (``NotificationObservers``).
    private weak var context: NSManagedObjectContext?
    /// A copy of the caller's request, for IDs; read only on the context's queue.
    private let request: NSFetchRequest<NSManagedObjectID>
    private let continuation: AsyncThrowingStream<[NSManagedObjectID], any Error>.Continuation
    private let state = Locked(State())

    init(context: NSManagedObjectContext, request: NSFetchRequest<NSManagedObjectID>,
         continuation: AsyncThrowingStream<[NSManagedObjectID], any Error>.Continuation) {
        self.context = context
        self.request = request
        self.continuation = continuation
    }

    /// Hands over the observers that call ``changed()``, removed when a fetch fails.
    func attach(_ observers: NotificationObservers) {
        state.withLock { $0.observers = observers }
    }

    /// Whether a save by `sender`, a context, reaches this context's fetches: its own saves (its
    /// objects' IDs become permanent), and the saves of contexts on the same coordinator to the store.
    func isRelevant(saveBy sender: Any?) -> Bool {
        guard let sender = sender as? NSManagedObjectContext else { return false }
        guard let context else { return false }
        if sender === context { return true }
        guard let coordinator = context.persistentStoreCoordinator else { return false }
        return sender.parent == nil && sender.persistentStoreCoordinator === coordinator
    }

    /// Schedules a re-fetch, unless one is scheduled that has not started.
    func changed() {
        let schedule = state.withLock { state in
            defer { state.scheduled = true }
            return !state.scheduled
        }
        guard schedule, let context else { return }
        context.perform { [self] in refetch() }
    }

    /// On the context's queue: fetches the IDs and yields them if they changed.
    private func refetch() {
        state.withLock { $0.scheduled = false }
        let ids: [NSManagedObjectID]
        guard let context else { return }
        do {
            ids = try context.fetch(request)
        } catch {
            // Before the error reaches the iterator: the stream's termination handler, which
            // removes them too, may run after the iterator has seen the error.
            state.withLock { $0.observers }?.remove()
            continuation.finish(throwing: error)
            return
        }
        let isNew = state.withLock { state in
            guard state.last != ids else { return false }
            state.last = ids
            return true
        }
        if isNew { continuation.yield(ids) }
    }
}
