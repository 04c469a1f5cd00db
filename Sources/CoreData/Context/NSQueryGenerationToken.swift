import Foundation

/// A token that names a generation of the persistent stores' data: the one a pinned context
/// reads, or, as ``current``, "the latest, pinned at the next read".
///
/// Get one from a pinned context's ``NSManagedObjectContext/queryGenerationToken`` and hand it
/// to another context of the same coordinator to make both see the same generation:
///
/// ```swift
/// try viewContext.setQueryGenerationFrom(.current)
/// try otherContext.setQueryGenerationFrom(viewContext.queryGenerationToken)
/// ```
///
/// A token does not keep its generation alive: once no context uses the generation it expires
/// (its held read transactions end), and setting the token then throws.
///
/// Linux note: a token names a generation of this process's coordinator; it is not archived
/// (`NSSecureCoding` is not implemented).
public final class NSQueryGenerationToken: NSObject, NSCopying, @unchecked Sendable {
    /// The token that pins a context to the latest generation, at its next fetch or fault.
    ///
    /// ```swift
    /// try context.setQueryGenerationFrom(NSQueryGenerationToken.current)
    /// ```
    public class var current: NSQueryGenerationToken { currentToken }

    private static let currentToken = NSQueryGenerationToken(generation: nil)

    /// The generation, `nil` for ``current`` (and for one that expired).
    internal private(set) weak var generation: QueryGeneration?
    /// Whether this is ``current``.
    internal let isCurrent: Bool
    /// The generation's identity, kept for equality after it expires.
    private let identity: ObjectIdentifier?

    internal init(generation: QueryGeneration?) {
        self.generation = generation
        self.isCurrent = generation == nil
        self.identity = generation.map(ObjectIdentifier.init)
        super.init()
    }

    /// Tokens are immutable: a copy is the token itself.
    ///
    /// ```swift
    /// let copy = token.copy() as! NSQueryGenerationToken // copy == token
    /// ```
    public func copy(with zone: NSZone? = nil) -> Any { self }

    /// Two tokens are equal when they name the same generation (or are both ``current``).
    ///
    /// ```swift
    /// context.queryGenerationToken == other.queryGenerationToken // same generation
    /// ```
    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSQueryGenerationToken else { return false }
        return identity == other.identity
    }

    public override var hash: Int { identity?.hashValue ?? 0 }

    public override var description: String {
        isCurrent ? "<NSQueryGenerationToken: current>" : "<NSQueryGenerationToken: \(identity.map { "\($0)" } ?? "")>"
    }
}

/// The user-info key Apple's notifications use for a query generation token, with Apple's value
/// (`"newQueryGeneration"`).
///
/// Linux note: the key exists so that code written for Apple platforms compiles; no notification
/// carries a token under it yet (read a context's ``NSManagedObjectContext/queryGenerationToken``).
///
/// ```swift
/// let token = notification.userInfo?[NSManagedObjectContextQueryGenerationKey] as? NSQueryGenerationToken
/// ```
public let NSManagedObjectContextQueryGenerationKey = "newQueryGeneration"
