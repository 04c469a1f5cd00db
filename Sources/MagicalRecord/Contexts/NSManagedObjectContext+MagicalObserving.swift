import CoreData
import Foundation

// MagicalRecord's `NSManagedObjectContext+MagicalObserving`: a context that merges what another
// context saves (seed 004's pattern: the main context observing a background one).

/// The observers `mr_observeContext(_:)` added, by observing and observed context.
private let contextObservers = LockedValue([ContextPair: Unchecked<any NSObjectProtocol>]())

private struct ContextPair: Hashable {
    let observer: ObjectIdentifier
    let observed: ObjectIdentifier
}

extension NSManagedObjectContext {
    /// Merges into this context, on its queue, every save of `otherContext` from now on, as
    /// MagicalRecord's `MR_observeContext:`; ``mr_stopObservingContext(_:)`` ends it. Observing
    /// a context twice merges once. The merge is queued on this context's queue (`perform`), not
    /// waited for: the saving thread never waits on this context, which may be waiting on it.
    ///
    /// ```swift
    /// NSManagedObjectContext.mr_default().mr_observeContext(backgroundContext)
    /// ```
    public func mr_observeContext(_ otherContext: NSManagedObjectContext) {
        observe(otherContext) { [weak self] changes in
            guard let self else { return }
            let merge = Unchecked(changes)
            self.perform { [weak self] in
                guard let self else { return }
                NSManagedObjectContext.mergeChanges(fromRemoteContextSave: merge.value, into: [self])
            }
        }
    }

    /// ``mr_observeContext(_:)``, merging on the main queue (MagicalRecord's
    /// `MR_observeContextOnMainThread:`): for a context used on the main thread. Linux: the merge
    /// is queued on the main queue, not waited for.
    ///
    /// ```swift
    /// mainContext.mr_observeContextOnMainThread(backgroundContext)
    /// ```
    public func mr_observeContextOnMainThread(_ otherContext: NSManagedObjectContext) {
        observe(otherContext) { [weak self] changes in
            let merge = Unchecked(changes)
            DispatchQueue.main.async { [weak self] in
                guard let self else { return }
                NSManagedObjectContext.mergeChanges(fromRemoteContextSave: merge.value, into: [self])
            }
        }
    }

    /// Stops merging `otherContext`'s saves (MagicalRecord's `MR_stopObservingContext:`).
    ///
    /// ```swift
    /// mainContext.mr_stopObservingContext(backgroundContext)
    /// ```
    public func mr_stopObservingContext(_ otherContext: NSManagedObjectContext) {
        let key = ContextPair(observer: ObjectIdentifier(self), observed: ObjectIdentifier(otherContext))
        if let token = contextObservers.withLock({ $0.removeValue(forKey: key) }) {
            NotificationCenter.default.removeObserver(token.value)
        }
    }

    /// Calls `merge` with the IDs of what each save of `otherContext` changed (the did-save
    /// notification's `…ObjectIDsKey` sets, under the keys `mergeChanges(fromRemoteContextSave:into:)` reads).
    private func observe(_ otherContext: NSManagedObjectContext, merge: @escaping @Sendable ([AnyHashable: Any]) -> Void) {
        mr_stopObservingContext(otherContext)
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: otherContext, queue: nil) { note in
            let info = note.userInfo ?? [:]
            var changes: [AnyHashable: Any] = [:]
            for (idsKey, key) in [(NSInsertedObjectIDsKey, NSInsertedObjectsKey), (NSUpdatedObjectIDsKey, NSUpdatedObjectsKey),
                                  (NSDeletedObjectIDsKey, NSDeletedObjectsKey)] {
                if let ids = info[idsKey] as? Set<NSManagedObjectID>, !ids.isEmpty { changes[key] = Array(ids) }
            }
            if !changes.isEmpty { merge(changes) }
        }
        let key = ContextPair(observer: ObjectIdentifier(self), observed: ObjectIdentifier(otherContext))
        contextObservers.withLock { $0[key] = Unchecked(token) }
    }
}
