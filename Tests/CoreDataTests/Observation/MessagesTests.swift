import Foundation
import Testing
@testable import CoreData
import TestSupport

/// What an asynchronous message observer received, in order.
final class MessageInbox<Message: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [Message] = []

    func append(_ message: Message) { lock.withLock { messages.append(message) } }

    /// Waits (up to `seconds`) until `count` messages arrived; the messages.
    func wait(for count: Int = 1, seconds: Double = 10) async -> [Message] {
        let deadline = Date().addingTimeInterval(seconds)
        while lock.withLock({ messages.count }) < count && Date() < deadline { try? await Task.sleep(nanoseconds: 5_000_000) }
        return lock.withLock { messages }
    }
}

/// Apple's typed notification messages (iOS 27): `addObserver(of:for:)` with `.didSave`,
/// `.didSaveObjectIDsAsync`, …, posted by the contexts and coordinators as they post the
/// notifications.
@Suite struct MessagesTests {
    @Test(.timeLimit(.minutes(1)))
    func aPrivateQueueContextsSaveIsAnAsyncMessageWithTheIDs() async throws {
        let stack = try TestStack()
        let context = NSManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = stack.coordinator
        let inbox = MessageInbox<NSManagedObjectContext.DidSaveObjectIDsAsyncMessage>()
        let token = NotificationCenter.default.addObserver(of: context, for: .didSaveObjectIDsAsync) { message in inbox.append(message) }
        let ids = try await context.perform {
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            car.setValue("a", forKey: "name")
            try context.save()
            return [car.objectID]
        }
        let messages = await inbox.wait()
        #expect(messages.count == 1)
        #expect(messages.first?.context === context)
        #expect(messages.first.map { Array($0.insertedIDs) } == ids)
        #expect(messages.first?.updatedIDs.isEmpty == true && messages.first?.deletedIDs.isEmpty == true)
        NotificationCenter.default.removeObserver(token)
    }

