import CoreData
import Foundation

/// MagicalRecord's saves of a context (2.3's `NSManagedObjectContext+MagicalSaves`). Every form
/// is ``mr_save(options:completion:)`` with some options.
///
/// **Completion handlers run on the main queue**, as in MagicalRecord, asynchronously, even after
/// a synchronous save. Linux: a command-line program drains the main queue only while it runs
/// `dispatchMain()`, `RunLoop.main.run()` or an `async` main entry point that awaits; a program
/// that does none of these never sees its completion handlers called. Use the synchronous forms
/// there (``mr_saveToPersistentStoreAndWait()``, ``MagicalRecord/save(blockAndWait:)``).
/// Swift Testing drains the main queue during `swift test`.
///
/// A save that fails is logged (`MagicalRecordLoggingLevel.error`) and its error goes to the
/// completion handler; the parents are then not saved.
extension NSManagedObjectContext {
    /// Saves the context, then its parent, and so on to the store, asynchronously; `completion`
    /// runs on the main queue when the last save is done.
    ///
    /// ```swift
    /// context.mr_saveToPersistentStore { contextDidSave, error in print(contextDidSave) }
    /// ```
    public func mr_saveToPersistentStore(completion: MRSaveCompletionHandler? = nil) {
        mr_save(options: .parentContexts, completion: completion)
    }

    /// Saves the context, then its parent, and so on to the store, and returns when the changes
    /// are in the store.
    ///
    /// ```swift
    /// NSManagedObjectContext.mr_default().mr_saveToPersistentStoreAndWait()
    /// ```
    public func mr_saveToPersistentStoreAndWait() {
        mr_save(options: [.parentContexts, .synchronously], completion: nil)
    }

    /// Saves only the context (its changes go to its parent, or to the store for a context on the
    /// coordinator), asynchronously; `completion` runs on the main queue.
    ///
    /// ```swift
    /// context.mr_saveOnlySelf { contextDidSave, error in print(contextDidSave) }
    /// ```
    public func mr_saveOnlySelf(completion: MRSaveCompletionHandler? = nil) {
        mr_save(options: [], completion: completion)
    }

    /// Saves only the context, and returns when it is saved.
    ///
    /// ```swift
    /// child.mr_saveOnlySelfAndWait()   // the changes are now the parent's
    /// ```
    public func mr_saveOnlySelfAndWait() {
        mr_save(options: .synchronously, completion: nil)
    }

    /// Saves the context as `options` say: with its parents or alone, synchronously or not.
    /// `completion` runs on the main queue with `(contextDidSave, error)`: `(false, nil)` when the
    /// context had no changes. A child context's inserted objects have permanent IDs after the
    /// save, as MagicalRecord gives them: from the store when the parents are saved too, else
    /// obtained before the child saves (a plain `save()` of a child leaves them temporary).
    ///
    /// ```swift
    /// context.mr_save(options: [.parentContexts, .synchronously]) { contextDidSave, error in
    ///     if let error { print("not saved: \(error)") }
    /// }
    /// ```
    public func mr_save(options: MRSaveOptions = [], completion: MRSaveCompletionHandler? = nil) {
        mr_save(with: options, completion: completion)
    }

    /// MagicalRecord 2's `MR_save` (deprecated there in favour of
    /// ``mr_saveToPersistentStoreAndWait()``, which it calls): not a save of this context alone,
    /// which `mr_save(options:completion:)` with its defaults would be.
    ///
    /// ```swift
    /// context.mr_save()
    /// ```
    public func mr_save() {
        mr_saveToPersistentStoreAndWait()
    }

    private func mr_save(with options: MRSaveOptions, completion: MRSaveCompletionHandler?) {
        let completion = completion.map(Unchecked.init)
        guard performAndWait({ hasChanges }) else {
            MagicalRecordLog.verbose("NO CHANGES IN ** \(mr_workingName()) ** CONTEXT - NOT SAVING")
            if let completion { DispatchQueue.main.async { completion.value(false, nil) } }
            return
        }
        let saveParents = options.contains(.parentContexts)
        let exceptRoot = options.contains(.synchronouslyExceptRootContext)
        let isRoot = DefaultStack.shared.withLock { $0.rootSavingContext } === self
        let synchronously = (options.contains(.synchronously) && !exceptRoot) || (exceptRoot && !isRoot)
        let saveBlock: @Sendable () -> Void = { [self] in
            MagicalRecordLog.info("→ Saving \(mr_description())")
            MagicalRecordLog.verbose("→ Save Parents? \(saveParents ? "YES" : "NO")")
            MagicalRecordLog.verbose("→ Save Synchronously? \(synchronously ? "YES" : "NO")")
            var saveError: NSError?
            do {
                // MagicalRecord gives a child's new objects permanent IDs before it saves, so that
                // they have them after the save. Saved on to the store, they get them from the
                // store's save, in insertion order (`obtainPermanentIDs` takes them in the order
                // of the unordered `insertedObjects`): only a child saved alone obtains them here.
                if parent != nil, !saveParents, !insertedObjects.isEmpty { try obtainPermanentIDs(for: Array(insertedObjects)) }
                try save()
            } catch {
                saveError = error as NSError
                MagicalRecordLog.error("Unable to save \(mr_workingName()): \(error.localizedDescription) (\(NSPersistentStoreCoordinator.describe(error)))")
            }
            if saveError == nil, saveParents, let parent {
                var parentOptions = options
                if synchronously { parentOptions.insert(.synchronously) } else { parentOptions.remove(.synchronously) }
                parent.mr_save(options: parentOptions, completion: completion?.value)
                return
            }
            if saveError == nil { MagicalRecordLog.verbose("→ Finished saving: \(mr_description())") }
            if let completion {
                let error = saveError
                DispatchQueue.main.async { completion.value(error == nil, error) }
            }
        }
        if synchronously { performAndWait(saveBlock) } else { perform(saveBlock) }
    }
}
