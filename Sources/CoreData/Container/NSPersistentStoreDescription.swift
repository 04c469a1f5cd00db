import Foundation

/// How to add one persistent store: its type, file, configuration and options.
///
/// A container holds one description per store and adds each in
/// ``NSPersistentContainer/loadPersistentStores(completionHandler:)``:
///
/// ```swift
/// let description = NSPersistentStoreDescription(url: URL(fileURLWithPath: "/var/lib/app/Cars.sqlite"))
/// description.shouldAddStoreAsynchronously = true
/// description.setValue("FULL" as NSString, forPragmaNamed: "synchronous")
/// container.persistentStoreDescriptions = [description]
/// ```
///
/// The properties are conveniences over ``options``, as on Apple platforms: `isReadOnly` is
/// `NSReadOnlyPersistentStoreOption`, `timeout` is `NSPersistentStoreTimeoutOption`,
/// `sqlitePragmas` is `NSSQLitePragmasOption`, `shouldMigrateStoreAutomatically` is
/// `NSMigratePersistentStoresAutomaticallyOption` and `shouldInferMappingModelAutomatically` is
/// `NSInferMappingModelAutomaticallyOption`, `shouldAddStoreAsynchronously` is
/// `NSAddStoreAsynchronouslyOption`. The options go to
/// ``NSPersistentStoreCoordinator/addPersistentStore(ofType:configurationName:at:options:)`` as
/// they are, with the effective ``timeout`` (240 seconds unless set).
///
/// A description is `Sendable` (its state is behind a lock); change it before loading its store.
open class NSPersistentStoreDescription: NSObject, NSCopying, @unchecked Sendable {
    /// The store's timeout when none is set: 240 seconds, as on Apple platforms.
    internal static let defaultTimeout: TimeInterval = 240

    private struct State {
        var type = NSSQLiteStoreType
        var configuration: String?
        var url: URL?
        var options: [String: NSObject] = [
            NSMigratePersistentStoresAutomaticallyOption: NSNumber(value: true),
            NSInferMappingModelAutomaticallyOption: NSNumber(value: true),
        ]
    }

    /// The option Apple's ``shouldAddStoreAsynchronously`` is kept under (code that sets it by
    /// name, with ``setOption(_:forKey:)``, gets the same asynchronous load).
    internal static let addStoreAsynchronouslyOption = "NSAddStoreAsynchronouslyOption"

    private let lock = NSLock()
    private var _state: State