    @Test(.timeLimit(.minutes(1)))
    @MainActor
    func aMainQueueContextPostsItsMainActorMessages() throws {
        let stack = try TestStack()
        let context = NSManagedObjectContext(.mainQueue)
        context.persistentStoreCoordinator = stack.coordinator
        var events: [String] = []
        var saved: Set<NSManagedObject> = []
        var savedIDs: Set<NSManagedObjectID> = []
        let tokens = [
            NotificationCenter.default.addObserver(of: context, for: .willSave) { message in
                events.append("willSave \(message.context === context)")
            },
            NotificationCenter.default.addObserver(of: context, for: .didSave) { message in
                events.append("didSave")
                saved = message.inserted
            },
            NotificationCenter.default.addObserver(of: context, for: .didSaveObjectIDs) { message in savedIDs = message.insertedIDs },
            NotificationCenter.default.addObserver(of: context, for: .objectsDidChange) { message in
                events.append("objectsDidChange \(message.inserted.count) \(message.invalidatedAll == true)")
            },
        ]
        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
        car.setValue("a", forKey: "name")
        context.processPendingChanges()
        try context.save()
        #expect(events.first == "objectsDidChange 1 false")
        #expect(events.contains("willSave true") && events.contains("didSave"))
        #expect(saved == [car] && savedIDs == [car.objectID])
        context.reset()
        #expect(events.last == "objectsDidChange 0 true")
        tokens.forEach(NotificationCenter.default.removeObserver)

        // A private-queue context saved from the main queue posts no main-actor message: its
        // objects are not the main actor's (its observers use the asynchronous messages).
        let background = NSManagedObjectContext(.privateQueue)
        background.persistentStoreCoordinator = stack.coordinator
        var backgroundSaves = 0
        let backgroundToken = NotificationCenter.default.addObserver(of: background, for: .didSave) { _ in backgroundSaves += 1 }
        try background.performAndWait {
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: background).setValue("b", forKey: "name")
            try background.save()
        }
        #expect(backgroundSaves == 0)
        NotificationCenter.default.removeObserver(backgroundToken)
    }

    @Test(.timeLimit(.minutes(1)))
    func aMergeIsAnAsyncMessage() async throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let reader = NSManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = stack.coordinator
        reader.retainsRegisteredObjects = true // the car stays registered, for the merge to refresh
        let carID = car.objectID
        try await reader.perform { _ = try reader.existingObject(with: carID) }
        let inbox = MessageInbox<NSManagedObjectContext.DidMergeChangesAsyncMessage>()
        let token = NotificationCenter.default.addObserver(of: reader, for: .didMergeChangesAsync) { message in inbox.append(message) }
        nonisolated(unsafe) var saved: Notification?
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: stack.context, queue: nil) { saved = $0 }
        car.setValue("b", forKey: "name")
        try stack.context.save()
        NotificationCenter.default.removeObserver(observer)
        let note = try #require(saved)
        nonisolated(unsafe) let didSave = note
        await reader.perform { reader.mergeChanges(fromContextDidSave: didSave) }
        let messages = await inbox.wait()
        #expect(messages.first?.context === reader)
        #expect(messages.first?.refreshedIDs == [carID] || messages.first?.updatedIDs == [carID])
        NotificationCenter.default.removeObserver(token)
    }

    @Test(.timeLimit(.minutes(1)))
    func addingAStoreIsAStoresDidChangeAsyncMessage() async throws {
        let folder = try TemporaryFolder()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let inbox = MessageInbox<NSPersistentStoreCoordinator.StoresDidChangeAsyncMessage>()
        let token = NotificationCenter.default.addObserver(of: coordinator, for: .storesDidChangeAsync) { message in inbox.append(message) }
        let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: folder.url.appendingPathComponent("A.sqlite"))
        try coordinator.remove(store)
        let messages = await inbox.wait(for: 2)
        #expect(messages.count == 2)
        #expect(messages.first?.addedStores.first === store && messages.first?.removedStores.isEmpty == true)
        #expect(messages.last?.removedStores.first === store && messages.last?.persistentStoreCoordinator === coordinator)
        NotificationCenter.default.removeObserver(token)
    }

    @Test(.timeLimit(.minutes(1)))
    func anotherCoordinatorsSaveIsARemoteChangeMessage() async throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Shared.sqlite")
        let options = RemoteChangeNotificationTests.observing
        let watching = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let store = try watching.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        let inbox = MessageInbox<NSPersistentStoreCoordinator.RemoteChangeMessage>()
        let token = NotificationCenter.default.addObserver(of: watching, for: .remoteChange) { message in inbox.append(message) }
        let writer = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        try writer.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        let context = NSManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = writer
        try await context.perform {
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("remote", forKey: "name")
            try context.save()
        }
        let messages = await inbox.wait()
        #expect(messages.first?.storeUUID == store.identifier)
        #expect(messages.first?.storeURL.standardizedFileURL == url.standardizedFileURL)
        #expect(messages.first?.historyToken != nil)
        NotificationCenter.default.removeObserver(token)
    }

    @Test func aMessageAndItsNotificationConvertBothWays() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.obtainPermanentIDs(for: [car])
        let notification = Notification(name: NSManagedObjectContext.didSaveObjectIDsNotification, object: stack.context,
                                        userInfo: [NSUpdatedObjectIDsKey: Set([car.objectID])])
        let message = try #require(NSManagedObjectContext.DidSaveObjectIDsAsyncMessage.makeMessage(notification))
        #expect(message.updatedIDs == [car.objectID] && message.insertedIDs.isEmpty && message.historyToken == nil)
        let back = NSManagedObjectContext.DidSaveObjectIDsAsyncMessage.makeNotification(message)
        #expect(back.name == NSManagedObjectContext.didSaveObjectIDsNotification && back.object as? NSManagedObjectContext === stack.context)
        #expect(back.userInfo?[NSUpdatedObjectIDsKey] as? Set<NSManagedObjectID> == [car.objectID])
        #expect(NSManagedObjectContext.DidSaveObjectIDsAsyncMessage.makeMessage(Notification(name: .NSManagedObjectContextDidSave)) == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func aPinnedContextsSaveCarriesItsNewQueryGeneration() async throws {
        let stack = try TestStack()
        let context = NSManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = stack.coordinator
        let inbox = MessageInbox<NSManagedObjectContext.DidSaveObjectIDsAsyncMessage>()
        let token = NotificationCenter.default.addObserver(of: context, for: .didSaveObjectIDsAsync) { message in inbox.append(message) }
        let after = try await context.perform {
            try context.setQueryGenerationFrom(.current)
            _ = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) // pins
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("a", forKey: "name")
            try context.save()
            return context.queryGenerationToken
        }
        let messages = await inbox.wait()
        #expect(after != nil && messages.first?.queryGeneration == after)
        NotificationCenter.default.removeObserver(token)
    }

    @Test(.timeLimit(.minutes(1)))
    func aSaveMessageCarriesTheHistoryTokenOfTheSave() async throws {
        let stack = try TestStack(model: HistoryTestModel.make(), options: HistoryTestModel.tracking)
        let context = NSManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = stack.coordinator
        let inbox = MessageInbox<NSManagedObjectContext.DidSaveObjectIDsAsyncMessage>()
        let token = NotificationCenter.default.addObserver(of: context, for: .didSaveObjectIDsAsync) { message in inbox.append(message) }
        defer { NotificationCenter.default.removeObserver(token) }
        try await context.perform {
            NSEntityDescription.insertNewObject(forEntityName: "Folder", into: context).setValue("Inbox", forKey: "name")
            try context.save()
        }
        let message = try #require(await inbox.wait().first)
        let current = try #require(stack.coordinator.currentPersistentHistoryToken(fromStores: nil))
        #expect(message.historyToken == current)
        // And back: the notification made from the message carries it where a save puts it.
        let back = NSManagedObjectContext.DidSaveObjectIDsAsyncMessage.makeNotification(message)
        #expect(back.userInfo?["newChangeToken"] as? NSPersistentHistoryToken == current)
    }
}
