import Foundation
import Testing
@testable import CoreData

/// Behaviours a peer's suite asserts against Apple's framework (issue 21, B8).
@Suite("Behaviours observed on Apple's framework")
struct AppleObservedBehaviourTests {
    private func stackWithHookedCars() throws -> TestStack { try TestStack(classes: ["Car": HookedCar.self]) }

    /// The `ObjectsDidChange` notifications a context posts while `body` runs.
    private func changeNotes(of context: NSManagedObjectContext, _ body: () throws -> Void) rethrows -> [[AnyHashable: Any]] {
        nonisolated(unsafe) var notes: [[AnyHashable: Any]] = []
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) {
            notes.append($0.userInfo ?? [:])
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try body()
        return notes
    }

    @Test func deleteCallsPrepareForDeletionAtOnceAndAgainOnARepeatedDelete() throws {
        let stack = try stackWithHookedCars()
        let car = stack.insert("Car", ["name": "a"]) as! HookedCar
        try stack.context.save()
        car.events = []
        stack.context.delete(car)
        #expect(car.events == ["prepareForDeletion"], "before any processPendingChanges")
        stack.context.delete(car)
        #expect(car.events == ["prepareForDeletion", "prepareForDeletion"])
        stack.context.processPendingChanges()
        #expect(car.events == ["prepareForDeletion", "prepareForDeletion"], "not a third time")
        try stack.context.save()
        #expect(try stack.rows("SELECT count(*) FROM ZCAR") == [["0"]])
    }

    @Test func processPendingChangesReportsAnEditedObjectAgain() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let context = stack.context
        let notes = changeNotes(of: context) {
            car.setValue("b", forKey: "name")
            context.processPendingChanges()
            car.setValue("c", forKey: "name")
            context.processPendingChanges()
            context.processPendingChanges() // nothing new: no notification
            car.setValue(1999, forKey: "year")
            car.setValue(2001, forKey: "year")
            context.processPendingChanges()
        }
        #expect(notes.count == 3)
        for note in notes {
            #expect((note[NSUpdatedObjectsKey] as? Set<NSManagedObject>) == [car])
        }
        try context.save()
        #expect(try stack.rows("SELECT ZNAME, ZYEAR FROM ZCAR") == [["c", "2001"]])
    }

    /// Many updated objects, one edited again after the others were reported: only it is
    /// reported again, even after the updated set has dropped holes (objects saved or reverted).
    @Test func onlyTheObjectEditedAgainIsReportedAgain() throws {
        let stack = try TestStack()
        let cars = (0..<200).map { stack.insert("Car", ["name": "car \($0)"]) }
        try stack.context.save()
        let context = stack.context
        for car in cars { car.setValue("changed", forKey: "name") }
        context.processPendingChanges()
        for car in cars[0..<150] { context.refresh(car, mergeChanges: false) } // leaves the updated set
        let notes = changeNotes(of: context) {
            cars[180].setValue("again", forKey: "name")
            context.processPendingChanges()
        }
        #expect(notes.count == 1)
        #expect((notes.first?[NSUpdatedObjectsKey] as? Set<NSManagedObject>) == [cars[180]])
    }

    @Test func mergingARemoteDeleteKeepsAReferencedObjectRegisteredDeletedAndLoaded() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a", "year": 1950])
        try stack.context.save()
        let id = car.objectID
        let other = stack.newContext()
        other.delete(other.object(with: id))
        nonisolated(unsafe) var saved: Notification?
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { saved = $0 }
        try other.save()
        NotificationCenter.default.removeObserver(token)

        stack.context.mergeChanges(fromContextDidSave: try #require(saved))
        #expect(stack.context.registeredObject(for: id) === car)
        #expect(car.isDeleted)
        #expect(!car.isFault)
        #expect(car.value(forKey: "name") as? String == "a")
        #expect(car.value(forKey: "year") as? Int == 1950)
        #expect(!stack.context.hasChanges, "nothing left to save")
        try stack.context.save()
    }

    @Test func aConflictUnderTheErrorPolicyListsItsConflictsUnderTheSaveConflictsKey() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let other = try stack.reopen()
        try other.fetch("Car")[0].setValue("z", forKey: "name")
        try other.context.save()
        car.setValue("b", forKey: "name")
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.code == NSManagedObjectMergeError)
        let conflicts = try #require(error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict])
        #expect(conflicts.count == 1 && conflicts[0].sourceObject === car)
    }

    @Test func existingObjectForAnIDNeverSeenReturnsALoadedObject() throws {
        let stack = try stackWithHookedCars()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let id = try stack.fetch("Car")[0].objectID
        let fresh = stack.newContext()
        let car = try fresh.existingObject(with: id) as! HookedCar
        #expect(!car.isFault)
        #expect(car.events == ["awakeFromFetch"])
        // A registered data-less fault, too.
        let third = stack.newContext()
        let fault = third.object(with: id)
        #expect(fault.isFault)
        #expect(try third.existingObject(with: id) === fault)
        #expect(!fault.isFault)
    }
}
