import Foundation
import Testing
@testable import CoreData

/// A small seeded version of the fuzz that found a fetched results controller missing rollback
/// and undo (session 30): the controller against a fresh fetch after every step, with its
/// context's own edits, saves, rollback, refresh, undo and redo, another context's saves merged,
/// and batch updates and deletes merged by ID; the changes it reports, replayed, must rebuild its
/// results.
@Suite("Seeded fuzzing: fetched results controller")
struct SeededFetchedResultsFuzzTests {
    @Test func controllerAgainstFreshFetchesThroughMergesRollbackAndUndo() throws {
        var failures = 0
        // (Rounds 15, 63 and 255 found the undo cases; 0–3 the rollback one.)
        for round in Array(0..<12) + [15, 63, 255] {
            var random = SeededGenerator(seed: UInt64(round) &* 7 &+ 1)
            let stack = try TestStack()
            let context = stack.context
            if round % 3 == 0 { context.undoManager = UndoManager() }
            let other = stack.newContext()
            var serial = 0
            func insert(into context: NSManagedObjectContext) {
                serial += 1
                FetchedResultsRecorder.insertRandomCar(serial, into: context, using: &random)
            }
            for _ in 0..<30 { insert(into: context) }
            try context.save()
            context.undoManager?.removeAllActions()

            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            request.predicate = NSPredicate(format: round % 2 == 0 ? "electric == NO" : "price < 6")
            request.sortDescriptors = [NSSortDescriptor(key: "year", ascending: round % 4 < 2), NSSortDescriptor(key: "price", ascending: true),
                                       NSSortDescriptor(key: "name", ascending: true)]
            let sectionKeyPath: String? = round % 3 == 1 ? nil : "year"
            let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                        sectionNameKeyPath: sectionKeyPath, cacheName: nil)
            let recorder = FetchedResultsRecorder()
            controller.delegate = recorder
            try controller.performFetch()
            var log: [String] = []
            stepLoop: for step in 0..<150 {
                let before = FetchedResultsRecorder.snapshot(controller.sections)
                let reportedBefore = recorder.batches
                let all = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
                let car = all.randomElement(using: &random)
                let op = Int.random(in: 0..<16, using: &random)
                log.append("\(step): op\(op) \(car.map { "\($0.value(forKey: "name") ?? "-")/\($0.value(forKey: "year") ?? "-")/\($0.value(forKey: "price") ?? "-")" } ?? "-")")
                switch op {
                case 0: insert(into: context)
                case 1: if let car, !car.isDeleted { context.delete(car) }
                case 2: car?.setValue(Double(Int.random(in: 0..<8, using: &random)), forKey: "price")
                case 3: car?.setValue(2000 + Int.random(in: 0..<5, using: &random), forKey: "year")
                case 4: car?.setValue(!(car?.value(forKey: "electric") as? Bool ?? false), forKey: "electric")
                case 5: do { try context.save() } catch { log.append("  save failed \((error as NSError).code)"); context.rollback() }
                case 6: context.rollback()
                case 7: if let car { context.refresh(car, mergeChanges: true) }
                case 8:
                    // Another context's save, merged.
                    let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { note in
                        context.mergeChanges(fromContextDidSave: note)
                    }
                    let others = try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
                    for _ in 0..<Int.random(in: 1...4, using: &random) {
                        switch Int.random(in: 0..<4, using: &random) {
                        case 0: insert(into: other)
                        case 1: if let victim = others.randomElement(using: &random), !victim.isDeleted { other.delete(victim) }
                        case 2: others.randomElement(using: &random)?.setValue(2000 + Int.random(in: 0..<5, using: &random), forKey: "year")
                        default: others.randomElement(using: &random)?.setValue(Double(Int.random(in: 0..<8, using: &random)), forKey: "price")
                        }
                    }
                    do { try other.save() } catch { other.rollback(); log.append("  other save failed \((error as NSError).code)") }
                    NotificationCenter.default.removeObserver(token)
                case 9:
                    guard !context.hasChanges else { break }
                    let update = NSBatchUpdateRequest(entityName: "Car")
                    update.predicate = NSPredicate(format: "year == %d", 2000 + Int.random(in: 0..<5, using: &random))
                    update.propertiesToUpdate = ["price": NSExpression(format: "price + 1")]
                    update.resultType = .updatedObjectIDsResultType
                    let ids = (try context.execute(update) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID] ?? []
                    NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: ids], into: [context])
                case 10:
                    guard !context.hasChanges else { break }
                    let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
                    fetch.predicate = NSPredicate(format: "price == %d", Int.random(in: 0..<8, using: &random))
                    let delete = NSBatchDeleteRequest(fetchRequest: fetch)
                    delete.resultType = .resultTypeObjectIDs
                    let ids = (try context.execute(delete) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID] ?? []
                    NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: ids], into: [context])
                case 11:
                    if let undo = context.undoManager, undo.canUndo { context.processPendingChanges(); undo.undo() }
                case 12:
                    if let undo = context.undoManager, undo.canRedo { undo.redo() }
                case 13: context.refreshAllObjects()
                case 14: car?.setValue("renamed\(step)", forKey: "name")
                default: context.processPendingChanges()
                }
                if Int.random(in: 0..<3, using: &random) == 0 { context.processPendingChanges() }
                context.processPendingChanges()
                let after = FetchedResultsRecorder.snapshot(controller.sections)
                let fresh = try context.fetch(request)
                let mine = controller.fetchedObjects ?? []
                if mine.count != fresh.count || !zip(mine, fresh).allSatisfy({ $0 === $1 }) {
                    failures += 1
                    func d(_ o: NSManagedObject) -> String { "\(o.value(forKey: "name") ?? "?")/\(o.value(forKey: "year") ?? "-")/\(o.value(forKey: "price") ?? "-")" }
                    Issue.record("round \(round) step \(step): controller \(mine.map(d)) fresh \(fresh.map(d))\n\(log.suffix(12).joined(separator: "\n"))")
                    break stepLoop
                }
                if recorder.batches > reportedBefore {
                    let applied = recorder.applied(to: before)
                    if applied != after {
                        failures += 1
                        Issue.record("round \(round) step \(step): reported changes do not rebuild the results\n\(log.suffix(12).joined(separator: "\n"))")
                        break stepLoop
                    }
                } else if before != after {
                    failures += 1
                    Issue.record("round \(round) step \(step): results changed without a report\n\(log.suffix(12).joined(separator: "\n"))")
                    break stepLoop
                }
            }
            withExtendedLifetime((stack, other, controller, recorder)) {}
            if failures > 3 { break }
        }
    }
}
