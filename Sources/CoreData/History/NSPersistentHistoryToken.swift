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
