import Foundation
import Testing
@testable import CoreData

/// A batch request's IDs merged into a main-queue view context with
/// `mergeChanges(fromRemoteContextSave:into:)`: its registered objects are refreshed (update),
/// marked deleted (delete), and new rows come in as objects (insert), on both stores.
@Suite("Merging batch results into a view context")
struct BatchMergeTests {
    @MainActor
    @Test(.timeLimit(.minutes(1)), arguments: [false, true])
    func mergeIntoAViewContext(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        (1...3).forEach { stack.insert("Car", ["name": "c\($0)", "price": Double($0)]) }
        try stack.context.save()
        let view = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        view.persistentStoreCoordinator = stack.coordinator
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let cars = try view.fetch(request)
        #expect(cars.map { $0.value(forKey: "price") as? Double } == [1, 2, 3])
        let worker = stack.newContext()

        let update = NSBatchUpdateRequest(entityName: "Car")
        update.propertiesToUpdate = ["price": NSExpression(format: "price + 10")]
        update.predicate = NSPredicate(format: "name != %@", "c3")
        update.resultType = .updatedObjectIDsResultType
        let updated = try #require((try worker.execute(update) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID])
        #expect(cars[0].value(forKey: "price") as? Double == 1) // not told yet
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: updated], into: [view])
        #expect(cars.map { $0.value(forKey: "price") as? Double } == [11, 12, 3])

        let delete = NSBatchDeleteRequest(objectIDs: [cars[1].objectID])
        delete.resultType = .resultTypeObjectIDs
        let deleted = try #require((try worker.execute(delete) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID])
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: deleted], into: [view])
        #expect(cars[1].isDeleted || cars[1].managedObjectContext == nil)
        #expect(try view.fetch(request).map { $0.value(forKey: "name") as? String } == ["c1", "c3"])

        let insert = NSBatchInsertRequest(entityName: "Car", objects: [["name": "c4", "price": 4.0]])
        insert.resultType = .objectIDs
        let inserted = try #require((try worker.execute(insert) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        let changes = NotificationRecorder(.NSManagedObjectContextObjectsDidChange, from: view)
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSInsertedObjectsKey: inserted], into: [view])
        #expect((changes.notes.first?.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject>)?.map(\.objectID) == inserted)
        #expect(view.registeredObject(for: inserted[0])?.value(forKey: "price") as? Double == 4)
    }
}

/// The notifications of one name one object posts, recorded as they come.
final class NotificationRecorder: @unchecked Sendable {
    private(set) var notes: [Notification] = []
    private var token: NSObjectProtocol?

    init(_ name: Notification.Name, from object: AnyObject) {
        token = NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { [weak self] note in
            self?.notes.append(note)
        }
    }

    deinit { token.map(NotificationCenter.default.removeObserver) }
}
