import Foundation

/// A whole Core Data stack: the model, a coordinator, its stores, a main-queue context and
/// background contexts.
///
/// ```swift
/// let container = NSPersistentContainer(name: "Car")   // finds Car.xcdatamodeld
/// container.loadPersistentStores { description, error in
///     if let error { fatalError("can't open \(description): \(error)") }
/// }
/// container.performBackgroundTask { context in
///     let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
///     car.setValue("Model T", forKey: "name")
///     try? context.save()
/// }
/// ```
///
/// `init(name:)` looks for `<name>.xcdatamodeld` (or `<name>.xcdatamodel`), Xcode's source
/// format, since Linux has no model compiler to make a `.momd`. It looks in this order:
/// 1. the folder given to ``init(name:modelDirectory:)`` (Linux addition);
/// 2. the bundle of the container's class, `Bundle.main`, then `Bundle.allBundles`;
/// 3. the SwiftPM resource folders next to the executable (`<package>_<target>.resources`,
///    what `Bundle.module` reads; Linux addition);
/// 4. ``modelSearchDirectories`` (Linux addition);
/// 5. the current directory (Linux addition).
///
/// A model that cannot be found is not fatal: as on Apple platforms, the container logs
/// `CoreData: error:  Failed to load model named <name>` to standard error and has an empty model.
/// ``loadPersistentStores(completionHandler:)`` then hands every description an error
/// (`NSFileReadNoSuchFileError`, or the model reader's error for a damaged model) instead of
/// creating stores with no tables.
///
/// The container is `Sendable`: its mutable state (the descriptions, the lazily made
/// ``viewContext``) is behind a lock.
open class NSPersistentContainer: NSObject, @unchecked Sendable {
    private let _name: String
    private let model: NSManagedObjectModel
    private let coordinator: NSPersistentStoreCoordinator
    /// Why the model named by `init(name:)` could not be loaded; reported by `loadPersistentStores`.
    /// Set once, while the container is made.
    private var modelError: NSError?
    private let lock = NSLock()
    /// `nil` until read or set: the default description is made then, as Apple's is, so that a
    /// container whose descriptions are replaced never asks ``defaultDirectoryURL()`` (which
    /// creates its folder).
    private var _descriptions: [NSPersistentStoreDescription]?
    private var _viewContext: NSManagedObjectContext?
    /// Where asynchronous descriptions are loaded, one after another, in order.
    private let loadQueue = DispatchQueue(label: "NSPersistentContainer.loadPersistentStores", qos: .userInitiated)

    // MARK: Creating a container

    /// A container named `name` whose model is `<name>.xcdatamodeld` (or `<name>.xcdatamodel`),
    /// found as the class overview describes; the store is `<name>.sqlite` in
    /// ``defaultDirectoryURL()``.
    ///
    /// ```swift
    /// let container = NSPersistentContainer(name: "Car")
    /// ```
    public convenience init(name: String) {
        self.init(name: name, searching: [])
    }

    /// A container named `name` whose model is `<name>.xcdatamodeld` (or `<name>.xcdatamodel`)
    /// in `modelDirectory`, or, if it is not there, wherever ``init(name:)`` looks.
    ///
    /// Linux addition: Apple platforms find models in the app bundle, which Linux programs lack.
    ///
    /// ```swift
    /// let container = NSPersistentContainer(name: "Car", modelDirectory: URL(fileURLWithPath: "/usr/share/myapp"))
    /// ```
    public convenience init(name: String, modelDirectory: URL) {
        self.init(name: name, searching: [modelDirectory])
    }

    private convenience init(name: String, searching directories: [URL]) {
        let found = Self.loadModel(named: name, firstIn: directories)
        self.init(name: name, managedObjectModel: found.model)
        modelError = found.error
    }

    /// A container named `name` that uses `model`; the name only names the store
    /// (`<name>.sqlite` in ``defaultDirectoryURL()``).
    ///
    /// ```swift
    /// let model = NSManagedObjectModel(contentsOf: URL(fileURLWithPath: "Car.xcdatamodeld"))!
    /// let container = NSPersistentContainer(name: "Garage", managedObjectModel: model)
    /// ```
    public init(name: String, managedObjectModel model: NSManagedObjectModel) {
        _name = name
        self.model = model
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        super.init()
    }

    // MARK: The stack

    /// The container's name: the model's name for ``init(name:)``, and the store file's name.
    ///
    /// ```swift
    /// NSPersistentContainer(name: "Car").name   // "Car"
    /// ```
    open var name: String { _name }

    /// The container's model; empty when ``init(name:)`` could not find or read it.
    ///
    /// ```swift
    /// let entities = container.managedObjectModel.entitiesByName.keys
    /// ```
    open var managedObjectModel: NSManagedObjectModel { model }

