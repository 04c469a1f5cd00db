import Foundation
import Testing
@testable import CoreData

/// A value to undo changes to.
private final class Counter {
    var value = 0
    /// Sets `value`, registering the change with `undoManager`.
    func set(_ newValue: Int, _ undoManager: UndoManager) {
        let old = value
        undoManager.registerUndo(withTarget: self) { $0.set(old, undoManager) }
        value = newValue
    }
}

extension UndoManager {
    /// `body` in a group of its own.
    fileprivate func grouped(_ body: () -> Void) {
        beginUndoGrouping()
        body()
        endUndoGrouping()
    }
}

/// Counts the notifications an undo manager posts, by name.
private final class NotificationLog: @unchecked Sendable {
    private(set) var names: [Notification.Name] = []
    private var observers: [any NSObjectProtocol] = []

    init(_ undoManager: UndoManager) {
        let all: [Notification.Name] = [.NSUndoManagerCheckpoint, .NSUndoManagerDidOpenUndoGroup, .NSUndoManagerWillCloseUndoGroup,
                                         .NSUndoManagerDidCloseUndoGroup, .NSUndoManagerWillUndoChange, .NSUndoManagerDidUndoChange,
                                         .NSUndoManagerWillRedoChange, .NSUndoManagerDidRedoChange]
        for name in all {
            observers.append(NotificationCenter.default.addObserver(forName: name, object: undoManager, queue: nil) { [unowned self] note in
                names.append(note.name)
            })
        }
    }

    deinit { for observer in observers { NotificationCenter.default.removeObserver(observer) } }
}

#if !canImport(ObjectiveC)
@Suite("UndoManager (Linux)")
struct UndoManagerTests {
    @Test func undoAndRedoAGroupOpenedByARegistration() {
        let undoManager = UndoManager()
        let counter = Counter()
        #expect(!undoManager.canUndo && !undoManager.canRedo)
        counter.set(1, undoManager)
        counter.set(2, undoManager)
        #expect(undoManager.groupingLevel == 1) // groupsByEvent opened it
        #expect(undoManager.canUndo)
        undoManager.undo() // closes the event's group, undoes both
        #expect(counter.value == 0)
        #expect(undoManager.groupingLevel == 0)
        #expect(!undoManager.canUndo && undoManager.canRedo)
        undoManager.redo()
        #expect(counter.value == 2)
        #expect(undoManager.canUndo && !undoManager.canRedo)
    }

    @Test("undo() ends the one group the app opened itself, as Apple's does at nesting level 1")
    func undoClosesTheOneOpenGroup() {
        let undoManager = UndoManager()
        undoManager.groupsByEvent = false
        let counter = Counter()
        undoManager.beginUndoGrouping()
        counter.set(1, undoManager)
        counter.set(2, undoManager)
        undoManager.undo()
        #expect(counter.value == 0 && undoManager.groupingLevel == 0 && undoManager.canRedo)
    }

    @Test func explicitGroupsAreUndoneOneAtATimeAndNewWorkClearsRedo() {
        let undoManager = UndoManager()
        undoManager.groupsByEvent = false
        let counter = Counter()
        for value in 1...3 { undoManager.grouped { counter.set(value, undoManager) } }
        undoManager.undo()
        #expect(counter.value == 2)
        undoManager.undo()
        #expect(counter.value == 1)
        #expect(undoManager.canRedo)
        undoManager.grouped { counter.set(10, undoManager) }
        #expect(!undoManager.canRedo)
        undoManager.undo()
        #expect(counter.value == 1)
        undoManager.redo()
        #expect(counter.value == 10)
    }

    @Test func nestedGroupsAreOneStepAndUndoNestedGroupUndoesTheInnerOne() {
        let undoManager = UndoManager()
        let counter = Counter()
        undoManager.beginUndoGrouping()
        counter.set(1, undoManager)
        undoManager.beginUndoGrouping()
        counter.set(2, undoManager)
        undoManager.endUndoGrouping()
        #expect(undoManager.groupingLevel == 1)
        undoManager.undoNestedGroup()
        #expect(counter.value == 1)
        undoManager.endUndoGrouping()
        undoManager.undo()
        #expect(counter.value == 0)
    }

    @Test func emptyGroupsAreDropped() {
        let undoManager = UndoManager()
        undoManager.beginUndoGrouping()
        undoManager.endUndoGrouping()
        #expect(!undoManager.canUndo)
    }

