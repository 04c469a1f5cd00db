import CoreData
import Foundation
import MagicalRecord
import Testing

/// The fetched results controller finders: grouped, sorted, fetched, with and without a delegate.
@Suite struct MagicalFetchingTests {
    /// Counts the controller's change batches.
    final class Recorder: NSFetchedResultsControllerDelegate {
        var batches = 0
        var inserted: [IndexPath] = []
        func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
                        for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {
            if type == .insert, let newIndexPath { inserted.append(newIndexPath) }
        }
        func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) { batches += 1 }
    }

    private func carStack() throws -> MagicalTestStack {
        let stack = try MagicalTestStack()
        stack.insertCars()
        try stack.save()
        return stack
    }

    private func sections(_ controller: NSFetchedResultsController<NSFetchRequestResult>, _ stack: MagicalTestStack) -> [String] {
        stack.run {
            (controller.sections ?? []).map { section in
                section.name + ":" + (section.objects ?? []).map { "\(($0 as? NSManagedObject)?.value(forKey: "model") ?? "")" }.joined(separator: ",")
            }
        }
    }

    @Test func fetchAllGroupedIsFetchedInSections() throws {
        let stack = try carStack()
        let controller = Automobile.mr_fetchAllGrouped(by: "make", with: nil, sortedBy: "make,price", ascending: true, in: stack.context)
        #expect(controller.sectionNameKeyPath == "make")
        #expect(controller.delegate == nil)
        #expect(sections(controller, stack) == ["Fiat:Panda", "Saab:900,9-3", "Volvo:V70"])
    }

    @Test func fetchAllGroupedWithAPredicateAndDescendingSort() throws {
        let stack = try carStack()
        let controller = Automobile.mr_fetchAllGrouped(by: "make", with: NSPredicate(format: "year > 1990"), sortedBy: "make,price", ascending: false,
                                                in: stack.context)
        #expect(sections(controller, stack) == ["Volvo:V70", "Saab:9-3,900"])
    }

    @Test func fetchAllGroupedWithADelegateFollowsTheContext() throws {
        let stack = try carStack()
        let recorder = Recorder()
        let controller = Automobile.mr_fetchAllGrouped(by: "make", with: nil, sortedBy: "make", ascending: true, delegate: recorder, in: stack.context)
        #expect(controller.delegate === recorder)
        #expect(stack.run { controller.fetchedObjects?.count } == 4)
        stack.insert("Automobile", ["make": "Saab", "model": "99", "price": 500.0, "year": 1975])
        stack.run { stack.context.processPendingChanges() }
        #expect(recorder.batches == 1)
        #expect(recorder.inserted.count == 1)
        #expect(stack.run { controller.fetchedObjects?.count } == 5)
    }

    @Test func fetchAllSortedIsTheGroupedFormWithItsArgumentsInAnotherOrder() throws {
        let stack = try carStack()
        let recorder = Recorder()
        let controller = Automobile.mr_fetchAllSorted(by: "year:NO,model", ascending: true, with: nil, groupBy: nil, delegate: recorder, in: stack.context)
        #expect(controller.delegate === recorder)
        // "year:NO" turns the keys after it descending too, as in MagicalRecord.
        #expect(stack.values(stack.run { controller.fetchedObjects as? [NSManagedObject] }, "model") == ["V70", "9-3", "900", "Panda"])
    }

    @Test func fetchControllerIsNotFetchedAndNamesItsCache() throws {
        let stack = try carStack()
        let request = Automobile.mr_requestAllSorted(by: "model", ascending: true, in: stack.context)
        let controller = Automobile.mr_fetchController(request, delegate: nil, useFileCache: true, groupedBy: nil, in: stack.context)
        defer { NSFetchedResultsController<NSFetchRequestResult>.deleteCache(withName: "MagicalRecord-Cache-Automobile") }
        #expect(controller.cacheName == "MagicalRecord-Cache-Automobile")
        #expect(stack.run { controller.fetchedObjects } == nil)
        #expect(Automobile.mr_performFetch(controller))
        #expect(stack.run { controller.fetchedObjects?.count } == 4)
        let uncached = Automobile.mr_fetchController(request, delegate: nil, useFileCache: false, groupedBy: nil, in: stack.context)
        #expect(uncached.cacheName == nil)
    }

    @Test func fetchAllWithDelegateHasNoSortAndStaysUnfetched() throws {
        // MagicalRecord's request has no sort descriptors, which a controller requires: the
        // fetch fails (logged), and the controller is returned unfetched, never a crash.
        let stack = try carStack()
        let controller = Automobile.mr_fetchAll(withDelegate: nil, in: stack.context)
        #expect(stack.run { controller.fetchedObjects } == nil)
        #expect(Automobile.mr_performFetch(controller) == false)
    }
}
