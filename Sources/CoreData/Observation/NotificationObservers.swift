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

    /// Adds one observer per `(name, object)` pair, each calling `handler` on the posting thread;
    /// `ended` is called once the observed context is deallocated (the observers are removed).
    ///
    /// The context itself is never held: Foundation on Linux keeps an observed object alive
    /// (Apple's does not), so a pair naming the context is observed for every sender and
    /// filtered by identity, and a sequence awaited by a task does not keep its context.
    init(observing context: NSManagedObjectContext, _ names: [(Notification.Name, AnyObject?)],
         ended: @escaping @Sendable () -> Void, handler: @escaping @Sendable (Notification) -> Void) {
        let observed = ObjectIdentifier(context)
        self.observed = observed
        Self.live.withLock { $0[observed, default: 0] += 1 }
        let center = NotificationCenter.default
        var tokens = names.map { name, object -> any NSObjectProtocol in
            guard object === context else { return center.addObserver(forName: name, object: object, queue: nil, using: handler) }
            return center.addObserver(forName: name, object: nil, queue: nil) { notification in
                if let sender = notification.object as AnyObject?, ObjectIdentifier(sender) == observed { handler(notification) }
            }
        }
        observers = Locked(nil)
        tokens.append(Self.internalCenter.addObserver(forName: Self.contextDidGo, object: nil, queue: nil) { [weak self] notification in
            guard notification.userInfo?["context"] as? ObjectIdentifier == observed else { return }
            self?.remove()
            ended()
        })
        observers.withLock { $0 = tokens }
    }

    /// Posted as an observed context is deallocated, on a center of the package's own (an app's
    /// observers never see it).
    private static let contextDidGo = Notification.Name("_CoreDataObservedContextDidGo")
    private static let internalCenter = NotificationCenter()

    /// Called from a context's `deinit`: its observations end.
    static func contextDidGo(_ context: ObjectIdentifier) {
        guard live.withLock({ $0[context] != nil }) else { return }
        internalCenter.post(name: contextDidGo, object: nil, userInfo: ["context": context])
    }

    /// Removes the observers; later calls do nothing.
    func remove() {
        guard let removed = observers.withLock({ observers -> [any NSObjectProtocol]? in
            defer { observers = nil }
            return observers
        }) else { return }
        for observer in removed { // (each center ignores the other's)
            NotificationCenter.default.removeObserver(observer)
            Self.internalCenter.removeObserver(observer)
        }
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
