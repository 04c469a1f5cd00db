import CoreData
import Foundation

/// MagicalRecord's save blocks on any context (2.3's `NSManagedObjectContext+MagicalChainSave`):
/// the block runs in a new private-queue child of the receiver, which is then saved with its
/// parents to the store. ``MagicalRecord/save(_:completion:)`` and its siblings are these on the
/// root saving context.
extension NSManagedObjectContext {
    /// Runs `block` on a background queue in a new child of this context, then saves the child
    /// and its parents to the store. Returns at once.
    ///
    /// ```swift
    /// NSManagedObjectContext.mr_default().mr_save({ localContext in
    ///     NSEntityDescription.insertNewObject(forEntityName: "Car", into: localContext)
    /// })
    /// ```
    public func mr_save(_ block: @escaping (NSManagedObjectContext) -> Void) {
        mr_save(block, completion: nil)
    }

    /// Runs `block` on a background queue in a new child of this context, saves the child and its
    /// parents to the store, then calls `completion` on the main queue with
    /// `(contextDidSave, error)` (Linux: the main queue must be running; see
    /// ``mr_save(options:completion:)``). Returns at once.
    ///
    /// ```swift
    /// context.mr_save({ localContext in
    ///     NSEntityDescription.insertNewObject(forEntityName: "Car", into: localContext)
    /// }, completion: { contextDidSave, error in print(contextDidSave) })
    /// ```
    public func mr_save(_ block: @escaping (NSManagedObjectContext) -> Void, completion: MRSaveCompletionHandler?) {
        saveInNewChild(named: "MR_saveWithBlock:completion:", block, completion: completion)
    }

    /// Runs `block` on the calling thread in a new child of this context, then saves the child and
    /// its parents to the store, and returns when the changes are there.
    ///
    /// ```swift
    /// context.mr_save(blockAndWait: { localContext in
    ///     NSEntityDescription.insertNewObject(forEntityName: "Car", into: localContext)
    /// })
    /// ```
    public func mr_save(blockAndWait block: (NSManagedObjectContext) -> Void) {
        saveInNewChildAndWait(named: "MR_saveWithBlockAndWait:", block)
    }

    /// A new child named `name` runs `block` on its queue, then saves itself and its parents.
    internal func saveInNewChild(named name: String, _ block: @escaping (NSManagedObjectContext) -> Void,
                                 completion: MRSaveCompletionHandler?) {
        let context = NSManagedObjectContext.mr_context(withParent: self)
        context.mr_setWorkingName(name)
        let block = Unchecked(block), completion = completion.map(Unchecked.init)
        context.perform {
            block.value(context)
            context.mr_save(options: .parentContexts, completion: completion?.value)
        }
    }

    /// A new child named `name` runs `block` on the calling thread (`performAndWait`), then saves
    /// itself and its parents synchronously.
    internal func saveInNewChildAndWait(named name: String, _ block: (NSManagedObjectContext) -> Void) {
        let context = NSManagedObjectContext.mr_context(withParent: self)
        context.mr_setWorkingName(name)
        context.performAndWait {
            block(context)
            context.mr_save(options: [.parentContexts, .synchronously], completion: nil)
        }
    }
}
