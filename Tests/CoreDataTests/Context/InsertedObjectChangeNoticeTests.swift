import Foundation
import Testing
@testable import CoreData

/// A new object changed after an `ObjectsDidChange` reported it inserted is reported updated by
/// the next one (once), as Apple's context does; a fetched results controller places it again.
@Suite("Changes of new objects in ObjectsDidChange")
struct InsertedObjectChangeNoticeTests {
    private final class Notes: @unchecked Sendable {
        var infos: [[AnyHashable: Any]] = []
    }

    @Test func aNewObjectChangedAfterItsInsertWasReportedIsReportedUpdated() throws {
        let stack = try TestStack()
        let notes = Notes()
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: stack.context, queue: nil) {
            notes.infos.append($0.userInfo ?? [:])
        }
        defer { NotificationCenter.default.removeObserver(token) }
        let car = stack.insert("Car", ["name": "a"])
        car.setValue("b", forKey: "name")                   // not reported yet: no update
        stack.context.processPendingChanges()
        #expect(notes.infos.count == 1 && notes.infos[0][NSUpdatedObjectsKey] == nil)
        #expect((notes.infos[0][NSInsertedObjectsKey] as? Set<NSManagedObject>)?.contains(car) == true)

        car.setValue("c", forKey: "name")
        car.setValue(2001, forKey: "year")
        stack.context.processPendingChanges()
        #expect(notes.infos.count == 2)
        #expect((notes.infos[1][NSUpdatedObjectsKey] as? Set<NSManagedObject>) == [car])
        #expect(notes.infos[1][NSInsertedObjectsKey] == nil)
        #expect(stack.context.updatedObjects.isEmpty && stack.context.insertedObjects == [car])

        stack.context.processPendingChanges()               // nothing changed since
        #expect(notes.infos.count == 2)
        try stack.context.save()
        #expect(try stack.fetch("Car").map { $0.value(forKey: "name") as? String } == ["c"])
    }
}
