import Foundation

// The state of a fetched results controller, shared by the typed controller an app makes and the
// `NSFetchedResultsController<NSFetchRequestResult>` its delegate is handed (Swift's generic
// classes do not convert into one another as Objective-C's do). It listens to its context's
// `NSManagedObjectContextObjectsDidChange`, which the context posts on its queue when it processes
// pending changes (and so when it saves), merges another context's save, refreshes objects, or
// resets, and moves the objects it names through the list (`FetchedResultsList`).

internal final class FetchedResultsCore: @unchecked Sendable { // used on its context's queue only
    enum DelegateMethod: Hashable { case difference, sectionIndexTitle }

    let context: NSManagedObjectContext
    let sectionNameKeyPath: String?
    let cacheName: String?
    /// Runs the controller's fetch request (typed in the controller).
    let fetch: () throws -> (objects: [AnyObject], tracked: TrackedRequest?)
    /// What the request is, as the cache records it (``FetchedResultsCache``).
    var describeRequest: () -> String = { "" }
    /// Where the controller's cache is kept (tests move it).
    var cache = FetchedResultsCache.standard
    /// What the cache holds since the last fetch (the request, described once per fetch).
    private var cachedEntry: FetchedResultsCache.Entry?
    weak var delegate: (any NSFetchedResultsControllerDelegate)? {
        didSet { delegateLacks = [] }
    }
    /// Methods the delegate was found not to implement (their default implementations say so).
    var delegateLacks: Set<DelegateMethod> = []
    /// The controller handed to the delegate.
    weak var erased: NSFetchedResultsController<NSFetchRequestResult>?
    /// The controller's `sectionIndexTitle(forSectionName:)`, which a subclass may override.
    var indexTitle: (String) -> String? = { _ in nil }

    /// What the controller tracks: managed objects of these entities matching the predicate, in
    /// the request's `affectedStores` if it names some.
    struct TrackedRequest {
        var entityNumbers: Set<Int>
        var predicate: PredicateNode?
        var sortKeys: [SortKey]
        var affectedStores: [NSPersistentStore]?
    }

    /// The results of a request for managed objects, sorted and in sections.
    private(set) var list: FetchedResultsList?
    private var tracked: TrackedRequest?
    /// The results of another result type (IDs, dictionaries), untracked, in one section.
    private(set) var others: [AnyObject]?
    /// Raised at every change of the results (for the typed controller's copy of them).
    private(set) var version = 0
    private var observer: (any NSObjectProtocol)?
    private var mergeObserver: (any NSObjectProtocol)?

