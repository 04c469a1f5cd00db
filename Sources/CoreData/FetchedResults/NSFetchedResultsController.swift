import Foundation

/// Holds the results of a fetch request, sorted and cut into sections, and keeps them in step with
/// its context: with a delegate, it reports each object inserted, deleted, moved or updated
/// (``NSFetchedResultsControllerDelegate``) as the context processes its pending changes, saves,
/// merges other contexts' saves (`mergeChanges(fromContextDidSave:)`,
/// `automaticallyMergesChangesFromParent`, batch requests' results merged with
/// `mergeChanges(fromRemoteContextSave:into:)`), refreshes objects, or resets.
///
/// ```swift
/// let request = NSFetchRequest<Car>(entityName: "Car")
/// request.sortDescriptors = [NSSortDescriptor(key: "make", ascending: true), NSSortDescriptor(key: "name", ascending: true)]
/// let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context,
///                                             sectionNameKeyPath: "make", cacheName: nil)
/// controller.delegate = self
/// try controller.performFetch()
/// let first = controller.object(at: IndexPath(row: 0, section: 0))
/// ```
///
/// Apple's rules hold: the request needs sort descriptors, and with a section key path the first
/// one must order the sections (sort by the section key path itself, or by a key in the same
/// order); `performFetch()` throws otherwise. The controller tracks objects, not dictionaries or
/// IDs (`resultType` `.dictionaryResultType`, `.managedObjectIDResultType`: fetched once, in one
/// section), and, as Apple's, places a changed object by its own values only: a sort or section key
/// path through a relationship (`owner.name`) is not followed when the related object changes,
/// and `fetchLimit` and `fetchOffset` apply to the fetch, not to the changes that follow.
///
/// A change costs O(log n) comparisons per changed object (plus the objects that sort the same
/// as it), and no fetch but of rows a merge changed that the context held no object for: the
/// controller keeps the sort and section key values each object was placed by, read once at
/// `performFetch()` (so every fetched object is fired once then; with a `fetchBatchSize`, a batch
/// at a time).
///
/// Linux differences: a missing sort descriptor is a thrown error of `performFetch()`, not an
/// exception of the initializer. The cache (``cacheName``) is kept in the XDG cache folder (see
/// ``deleteCache(withName:)``).
open class NSFetchedResultsController<ResultType>: NSObject {
    internal let core: FetchedResultsCore
    /// The controller handed to the delegate (this one when it is already of that type).
    private var erased: NSFetchedResultsController<NSFetchRequestResult>?
    /// ``fetchedObjects`` as `ResultType`s, made when asked for, with the core's version.
    private var typedObjects: (version: Int, objects: [ResultType]?)?

    /// The request whose results the controller holds. To change the results, change it (and
    /// ``NSFetchedResultsController/deleteCache(withName:)`` the cache, if any), then call
    /// ``performFetch()`` again, as Apple documents.
    ///
    /// Linux difference: the controller a delegate is handed for a typed controller answers a
    /// copy of the typed controller's request as it is now (its predicate, sort descriptors);
    /// changing that copy changes nothing.
    public var fetchRequest: NSFetchRequest<ResultType> { current?() ?? request }
    private let request: NSFetchRequest<ResultType>
    /// For the delegate's twin of a typed controller: a copy of the typed controller's request.
    private let current: (() -> NSFetchRequest<ResultType>)?

    /// Makes a controller of a request's results in a context, in sections by the values of
    /// `sectionNameKeyPath` (nil: one section). Call ``performFetch()`` to fetch.
    ///
    /// ```swift
    /// let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context,
    ///                                             sectionNameKeyPath: nil, cacheName: nil)
    /// ```
    public init(fetchRequest: NSFetchRequest<ResultType>, managedObjectContext context: NSManagedObjectContext,
                sectionNameKeyPath: String?, cacheName name: String?) {
        request = fetchRequest
        current = nil
        core = FetchedResultsCore(context: context, sectionNameKeyPath: sectionNameKeyPath, cacheName: name,
                                  fetch: Self.fetcher(fetchRequest, context: context, sectionNameKeyPath: sectionNameKeyPath))
        super.init()
        core.indexTitle = { [weak self] name in self?.sectionIndexTitle(forSectionName: name) }
        core.describeRequest = { [fetchRequest] in Self.describe(fetchRequest, sectionNameKeyPath: sectionNameKeyPath) }
        if let same = self as? NSFetchedResultsController<NSFetchRequestResult> {
            core.erased = same
        } else {
            let twin = NSFetchedResultsController<NSFetchRequestResult>(sharing: core, request: { fetchRequest.copiedRequest(as: NSFetchRequestResult.self) })
            erased = twin
            core.erased = twin
        }
    }

