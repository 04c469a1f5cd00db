import Foundation
import Testing
@testable import CoreData

/// `refresh(_:mergeChanges:)` and `refreshAllObjects()` post `ObjectsDidChange` with the
/// refreshed objects under `NSRefreshedObjectsKey`, as Apple's do (issue 21, B10).
@Suite("Refreshes post change notifications")
struct RefreshNotificationTests {
    private func refreshedSets(of context: NSManagedObjectContext, _ body: () -> Void) -> [Set<NSManagedObject>] {
        nonisolated(unsafe) var sets: [Set<NSManagedObject>] = []
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) {
            if let refreshed = $0.userInfo?[NSRefreshedObjectsKey] as? Set<NSManagedObject> { sets.append(refreshed) }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        body()
        return sets
    }

    @Test(arguments: [false, true])
    func refreshingAnObjectPostsIt(mergeChanges: Bool) throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        car.setValue("b", forKey: "name")
        let sets = refreshedSets(of: stack.context) { stack.context.refresh(car, mergeChanges: mergeChanges) }
        #expect(sets == [[car]])
        #expect(car.value(forKey: "name") as? String == (mergeChanges ? "b" : "a"))
    }

    @Test func refreshingAllObjectsPostsThemOnce() throws {
        let stack = try TestStack()
        let cars = ["a", "b", "c"].map { stack.insert("Car", ["name": $0]) }
        try stack.context.save()
        let sets = refreshedSets(of: stack.context) { stack.context.refreshAllObjects() }
        #expect(sets == [Set(cars)])
    }

    @Test func refreshingANewObjectPostsNothing() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "new"])
        let sets = refreshedSets(of: stack.context) { stack.context.refresh(car, mergeChanges: false) }
        #expect(sets.isEmpty)
    }
}
