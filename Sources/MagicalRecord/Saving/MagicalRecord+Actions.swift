import CoreData
import Foundation

/// MagicalRecord's save blocks (2.3's `MagicalRecord+Actions`). Each makes a new private-queue
/// context, a child of the root saving context (from MagicalRecord 2.3 on; 2.2, which seed 003
/// quotes, used a child of the default context), runs the block in it, then saves it and its
/// parent to the store. The default context learns of the changes when the root saving context's
/// save is merged into it, on the main queue. They trap when no stack is set up, as
/// ``CoreData/NSManagedObjectContext/mr_rootSaving()`` does.
extension MagicalRecord {
    /// Runs `block` on a background queue (the new context's own), in a new context, then saves
    /// it to the store. Returns at once.
    ///
    /// ```swift
    /// MagicalRecord.save({ localContext in
    ///     let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: localContext)
    ///     car.setValue("Model T", forKey: "name")
    /// })
    /// ```
    public static func save(_ block: @escaping (NSManagedObjectContext) -> Void) {
        save(block, completion: nil)
    }

    /// Runs `block` on a background queue in a new context, saves it to the store, then calls
    /// `completion` on the main queue with `(contextDidSave, error)`. Returns at once.
    ///
    /// Linux: the main queue must be running for `completion` to be called (see
    /// ``CoreData/NSManagedObjectContext/mr_save(options:completion:)``).
    ///
    /// ```swift
    /// MagicalRecord.save({ localContext in
    ///     NSEntityDescription.insertNewObject(forEntityName: "Car", into: localContext)
    /// }, completion: { contextDidSave, error in
    ///     print(contextDidSave ? "saved" : "not saved: \(String(describing: error))")
    /// })
    /// ```
    public static func save(_ block: @escaping (NSManagedObjectContext) -> Void, completion: MRSaveCompletionHandler?) {
        NSManagedObjectContext.mr_rootSaving().saveInNewChild(named: "saveWithBlock:completion:", block, completion: completion)
    }

    /// Runs `block` in a new context on the calling thread (`performAndWait`: seed 003 saw the
    /// main thread when called from it), then saves the context to the store, and returns when
    /// the changes are in the store.
    ///
    /// ```swift
    /// MagicalRecord.save(blockAndWait: { localContext in
    ///     let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: localContext)
    ///     car.setValue("Model T", forKey: "name")
    /// })
    /// ```
    public static func save(blockAndWait block: (NSManagedObjectContext) -> Void) {
        NSManagedObjectContext.mr_rootSaving().saveInNewChildAndWait(named: "saveWithBlockAndWait:", block)
    }
}
