import CoreData
import Foundation

/// MagicalRecord's process-wide default stack: the model, the coordinator, its first store, the
/// root saving context and the default context, which the Objective-C framework keeps in static
/// variables. Every read and write goes through one lock, so any thread may set up, use or clean
/// up the stack.
internal struct DefaultStack {
    var model: NSManagedObjectModel?
    var coordinator: NSPersistentStoreCoordinator?
    var store: NSPersistentStore?
    var rootSavingContext: NSManagedObjectContext?
    var defaultContext: NSManagedObjectContext?
    /// The observer that merges the root saving context's saves into the default context.
    var rootSaveObserver: (any NSObjectProtocol)?

    /// The one default stack of the process.
    static let shared = LockedValue(DefaultStack())
}

/// A value handed to another queue that Swift cannot prove `Sendable`: MagicalRecord's blocks and
/// completion handlers, which Swift sees as plain (non-`Sendable`) closures when it imports the
/// Objective-C framework, and a did-save notification. Each is used on one queue at a time: a
/// save block on its context's queue, a completion on the main queue, a notification by the
/// merge it was posted for.
internal struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
