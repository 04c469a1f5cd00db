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
/// Tokens archive (`NSSecureCoding`). An archived ``current`` reads back as ``current``; a
/// pinned token reads back naming its generation, usable while the generation lives, in the
/// process that made it (elsewhere, or later, it is an expired token: setting it throws).
/// Linux note: the archive is this package's own (Apple's format is not documented).
///
/// ```swift
/// let data = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
/// let again = try NSKeyedUnarchiver.unarchivedObject(ofClass: NSQueryGenerationToken.self, from: data)
/// ```
public final class NSQueryGenerationToken: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
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
    /// The generation's identity, kept for equality after it expires: this process's
    /// identifier and the generation's serial (`nil` for ``current``).
    private let identity: String?

    /// Identifies this process in a token's identity (a generation's serial is unique only in it).
    private static let processIdentity = UUID().uuidString

    internal init(generation: QueryGeneration?) {
        self.generation = generation
        self.isCurrent = generation == nil
        self.identity = generation.map { "\(Self.processIdentity)/\($0.serial)" }
        super.init()
    }

    /// `true`: tokens are archived with `NSSecureCoding`.
    public static var supportsSecureCoding: Bool { true }

    /// Archives whether the token is ``current`` or, if not, which generation it names.
    public func encode(with coder: NSCoder) {
        coder.encode(isCurrent, forKey: "current")
        if let identity { coder.encode(identity as NSString, forKey: "generation") }
    }

    /// A token read back from an archive: ``current``, or the generation it names if that is
    /// still alive in this process (otherwise an expired token). `nil` for an archive of
    /// something else.
    public init?(coder: NSCoder) {
        let current = coder.decodeBool(forKey: "current")
        let identity = coder.containsValue(forKey: "generation")
            ? coder.decodeObject(of: NSString.self, forKey: "generation").map { String(describing: $0) } : nil
        guard current || identity != nil else { return nil }
        isCurrent = current
        self.identity = current ? nil : identity
        if let identity, !current {
            let parts = identity.split(separator: "/")
            if parts.count == 2, parts[0] == Self.processIdentity, let serial = UInt64(parts[1]) {
                generation = QueryGeneration.named(serial: serial)
            }
        }
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
        isCurrent ? "<NSQueryGenerationToken: current>" : "<NSQueryGenerationToken: \(identity ?? "")>"
    }
}

/// The user-info key Apple's notifications use for a query generation token, with Apple's value
/// (`"newQueryGeneration"`).
///
/// The did-save notifications of a context pinned to a query generation carry its new generation
/// under it (a save moves the context to the latest).
///
/// ```swift
/// let token = notification.userInfo?[NSManagedObjectContextQueryGenerationKey] as? NSQueryGenerationToken
/// ```
public let NSManagedObjectContextQueryGenerationKey = "newQueryGeneration"
