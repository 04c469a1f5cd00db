/// How ``CoreData/NSManagedObjectContext/mr_save(options:completion:)`` saves, as Swift sees
/// MagicalRecord's `MRSaveOptions`. No option (`[]`) saves only the context, asynchronously.
///
/// ```swift
/// context.mr_save(options: [.parentContexts, .synchronously])
/// ```
public struct MRSaveOptions: OptionSet, Sendable {
    /// The options' bits, with MagicalRecord's values.
    public let rawValue: UInt

    /// Makes options from MagicalRecord's bit values.
    ///
    /// ```swift
    /// let options = MRSaveOptions(rawValue: 1 << 1)   // .parentContexts
    /// ```
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Saves the parent contexts too, one after another, until the changes are in the store.
    public static let parentContexts = MRSaveOptions(rawValue: 1 << 1)
    /// Saves synchronously: the call returns when the save is done.
    public static let synchronously = MRSaveOptions(rawValue: 1 << 2)
    /// Saves synchronously, except the root saving context, which saves asynchronously.
    public static let synchronouslyExceptRootContext = MRSaveOptions(rawValue: 1 << 3)
}

/// What MagicalRecord's saves call when they are done: whether the context saved (`false` when
/// it had no changes, or failed), and the error of a failed save.
///
/// ```swift
/// let completion: MRSaveCompletionHandler = { contextDidSave, error in
///     if let error { print("save failed: \(error)") }
/// }
/// ```
public typealias MRSaveCompletionHandler = (_ contextDidSave: Bool, _ error: (any Error)?) -> Void