    @Test func levelsOfUndoKeepsTheNewestGroups() {
        let undoManager = UndoManager()
        undoManager.levelsOfUndo = 2
        let counter = Counter()
        for value in 1...4 { undoManager.grouped { counter.set(value, undoManager) } }
        undoManager.undo()
        undoManager.undo()
        #expect(counter.value == 2)
        #expect(!undoManager.canUndo)
        undoManager.undo() // nothing left: no change
        #expect(counter.value == 2)
    }

    @Test func actionNamesFollowTheGroupToTheRedoStack() {
        let undoManager = UndoManager()
        let counter = Counter()
        counter.set(1, undoManager)
        undoManager.setActionName("Count")
        undoManager.undo() // (the group is closed first)
        #expect(undoManager.redoActionName == "Count")
        #expect(undoManager.redoMenuItemTitle == "Redo Count")
        undoManager.redo()
        #expect(undoManager.undoActionName == "Count")
        #expect(undoManager.undoMenuItemTitle == "Undo Count")
        #expect(undoManager.undoMenuTitle(forUndoActionName: "") == "Undo")
    }

    @Test func disabledRegistrationRecordsNothingAndNests() {
        let undoManager = UndoManager()
        let counter = Counter()
        undoManager.disableUndoRegistration()
        undoManager.disableUndoRegistration()
        counter.set(1, undoManager)
        undoManager.enableUndoRegistration()
        #expect(!undoManager.isUndoRegistrationEnabled)
        undoManager.enableUndoRegistration()
        #expect(undoManager.isUndoRegistrationEnabled)
        #expect(!undoManager.canUndo)
        counter.set(2, undoManager)
        undoManager.undo()
        #expect(counter.value == 1)
    }

    @Test func isUndoingAndIsRedoingWhileTheHandlersRun() {
        let undoManager = UndoManager()
        let target = Counter()
        var seen: [(Bool, Bool)] = []
        func register() {
            undoManager.registerUndo(withTarget: target) { _ in
                seen.append((undoManager.isUndoing, undoManager.isRedoing))
                register()
            }
        }
        register()
        undoManager.undo()
        undoManager.redo()
        #expect(seen.map(\.0) == [true, false])
        #expect(seen.map(\.1) == [false, true])
        #expect(!undoManager.isUndoing && !undoManager.isRedoing)
    }

    @Test func removeAllActionsWithTargetKeepsTheOthers() {
        let undoManager = UndoManager()
        let a = Counter(), b = Counter()
        undoManager.grouped { a.set(1, undoManager) }
        undoManager.grouped { b.set(1, undoManager) }
        undoManager.removeAllActions(withTarget: b)
        undoManager.undo()
        #expect(a.value == 0 && b.value == 1)
        #expect(!undoManager.canUndo)
        a.set(5, undoManager)
        undoManager.removeAllActions()
        #expect(!undoManager.canUndo && !undoManager.canRedo)
    }

    @Test func theTargetIsNotKeptAlive() {
        let undoManager = UndoManager()
        weak var gone: Counter?
        do {
            let counter = Counter()
            gone = counter
            counter.set(1, undoManager)
        }
        #expect(gone == nil)
        undoManager.undo() // the handler is not called
    }

    @Test func notificationsInApplesOrder() {
        let undoManager = UndoManager()
        let log = NotificationLog(undoManager)
        let counter = Counter()
        undoManager.beginUndoGrouping()
        counter.set(1, undoManager)
        undoManager.endUndoGrouping()
        undoManager.undo()
        undoManager.redo()
        #expect(log.names == [
            .NSUndoManagerCheckpoint, .NSUndoManagerDidOpenUndoGroup,
            .NSUndoManagerCheckpoint, .NSUndoManagerWillCloseUndoGroup, .NSUndoManagerDidCloseUndoGroup,
            .NSUndoManagerCheckpoint, .NSUndoManagerWillUndoChange, .NSUndoManagerDidUndoChange,
            .NSUndoManagerCheckpoint, .NSUndoManagerWillRedoChange, .NSUndoManagerDidRedoChange,
        ])
        #expect(NSNotification.Name.NSUndoManagerCheckpoint.rawValue == "NSUndoManagerCheckpointNotification")
    }
}
#endif
