import Foundation

extension NSPersistentStoreCoordinator {
    /// Adds the store that `storeDescription` describes, then calls `block` with the description and
    /// the error, if any.
    ///
    /// When the description's ``NSPersistentStoreDescription/shouldAddStoreAsynchronously`` is `true`,
    /// the store is added on a background queue, this method returns at once, and `block` runs on
    /// that queue; otherwise both happen on the calling thread before this method returns.
    ///
    /// ```swift
    /// coordinator.addPersistentStore(with: NSPersistentStoreDescription(url: storeURL)) { description, error in
    ///     if let error { print("can't open \(description.url!.path): \(error)") }
    /// }
    /// ```
    public func addPersistentStore(with storeDescription: NSPersistentStoreDescription,
                                   completionHandler block: @escaping (NSPersistentStoreDescription, (any Error)?) -> Void) {
        guard storeDescription.shouldAddStoreAsynchronously else {
            block(storeDescription, addPersistentStore(described: storeDescription))
            return
        }
        let handler = UncheckedSendable(block)
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            handler.value(storeDescription, addPersistentStore(described: storeDescription))
        }
    }

    /// Adds the store a description names, on the calling thread, creating the folder of a SQLite
    /// store's file if needed; returns the error instead of throwing it.
    internal func addPersistentStore(described description: NSPersistentStoreDescription) -> (any Error)? {
        let type = description.type
        let url = description.url
        do {
            if type == NSSQLiteStoreType {
                guard let url else {
                    throw CoreDataError.make(.persistentStoreOpen, "The description of a SQLite store has no URL; set its url before loading it")
                }
                if url.isFileURL && !description.isReadOnly {
                    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                }
            }
            try addPersistentStore(ofType: type, configurationName: description.configuration, at: url,
                                   options: description.storeOptions)
            return nil
        } catch {
            return error
        }
    }
}

/// A value handed to another queue that the compiler cannot prove safe to send: a completion
/// handler that Apple's API declares without `@Sendable`, called once on the other queue.
internal struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
