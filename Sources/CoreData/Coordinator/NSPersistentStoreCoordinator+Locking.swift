import Foundation

// The coordinator lock, deprecated since iOS 8 and macOS 10.10 for `performAndWait(_:)`. Code
// written before coordinator queues locks the coordinator around work on it from several
// threads; these keep that code compiling and keep its threads apart, as `performAndWait(_:)`
// does.

extension NSPersistentStoreCoordinator {
    /// Takes the coordinator's lock (recursive), waiting for it: until this thread calls
    /// ``unlock()`` as often, other threads' `lock()`, contexts' saves through the coordinator,
    /// and the blocks of ``perform(_:)`` and ``performAndWait(_:)`` wait. The holding thread
    /// may go on using the coordinator and its contexts; fetches do not wait, as for
    /// `performAndWait(_:)`.
    ///
    /// ```swift
    /// coordinator.lock()
    /// defer { coordinator.unlock() }
    /// try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
    /// ```
    ///
    /// Calling ``unlock()`` on a thread that does not hold the lock is a programmer error (Apple's
    /// lock does not allow it either).
    @available(*, deprecated, message: "Use -performBlockAndWait: instead")
    public func lock() {
        // The save lock first, in the order `performAndWait(_:)` takes them.
        takeSaveLock()
        performLock.lock()
    }

    /// Gives back the lock ``lock()`` or a successful ``tryLock()`` took.
    @available(*, deprecated, message: "Use -performBlockAndWait: instead")
    public func unlock() {
        performLock.unlock()
        giveBackSaveLock()
    }

    /// Takes the coordinator's lock if no other thread holds it and no other context is saving
    /// through the coordinator; whether it did.
    @available(*, deprecated, message: "Use -performBlock: instead")
    public func tryLock() -> Bool {
        guard tryTakeSaveLock() else { return false }
        guard performLock.try() else {
            giveBackSaveLock()
            return false
        }
        return true
    }
}