    /// The twin of a typed controller, for its delegate.
    private init(sharing core: FetchedResultsCore, request: @escaping () -> NSFetchRequest<ResultType>) {
        self.core = core
        self.request = request()
        current = request
        super.init()
    }

    /// The context the controller fetches from and follows.
    public var managedObjectContext: NSManagedObjectContext { core.context }
    /// The key path whose values name the sections; nil for one section.
    public var sectionNameKeyPath: String? { core.sectionNameKeyPath }
    /// The name of the controller's cache: a file under `$XDG_CACHE_HOME/<application>/CoreData/SectionInfoCaches/`.
    public var cacheName: String? { core.cacheName }

    /// The object told of changes. Without one, the controller does not track changes: its
    /// results stay as the last `performFetch()` left them, as Apple documents.
    ///
    /// ```swift
    /// controller.delegate = self
    /// ```
    public weak var delegate: (any NSFetchedResultsControllerDelegate)? {
        get { core.delegate }
        set { core.delegate = newValue }
    }

    /// Runs the fetch request and takes its results, sorted and in sections. Throws the fetch's
    /// error, or `NSCoreDataError` (134060) when the request has no sort descriptors, the section
    /// key path is not a key path of the entity, or the first sort descriptor does not order the
    /// sections.
    ///
    /// ```swift
    /// try controller.performFetch()
    /// print(controller.fetchedObjects?.count ?? 0)
    /// ```
    open func performFetch() throws {
        core.context.checkQueue("NSFetchedResultsController.performFetch()")
        try core.performFetch()
    }

    /// The results of the last ``performFetch()``, kept up to date while the controller tracks
    /// changes; nil before the first fetch.
    public var fetchedObjects: [ResultType]? {
        if let typedObjects, typedObjects.version == core.version { return typedObjects.objects }
        // Checked casts: an object of another class (a sub-entity's plain NSManagedObject that
        // joined the results after the fetch) stops the process with its class named, as Apple's
        // bridged array does, where an unchecked cast would corrupt memory.
        let objects = core.fetchedObjects.map { objects in objects.map { Self.typed($0) } }
        typedObjects = (core.version, objects)
        return objects
    }

    /// The sections of the results; nil before the first fetch. A controller without a section
    /// key path has one section (named "").
    ///
    /// ```swift
    /// let rows = controller.sections?[section].numberOfObjects ?? 0
    /// ```
    public var sections: [any NSFetchedResultsSectionInfo]? {
        guard core.hasFetched else { return nil }
        return core.sectionRanges.map { core.section($0) }
    }

    /// The object at an index path (`[section, row]`).
    ///
    /// An index path outside the results is a programmer error that stops the process, as Apple's
    /// raises an exception (check ``sections`` first).
    ///
    /// ```swift
    /// let car = controller.object(at: IndexPath(row: 0, section: 0))
    /// ```
    public func object(at indexPath: IndexPath) -> ResultType {
        Self.typed(core.object(at: indexPath))
    }

    /// `object` as the controller's result type; a programmer error (a model whose sub-entity's
    /// class is not one) stops the process, naming both classes.
    private static func typed(_ object: AnyObject) -> ResultType {
        guard let typed = object as? ResultType else {
            preconditionFailure("NSFetchedResultsController<\(ResultType.self)>: an object of class \(type(of: object)) is among the results (entity \((object as? NSManagedObject)?.entity.name ?? "?")); give the entity a class that is a \(ResultType.self)")
        }
        return typed
    }

    /// The index path (`[section, row]`) of an object in the results; nil if it is not there.
    ///
    /// ```swift
    /// if let path = controller.indexPath(forObject: car) { print(path.section, path.row) }
    /// ```
    public func indexPath(forObject object: ResultType) -> IndexPath? {
        core.indexPath(forObject: object as AnyObject)
    }

    // MARK: Section index

