import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Save notifications and merging another context's saved changes.
@Suite("Notifications and merging")
struct MergingTests {
    private func privateContext(_ stack: TestStack) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        return context
    }

    private func car(named name: String, in context: NSManagedObjectContext) throws -> NSManagedObject? {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.predicate = NSPredicate(format: "name == %@", name)
        return try context.fetch(request).first
    }

    /// Collects the notifications of one name from one sender.
    private final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var _notes: [Notification] = []
        private var _onQueue: [Bool] = []
        private var token: (any NSObjectProtocol)?
        var notes: [Notification] { lock.withLock { _notes } }
        var onQueue: [Bool] { lock.withLock { _onQueue } }

        init(_ name: Notification.Name, from context: NSManagedObjectContext) {
            token = NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) { [weak self, weak context] note in
                let onQueue = context?.isOnQueue ?? false
                self?.lock.withLock { self?._notes.append(note); self?._onQueue.append(onQueue) }
            }
        }
        deinit { if let token { NotificationCenter.default.removeObserver(token) } }
    }

    @Test func didSaveCarriesObjectsAndIDsAndIsPostedOnTheSavingQueue() throws {
        let stack = try TestStack()
        let context = privateContext(stack)
        let didSave = Recorder(.NSManagedObjectContextDidSave, from: context)
        let didSaveIDs = Recorder(NSManagedObjectContext.didSaveObjectIDsNotification, from: context)
        let willSave = Recorder(.NSManagedObjectContextWillSave, from: context)
        let (car, id) = try context.performAndWait { () throws -> (NSManagedObject, NSManagedObjectID) in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            car.setValue("a", forKey: "name")
            try context.save()
            return (car, car.objectID)
        }
        #expect(willSave.notes.count == 1)
        let note = try #require(didSave.notes.first)
        #expect(didSave.onQueue == [true], "posted on the saving context's queue")
        #expect((note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject>) == [car])
        #expect(note.userInfo?[NSUpdatedObjectsKey] == nil, "as Apple's: only non-empty sets are present")
        #expect((note.userInfo?[NSInsertedObjectIDsKey] as? Set<NSManagedObjectID>) == [id])
        #expect(!id.isTemporaryID, "the IDs are the permanent ones")
        #expect((didSaveIDs.notes.first?.userInfo?[NSInsertedObjectIDsKey] as? Set<NSManagedObjectID>) == [id])
    }

    /// A fault whose row was deleted elsewhere: by default it reads as deleted; with
    /// `shouldDeleteInaccessibleFaults` off, firing it stops the process (Apple raises).
    @Test func inaccessibleFaults() async throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "gone"])
        try stack.context.save()
        let id = try stack.fetch("Car")[0].objectID
        let reader = stack.newContext()
        let fault = reader.object(with: id)
        stack.context.delete(try stack.fetch("Car")[0])
        try stack.context.save()
        #expect(fault.value(forKey: "name") == nil)
        #expect(fault.isDeleted)

        let folder = try TemporaryFolder()
        await #expect(processExitsWith: .failure) { [path = folder.path as String] in
            let stack = try TestStack(directory: URL(fileURLWithPath: path))
            stack.insert("Car", ["name": "gone"])
            try stack.context.save()
            let id = try stack.fetch("Car")[0].objectID
            let reader = stack.newContext()
            reader.shouldDeleteInaccessibleFaults = false
            let fault = reader.object(with: id)
            stack.context.delete(try stack.fetch("Car")[0])
            try stack.context.save()
            _ = fault.value(forKey: "name")
        }
        withExtendedLifetime(folder) {} // removed once the child has exited, not before
    }

    @Test func resetPostsInvalidatedAll() throws {
        let stack = try TestStack()
        let context = privateContext(stack)
        let changes = Recorder(.NSManagedObjectContextObjectsDidChange, from: context)
        let id = try context.performAndWait { () throws -> NSManagedObjectID in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            try context.save()
            context.reset()
            return car.objectID
        }
        let invalidated = changes.notes.last?.userInfo?[NSInvalidatedAllObjectsKey] as? [NSManagedObjectID]
        #expect(invalidated == [id])
    }

    /// Seed 002's "old" stack: two contexts on one coordinator, merged by notification. On each
    /// store kind (``TestStoreKind``).
    @Test(arguments: TestStoreKind.available)
    func mergeRefreshesUpdatesKeepsUnsavedEditsDeletesAndFaultsInInserts(_ kind: TestStoreKind) throws {
        let stack = try TestStack(kind)
        stack.insert("Car", ["name": "a", "year": 2001])
        stack.insert("Car", ["name": "b"])
        try stack.context.save()
        let main = privateContext(stack)
        let worker = privateContext(stack)
        let (a, b) = try main.performAndWait { () throws -> (NSManagedObject, NSManagedObject) in
            let a = try car(named: "a", in: main)!, b = try car(named: "b", in: main)!
            a.setValue(1999, forKey: "year") // an unsaved edit the merge must keep
            _ = b.value(forKey: "name")
            return (a, b)
        }
        let didSave = Recorder(.NSManagedObjectContextDidSave, from: worker)
        try worker.performAndWait {
            try car(named: "a", in: worker)!.setValue(12.5, forKey: "price")
            worker.delete(try car(named: "b", in: worker)!)
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: worker).setValue("c", forKey: "name")
            try worker.save()
        }
        let objectsDidChange = Recorder(.NSManagedObjectContextObjectsDidChange, from: main)
        let didMerge = Recorder(NSManagedObjectContext.didMergeChangesObjectIDsNotification, from: main)
        let note = try #require(didSave.notes.first)
        try main.performAndWait {
            main.mergeChanges(fromContextDidSave: note)
            #expect(a.value(forKey: "price") as? Double == 12.5, "the saved change arrived")
            #expect(a.value(forKey: "year") as? Int == 1999, "the unsaved edit was kept")
            #expect(a.isUpdated)
            // As Apple's: still registered, marked deleted, with nothing left to save.
            #expect(b.isDeleted && b.managedObjectContext === main && !main.deletedObjects.contains(b))
            #expect(try car(named: "c", in: main) != nil)
            try main.save() // no false conflict: the merge took the new version
        }
        let change = try #require(objectsDidChange.notes.last)
        #expect((change.userInfo?[NSRefreshedObjectsKey] as? Set<NSManagedObject>)?.contains(a) == true)
        #expect((change.userInfo?[NSDeletedObjectsKey] as? Set<NSManagedObject>)?.contains(b) == true)
        #expect((change.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject>)?.count == 1)
        #expect((didMerge.notes.first?.userInfo?[NSDeletedObjectIDsKey] as? Set<NSManagedObjectID>)?.count == 1)
        // As Apple's: the updated IDs too (they were left out).
        #expect((didMerge.notes.first?.userInfo?[NSUpdatedObjectIDsKey] as? Set<NSManagedObjectID>) == [a.objectID])
        let reopened = try stack.reopen()
        let stored = try reopened.fetch("Car") { $0.predicate = NSPredicate(format: "name == 'a'") }.first
        #expect(stored?.value(forKey: "year") as? Int == 1999)
        #expect(stored?.value(forKey: "price") as? Double == 12.5)
    }

    /// A save of a child of another context names its new objects by temporary IDs, which no
    /// other chain knows: merged, they made faults nothing fulfils, reported inserted.
    @Test func anotherChainsTemporaryIDsAreNotMerged() throws {
        let stack = try TestStack()
        let background = stack.newContext()
        let child = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        child.parent = background
        let main = stack.newContext()
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: child, queue: nil) { note in
            main.mergeChanges(fromContextDidSave: note)
        }
        defer { NotificationCenter.default.removeObserver(token) }
        let changes = Recorder(.NSManagedObjectContextObjectsDidChange, from: main)
        NSEntityDescription.insertNewObject(forEntityName: "Car", into: child).setValue("new", forKey: "name")
        try child.save()
        #expect(main.registeredObjects.isEmpty)
        #expect(changes.notes.allSatisfy { ($0.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject>)?.isEmpty ?? true })
        // Saved on by its parent, the row is merged under its permanent ID.
        let token2 = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: background, queue: nil) { note in
            main.mergeChanges(fromContextDidSave: note)
        }
        defer { NotificationCenter.default.removeObserver(token2) }
        try background.save()
        #expect(main.registeredObjects.count == 1 && main.registeredObjects.first?.objectID.isTemporaryID == false)
    }

    @Test func mergeFromARemoteSaveTakesIDsOrURIs() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let main = privateContext(stack)
        let a = try main.performAndWait { try car(named: "a", in: main)! }
        // Another coordinator (another process) changes the row.
        let other = try stack.reopen()
        let remote = try other.fetch("Car").first!
        remote.setValue("a2", forKey: "name")
        try other.context.save()
        let uri = a.objectID.uriRepresentation()
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: [uri]], into: [main])
        #expect(main.performAndWait { a.value(forKey: "name") as? String } == "a2")
    }

    @Test(.timeLimit(.minutes(1)))
    func automaticMergingOnACoordinator() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let view = privateContext(stack)
        view.automaticallyMergesChangesFromParent = true
        let a = try view.performAndWait { try car(named: "a", in: view)! }
        #expect(view.performAndWait { a.value(forKey: "name") as? String } == "a")
        let changes = Recorder(.NSManagedObjectContextObjectsDidChange, from: view)
        let background = privateContext(stack)
        try background.performAndWait {
            try car(named: "a", in: background)!.setValue("a2", forKey: "name")
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: background).setValue("b", forKey: "name")
            try background.save()
        }
        // The merge was enqueued on the view context's queue by the save: it runs before this block.
        #expect(view.performAndWait { a.value(forKey: "name") as? String } == "a2")
        let merged = try #require(changes.notes.last?.userInfo)
        #expect((merged[NSInsertedObjectsKey] as? Set<NSManagedObject>)?.count == 1, "the inserted object was faulted in")
        #expect((merged[NSRefreshedObjectsKey] as? Set<NSManagedObject>) == [a])

        view.automaticallyMergesChangesFromParent = false
        try background.performAndWait {
            try car(named: "a2", in: background)!.setValue("a3", forKey: "name")
            try background.save()
        }
        #expect(view.performAndWait { a.value(forKey: "name") as? String } == "a2", "no merge once turned off")
    }

    @Test(.timeLimit(.minutes(1)))
    func automaticMergingFromTheParentAndSiblings() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let parent = privateContext(stack)
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        child.automaticallyMergesChangesFromParent = true
        let a = try child.performAndWait { try car(named: "a", in: child)! }
        let sibling = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        sibling.parent = parent
        try sibling.performAndWait {
            try car(named: "a", in: sibling)!.setValue("from sibling", forKey: "name")
            try sibling.save()
        }
        #expect(child.performAndWait { a.value(forKey: "name") as? String } == "from sibling")
        try parent.performAndWait {
            try car(named: "from sibling", in: parent)!.setValue("from parent", forKey: "name")
            try parent.save()
        }
        #expect(child.performAndWait { a.value(forKey: "name") as? String } == "from parent")
    }

    /// Seed 004: a temporary context on the shared coordinator. The wrong way (a relationship to
    /// the main context's object) fails cleanly; the right way (`object(with:)`) saves; the
    /// observer ignores its own context and other coordinators and merges on the main context's
    /// queue. On each store kind.
    @Test(.timeLimit(.minutes(1)), arguments: TestStoreKind.available)
    func seed004TemporaryContextAndMerge(_ kind: TestStoreKind) throws {
        let stack = try TestStack(kind)
        let main = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        main.persistentStoreCoordinator = stack.coordinator
        let team = try main.performAndWait { () throws -> NSManagedObject in
            let team = NSEntityDescription.insertNewObject(forEntityName: "Person", into: main)
            team.setValue("Rockets", forKey: "name")
            try main.save()
            return team
        }
        let teamID = team.objectID
        let merged = NSLock()
        nonisolated(unsafe) var mergeCount = 0
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: nil, queue: nil) { note in
            guard let saved = note.object as? NSManagedObjectContext, saved !== main,
                  saved.persistentStoreCoordinator === main.persistentStoreCoordinator else { return }
            // Notification is not Sendable: a Swift 6 client says it crosses queues knowingly
            // (the did-save notification's content is IDs and objects only read for their IDs).
            nonisolated(unsafe) let note = note
            main.perform {
                // On the main queue, as the seed's observer dispatches it.
                #expect(main.isOnQueue)
                main.mergeChanges(fromContextDidSave: note)
                merged.withLock { mergeCount += 1 }
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        let queue = DispatchQueue(label: "seed004")
        let wrong: NSError? = queue.sync {
            let temporary = NSManagedObjectContext()
            temporary.persistentStoreCoordinator = stack.coordinator
            let player = NSEntityDescription.insertNewObject(forEntityName: "Car", into: temporary)
            player.setValue("Yao", forKey: "name")
            player.setValue(team, forKey: "owner") // the main context's object: wrong
            do { try temporary.save(); return nil } catch { return error as NSError }
        }
        #expect(wrong?.domain == NSCocoaErrorDomain)
        #expect(wrong?.localizedDescription.contains("owner") == true)
        try queue.sync {
            let temporary = NSManagedObjectContext()
            temporary.persistentStoreCoordinator = stack.coordinator
            let player = NSEntityDescription.insertNewObject(forEntityName: "Car", into: temporary)
            player.setValue("Yao", forKey: "name")
            player.setValue(temporary.object(with: teamID), forKey: "owner") // the right way
            try temporary.save()
        }
        // The other coordinator's save is ignored by the observer.
        let other = try stack.reopen()
        other.insert("Car", ["name": "elsewhere"])
        try other.context.save()

        let (players, count) = main.performAndWait { () -> ([String], Int) in
            let cars = (team.value(forKey: "cars") as? Set<NSManagedObject>) ?? []
            return (cars.compactMap { $0.value(forKey: "name") as? String }, merged.withLock { mergeCount })
        }
        #expect(count == 1)
        #expect(players == ["Yao"])
    }
}