    /// Runs `body` on the state, holding the description's lock.
    private func withState<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&_state)
    }

    /// A description of a SQLite store at `/dev/null`, as Apple's: a store in memory (previews
    /// and tests load it as it is); set ``url`` for a file.
    ///
    /// ```swift
    /// let description = NSPersistentStoreDescription()
    /// description.url = URL(fileURLWithPath: "Cars.sqlite")
    /// ```
    public convenience override init() {
        self.init(url: URL(fileURLWithPath: "/dev/null", isDirectory: false))
    }

    /// A description of a SQLite store at `url` (the designated initializer, as Apple's).
    ///
    /// ```swift
    /// let description = NSPersistentStoreDescription(url: URL(fileURLWithPath: "Cars.sqlite"))
    /// ```
    public init(url: URL) {
        _state = State()
        _state.url = url
        super.init()
    }

    private init(copying state: State) {
        _state = state
        super.init()
    }

    /// An independent copy of the description.
    ///
    /// ```swift
    /// let readOnly = description.copy() as! NSPersistentStoreDescription
    /// readOnly.isReadOnly = true
    /// ```
    open func copy(with zone: NSZone? = nil) -> Any {
        NSPersistentStoreDescription(copying: withState { $0 })
    }

    // MARK: The store

    /// The store's type: `NSSQLiteStoreType` (the default) or `NSInMemoryStoreType`.
    ///
    /// ```swift
    /// description.type = NSInMemoryStoreType
    /// ```
    open var type: String {
        get { withState { $0.type } }
        set { withState { $0.type = newValue } }
    }

    /// The name of the model configuration whose entities the store holds; `nil` for all entities.
    ///
    /// ```swift
    /// description.configuration = "Cloud"
    /// ```
    open var configuration: String? {
        get { withState { $0.configuration } }
        set { withState { $0.configuration = newValue } }
    }

    /// The store's file. A container's default description has
    /// `NSPersistentContainer.defaultDirectoryURL()/<name>.sqlite`.
    ///
    /// ```swift
    /// description.url = URL(fileURLWithPath: "/var/lib/app/Cars.sqlite")
    /// ```
    open var url: URL? {
        get { withState { $0.url } }
        set { withState { $0.url = newValue } }
    }

    // MARK: Options

    /// The options passed to the coordinator when the store is added.
    ///
    /// A new description has `NSMigratePersistentStoresAutomaticallyOption` and
    /// `NSInferMappingModelAutomaticallyOption` set to `true`.
    ///
    /// ```swift
    /// let readOnly = (description.options[NSReadOnlyPersistentStoreOption] as? NSNumber)?.boolValue ?? false
    /// ```
    open var options: [String: NSObject] { withState { $0.options } }

    /// Sets an option for the store, or removes it when `option` is `nil`.
    ///
    /// ```swift
    /// description.setOption(true as NSNumber, forKey: NSReadOnlyPersistentStoreOption)
    /// ```
    open func setOption(_ option: NSObject?, forKey key: String) {
        withState { $0.options[key] = option }
    }

    private func bool(_ key: String) -> Bool {
        (options[key] as? NSNumber)?.boolValue ?? false
    }

    /// Whether the store is opened read-only (`NSReadOnlyPersistentStoreOption`); `false` by default.
    /// Saving to a read-only store fails, and a read-only store whose file does not exist cannot be added.
    ///
    /// ```swift
    /// description.isReadOnly = true
    /// ```
    open var isReadOnly: Bool {
        get { bool(NSReadOnlyPersistentStoreOption) }
        set { setOption(NSNumber(value: newValue), forKey: NSReadOnlyPersistentStoreOption) }
    }

    /// How many seconds the store waits for a database another connection has locked before it
    /// fails (`NSPersistentStoreTimeoutOption`); 240 by default, as on Apple platforms.
    ///
    /// ```swift
    /// description.timeout = 10
    /// ```
    open var timeout: TimeInterval {
        get { (options[NSPersistentStoreTimeoutOption] as? NSNumber)?.doubleValue ?? Self.defaultTimeout }
        set { setOption(NSNumber(value: newValue), forKey: NSPersistentStoreTimeoutOption) }
    }

    /// The SQLite pragmas the store sets when it opens its file (`NSSQLitePragmasOption`).
    ///
    /// ```swift
    /// description.setValue("FULL" as NSString, forPragmaNamed: "synchronous")
    /// description.sqlitePragmas["synchronous"]   // "FULL"
    /// ```
    open var sqlitePragmas: [String: NSObject] { Self.pragmas(in: options) }

    private static func pragmas(in options: [String: NSObject]) -> [String: NSObject] {
        guard let pragmas = options[NSSQLitePragmasOption] as? NSDictionary else { return [:] }
        var result: [String: NSObject] = [:]
        for (key, value) in pragmas {
            if let key = key as? String, let value = value as? NSObject { result[key] = value }
        }
        return result
    }

    /// Sets a SQLite pragma for the store, or removes it when `value` is `nil`. Values are strings
    /// or numbers (`"WAL" as NSString`, `1 as NSNumber`); pragmas apply to SQLite stores only.
    ///
    /// ```swift
    /// description.setValue("DELETE" as NSString, forPragmaNamed: "journal_mode")
    /// ```
    open func setValue(_ value: NSObject?, forPragmaNamed name: String) {
        withState { state in
            var pragmas = Self.pragmas(in: state.options)
            pragmas[name] = value
            state.options[NSSQLitePragmasOption] = pragmas.isEmpty ? nil : NSDictionary(dictionary: pragmas)
        }
    }

    /// Whether ``NSPersistentContainer/loadPersistentStores(completionHandler:)`` adds the store on a
    /// background queue and returns at once (`true`), or on the calling thread (`false`, the default).
    ///
    /// ```swift
    /// description.shouldAddStoreAsynchronously = true   // a long migration won't block the caller
    /// ```
    open var shouldAddStoreAsynchronously: Bool {
        get { bool(Self.addStoreAsynchronouslyOption) }
        set { setOption(NSNumber(value: newValue), forKey: Self.addStoreAsynchronouslyOption) }
    }

    /// Whether an older store is migrated to the model when it is added
    /// (`NSMigratePersistentStoresAutomaticallyOption`); `true` by default.
    ///
    /// ```swift
    /// description.shouldMigrateStoreAutomatically = false
    /// ```
    open var shouldMigrateStoreAutomatically: Bool {
        get { bool(NSMigratePersistentStoresAutomaticallyOption) }
        set { setOption(NSNumber(value: newValue), forKey: NSMigratePersistentStoresAutomaticallyOption) }
    }

    /// Whether a migration may infer its mapping model (`NSInferMappingModelAutomaticallyOption`);
    /// `true` by default.
    ///
    /// ```swift
    /// description.shouldInferMappingModelAutomatically = false
    /// ```
    open var shouldInferMappingModelAutomatically: Bool {
        get { bool(NSInferMappingModelAutomaticallyOption) }
        set { setOption(NSNumber(value: newValue), forKey: NSInferMappingModelAutomaticallyOption) }
    }

    /// The options for `addPersistentStore`: ``options`` plus the effective ``timeout``, with the
    /// pragmas as a Swift dictionary.
    internal var storeOptions: [AnyHashable: Any] {
        var result: [AnyHashable: Any] = [:]
        for (key, value) in options { result[key] = value }
        result[NSPersistentStoreTimeoutOption] = timeout
        let pragmas = sqlitePragmas
        result[NSSQLitePragmasOption] = pragmas.isEmpty ? nil : pragmas
        return result
    }

    /// Whether `object` is a description of the same store with the same options (its URL
    /// standardized, its type, configuration and options), as Apple compares them: the copy
    /// ``NSPersistentContainer/loadPersistentStores(completionHandler:)`` hands its handler equals
    /// the description it was made from.
    ///
    /// ```swift
    /// container.loadPersistentStores { loaded, _ in
    ///     if loaded == cloudDescription { startSync() }
    /// }
    /// ```
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSPersistentStoreDescription else { return false }
        if other === self { return true }
        let (mine, theirs) = (withState { $0 }, other.withState { $0 })
        return mine.url?.standardizedFileURL == theirs.url?.standardizedFileURL && mine.type == theirs.type
            && mine.configuration == theirs.configuration && mine.options.count == theirs.options.count
            && mine.options.allSatisfy { key, value in theirs.options[key].map(value.isEqual) ?? false }
    }

    /// The standardized URL's hash, as Apple's.
    open override var hash: Int {
        withState { $0.url?.standardizedFileURL.hashValue ?? 0 }
    }

    /// A summary: the type and the URL.
    ///
    /// ```swift
    /// print(description)   // <NSPersistentStoreDescription> (type: SQLite, url: file:///…/Cars.sqlite)
    /// ```
    open override var description: String {
        let (type, url) = withState { ($0.type, $0.url) }
        return "<NSPersistentStoreDescription> (type: \(type), url: \(url?.absoluteString ?? "nil"))"
    }
}