    /// The section index title of a section name: by default its first letter, capitalized.
    /// Override it for another index (the delegate's
    /// `controller(_:sectionIndexTitleForSectionName:)` comes first when it gives one).
    ///
    /// ```swift
    /// controller.sectionIndexTitle(forSectionName: "ford") // "F"
    /// ```
    open func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        sectionName.first.map { String($0).capitalized }
    }

    /// The titles of the section index: each section's index title, once each, in section order.
    ///
    /// ```swift
    /// controller.sectionIndexTitles // ["A", "B", "F"]
    /// ```
    open var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return core.sectionRanges.compactMap { core.sectionIndexTitle(forSectionName: $0.name) }.filter { seen.insert($0).inserted }
    }

    /// The section a section index entry leads to: the first section whose index title is
    /// `title`; else the last section whose title sorts before it (0 if none).
    ///
    /// ```swift
    /// let section = controller.section(forSectionIndexTitle: "F", at: 2)
    /// ```
    open func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        let titles = core.sectionRanges.map { core.sectionIndexTitle(forSectionName: $0.name) ?? "" }
        if let match = titles.firstIndex(of: title) { return match }
        return titles.lastIndex { $0 < title } ?? 0
    }

    // MARK: Cache

    /// Deletes a controller's cache of section information by name, or every cache for nil.
    ///
    /// A controller with a ``cacheName`` writes its sections (names and counts) and what its
    /// request was to a file of that name at each fetch, and keeps it current while it tracks
    /// changes; a cache written for another request is replaced at the fetch, as Apple documents.
    /// Linux: the files are in `$XDG_CACHE_HOME/<application>/CoreData/SectionInfoCaches/`
    /// (`~/.cache/…`); the controller computes its sections from the fetched objects, so it writes
    /// the cache but does not need to read it.
    ///
    /// ```swift
    /// NSFetchedResultsController<NSFetchRequestResult>.deleteCache(withName: "Cars")
    /// ```
    open class func deleteCache(withName name: String?) {
        FetchedResultsCache.standard.delete(name)
    }

    /// What a cache records of the request: the entity, predicate, sort descriptors, section key
    /// path and result type.
    private static func describe(_ request: NSFetchRequest<ResultType>, sectionNameKeyPath: String?) -> String {
        // (Called after a fetch, whose sort descriptors were read without error.)
        let keys = (try? PredicateBridge.sortKeys(of: request.sortDescriptors ?? [])) ?? []
        let sorts = keys.map { "\($0.keyPath) \($0.ascending ? "ASC" : "DESC") \($0.comparison.selectorName ?? "comparator")" }
        return [request.entityName ?? request.entity?.name ?? "", request.predicate.flatMap { try? PredicateBridge.tree(of: $0) }.map { "\($0)" } ?? "",
                sorts.joined(separator: ", "), sectionNameKeyPath ?? "", "\(request.resultType.rawValue)"].joined(separator: "\n")
    }

    // MARK: Fetching

    /// The fetch of a request, checked as Apple's controller checks it.
    private static func fetcher(_ request: NSFetchRequest<ResultType>, context: NSManagedObjectContext,
                                sectionNameKeyPath: String?) -> () throws -> (objects: [AnyObject], tracked: FetchedResultsCore.TrackedRequest?) {
        {
            guard let descriptors = request.sortDescriptors, !descriptors.isEmpty else {
                throw CoreDataError.make(.coreData, "An instance of NSFetchedResultsController requires a fetch request with sort descriptors")
            }
            let entity = try context.resolveEntity(request)
            if let sectionNameKeyPath { try checkKeyPath(sectionNameKeyPath, of: entity) }
            // A FETCH(…) in the predicate runs once, here: the fetch and the tracking use its result.
            let predicate = try request.predicate.map { try PredicateBridge.tree(of: $0) }
            var fetched = request
            if let predicate, predicate.containsFetchRequestExpression {
                fetched = request.copiedRequest(as: ResultType.self)
                fetched.predicate = NSPredicate.make(from: try predicate.runningFetchRequestExpressions())
            }
            // (The context's typed fetch checks that its results are `ResultType`s.)
            let objects = try context.fetch(fetched).map { $0 as AnyObject }
            guard request.resultType == .managedObjectResultType else { return (objects, nil) }
            let tracked = FetchedResultsCore.TrackedRequest(
                entityNumbers: Set(request.includesSubentities ? entity.layout.entityNumbers : [entity.layout.entityNumber]),
                predicate: try fetched.predicate.map { try PredicateBridge.tree(of: $0) },
                sortKeys: try PredicateBridge.sortKeys(of: descriptors),
                affectedStores: request.affectedStores)
            return (objects, tracked)
        }
    }

    /// Throws unless every key of `keyPath` is a property of the entity it reaches (to-one
    /// relationships lead on).
    private static func checkKeyPath(_ keyPath: String, of entity: NSEntityDescription) throws {
        var current: NSEntityDescription? = entity
        for key in keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
            guard let here = current else { break }
            guard let property = here.propertiesByName[key] else {
                throw CoreDataError.make(.coreData,
                    "The section name key path '\(keyPath)' is not a key path of entity '\(entity.name ?? "")': '\(here.name ?? "")' has no property '\(key)'")
            }
            current = (property as? NSRelationshipDescription)?.destinationEntity
        }
    }
}