    /// The coordinator that ``loadPersistentStores(completionHandler:)`` adds the stores to, and
    /// that ``viewContext`` and the background contexts use.
    ///
    /// ```swift
    /// let stores = container.persistentStoreCoordinator.persistentStores
    /// ```
    open var persistentStoreCoordinator: NSPersistentStoreCoordinator { coordinator }

    /// The stores to load: by default one SQLite store at `defaultDirectoryURL()/<name>.sqlite`.
    /// Set them before calling ``loadPersistentStores(completionHandler:)``.
    ///
    /// ```swift
    /// let description = NSPersistentStoreDescription(url: URL(fileURLWithPath: "/var/lib/app/Cars.sqlite"))
    /// container.persistentStoreDescriptions = [description]
    /// ```
    open var persistentStoreDescriptions: [NSPersistentStoreDescription] {
        get {
            if let descriptions = lock.withLock({ _descriptions }) { return descriptions }
            // (Outside the lock: a subclass's defaultDirectoryURL() may read the container.)
            let url = type(of: self).defaultDirectoryURL().appendingPathComponent("\(name).sqlite", isDirectory: false)
            return lock.withLock {
                if _descriptions == nil { _descriptions = [NSPersistentStoreDescription(url: url)] }
                return _descriptions!
            }
        }
        set { lock.withLock { _descriptions = newValue } }
    }

    /// The main-queue context on the coordinator, made on first use. Use it on the main queue
    /// (the main actor), or through `perform`/`performAndWait`.
    ///
    /// ```swift
    /// let cars = try container.viewContext.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
    /// ```
    open var viewContext: NSManagedObjectContext {
        lock.withLock {
            if let context = _viewContext { return context }
            let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            _viewContext = context
            return context
        }
    }

