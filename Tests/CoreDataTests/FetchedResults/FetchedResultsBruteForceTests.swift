import Foundation
import Testing
@testable import CoreData

/// The changes a fetched results controller reports, applied in order to its results before
/// them, give exactly a fresh fetch's results: thousands of random edits (inserts, deletes, sort
/// key, section key and predicate changes) in random batches, processed or saved, with and
/// without sections.
@Suite("NSFetchedResultsController against brute force")
struct FetchedResultsBruteForceTests {
    @Test(arguments: [("year", UInt64(1)), (nil, UInt64(2)), ("year", UInt64(3))])
    func reportedChangesRebuildAFreshFetch(sectionKeyPath: String?, seed: UInt64) throws {
        let stack = try TestStack()
        let context = stack.context
        var random = SeededGenerator(seed: seed)
        var serial = 0
        func insert() {
            serial += 1
            FetchedResultsRecorder.insertRandomCar(serial, into: context, using: &random)
        }
        for _ in 0..<60 { insert() }
        try context.save()

        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.predicate = NSPredicate(format: "electric == NO")
        request.sortDescriptors = [NSSortDescriptor(key: "year", ascending: seed != 3), NSSortDescriptor(key: "price", ascending: true),
                                   NSSortDescriptor(key: "name", ascending: true)]
        let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                    sectionNameKeyPath: sectionKeyPath, cacheName: nil)
        let recorder = FetchedResultsRecorder()
        controller.delegate = recorder
        try controller.performFetch()

        var edits = 0
        var batches = 0
        while edits < 3000 {
            let before = FetchedResultsRecorder.snapshot(controller.sections)
            let reportedBefore = recorder.batches
            let all = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                edits += 1
                let car = all.randomElement(using: &random)
                switch Int.random(in: 0..<10, using: &random) {
                case 0, 1: insert()
                case 2: if let car, !car.isDeleted { context.delete(car) }
                case 3, 4: car?.setValue(Double(Int.random(in: 0..<8, using: &random)), forKey: "price")
                case 5, 6: car?.setValue(2000 + Int.random(in: 0..<5, using: &random), forKey: "year")
                case 7: car?.setValue(!(car?.value(forKey: "electric") as? Bool ?? false), forKey: "electric")
                case 8: car?.setValue("renamed\(edits)", forKey: "name")
                default: car?.setValue(Double(edits), forKey: "price")
                }
            }
            if Bool.random(using: &random) { try context.save() } else { context.processPendingChanges() }
            batches += 1
            let after = FetchedResultsRecorder.snapshot(controller.sections)
            let fresh = try context.fetch(request)
            #expect(controller.fetchedObjects!.count == fresh.count && zip(controller.fetchedObjects!, fresh).allSatisfy { $0 === $1 },
                    "batch \(batches): the controller's objects are not a fresh fetch's")
            #expect(after.flatMap(\.objects).count == fresh.count)
            if recorder.batches > reportedBefore {
                let applied = recorder.applied(to: before)
                #expect(applied == after, "batch \(batches): the reported changes do not rebuild the results")
                if applied != after { break }
            } else {
                #expect(before == after, "batch \(batches): the results changed without a report")
            }
            for (index, section) in after.enumerated() {
                #expect(section.name == (sectionKeyPath == nil ? "" : "\(section.objects[0].value(forKey: "year")!)"))
                for (row, object) in section.objects.enumerated() where row % 7 == 0 {
                    #expect(controller.indexPath(forObject: object) == IndexPath(row: row, section: index))
                }
            }
            if sectionKeyPath != nil {
                #expect(Set(after.map(\.name)).count == after.count)
            }
        }
        #expect(recorder.batches > batches / 2)
    }
}
