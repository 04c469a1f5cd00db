import Foundation

/// The run-time concurrency checker, Linux's `-com.apple.CoreData.ConcurrencyDebug 1`: with
/// `COREDATA_CONCURRENCY_DEBUG=1` in the environment, using a context or one of its objects off
/// the context's queue stops the process with a message naming the context, the object, the
/// property and the thread.
///
/// Checked: a context's fetches, counts, saves, inserts, deletes, lookups, refreshes, merges and
/// change sets, and its objects' key-value coding and `@Managed` accessors. Not checked, as on
/// Apple platforms: `perform`/`performAndWait`, `objectID`, `concurrencyType`, `parent`,
/// `persistentStoreCoordinator`; nor `hasChanges` (seeds 001 and 002 read it off the queue to
/// decide whether to save; the answer may then be stale), nor confinement contexts (the
/// deprecated type has no queue to check against).
@usableFromInline
internal enum ConcurrencyDebug {
    /// Read once, from the environment.
    @usableFromInline
    static let isEnabled: Bool = {
        guard let value = ProcessInfo.processInfo.environment["COREDATA_CONCURRENCY_DEBUG"] else { return false }
        return !value.isEmpty && value != "0"
    }()

    /// Stops the process: `context` was used off its queue.
    static func violation(_ context: NSManagedObjectContext, _ what: String, object: NSManagedObject? = nil) -> Never {
        let thread = Thread.current
        let threadName = thread.isMainThread ? "the main thread" : "thread '\(thread.name ?? "")' \(Unmanaged.passUnretained(thread).toOpaque())"
        let queueName: String
        switch context.concurrencyType {
        case .mainQueueConcurrencyType: queueName = "the main queue"
        case .privateQueueConcurrencyType: queueName = "its private queue"
        case .confinementConcurrencyType: queueName = "its thread"
        }
        var message = "CoreData concurrency violation: \(what)"
        if let object {
            message += " of <\(object.entity.name ?? "?") \(Unmanaged.passUnretained(object).toOpaque())> (\(object.objectID.uriRepresentation().absoluteString))"
        }
        message += " on \(threadName), off the queue of \(context.debugName), which lives on \(queueName). Use the context and its objects inside perform(_:) or performAndWait(_:), and pass NSManagedObjectIDs between queues."
        fatalError(message)
    }
}

extension NSManagedObjectContext {
    /// Stops the process if the concurrency checker is on and the caller is off this context's queue.
    @inline(__always)
    internal func checkQueue(_ what: @autoclosure () -> String) {
        if ConcurrencyDebug.isEnabled { verifyQueue(what()) }
    }

    @inline(never)
    internal func verifyQueue(_ what: String, object: NSManagedObject? = nil) {
        guard concurrencyType != .confinementConcurrencyType, !isOnQueue else { return }
        ConcurrencyDebug.violation(self, what, object: object)
    }

    /// How the checker names a context.
    internal var debugName: String {
        "NSManagedObjectContext \(Unmanaged.passUnretained(self).toOpaque())" + (name.map { " '\($0)'" } ?? "")
    }
}

extension NSManagedObject {
    /// Stops the process if the concurrency checker is on and the caller is off the queue of the
    /// object's context. `key` names the property being read or written.
    @inlinable @inline(__always)
    internal func _checkQueue(_ key: @autoclosure () -> String) {
        if _checksQueue { _verifyQueue(key()) }
    }

    @usableFromInline @inline(never)
    internal func _verifyQueue(_ key: String) {
        guard let context = _context else {
            ManagedKeyRecorder.current?.record(self, key: key)
            return
        }
        context.verifyQueue("access to '\(key)'", object: self)
    }
}
