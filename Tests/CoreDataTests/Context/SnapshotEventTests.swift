import Foundation
import Testing
@testable import CoreData

/// A car that records the snapshot events it awakes from, with the name it has then.
final class SnapshotEventCar: NSManagedObject {
    nonisolated(unsafe) static var log: [(NSSnapshotEventType, String?)] = []

    override func awake(fromSnapshotEvents flags: NSSnapshotEventType) {
        super.awake(fromSnapshotEvents: flags)
        Self.log.append((flags, value(forKey: "name") as? String))
    }
}

/// `awake(fromSnapshotEvents:)`: rollback, a refresh that keeps changes, undo and redo, a merge
/// policy. Serialized: the events go to one static log.
@Suite("Snapshot events", .serialized)
struct SnapshotEventTests {
    private func stack() throws -> (TestStack, NSManagedObject) {
        SnapshotEventCar.log = []
        let stack = try TestStack(classes: ["Car": SnapshotEventCar.self])
        let car = stack.insert("Car", ["name": "a", "year": 1950])
        try stack.context.save()
        return (stack, car)
    }

    private var events: [String] {
        SnapshotEventCar.log.map { flags, name in "\(flags.rawValue):\(name ?? "nil")" }
    }

    @Test func rawValuesAreApples() {
        #expect(NSSnapshotEventType.undoInsertion.rawValue == 2 && NSSnapshotEventType.undoDeletion.rawValue == 4)
        #expect(NSSnapshotEventType.undoUpdate.rawValue == 8 && NSSnapshotEventType.rollback.rawValue == 16)
        #expect(NSSnapshotEventType.refresh.rawValue == 32 && NSSnapshotEventType.mergePolicy.rawValue == 64)
    }

    @Test func rollbackAwakesTheRevertedObjectsWithTheirSavedValues() throws {
        let (stack, car) = try stack()
        car.setValue("b", forKey: "name")
        let gone = stack.insert("Car", ["name": "new"])
        stack.context.rollback()
        #expect(events == ["16:a"])
        #expect(gone.managedObjectContext == nil)
        // A deleted object comes back.
        SnapshotEventCar.log = []
        stack.context.delete(car)
        stack.context.processPendingChanges()
        stack.context.rollback()
        #expect(events == ["16:a"])
    }

    @Test func aRefreshThatKeepsChangesAwakesWithRefresh() throws {
        let (stack, car) = try stack()
        let other = try stack.reopen()
        try other.fetch("Car")[0].setValue(1960, forKey: "year")
        try other.context.save()
        car.setValue("b", forKey: "name")
        stack.context.refresh(car, mergeChanges: true)
        #expect(events == ["32:b"])
        #expect(car.value(forKey: "year") as? Int == 1960)
        // Without changes to keep, the object becomes a fault: nothing to awake from.
        SnapshotEventCar.log = []
        stack.context.refresh(car, mergeChanges: false)
        #expect(events.isEmpty)
    }

    @Test func undoAndRedoAwakeWithTheirEvents() throws {
        let (stack, car) = try stack()
        let context = stack.context
        context.undoManager = UndoManager()
        car.setValue("b", forKey: "name")
        context.processPendingChanges()
        context.undo()
        #expect(events == ["8:a"])
        SnapshotEventCar.log = []
        context.redo()
        #expect(events == ["8:b"])

        SnapshotEventCar.log = []
        let fresh = stack.insert("Car", ["name": "fresh"])
        context.processPendingChanges()
        context.undo()
        #expect(events == ["2:fresh"], "heard before it leaves, while it can read its values")
        #expect(fresh.managedObjectContext == nil)

        SnapshotEventCar.log = []
        context.delete(car)
        context.processPendingChanges()
        context.undo()
        #expect(events == ["4:b"])
        #expect(!car.isDeleted)
    }

    @Test func aMergePolicyThatTakesTheStoresValuesAwakesWithMergePolicy() throws {
        for (policy, expected) in [(NSMergeByPropertyObjectTrumpMergePolicy, ["64:b"]), (NSMergeByPropertyStoreTrumpMergePolicy, ["64:b"]),
                                   (NSRollbackMergePolicy, ["64:a"]), (NSOverwriteMergePolicy, [])] {
            let (stack, car) = try stack()
            let other = try stack.reopen()
            try other.fetch("Car")[0].setValue(1960, forKey: "year")
            try other.context.save()
            car.setValue("b", forKey: "name")
            stack.context.mergePolicy = policy
            try stack.context.save()
            #expect(events == expected, "\(policy)")
        }
    }
}
