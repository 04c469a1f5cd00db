import Foundation
import Testing
@testable import CoreData

/// A change to one object among 100,000 costs O(log n) comparisons, not a pass over the list.
@Suite("Fetched results list cost")
struct FetchedResultsListCostTests {
    private final class Counter { var comparisons = 0 }

    @Test func oneChangeAmong100000CostsLogarithmicallyManyComparisons() throws {
        let model = TestModel.make()
        let entity = model.entitiesByName["Car"]!
        _ = NSPersistentStoreCoordinator(managedObjectModel: model) // freezes the model
        let count = 100_000
        let objects = (0..<count).map { index -> NSManagedObject in
            let car = NSManagedObject(entity: entity, insertInto: nil)
            car.setValue(Double(index), forKey: "price")
            car.setValue(2000 + index / 25_000, forKey: "year")
            return car
        }
        let counter = Counter()
        let price = SortKey(path: ["price"], ascending: true, comparison: .comparator, comparator: ComparatorBox { a, b in
            counter.comparisons += 1
            let (x, y) = (a as! Double, b as! Double)
            return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        })
        var list = FetchedResultsList(sortKeys: [price], sectionPath: ["year"])
        try list.fill(with: objects)
        #expect(list.sections.map(\.count) == [25_000, 25_000, 25_000, 25_000])

        counter.comparisons = 0
        objects[10].setValue(99_999.5, forKey: "price")       // to the end, into the last section
        objects[10].setValue(2003, forKey: "year")
        let changes = list.apply(changed: [objects[10]], belongs: { _ in true }, updated: { _ in true })
        #expect(changes.objects.count == 1 && changes.objects[0].type == .move)
        #expect(changes.objects[0].oldPath == IndexPath(row: 10, section: 0))
        #expect(changes.objects[0].newPath == IndexPath(row: 25_000, section: 3))
        #expect(counter.comparisons < 100, "\(counter.comparisons) comparisons for one change among \(count)")
        #expect(list.index(of: objects[10]) == count - 1)
    }

    /// Emptying a list (a context's reset) reads it off in order: with every object sorting
    /// alike it found each by a scan of its ties, n²/2 comparisons (minutes for 30,000 objects).
    @Test func emptyingAListOfTiesComparesNothing() throws {
        let model = TestModel.make()
        let entity = model.entitiesByName["Car"]!
        _ = NSPersistentStoreCoordinator(managedObjectModel: model)
        let objects = (0..<3_000).map { index -> NSManagedObject in
            let car = NSManagedObject(entity: entity, insertInto: nil)
            car.setValue(2000 + index % 3, forKey: "year")
            return car
        }.sorted { ($0.value(forKey: "year") as! Int) < ($1.value(forKey: "year") as! Int) }
        let counter = Counter()
        let year = SortKey(path: ["year"], ascending: true, comparison: .comparator, comparator: ComparatorBox { a, b in
            counter.comparisons += 1
            return (a as! NSNumber).compare(b as! NSNumber)
        })
        var list = FetchedResultsList(sortKeys: [year], sectionPath: ["year"])
        try list.fill(with: objects)
        counter.comparisons = 0
        let changes = list.removeAll()
        #expect(counter.comparisons == 0)
        #expect(changes.deletedSections.map(\.name) == ["2000", "2001", "2002"])
        #expect(changes.objects.count == 3_000 && changes.objects.allSatisfy { $0.type == .delete && $0.newPath == nil })
        // From the end, as every batch reports deletions.
        #expect(changes.objects.map { $0.oldOffset! } == Array((0..<3_000).reversed()))
        #expect(changes.objects.first { $0.oldOffset == 1_000 }?.oldPath == IndexPath(row: 0, section: 1))
        #expect(list.objects.isEmpty && list.sections.isEmpty)

        // Without sections: the one section, "", stays, as an empty list has it.
        var flat = FetchedResultsList(sortKeys: [year], sectionPath: nil)
        try flat.fill(with: objects)
        let flatChanges = flat.removeAll()
        #expect(flatChanges.deletedSections.isEmpty && flatChanges.objects.count == 3_000)
        #expect(flatChanges.objects.first?.oldPath == IndexPath(row: 2_999, section: 0))
        #expect(flat.sections == [FetchedSectionRange(name: "", start: 0, count: 0)])
        var empty = FetchedResultsList(sortKeys: [year], sectionPath: nil)
        try empty.fill(with: [])
        #expect(empty.removeAll().isEmpty)
    }
}