    /// A new private-queue context on the coordinator; use it through `perform`/`performAndWait`.
    ///
    /// ```swift
    /// let context = container.newBackgroundContext()
    /// context.perform { /* import on the context's queue */ }
    /// ```
    open func newBackgroundContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Runs `block` on the queue of a new private-queue context, passing the context, and returns at once.
    ///
    /// ```swift
    /// container.performBackgroundTask { context in
    ///     NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("Model T", forKey: "name")
    ///     try? context.save()
    /// }
    /// ```
    open func performBackgroundTask(_ block: @escaping @Sendable (NSManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    // MARK: Loading stores

    /// Adds a store for each of ``persistentStoreDescriptions`` to the coordinator, calling `block`
    /// once per description with the description and the error, if any.
    ///
    /// A description whose ``NSPersistentStoreDescription/shouldAddStoreAsynchronously`` is `false`
    /// (the default) is loaded on the calling thread, and `block` runs there before this method
    /// returns. One whose flag is `true` is loaded on a background queue: this method returns at
    /// once, so a slow open (a migration, a large file) never blocks the caller, and `block` runs on
    /// that background queue (Apple documents the calling thread for the synchronous case; for the
    /// asynchronous one the handler runs where the store was added). Asynchronous descriptions load
    /// one after another, in order.
    ///
    /// Failures never stop the process: a missing model, a file that is not a store, a store made
    /// with another model, a URL that is not a file URL arrive as `block`'s error. The folder of a
    /// SQLite store is created if needed.
    ///
    /// ```swift
    /// container.persistentStoreDescriptions.first?.shouldAddStoreAsynchronously = true
    /// container.loadPersistentStores { description, error in
    ///     DispatchQueue.main.async { error == nil ? showCars() : showFailure(error!) }
    /// }
    /// ```
    ///
    /// As Apple's, each description is copied first (changing it afterwards changes nothing that
    /// loads) and the handler gets the copy; the synchronous descriptions load first, in order,
    /// then the asynchronous ones. A container with no descriptions is a programmer error: the
    /// process stops with a message, as Apple raises (the handler would never be called).
    open func loadPersistentStores(completionHandler block: @escaping (NSPersistentStoreDescription, (any Error)?) -> Void) {
        precondition(!persistentStoreDescriptions.isEmpty,
                     "loadPersistentStores(completionHandler:) called on a container with no store descriptions (persistentStoreDescriptions is empty)")
        let handler = UncheckedSendable(block)
        // (A subclass's instance is used as it is: a copy would be of the base class, without its overrides.)
        let descriptions = persistentStoreDescriptions.map {
            type(of: $0) == NSPersistentStoreDescription.self ? $0.copy() as! NSPersistentStoreDescription : $0
        }
        for description in descriptions where !description.shouldAddStoreAsynchronously {
            block(description, load(description))
        }
        for description in descriptions where description.shouldAddStoreAsynchronously {
            let copy = UncheckedSendable(description)
            loadQueue.async { [self] in handler.value(copy.value, load(copy.value)) }
        }
    }

    private func load(_ description: NSPersistentStoreDescription) -> (any Error)? {
        if let modelError { return modelError }
        return coordinator.addPersistentStore(described: description)
    }

    // MARK: Where stores and models live

    /// The folder of the container's stores: `$XDG_DATA_HOME/<application>/`, or
    /// `~/.local/share/<application>/` when `XDG_DATA_HOME` is unset, empty or not absolute.
    ///
    /// On Linux this is the XDG Base Directory location for user data, the counterpart of the
    /// Application Support folder Apple platforms use. `<application>` is `Bundle.main`'s
    /// identifier when it has one, otherwise the process name: that folder is shared by every
    /// program of the user, where an iOS app's Application Support folder is its own. The folder
    /// is created by this method, as Apple's is. Override this class method in a subclass to move the stores.
    ///
    /// ```swift
    /// NSPersistentContainer.defaultDirectoryURL()   // file:///home/ann/.local/share/garage/
    /// ```
    open class func defaultDirectoryURL() -> URL {
        createdDirectory(defaultDirectoryURL(environment: ProcessInfo.processInfo.environment, applicationName: applicationName))
    }

    /// `url`, a folder created if missing, as Apple's `defaultDirectoryURL()` creates its own (so
    /// that a seed store can be copied in before loading); a failure is logged.
    internal static func createdDirectory(_ url: URL) -> URL {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            CoreDataLog.warning("defaultDirectoryURL(): the folder \(url.path) could not be created: \(error.localizedDescription)")
        }
        return url
    }

    /// `defaultDirectoryURL()` for a given environment (injectable in tests).
    internal static func defaultDirectoryURL(environment: [String: String], applicationName: String) -> URL {
        XDGDirectory.data.url(environment: environment).appendingPathComponent(applicationName, isDirectory: true)
    }

    /// The store folder's last component: the main bundle's identifier, or the process name.
    internal static var applicationName: String {
        if let identifier = Bundle.main.bundleIdentifier, !identifier.isEmpty { return identifier }
        let process = ProcessInfo.processInfo.processName
        return process.isEmpty ? "CoreData" : process
    }

    /// More folders where ``init(name:)`` looks for `<name>.xcdatamodeld`, after the bundles and
    /// before the current directory, and `NSManagedObjectModel.mergedModel(from: nil)` for every
    /// model; empty by default.
    ///
    /// Linux addition: it lets code shared with Apple platforms keep calling `init(name:)`.
    ///
    /// ```swift
    /// #if !canImport(ObjectiveC)
    /// NSPersistentContainer.modelSearchDirectories = [URL(fileURLWithPath: "/usr/share/garage")]
    /// #endif
    /// let container = NSPersistentContainer(name: "Car")
    /// ```
    public static var modelSearchDirectories: [URL] {
        get { ModelSearch.extraDirectories.withLock { $0 } }
        set { ModelSearch.extraDirectories.withLock { $0 = newValue } }
    }

    /// The folders `init(name:)` searches, in order, without duplicates.
    internal class func modelSearchLocations(firstIn directories: [URL]) -> [URL] {
        ModelSearch.locations(firstIn: directories, bundles: [Bundle(for: self), Bundle.main] + Bundle.allBundles)
    }

    /// Finds and reads the model named `name`; on failure logs Apple's message and returns an
    /// empty model with the reason.
    private class func loadModel(named name: String, firstIn directories: [URL]) -> (model: NSManagedObjectModel, error: NSError?) {
        let locations = modelSearchLocations(firstIn: directories)
        let candidates = locations.flatMap { folder in
            ["xcdatamodeld", "xcdatamodel"].map { folder.appendingPathComponent("\(name).\($0)", isDirectory: true) }
        }
        let error: NSError
        let message: String
        if let url = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) {
            do {
                return (try NSManagedObjectModel(validatingContentsOf: url), nil)
            } catch let readError as NSError {
                error = readError
                message = "Failed to load model named \(name): \(readError.localizedDescription)"
            }
        } else {
            message = "Failed to load model named \(name): there is no \(name).xcdatamodeld or \(name).xcdatamodel in "
                + locations.map(\.path).joined(separator: ", ")
            error = CoreDataError.make(.fileReadNoSuchFile, message)
        }
        FileHandle.standardError.write(Data("CoreData: error:  \(message)\n".utf8))
        return (NSManagedObjectModel(), error)
    }
}

extension NSPersistentContainer {
    /// Runs `block` on the queue of a new private-queue context and returns its result, or throws its error.
    ///
    /// ```swift
    /// let count = try await container.performBackgroundTask { context in
    ///     try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car"))
    /// }
    /// ```
    public func performBackgroundTask<T>(_ block: @escaping (NSManagedObjectContext) throws -> T) async rethrows -> T {
        let context = newBackgroundContext()
        let work = UncheckedSendable(block)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<UncheckedSendable<Result<T, any Error>>, Never>) in
            context.perform {
                let result = Result { try work.value(context) }
                context.processPendingChanges() // (as perform does after the block: before the caller resumes)
                continuation.resume(returning: UncheckedSendable(result))
            }
        }
        return try rethrowing(outcome.value, as: block)
    }
}
