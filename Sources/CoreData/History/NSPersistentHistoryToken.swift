import Foundation

/// A bookmark in a store's persistent history: the last transaction an app has processed, per
/// store (the store's identifier, `NSStoreUUID`, to its transaction number). Keep it, archived, and
/// fetch what came after it with ``NSPersistentHistoryChangeRequest/fetchHistory(after:)-(NSPersistentHistoryToken?)``.
///
/// ```swift
/// let token = coordinator.currentPersistentHistoryToken(fromStores: nil)!
/// let data = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
/// let back = try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: data)
/// ```
///
/// Archives are Apple's: the dictionary is written under `"NSPersistentHistoryTokenDictionary"`,
/// and the class names Apple's own class, `_NSPersistentHistoryToken`, as the archive's class
/// hint (`classFallbacksForKeyedArchiver`): Apple's unarchiver, which has no
/// `CoreData.NSPersistentHistoryToken`, decodes Apple's token. (Linux's `NSKeyedArchiver`
/// cannot write another class name: its `setClassName(_:for:)` stores the mapping under a key
/// its lookup never uses.) Archives naming `_NSPersistentHistoryToken` or
/// `NSPersistentHistoryToken`, as Apple's framework writes them, are read: those names are
/// registered with `NSKeyedUnarchiver` when the first token or coordinator is made.
open class NSPersistentHistoryToken: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    /// The transaction number of each store, by store identifier.
    internal let storeTokens: [String: Int64]
    /// The archive key of ``storeTokens``.
    static let dictionaryKey = "NSPersistentHistoryTokenDictionary"

    internal init(storeTokens: [String: Int64]) {
        Self.registerArchiveNames()
        self.storeTokens = storeTokens
        super.init()
    }

    /// Maps Apple's class name in archives to this class, once.
    internal static func registerArchiveNames() { _ = archiveNames }
    private static let archiveNames: Void = {
        NSKeyedUnarchiver.setClass(NSPersistentHistoryToken.self, forClassName: "_NSPersistentHistoryToken")
        NSKeyedUnarchiver.setClass(NSPersistentHistoryToken.self, forClassName: "NSPersistentHistoryToken")
    }()

    /// `true`: tokens decode only as what they are.
    public static var supportsSecureCoding: Bool { true }

    /// `["_NSPersistentHistoryToken"]`: the class Apple's framework decodes the archive as.
    open override class func classFallbacksForKeyedArchiver() -> [String] { ["_NSPersistentHistoryToken"] }

    /// Writes the token's dictionary under `"NSPersistentHistoryTokenDictionary"`.
    ///
    /// ```swift
    /// let data = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
    /// ```
    public func encode(with coder: NSCoder) {
        let dictionary = NSMutableDictionary()
        for (store, number) in storeTokens { dictionary[NSString(string: store)] = NSNumber(value: number) }
        coder.encode(dictionary, forKey: Self.dictionaryKey)
    }

    /// Reads a token archived by ``encode(with:)`` or by Apple's framework; `nil` when the
    /// archive has no store in it.
    ///
    /// ```swift
    /// let token = try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: data)
    /// ```
    public required init?(coder: NSCoder) {
        let decoded = coder.decodeObject(of: [NSDictionary.self, NSString.self, NSNumber.self], forKey: Self.dictionaryKey)
        var tokens: [String: Int64] = [:]
        if let dictionary = decoded as? NSDictionary {
            for (key, value) in dictionary {
                guard let store = (key as? NSString).map(String.init) ?? key as? String else { continue }
                if let number = value as? NSNumber { tokens[store] = number.int64Value } else if let number = value as? Int64 { tokens[store] = number }
            }
        }
        guard !tokens.isEmpty else { return nil }
        storeTokens = tokens
        super.init()
    }

    /// Which of two tokens of the same stores is further on: `.orderedAscending` when this one
    /// is behind `token`, `.orderedDescending` when it is ahead, `.orderedSame` when they are at
    /// the same transactions. Stores are taken in the order of their identifiers; the first whose
    /// numbers differ decides. Throws 134501 when the tokens are not of the same set of stores.
    /// (Apple's `compareToken:error:`, which its public headers do not declare.)
    ///
    /// ```swift
    /// if try lastSeen.compareToken(current) == .orderedAscending { /* fetch history after lastSeen */ }
    /// ```
    open func compareToken(_ token: NSPersistentHistoryToken) throws -> ComparisonResult {
        let stores = storeTokens.keys.sorted()
        let others = token.storeTokens.keys.sorted()
        guard stores.count == others.count else {
            throw CoreDataError.make(.persistentHistoryTokensOfOtherStores, "Tokens have different number of stores.")
        }
        guard stores == others else {
            throw CoreDataError.make(.persistentHistoryTokensOfOtherStores, "Tokens have different set of stores.")
        }
        for store in stores {
            let mine = storeTokens[store]!, theirs = token.storeTokens[store]!
            if mine != theirs { return mine < theirs ? .orderedAscending : .orderedDescending }
        }
        return .orderedSame
    }

    /// Not supported, as on Apple's platforms: tokens of different stores have no order, and
    /// this method cannot say so. Traps (Apple raises `NSInvalidArgumentException`: a
    /// programmer error); use ``compareToken(_:)``, which throws.
    ///
    /// ```swift
    /// let order = try token.compareToken(other) // not token.compare(other)
    /// ```
    open func compare(_ token: NSPersistentHistoryToken) -> ComparisonResult {
        fatalError("compare(_:) is not supported for NSPersistentHistoryToken, use compareToken(_:)")
    }

    /// The token itself: tokens are immutable.
    public func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        (object as? NSPersistentHistoryToken)?.storeTokens == storeTokens
    }

    open override var hash: Int { storeTokens.hashValue }

    open override var description: String {
        "<NSPersistentHistoryToken - \(storeTokens.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))>"
    }
}
