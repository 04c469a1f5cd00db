import Foundation

/// The `NotificationCenter` observers behind one observation sequence, removed together once
/// (when the sequence's task is cancelled, or its iterator, or the unused sequence, goes away).
///
/// Counts its live observations per observed context, for tests to see that ending an
/// observation removes its observers (touched only when an observation starts or ends).
internal final class NotificationObservers: @unchecked Sendable {
    private let observed: ObjectIdentifier
    private let observers: Locked<[any NSObjectProtocol]?>
    private static let live = Locked<[ObjectIdentifier: Int]>([:])

    /// Adds one observer per `(name, object)` pair, each calling `handler` on the posting thread.
    init(observing context: NSManagedObjectContext, _ names: [(Notification.Name, AnyObject?)],
         handler: @escaping @Sendable (Notification) -> Void) {
        let observed = ObjectIdentifier(context)
        self.observed = observed
        Self.live.withLock { $0[observed, default: 0] += 1 }
        let center = NotificationCenter.default
        observers = Locked(names.map { center.addObserver(forName: $0.0, object: $0.1, queue: nil, using: handler) })
    }

    /// Removes the observers; later calls do nothing.
    func remove() {
        guard let removed = observers.withLock({ observers -> [any NSObjectProtocol]? in
            defer { observers = nil }
            return observers
        }) else { return }
        for observer in removed { NotificationCenter.default.removeObserver(observer) }
        Self.live.withLock { live in
            live[observed]! -= 1
            if live[observed] == 0 { live[observed] = nil }
        }
    }

    /// How many observations of `context` have not ended.
    static func count(observing context: NSManagedObjectContext) -> Int {
        live.withLock { $0[ObjectIdentifier(context)] ?? 0 }
    }
}
