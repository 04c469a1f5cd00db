import CoreData
import Foundation

// MagicalRecord's fetched results controller finders (`NSManagedObject (MagicalFinders)`, 2.3,
// iOS only there): controllers of a class's objects, in sections, already fetched. A fetch that
// fails leaves the controller unfetched (`fetchedObjects` nil) and logs its error. Only the forms
// that take a context are here.

extension NSManagedObject {
    /// Runs the controller's fetch on its context's queue; false, with the error logged, when it
    /// fails (a request without sort descriptors, a section key path the entity lacks).
    ///
    /// ```swift
    /// Person.mr_performFetch(controller)
    /// ```
    @discardableResult
    public class func mr_performFetch(_ controller: NSFetchedResultsController<NSFetchRequestResult>) -> Bool {
        let context = controller.managedObjectContext
        do {
            try context.performAndWait { try controller.performFetch() }
            return true
        } catch {
            MagicalRecordErrorReport.handle(error, while: "Fetching the results of a controller of \(mr_entityName())")
            return false
        }
    }

    /// A controller of a request's results in sections by `groupKeyPath`, with a delegate; not
    /// fetched yet. `useFileCache` names a cache (`MagicalRecord-Cache-<class>`), which Linux does
    /// not keep on disk.
    ///
    /// ```swift
    /// let controller = Person.mr_fetchController(request, delegate: self, useFileCache: false,
    ///                                            groupedBy: "lastName", in: context)
    /// ```
    public class func mr_fetchController(_ request: NSFetchRequest<NSFetchRequestResult>, delegate: (any NSFetchedResultsControllerDelegate)?,
                                         useFileCache: Bool, groupedBy groupKeyPath: String?,
                                         in context: NSManagedObjectContext) -> NSFetchedResultsController<NSFetchRequestResult> {
        let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: groupKeyPath,
                                                    cacheName: useFileCache ? "MagicalRecord-Cache-\(mr_entityName())" : nil)
        controller.delegate = delegate
        return controller
    }

    /// A fetched controller of every object of this class's entity, with a delegate.
    ///
    /// ```swift
    /// let controller = Person.mr_fetchAll(withDelegate: self, in: context)
    /// ```
    ///
    /// As in MagicalRecord, the request has no sort descriptors, which a fetched results
    /// controller requires: the fetch fails (logged) and the controller stays unfetched. Use
    /// ``mr_fetchAllSorted(by:ascending:with:groupBy:delegate:in:)`` instead.
    public class func mr_fetchAll(withDelegate delegate: (any NSFetchedResultsControllerDelegate)?,
                                  in context: NSManagedObjectContext) -> NSFetchedResultsController<NSFetchRequestResult> {
        let controller = mr_fetchController(mr_requestAll(in: context), delegate: delegate, useFileCache: false, groupedBy: nil, in: context)
        mr_performFetch(controller)
        return controller
    }

    /// A fetched controller of the objects that match a predicate, sorted by MagicalRecord's sort
    /// string, in sections by `groupingKeyPath`, with a delegate.
    ///
    /// ```swift
    /// let controller = Person.mr_fetchAllSorted(by: "lastName,firstName", ascending: true, with: nil,
    ///                                           groupBy: "lastName", delegate: self, in: context)
    /// ```
    public class func mr_fetchAllSorted(by sortTerm: String?, ascending: Bool, with searchTerm: NSPredicate?, groupBy groupingKeyPath: String?,
                                        delegate: (any NSFetchedResultsControllerDelegate)?,
                                        in context: NSManagedObjectContext) -> NSFetchedResultsController<NSFetchRequestResult> {
        mr_fetchAllGrouped(by: groupingKeyPath, with: searchTerm, sortedBy: sortTerm, ascending: ascending, delegate: delegate, in: context)
    }

    /// A fetched controller of the objects that match a predicate, in sections by `group`, sorted
    /// by MagicalRecord's sort string (whose first key must order the sections, as a fetched
    /// results controller requires).
    ///
    /// ```swift
    /// let controller = Person.mr_fetchAllGrouped(by: "lastName", with: nil, sortedBy: "lastName,firstName",
    ///                                            ascending: true, in: context)
    /// controller.sections?.count
    /// ```
    public class func mr_fetchAllGrouped(by group: String?, with searchTerm: NSPredicate?, sortedBy sortTerm: String?, ascending: Bool,
                                         in context: NSManagedObjectContext) -> NSFetchedResultsController<NSFetchRequestResult> {
        mr_fetchAllGrouped(by: group, with: searchTerm, sortedBy: sortTerm, ascending: ascending, delegate: nil, in: context)
    }

    /// ``mr_fetchAllGrouped(by:with:sortedBy:ascending:in:)`` with a delegate, which the
    /// controller tells of the context's changes to its objects.
    ///
    /// ```swift
    /// let controller = Person.mr_fetchAllGrouped(by: "lastName", with: nil, sortedBy: "lastName",
    ///                                            ascending: true, delegate: self, in: context)
    /// ```
    public class func mr_fetchAllGrouped(by group: String?, with searchTerm: NSPredicate?, sortedBy sortTerm: String?, ascending: Bool,
                                         delegate: (any NSFetchedResultsControllerDelegate)?,
                                         in context: NSManagedObjectContext) -> NSFetchedResultsController<NSFetchRequestResult> {
        let request = sortTerm.map { mr_requestAllSorted(by: $0, ascending: ascending, with: searchTerm, in: context) }
            ?? mr_requestAll(with: searchTerm, in: context)
        let controller = mr_fetchController(request, delegate: delegate, useFileCache: false, groupedBy: group, in: context)
        mr_performFetch(controller)
        return controller
    }
}
