import Foundation
@testable import CoreData

/// A delegate that records what a fetched results controller reports, and applies it to a copy of
/// the results as a table view applies a batch of updates.
final class FetchedResultsRecorder: NSFetchedResultsControllerDelegate {
    struct ObjectChange {
        var object: NSManagedObject
        var type: NSFetchedResultsChangeType
        var old: IndexPath?
        var new: IndexPath?
    }
    var batches = 0
    var sectionChanges: [(name: String, index: Int, type: NSFetchedResultsChangeType)] = []
    var objectChanges: [ObjectChange] = []
    private var inBatch = false

    func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        precondition(!inBatch)
        inBatch = true
        sectionChanges = []
        objectChanges = []
    }
    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
                    at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {
        precondition(inBatch)
        objectChanges.append(ObjectChange(object: anObject as! NSManagedObject, type: type, old: indexPath, new: newIndexPath))
    }
    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange sectionInfo: NSFetchedResultsSectionInfo,
                    atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType) {
        precondition(inBatch)
        sectionChanges.append((sectionInfo.name, sectionIndex, type))
    }
    func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        precondition(inBatch)
        inBatch = false
        batches += 1
    }

    /// A controller's sections as (name, objects).
    static func snapshot(_ sections: [any NSFetchedResultsSectionInfo]?) -> [Section] {
        (sections ?? []).map { Section(name: $0.name, objects: ($0.objects ?? []).map { $0 as! NSManagedObject }) }
    }

    struct Section: Equatable {
        var name: String
        var objects: [NSManagedObject]
    }

    /// `old` with the last batch applied as a table view applies it: rows deleted (deletions and
    /// moves' sources) at their old index paths and deleted sections removed; then inserted
    /// sections added, and rows inserted (insertions and moves' destinations) at their new
    /// index paths. Updates must name the object at their old and new index paths.
    func applied(to old: [Section]) -> [Section]? {
        var sections = old
        for change in objectChanges where change.type == .update {
            guard let o = change.old, sections.indices.contains(o[0]), sections[o[0]].objects.indices.contains(o[1]),
                  sections[o[0]].objects[o[1]] === change.object else { return nil }
        }
        let removals = objectChanges.filter { $0.type == .delete || $0.type == .move }.map { $0.old! }.sorted { ($0[0], $0[1]) > ($1[0], $1[1]) }
        for path in removals { sections[path[0]].objects.remove(at: path[1]) }
        for change in sectionChanges.filter({ $0.type == .delete }).sorted(by: { $0.index > $1.index }) {
            guard sections[change.index].objects.isEmpty, sections[change.index].name == change.name else { return nil }
            sections.remove(at: change.index)
        }
        for change in sectionChanges.filter({ $0.type == .insert }).sorted(by: { $0.index < $1.index }) {
            sections.insert(Section(name: change.name, objects: []), at: change.index)
        }
        let insertions = objectChanges.filter { $0.type == .insert || $0.type == .move }.sorted { ($0.new![0], $0.new![1]) < ($1.new![0], $1.new![1]) }
        for change in insertions { sections[change.new![0]].objects.insert(change.object, at: change.new![1]) }
        for change in objectChanges where change.type == .update {
            guard let n = change.new, sections[n[0]].objects[n[1]] === change.object else { return nil }
        }
        return sections
    }
}

extension FetchedResultsRecorder.Section: CustomStringConvertible {
    var description: String { "\(name): \(objects.map { ($0.value(forKey: "name") as? String) ?? "?" })" }
}

extension FetchedResultsRecorder {
    /// A new car named `car<serial>` in `context`, its year (2000–2004), price (0–7) and
    /// `electric` drawn from `random`, for the controller's random tests.
    @discardableResult
    static func insertRandomCar(_ serial: Int, into context: NSManagedObjectContext, using random: inout SeededGenerator) -> NSManagedObject {
        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
        car.setValue("car\(serial)", forKey: "name")
        car.setValue(2000 + Int.random(in: 0..<5, using: &random), forKey: "year")
        car.setValue(Double(Int.random(in: 0..<8, using: &random)), forKey: "price")
        car.setValue(Bool.random(using: &random), forKey: "electric")
        return car
    }
}
