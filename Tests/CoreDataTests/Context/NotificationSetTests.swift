import Foundation
import Testing
@testable import CoreData

/// The sets of objects a save's notifications carry are built by `Set(retainingFirst:)`, which takes
/// each object's reference in one pass and hands it to the set in a second: these check that
/// every reference taken is given back (objects are freed when the app lets them go) and that
/// the sets hold exactly the saved objects.
@Suite("Notification sets")
struct NotificationSetTests {
    @Test func aSetHoldsEachObjectOnceAndLetsItGo() throws {
        let stack = try TestStack()
        weak var first: NSManagedObject?
        weak var last: NSManagedObject?
        do {
            let cars = (0..<100).map { stack.insert("Car", ["name": "\($0)"]) }
            first = cars.first
            last = cars.last
            let set = Set(retainingFirst: cars)
            #expect(set.count == 100)
            #expect(cars.allSatisfy { set.contains($0) })
            // A repeated element is held once, with one reference.
            let repeated = Set(retainingFirst: [cars[0], cars[1], cars[0], cars[0]])
            #expect(repeated.count == 2)
            #expect(repeated.contains(cars[0]) && repeated.contains(cars[1]))
            stack.context.rollback() // the context lets its new objects go
        }
        #expect(first == nil)
        #expect(last == nil)
    }

    @Test func aSavesNotificationsCarryItsObjectsAndFreeThem() throws {
        let stack = try TestStack()
        let context = stack.context
        let recorder = SaveSetsRecorder(context)
        weak var first: NSManagedObject?
        weak var last: NSManagedObject?
        do {
            let cars = (0..<1_000).map { stack.insert("Car", ["name": "\($0)"]) }
            first = cars.first
            last = cars.last
            try context.save()
            let ids = cars.map(\.objectID)
            #expect(ids.allSatisfy { !$0.isTemporaryID })
            recorder.read { changed, saved, savedIDs in
                #expect(changed == Set(cars))
                #expect(saved == Set(cars))
                #expect(savedIDs == Set(ids))
            }
        }
        // The recorder's copies still hold the objects; once it lets go, nothing does.
        #expect(first != nil)
        recorder.forgetObjects()
        #expect(first == nil)
        #expect(last == nil)
        #expect(try stack.rows("SELECT count(*) FROM ZCAR") == [["1000"]])
    }
}

/// Keeps the inserted objects of a context's last objects-did-change and did-save
/// notifications, and the inserted IDs of its last did-save-object-IDs notification.
private final class SaveSetsRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var changed: Set<NSManagedObject> = []
    private var saved: Set<NSManagedObject> = []
    private var savedIDs: Set<NSManagedObjectID> = []
    private var tokens: [any NSObjectProtocol] = []

    init(_ context: NSManagedObjectContext) {
        let center = NotificationCenter.default
        tokens = [
            center.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) { [weak self] note in
                let objects = note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> ?? []
                self?.lock.withLock { self?.changed = objects }
            },
            center.addObserver(forName: .NSManagedObjectContextDidSave, object: context, queue: nil) { [weak self] note in
                let objects = note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> ?? []
                self?.lock.withLock { self?.saved = objects }
            },
            center.addObserver(forName: NSManagedObjectContext.didSaveObjectIDsNotification, object: context, queue: nil) { [weak self] note in
                let ids = note.userInfo?[NSInsertedObjectIDsKey] as? Set<NSManagedObjectID> ?? []
                self?.lock.withLock { self?.savedIDs = ids }
            },
        ]
    }

    deinit { tokens.forEach(NotificationCenter.default.removeObserver) }

    func read(_ body: (Set<NSManagedObject>, Set<NSManagedObject>, Set<NSManagedObjectID>) -> Void) {
        lock.withLock { body(changed, saved, savedIDs) }
    }

    func forgetObjects() {
        lock.withLock {
            changed = []
            saved = []
        }
    }
}
