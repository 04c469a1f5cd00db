import CoreData
import Foundation

/// MagicalRecord's contexts, as in its 2.3 release: a root saving context (private queue, on the
/// coordinator) that writes to the store, and the default context (main queue), its child, for
/// the user interface. New contexts made by ``mr_()`` are private-queue children of the root
/// saving context.
extension NSManagedObjectContext {
    /// The default context: main queue, a child of ``mr_rootSaving()``. The root saving context's
    /// saves are merged into it on the main queue.
    ///
    /// Traps when there is no default stack (a programmer error: MagicalRecord asserts the same,
    /// "Did you forget to initialize the Core Data Stack?"); call a set-up method first.
    ///
    /// ```swift
    /// let cars = try NSManagedObjectContext.mr_default().fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
    /// ```
    public class func mr_default() -> NSManagedObjectContext {
        guard let context = DefaultStack.shared.withLock({ $0.defaultContext }) else {
            preconditionFailure("MagicalRecord: the default context is nil. Did you forget to set up the Core Data stack? Call MagicalRecord.setupCoreDataStack() (or another set-up method) first.")
        }
        return context
    }

    /// The root saving context: private queue, on the default coordinator, merge policy
    /// `NSMergeByPropertyObjectTrumpMergePolicy`. Every MagicalRecord save ends here.
    ///
    /// Traps when there is no default stack, as ``mr_default()`` does.
    ///
    /// ```swift
    /// NSManagedObjectContext.mr_rootSaving().mr_saveToPersistentStoreAndWait()
    /// ```
    public class func mr_rootSaving() -> NSManagedObjectContext {
        guard let context = DefaultStack.shared.withLock({ $0.rootSavingContext }) else {
            preconditionFailure("MagicalRecord: the root saving context is nil. Did you forget to set up the Core Data stack? Call MagicalRecord.setupCoreDataStack() (or another set-up method) first.")
        }
        return context
    }

    /// A new private-queue context whose parent is the root saving context (MagicalRecord 2.3's
    /// `MR_context`; before 2.3 its parent was the default context).
    ///
    /// ```swift
    /// let context = NSManagedObjectContext.mr_()
    /// context.perform { /* import, then */ context.mr_saveToPersistentStoreAndWait() }
    /// ```
    public class func mr_() -> NSManagedObjectContext {
        mr_context(withParent: mr_rootSaving())
    }

    /// A new private-queue context whose parent is `parentContext`. MagicalRecord's saves of it
    /// give its inserted objects permanent IDs first.
    ///
    /// ```swift
    /// let scratch = NSManagedObjectContext.mr_context(withParent: .mr_default())
    /// ```
    public class func mr_context(withParent parentContext: NSManagedObjectContext) -> NSManagedObjectContext {
        let context = mr_newPrivateQueue()
        context.parent = parentContext
        return context
    }

    /// A new private-queue context on `coordinator`.
    ///
    /// ```swift
    /// let context = NSManagedObjectContext.mr_context(with: NSPersistentStoreCoordinator.mr_default()!)
    /// ```
    public class func mr_context(with coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = mr_newPrivateQueue()
        context.persistentStoreCoordinator = coordinator
        MagicalRecordLog.verbose("Created new context \(context.mr_workingName()) with store coordinator: \(coordinator)")
        return context
    }

    /// A new main-queue context, with neither parent nor coordinator.
    ///
    /// ```swift
    /// let ui = NSManagedObjectContext.mr_newMainQueue()
    /// ui.parent = .mr_rootSaving()
    /// ```
    public class func mr_newMainQueue() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        MagicalRecordLog.info("Created new main queue context: \(context.mr_description())")
        return context
    }

    /// A new private-queue context, with neither parent nor coordinator.
    ///
    /// ```swift
    /// let worker = NSManagedObjectContext.mr_newPrivateQueue()
    /// worker.persistentStoreCoordinator = NSPersistentStoreCoordinator.mr_default()
    /// ```
    public class func mr_newPrivateQueue() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        MagicalRecordLog.info("Created new private queue context: \(context.mr_description())")
        return context
    }

    /// Makes the root saving context on `coordinator` and the default context, its child, unless
    /// there is a default context already. The set-up methods call this.
    ///
    /// ```swift
    /// NSPersistentStoreCoordinator.mr_setDefaultStoreCoordinator(coordinator)
    /// NSManagedObjectContext.mr_initializeDefaultContext(with: coordinator)
    /// ```
    public class func mr_initializeDefaultContext(with coordinator: NSPersistentStoreCoordinator) {
        guard DefaultStack.shared.withLock({ $0.defaultContext }) == nil else { return }
        let root = mr_context(with: coordinator)
        root.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        root.mr_setWorkingName("MagicalRecord Root Saving Context")
        let main = mr_newMainQueue()
        main.parent = root
        main.mr_setWorkingName("MagicalRecord Default Context")
        // MagicalRecord merges the root's saves into the default context on the main queue.
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: root, queue: nil) { [weak main] note in
            guard let main else { return }
            let note = Unchecked(note)
            let merge: @Sendable () -> Void = { main.mergeChanges(fromContextDidSave: note.value) }
            if Thread.isMainThread { main.performAndWait(merge) } else { DispatchQueue.main.async(execute: merge) }
        }
        DefaultStack.shared.withLock { stack in
            stack.rootSavingContext = root
            stack.defaultContext = main
            stack.rootSaveObserver = observer
        }
        MagicalRecordLog.info("Set default context: \(main.mr_description())")
    }

    // MARK: Debugging

    /// Names the context in MagicalRecord's log messages and in the concurrency checker's
    /// (Linux: also sets `name`, which the checker prints).
    ///
    /// ```swift
    /// context.mr_setWorkingName("Importer")
    /// ```
    public func mr_setWorkingName(_ workingName: String) {
        userInfo[Self.workingNameKey] = workingName
        name = workingName
    }

    /// The name given by ``mr_setWorkingName(_:)``, or `"Untitled Context"`.
    ///
    /// ```swift
    /// NSManagedObjectContext.mr_default().mr_workingName()   // "MagicalRecord Default Context"
    /// ```
    public func mr_workingName() -> String {
        guard let name = userInfo[Self.workingNameKey] as? String, !name.isEmpty else { return "Untitled Context" }
        return name
    }

    /// The context's class, address and working name, and whether the caller is on the main
    /// thread, as MagicalRecord's log messages show a context.
    ///
    /// ```swift
    /// print(NSManagedObjectContext.mr_default().mr_description())
    /// // <NSManagedObjectContext (0x…): MagicalRecord Default Context> on the main thread
    /// ```
    public func mr_description() -> String {
        let thread = Thread.isMainThread ? "the main thread" : "a background thread"
        return "<\(type(of: self)) (\(Unmanaged.passUnretained(self).toOpaque())): \(mr_workingName())> on \(thread)"
    }

    /// The context and its ancestors, one line each, the receiver marked `(*)`.
    ///
    /// ```swift
    /// print(NSManagedObjectContext.mr_().mr_parentChain())
    /// ```
    public func mr_parentChain() -> String {
        var chain = "\n"
        var current: NSManagedObjectContext? = self
        while let context = current {
            chain += "- \(context.mr_workingName()) (\(Unmanaged.passUnretained(context).toOpaque())) \(context === self ? "(*)" : "")\n"
            current = context.parent
        }
        return chain
    }

    private static let workingNameKey = "MagicalRecordContextWorkingName"
}
