import Foundation

// The context lock of confinement contexts, deprecated since iOS 8 and macOS 10.10 for queue
// contexts and `performAndWait(_:)`. Code written before queue contexts locks a context around
// its use from several threads; these keep that code compiling and keep its threads apart.

extension NSManagedObjectContext {
    /// Takes the context's lock (recursive), waiting for it: other threads that call `lock()`
    /// wait until this one calls ``unlock()`` as often.
    ///
    /// As Apple's deprecated lock, it serializes the callers of `lock()`, for a confinement
    /// context shared between threads; the context's own methods do not take it. A queue
    /// context serializes its work itself: use ``performAndWait(_:)``.
    ///
    /// ```swift
    /// context.lock()
    /// defer { context.unlock() }
    /// try context.save()
    /// ```
    @available(*, deprecated, message: "Use a queue style context and -performBlockAndWait: instead")
    public func lock() {
        contextLock.lock()
    }

    /// Gives back the lock ``lock()`` or a successful ``tryLock()`` took.
    @available(*, deprecated, message: "Use a queue style context and -performBlockAndWait: instead")
    public func unlock() {
        contextLock.unlock()
    }

    /// Takes the context's lock if no other thread holds it; whether it did.
    @available(*, deprecated, message: "Use a queue style context and -performBlock: instead")
    public func tryLock() -> Bool {
        contextLock.try()
    }
}