    init(context: NSManagedObjectContext, sectionNameKeyPath: String?, cacheName: String?,
         fetch: @escaping () throws -> (objects: [AnyObject], tracked: TrackedRequest?)) {
        self.context = context
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
        self.fetch = fetch
    }

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
        if let mergeObserver { NotificationCenter.default.removeObserver(mergeObserver) }
    }

    var hasFetched: Bool { list != nil || others != nil }

    var fetchedObjects: [AnyObject]? {
        if let list { return list.objects }
        return others
    }

    // MARK: Fetching

    func performFetch() throws {
        let (objects, tracked) = try fetch()
        if let tracked {
            var list = FetchedResultsList(sortKeys: tracked.sortKeys, sectionPath: sectionNameKeyPath.map { $0.split(separator: ".").map(String.init) })
            try list.fill(with: objects.map { unsafeDowncast($0, to: NSManagedObject.self) })
            self.list = list
            others = nil
        } else {
            list = nil
            others = objects
        }
        self.tracked = tracked
        version += 1
        cachedEntry = nil // the file is checked again at each fetch (deleteCache may have removed it)
        updateCache()
        startObserving()
    }

    /// Writes the controller's cache, if it has one, when its sections differ from the cache's:
    /// at a fetch, against the file; after a change, against what the controller last wrote, so
    /// that a change which leaves the sections as they were reads and writes no file.
    private func updateCache() {
        guard let cacheName else { return }
        let entry = FetchedResultsCache.Entry(request: cachedEntry?.request ?? describeRequest(), sections: sectionRanges.map {
            FetchedResultsCache.Entry.Section(name: $0.name, count: $0.count)
        })
        guard entry != cachedEntry else { return }
        cache.update(cacheName, to: entry)
        cachedEntry = entry
    }

    private func startObserving() {
        guard observer == nil, tracked != nil else { return }
        observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) {
            [weak self] notification in
            self?.contextDidChange(notification.userInfo ?? [:])
        }
        mergeObserver = NotificationCenter.default.addObserver(forName: NSManagedObjectContext.didMergeUnregisteredUpdatesNotification,
                                                               object: context, queue: nil) { [weak self] _ in
            self?.contextDidChange([:])
        }
    }

    // MARK: Sections

    var sectionRanges: [FetchedSectionRange] {
        if let list { return list.sections }
        if let others { return [FetchedSectionRange(name: "", start: 0, count: others.count)] }
        return []
    }

    func section(_ range: FetchedSectionRange) -> FetchedResultsSection {
        FetchedResultsSection(name: range.name, indexTitle: sectionIndexTitle(forSectionName: range.name),
                              objects: (fetchedObjects ?? [])[range.start..<range.end])
    }

    /// The delegate's index title for a section name if it gives one, else the controller's.
    func sectionIndexTitle(forSectionName name: String) -> String? {
        if let delegate, !delegateLacks.contains(.sectionIndexTitle), let erased,
           let title = delegate.controller(erased, sectionIndexTitleForSectionName: name) {
            return title
        }
        return indexTitle(name)
    }

    // MARK: Tracking changes

    /// Objects of a change notification's user info under `key`.
    private static func objects(_ userInfo: [AnyHashable: Any], _ key: String) -> [NSManagedObject] {
        switch userInfo[key] {
        case let set as Set<NSManagedObject>: return Array(set)
        case let array as [NSManagedObject]: return array
        case let set as NSSet: return set.allObjects.compactMap { $0 as? NSManagedObject }
        default: return []
        }
    }

    private func contextDidChange(_ userInfo: [AnyHashable: Any]) {
        // A change posted while one is applied (an `awakeFromFetch` of a fault the predicate or
        // sort keys fired changed and fetched) waits for it: `list` is being changed in place,
        // and reading it then stopped the process (overlapping accesses).
        // (With the rows a merge updated that no object here stands for, read now: the merge
        // forgets them once its notification is delivered.)
        guard !isApplying else { return deferredChanges.append((userInfo, context.mergedUnregisteredUpdates)) }
        isApplying = true
        defer { isApplying = false }
        apply(userInfo, mergedUpdates: context.mergedUnregisteredUpdates)
        while !deferredChanges.isEmpty {
            let (deferred, merged) = deferredChanges.removeFirst()
            apply(deferred, mergedUpdates: merged)
        }
    }

    /// Changes posted while ``isApplying``, applied after.
    private var deferredChanges: [(userInfo: [AnyHashable: Any], mergedUpdates: [NSManagedObjectID])] = []
    private var isApplying = false

    private func apply(_ userInfo: [AnyHashable: Any], mergedUpdates: [NSManagedObjectID]) {
        // (`list` is changed in place: a copy would copy its arrays, O(n) per change.)
        guard delegate != nil, list != nil, let tracked else { return }
        let changes: FetchedListChanges
        if userInfo[NSInvalidatedAllObjectsKey] != nil {
            changes = list!.removeAll()
        } else {
            var changed: [NSManagedObject] = []
            var updated = Set<ObjectIdentifier>()
            for key in [NSUpdatedObjectsKey, NSRefreshedObjectsKey] {
                for object in Self.objects(userInfo, key) {
                    updated.insert(ObjectIdentifier(object))
                    changed.append(object)
                }
            }
            changed += mergedMatches(mergedUpdates, tracked)
            changed += Self.objects(userInfo, NSInsertedObjectsKey)
            changed += Self.objects(userInfo, NSDeletedObjectsKey)
            changed += Self.objects(userInfo, NSInvalidatedObjectsKey)
            let context = self.context
            changed.removeAll { !tracked.entityNumbers.contains($0.layout.entityNumber) }
            changes = list!.apply(changed: changed, belongs: { object in
                guard object._context === context, !object._isDeleted else { return false }
                do {
                    guard try context.isObject(object, inAffectedStores: tracked.affectedStores) else { return false }
                } catch {
                    // A new object no store takes (its save will fail): in none of the results' stores.
                    CoreDataLog.warning("A fetched results controller left out \(object.objectID): \(error.localizedDescription)")
                    return false
                }
                // A fault whose row is gone becomes deleted when it fires (as the predicate or the
                // sort keys read it): fired here, it is taken out, not left as a blank row.
                object.fireFaultIfNeeded()
                guard !object._isDeleted else { return false }
                guard let predicate = tracked.predicate else { return true }
                return PredicateEvaluator.evaluate(predicate, object: object)
            }, updated: { updated.contains(ObjectIdentifier($0)) })
        }
        guard !changes.isEmpty else { return }
        version += 1
        updateCache()
        report(changes)
    }

    /// The objects, fetched now, of rows a merge updated that the context held no object for
    /// (`ids`) and that may now belong to the results: one fetch per entity, for the entities
    /// tracked. A fetch that fails is logged, and its rows left out (no delegate call can report it).
    private func mergedMatches(_ ids: [NSManagedObjectID], _ tracked: TrackedRequest) -> [NSManagedObject] {
        guard !ids.isEmpty else { return [] }
        let byEntity = Dictionary(grouping: ids.filter { tracked.entityNumbers.contains($0.entity.layout.entityNumber) }, by: { ObjectIdentifier($0.entity) })
        var objects: [NSManagedObject] = []
        for ids in byEntity.values {
            let request = NSFetchRequest<NSManagedObject>()
            request.entity = ids[0].entity
            request.includesSubentities = false
            request.predicate = NSPredicate(format: "self IN %@", ids)
            do {
                objects += try context.fetch(request)
            } catch {
                CoreDataLog.error("A fetched results controller could not read rows a merge updated: \(error)")
            }
        }
        return objects
    }

    private func report(_ changes: FetchedListChanges) {
        guard let delegate, let erased else { return }
        if sectionNameKeyPath == nil && !delegateLacks.contains(.difference) {
            delegate.controller(erased, didChangeContentWith: difference(changes))
            if !delegateLacks.contains(.difference) { return }
        }
        delegate.controllerWillChangeContent(erased)
        for (index, name) in changes.deletedSections {
            delegate.controller(erased, didChange: FetchedResultsSection(name: name, indexTitle: sectionIndexTitle(forSectionName: name), objects: []),
                                atSectionIndex: index, for: .delete)
        }
        let sections = sectionRanges
        for (index, _) in changes.insertedSections {
            delegate.controller(erased, didChange: section(sections[index]), atSectionIndex: index, for: .insert)
        }
        for change in changes.objects {
            delegate.controller(erased, didChange: change.object, at: change.oldPath, for: change.type, newIndexPath: change.newPath)
        }
        delegate.controllerDidChangeContent(erased)
    }

    /// The changes as a difference between the object IDs of the list before and after them.
    private func difference(_ changes: FetchedListChanges) -> CollectionDifference<NSManagedObjectID> {
        var steps: [CollectionDifference<NSManagedObjectID>.Change] = []
        for change in changes.objects where change.type != .update {
            let id = change.object.objectID
            let moved = change.type == .move
            if let old = change.oldOffset { steps.append(.remove(offset: old, element: id, associatedWith: moved ? change.newOffset : nil)) }
            if let new = change.newOffset { steps.append(.insert(offset: new, element: id, associatedWith: moved ? change.oldOffset : nil)) }
        }
        // (Each offset is removed or inserted once: the difference is valid.)
        return CollectionDifference(steps)!
    }

    // MARK: Finding objects

    func indexPath(forObject object: AnyObject) -> IndexPath? {
        if let list {
            guard let managed = object as? NSManagedObject, let offset = list.index(of: managed) else { return nil }
            return FetchedResultsList.path(of: offset, in: list.sections)
        }
        guard let offset = others?.firstIndex(where: { $0 === object || ($0 as? NSObject)?.isEqual(object) == true }) else { return nil }
        return IndexPath(indexes: [0, offset])
    }

    func object(at indexPath: IndexPath) -> AnyObject {
        let sections = sectionRanges
        precondition(indexPath.count == 2, "NSFetchedResultsController: an index path needs a section and a row: \(indexPath)")
        let (section, row) = (indexPath[0], indexPath[1])
        precondition(sections.indices.contains(section),
                     "NSFetchedResultsController: no section \(section) in index path \(indexPath) (there are \(sections.count))")
        precondition(row >= 0 && row < sections[section].count,
                     "NSFetchedResultsController: no object \(row) in section \(section) (it has \(sections[section].count))")
        return fetchedObjects![sections[section].start + row]
    }
}
