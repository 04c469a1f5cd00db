import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `NSFetchedResultsController`: fetching, sections, the section index, bad input, and the
/// changes it reports for the context's own edits, merges and refreshes.
@Suite("NSFetchedResultsController")
struct NSFetchedResultsControllerTests {
    /// Cars named `c0`… with the given years (section) and prices (sort key), saved.
    private func stack(_ cars: [(year: Int, price: Double)]) throws -> TestStack {
        let stack = try TestStack()
        for (index, car) in cars.enumerated() {
            stack.insert("Car", ["name": "c\(index)", "year": car.year, "price": car.price])
        }
        try stack.context.save()
        return stack
    }

    private func controller(_ stack: TestStack, sections: String? = "year", predicate: NSPredicate? = nil,
                            configure: (NSFetchRequest<NSManagedObject>) -> Void = { _ in }) -> NSFetchedResultsController<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.sortDescriptors = [NSSortDescriptor(key: "year", ascending: true), NSSortDescriptor(key: "price", ascending: true),
                                   NSSortDescriptor(key: "name", ascending: true)]
        request.predicate = predicate
        configure(request)
        return NSFetchedResultsController(fetchRequest: request, managedObjectContext: stack.context, sectionNameKeyPath: sections, cacheName: nil)
    }

    /// A fetched controller of `stack`'s cars with a recording delegate.
    private func tracked(_ stack: TestStack, predicate: NSPredicate? = nil) throws -> (NSFetchedResultsController<NSManagedObject>, FetchedResultsRecorder) {
        let controller = controller(stack, predicate: predicate)
        let recorder = FetchedResultsRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        return (controller, recorder)
    }

    private func names(_ objects: [Any]?) -> [String] { (objects ?? []).map { ($0 as! NSManagedObject).value(forKey: "name") as! String } }

    @Test func fetchesIntoSectionsInOrder() throws {
        let stack = try stack([(2001, 5), (2000, 9), (2001, 1), (2003, 2), (2000, 3)])
        let controller = controller(stack)
        #expect(controller.fetchedObjects == nil && controller.sections == nil)
        try controller.performFetch()
        #expect(names(controller.fetchedObjects) == ["c4", "c1", "c2", "c0", "c3"])
        let sections = try #require(controller.sections)
        #expect(sections.map(\.name) == ["2000", "2001", "2003"])
        #expect(sections.map(\.numberOfObjects) == [2, 2, 1])
        #expect(names(sections[1].objects) == ["c2", "c0"])
        #expect(sections[0].indexTitle == "2")
        let c0 = controller.fetchedObjects![3]
        #expect(controller.object(at: IndexPath(row: 1, section: 1)) === c0)
        #expect(controller.indexPath(forObject: c0) == IndexPath(row: 1, section: 1))
        #expect(controller.managedObjectContext === stack.context && controller.sectionNameKeyPath == "year" && controller.cacheName == nil)
    }

    @Test func withoutASectionKeyPathThereIsOneSection() throws {
        let empty = try TestStack()
        let none = controller(empty, sections: nil)
        try none.performFetch()
        #expect(none.sections?.count == 1 && none.sections?[0].numberOfObjects == 0 && none.sections?[0].name == "")
        let stack = try stack([(2001, 5), (2000, 9)])
        let controller = controller(stack, sections: nil)
        try controller.performFetch()
        #expect(controller.sections?.count == 1 && names(controller.sections?[0].objects) == ["c1", "c0"])
        let sectioned = self.controller(empty)
        try sectioned.performFetch()
        #expect(sectioned.sections?.count == 0)
    }

    @Test func sectionsAcrossSeveralKeysAndTheSectionIndex() throws {
        let stack = try TestStack()
        for (index, (make, year)) in [("ford", 2001), ("audi", 2000), ("fiat", 2002), ("bmw", 2001), ("Alfa", 2003)].enumerated() {
            stack.insert("Car", ["name": make, "year": year, "price": Double(index)])
        }
        try stack.context.save()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true, selector: "caseInsensitiveCompare:"),
                                   NSSortDescriptor(key: "year", ascending: false)]
        let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: stack.context, sectionNameKeyPath: "name", cacheName: nil)
        try controller.performFetch()
        #expect(controller.sections?.map(\.name) == ["Alfa", "audi", "bmw", "fiat", "ford"])
        #expect(controller.sectionIndexTitles == ["A", "B", "F"])
        #expect(controller.sectionIndexTitle(forSectionName: "ford") == "F")
        #expect(controller.section(forSectionIndexTitle: "F", at: 2) == 3)
        #expect(controller.section(forSectionIndexTitle: "C", at: 2) == 2)

        final class Titles: NSFetchedResultsControllerDelegate {
            func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, sectionIndexTitleForSectionName sectionName: String) -> String? {
                sectionName.uppercased()
            }
        }
        let titles = Titles()
        controller.delegate = titles
        #expect(controller.sections?[1].indexTitle == "AUDI")
        #expect(controller.sectionIndexTitles.count == 5)
    }

    @Test func sectionsThroughAToOneRelationship() throws {
        let stack = try TestStack()
        let ann = stack.insert("Person", ["name": "Ann"]), bob = stack.insert("Person", ["name": "Bob"])
        for (index, owner) in [bob, ann, bob].enumerated() { stack.insert("Car", ["name": "c\(index)", "owner": owner]) }
        try stack.context.save()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.sortDescriptors = [NSSortDescriptor(key: "owner.name", ascending: true), NSSortDescriptor(key: "name", ascending: true)]
        let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: stack.context, sectionNameKeyPath: "owner.name", cacheName: nil)
        try controller.performFetch()
        #expect(controller.sections?.map(\.name) == ["Ann", "Bob"])
        #expect(names(controller.sections?[1].objects) == ["c0", "c2"])
    }

    @Test func typedControllersAndOtherResultTypes() throws {
        let stack = try stack([(2001, 5), (2000, 9)])
        let request = NSFetchRequest<NSManagedObjectID>(entityName: "Car")
        request.resultType = .managedObjectIDResultType
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let ids = NSFetchedResultsController(fetchRequest: request, managedObjectContext: stack.context, sectionNameKeyPath: nil, cacheName: nil)
        try ids.performFetch()
        let first = try #require(ids.fetchedObjects?.first)
        #expect(ids.fetchedObjects?.count == 2 && ids.indexPath(forObject: first) == IndexPath(row: 0, section: 0))

        let untyped = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
        untyped.sortDescriptors = [NSSortDescriptor(key: "name", ascending: false)]
        let any = NSFetchedResultsController(fetchRequest: untyped, managedObjectContext: stack.context, sectionNameKeyPath: nil, cacheName: "Cars")
        try any.performFetch()
        #expect(names(any.fetchedObjects) == ["c1", "c0"])
        NSFetchedResultsController<NSFetchRequestResult>.deleteCache(withName: "Cars")
    }

    // MARK: Bad input

    @Test func aRequestWithoutSortDescriptorsIsAnError() throws {
        let stack = try stack([(2001, 5)])
        for descriptors in [nil, [NSSortDescriptor]()] {
            let controller = controller(stack) { $0.sortDescriptors = descriptors }
            let error = try #require(throws: NSError.self) { try controller.performFetch() }
            #expect(error.domain == NSCocoaErrorDomain && error.code == 134060)
            #expect(error.localizedDescription.contains("sort descriptors"))
            #expect(controller.fetchedObjects == nil)
        }
    }

    @Test func aSectionKeyPathThatIsNotAPropertyIsAnError() throws {
        let stack = try stack([(2001, 5)])
        for keyPath in ["colour", "owner.shoeSize", ""] {
            let controller = controller(stack, sections: keyPath)
            let error = try #require(throws: NSError.self) { try controller.performFetch() }
            #expect(error.domain == NSCocoaErrorDomain && error.code == 134060)
            #expect(error.localizedDescription.contains("'\(keyPath)'"))
        }
    }

    @Test func sectionsOutOfOrderAreAnError() throws {
        let stack = try stack([(2001, 5), (2000, 3), (2001, 1)])
        let controller = controller(stack) { $0.sortDescriptors = [NSSortDescriptor(key: "price", ascending: true)] }
        let error = try #require(throws: NSError.self) { try controller.performFetch() }
        #expect(error.code == 134060 && error.localizedDescription.contains("out of order section name"))
    }

    @Test func anIndexPathOutOfRangeStopsTheProcess() async throws {
        let folder = try TemporaryFolder() // made and removed here: a child that stops leaves nothing behind
        defer { withExtendedLifetime(folder) {} } // until the child has ended
        await #expect(processExitsWith: .failure) { [path = folder.path as String] in
            let stack = try TestStack(directory: URL(fileURLWithPath: path))
            stack.insert("Car", ["name": "only"])
            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: stack.context, sectionNameKeyPath: nil, cacheName: nil)
            try controller.performFetch()
            _ = controller.object(at: IndexPath(row: 1, section: 0))
        }
    }

    // MARK: Changes

    @Test func reportsTheContextsOwnChangesWhenProcessed() throws {
        let stack = try stack([(2000, 1), (2000, 2), (2001, 3)])
        let (controller, recorder) = try tracked(stack)
        let cars = controller.fetchedObjects!
        var before = FetchedResultsRecorder.snapshot(controller.sections)

        cars[0].setValue(2.5, forKey: "price")             // moves within its section
        cars[2].setValue(2002, forKey: "year")              // its section goes, another comes
        stack.insert("Car", ["name": "new", "year": 2000, "price": 0.5])
        #expect(recorder.batches == 0)                      // not before the changes are processed
        stack.context.processPendingChanges()
        #expect(recorder.batches == 1)
        #expect(recorder.sectionChanges.map(\.type) == [.delete, .insert])
        #expect(recorder.sectionChanges.map(\.name) == ["2001", "2002"])
        #expect(Set(recorder.objectChanges.map(\.type.rawValue)) == [1, 3])
        var after = FetchedResultsRecorder.snapshot(controller.sections)
        #expect(recorder.applied(to: before) == after)
        #expect(after.map(\.name) == ["2000", "2002"] && names(after[0].objects) == ["new", "c1", "c0"])

        before = after
        cars[1].setValue("renamed", forKey: "name")         // an update in place
        stack.context.delete(cars[0])
        try stack.context.save()
        #expect(recorder.batches == 2)
        #expect(recorder.objectChanges.map(\.type) == [.delete, .update])
        #expect(recorder.objectChanges[1].old == IndexPath(row: 1, section: 0) && recorder.objectChanges[1].new == IndexPath(row: 1, section: 0))
        after = FetchedResultsRecorder.snapshot(controller.sections)
        #expect(recorder.applied(to: before) == after)
    }

    @Test func objectsThatStartOrStopMatchingThePredicate() throws {
        let stack = try stack([(2000, 1), (2000, 2), (2001, 3)])
        let (controller, recorder) = try tracked(stack, predicate: NSPredicate(format: "price < 2.5"))
        #expect(controller.fetchedObjects?.count == 2)
        let all = try stack.fetch("Car") { $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)] }
        all[0].setValue(9.0, forKey: "price")
        all[2].setValue(0.0, forKey: "price")
        stack.context.processPendingChanges()
        #expect(names(controller.fetchedObjects) == ["c1", "c2"])
        #expect(recorder.objectChanges.map(\.type) == [.delete, .insert])
        #expect(recorder.sectionChanges.map(\.type) == [.insert])
    }

    @Test func withoutADelegateNothingIsTracked() throws {
        let stack = try stack([(2000, 1)])
        let controller = controller(stack)
        try controller.performFetch()
        stack.insert("Car", ["name": "new", "year": 2000, "price": 0.5])
        try stack.context.save()
        #expect(controller.fetchedObjects?.count == 1)
    }

    @Test func reportsMergesFromAnotherContext() throws {
        let stack = try stack([(2000, 1), (2000, 2), (2001, 3)])
        let (controller, recorder) = try tracked(stack)
        let before = FetchedResultsRecorder.snapshot(controller.sections)

        let other = stack.newContext()
        let theirs = try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).sorted { ($0.value(forKey: "name") as! String) < ($1.value(forKey: "name") as! String) }
        theirs[0].setValue(5.0, forKey: "price")
        other.delete(theirs[2])
        let inserted = NSEntityDescription.insertNewObject(forEntityName: "Car", into: other)
        inserted.setValue("merged", forKey: "name"); inserted.setValue(2000, forKey: "year"); inserted.setValue(0.0, forKey: "price")
        final class Saved: @unchecked Sendable { var note: Notification? }
        let saved = Saved()
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { saved.note = $0 }
        try other.save()
        NotificationCenter.default.removeObserver(token)
        stack.context.mergeChanges(fromContextDidSave: try #require(saved.note))

        #expect(recorder.batches == 1)
        let after = FetchedResultsRecorder.snapshot(controller.sections)
        #expect(recorder.applied(to: before) == after)
        #expect(after.map(\.name) == ["2000"] && names(after[0].objects) == ["merged", "c1", "c0"])
    }

    @Test func reportsBatchUpdatesMergedByID() throws {
        let stack = try stack([(2000, 1), (2000, 2)])
        let (controller, recorder) = try tracked(stack)
        for car in controller.fetchedObjects! { car.willAccessValue(forKey: nil) }
        let before = FetchedResultsRecorder.snapshot(controller.sections)
        let update = NSBatchUpdateRequest(entityName: "Car")
        update.predicate = NSPredicate(format: "name == 'c0'")
        update.propertiesToUpdate = ["price": 7.0]
        update.resultType = .updatedObjectIDsResultType
        let result = try stack.context.execute(update) as! NSBatchUpdateResult
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: result.result as! [NSManagedObjectID]], into: [stack.context])
        #expect(recorder.batches == 1 && recorder.objectChanges.map(\.type) == [.move])
        #expect(recorder.applied(to: before) == FetchedResultsRecorder.snapshot(controller.sections))
        #expect(names(controller.fetchedObjects) == ["c1", "c0"])
    }

    @Test func reportsRefreshesAndAReset() throws {
        let stack = try stack([(2000, 1), (2000, 2)])
        let (controller, recorder) = try tracked(stack)
        let car = controller.fetchedObjects![0]
        car.setValue(9.0, forKey: "price")
        stack.context.processPendingChanges()
        #expect(names(controller.fetchedObjects) == ["c1", "c0"])
        stack.context.refresh(car, mergeChanges: false)     // back to its saved price
        #expect(names(controller.fetchedObjects) == ["c0", "c1"])
        #expect(recorder.batches == 2 && recorder.objectChanges.map(\.type) == [.move])
        stack.context.reset()
        #expect(controller.fetchedObjects?.isEmpty == true && recorder.sectionChanges.map(\.type) == [.delete])
    }

    @Test func theDifferenceVariantReplacesThePerChangeCalls() throws {
        let stack = try stack([(2000, 1), (2000, 2), (2001, 3)])
        final class Differences: NSFetchedResultsControllerDelegate {
            var differences: [CollectionDifference<NSManagedObjectID>] = []
            var after: [NSManagedObjectID] = []
            var perChange = 0
            func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChangeContentWith diff: CollectionDifference<NSManagedObjectID>) {
                differences.append(diff)
                after = controller.fetchedObjects!.map { ($0 as! NSManagedObject).objectID }
            }
            func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) { perChange += 1 }
        }
        let controller = controller(stack, sections: nil)
        let delegate = Differences()
        controller.delegate = delegate
        try controller.performFetch()
        let before = controller.fetchedObjects!.map(\.objectID)
        controller.fetchedObjects![0].setValue(2.5, forKey: "price")
        controller.fetchedObjects![2].setValue(0.5, forKey: "price")
        stack.context.delete(controller.fetchedObjects![1])
        stack.insert("Car", ["name": "new", "year": 1999, "price": 0.5])
        stack.context.processPendingChanges()
        #expect(delegate.differences.count == 1 && delegate.perChange == 0)
        #expect(before.applying(delegate.differences[0]) == delegate.after)

        // With sections, the per-change calls are made.
        let sectioned = self.controller(stack)
        sectioned.delegate = delegate
        try sectioned.performFetch()
        sectioned.fetchedObjects![0].setValue(3.5, forKey: "price")
        stack.context.processPendingChanges()
        #expect(delegate.perChange == 1)
    }

    @Test("A typed controller handed an object of another class stops with both classes named, not an unchecked cast")
    func anObjectOfAnotherClassStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            let model = TestModel.make()
            let car = model.entitiesByName["Car"]!
            car.managedObjectClassName = String(reflecting: UnobservedCar.self)
            let sports = NSEntityDescription()
            sports.name = "SportsCar" // no class of its own: NSManagedObject
            car.subentities = [sports]
            model.entities.append(sports)
            let stack = try TestStack(model: model)
            let request = NSFetchRequest<UnobservedCar>(entityName: "Car")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: stack.context,
                                                        sectionNameKeyPath: nil, cacheName: nil)
            let recorder = FetchedResultsRecorder()
            controller.delegate = recorder
            try controller.performFetch()
            stack.insert("SportsCar", ["name": "x"])
            stack.context.processPendingChanges()
            _ = controller.fetchedObjects?.map(\.name)
        }
    }
}
