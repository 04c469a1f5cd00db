import Foundation

// The identifiers observers name Core Data's messages by:
// `NotificationCenter.default.addObserver(of: context, for: .didSave) { … }`. Using one tells
// `CoreDataMessages` to post its messages (`CoreDataMessages.swift`).

extension NotificationCenter.MessageIdentifier where Self == NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.WillSaveMessage> {
    /// ``NSManagedObjectContext.WillSaveMessage``: posted before a main-queue context saves.
    public static var willSave: NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.WillSaveMessage> {
        CoreDataMessages.noteObserved(.willSave)
        return .init()
    }
}

extension NotificationCenter.MessageIdentifier where Self == NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.DidSaveMessage> {
    /// ``NSManagedObjectContext.DidSaveMessage``: posted after a main-queue context saves.
    public static var didSave: NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.DidSaveMessage> {
        CoreDataMessages.noteObserved(.didSave)
        return .init()
    }
}

extension NotificationCenter.MessageIdentifier where Self == NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.DidSaveObjectIDsMessage> {
    /// ``NSManagedObjectContext.DidSaveObjectIDsMessage``: posted after a main-queue context saves, with IDs.
    public static var didSaveObjectIDs: NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.DidSaveObjectIDsMessage> {
        CoreDataMessages.noteObserved(.didSaveObjectIDs)
        return .init()
    }
}

extension NotificationCenter.MessageIdentifier where Self == NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.DidSaveObjectIDsAsyncMessage> {
    /// ``NSManagedObjectContext.DidSaveObjectIDsAsyncMessage``: posted after a private-queue context saves, with IDs.
    public static var didSaveObjectIDsAsync: NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.DidSaveObjectIDsAsyncMessage> {
        CoreDataMessages.noteObserved(.didSaveObjectIDsAsync)
        return .init()
    }
}

extension NotificationCenter.MessageIdentifier where Self == NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.DidMergeChangesMessage> {
    /// ``NSManagedObjectContext.DidMergeChangesMessage``: posted after a main-queue context merged changes.
    public static var didMergeChanges: NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.DidMergeChangesMessage> {
        CoreDataMessages.noteObserved(.didMergeChanges)
        return .init()
    }
}

extension NotificationCenter.MessageIdentifier where Self == NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.DidMergeChangesAsyncMessage> {
    /// ``NSManagedObjectContext.DidMergeChangesAsyncMessage``: posted after a private-queue context merged changes.
    public static var didMergeChangesAsync: NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.DidMergeChangesAsyncMessage> {
        CoreDataMessages.noteObserved(.didMergeChangesAsync)
        return .init()
    }
}

extension NotificationCenter.MessageIdentifier where Self == NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.ObjectsDidChangeMessage> {
    /// ``NSManagedObjectContext.ObjectsDidChangeMessage``: posted when objects of a main-queue context change.
    public static var objectsDidChange: NotificationCenter.BaseMessageIdentifier<NSManagedObjectContext.ObjectsDidChangeMessage> {
        CoreDataMessages.noteObserved(.objectsDidChange)
        return .init()
    }
}

extension NotificationCenter.MessageIdentifier where Self == NotificationCenter.BaseMessageIdentifier<NSPersistentStoreCoordinator.StoresDidChangeMessage> {
    /// ``NSPersistentStoreCoordinator.StoresDidChangeMessage``: posted when a coordinator's stores change (main thread).
    public static var storesDidChange: NotificationCenter.BaseMessageIdentifier<NSPersistentStoreCoordinator.StoresDidChangeMessage> {
        CoreDataMessages.noteObserved(.storesDidChange)
        return .init()
    }
}

extension NotificationCenter.MessageIdentifier where Self == NotificationCenter.BaseMessageIdentifier<NSPersistentStoreCoordinator.StoresDidChangeAsyncMessage> {
    /// ``NSPersistentStoreCoordinator.StoresDidChangeAsyncMessage``: posted when a coordinator's stores change.
    public static var storesDidChangeAsync: NotificationCenter.BaseMessageIdentifier<NSPersistentStoreCoordinator.StoresDidChangeAsyncMessage> {
        CoreDataMessages.noteObserved(.storesDidChangeAsync)
        return .init()
    }
}

extension NotificationCenter.MessageIdentifier where Self == NotificationCenter.BaseMessageIdentifier<NSPersistentStoreCoordinator.RemoteChangeMessage> {
    /// ``NSPersistentStoreCoordinator.RemoteChangeMessage``: posted when another coordinator or process changed a store.
    public static var remoteChange: NotificationCenter.BaseMessageIdentifier<NSPersistentStoreCoordinator.RemoteChangeMessage> {
        CoreDataMessages.noteObserved(.remoteChange)
        return .init()
    }
}
