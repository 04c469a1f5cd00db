import Foundation
import Synchronization

// Store types beyond the two built in: a store class you write (an `NSIncrementalStore`
// subclass), registered under a type string, which `addPersistentStore(ofType:…)` then makes.

extension NSPersistentStoreCoordinator {
    /// The store classes registered by type, for the whole process.
    private static let storeClasses = Mutex<[String: NSPersistentStore.Type]>([:])

    /// Registers `storeClass` (an ``NSIncrementalStore`` or ``NSAtomicStore`` subclass) as the store of type
    /// `storeType`, for every coordinator of the process; `nil` removes the registration.
    /// The built-in types (`NSSQLiteStoreType`, `NSInMemoryStoreType`) keep their stores.
    ///
    /// ```swift
    /// NSPersistentStoreCoordinator.registerStoreClass(NotesStore.self, forStoreType: "NotesStore")
    /// try coordinator.addPersistentStore(ofType: "NotesStore", configurationName: nil, at: url)
    /// ```
    ///
    /// Traps when `storeClass` is not a subclass of `NSPersistentStore` (a programmer error;
    /// Apple raises `NSInvalidArgumentException`).
    public class func registerStoreClass(_ storeClass: AnyClass?, forStoreType storeType: String) {
        guard let storeClass else {
            storeClasses.withLock { _ = $0.removeValue(forKey: storeType) }
            return
        }
        guard let persistentStoreClass = storeClass as? NSPersistentStore.Type else {
            preconditionFailure("registerStoreClass(_:forStoreType:): \(storeClass) is not a subclass of NSPersistentStore")
        }
        storeClasses.withLock { $0[storeType] = persistentStoreClass }
    }

    /// Registers `storeClass` as the store of `type`; the newer spelling of
    /// ``registerStoreClass(_:forStoreType:)``.
    ///
    /// ```swift
    /// NSPersistentStoreCoordinator.registerStoreClass(NotesStore.self, type: NSPersistentStore.StoreType(rawValue: "NotesStore"))
    /// ```
    public class func registerStoreClass(_ storeClass: AnyClass?, type storeType: NSPersistentStore.StoreType) {
        registerStoreClass(storeClass, forStoreType: storeType.rawValue)
    }

    /// The store types a coordinator can add, with their classes: the built-in ones and those
    /// registered with ``registerStoreClass(_:forStoreType:)``. (Apple's values are `NSValue`s
    /// holding the classes; Foundation on Linux has no `NSValue` of an object, so here they are
    /// the classes themselves.)
    ///
    /// ```swift
    /// let canAddNotes = NSPersistentStoreCoordinator.registeredStoreTypes["NotesStore"] != nil
    /// ```
    public class var registeredStoreTypes: [String: AnyClass] {
        var types: [String: AnyClass] = storeClasses.withLock { $0.mapValues { $0 as AnyClass } }
        types[NSSQLiteStoreType] = SQLiteStore.self
        types[NSInMemoryStoreType] = InMemoryStore.self
        if PostgreSQLStoreRegistry.connector != nil { types[NSPostgreSQLStoreType] = PostgreSQLStore.self }
        return types
    }

    /// The class registered for `storeType`, if any.
    internal class func registeredStoreClass(forType storeType: String) -> NSPersistentStore.Type? {
        storeClasses.withLock { $0[storeType] }
    }

    /// Replaces the file (or folder) of a registered type's store at `destination` with a copy
    /// of `source`'s; both must be file URLs.
    internal func replaceRegisteredStoreFile(at destination: URL, with source: URL, ofType storeType: String) throws {
        guard destination.isFileURL, source.isFileURL else {
            throw CoreDataError.make(.persistentStoreInvalidType,
                "A store of type '\(storeType)' can be replaced only between file URLs (\(source) to \(destination))")
        }
        let fileManager = FileManager.default
        guard fileManager.fileExists(atPath: source.path) else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSFileReadNoSuchFileError, userInfo: [
                NSLocalizedDescriptionKey: "Can't replace the store at \(destination.path): there is no store at \(source.path)",
                NSFilePathErrorKey: source.path,
            ])
        }
        try fileManager.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        // Copied beside the destination first: a copy that fails leaves the destination as it was.
        let incoming = destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent)-\(UUID().uuidString)")
        try fileManager.copyItem(at: source, to: incoming)
        do {
            // rename(2) puts a file in the old one's place at once; a folder over a folder
            // cannot be renamed over, so the old one goes first.
            if rename(incoming.path, destination.path) != 0 {
                try fileManager.removeItem(at: destination)
                try fileManager.moveItem(at: incoming, to: destination)
            }
        } catch {
            try? fileManager.removeItem(at: incoming)
            throw error
        }
    }

    /// A store of a registered type, made with Apple's initializer; throws 134000 for a type
    /// nobody registered, or registered with a class that is neither an `NSIncrementalStore`
    /// nor an `NSAtomicStore`.
    internal func makeRegisteredStore(ofType storeType: String, configurationName configuration: String?, at storeURL: URL?,
                                      options: [AnyHashable: Any]?) throws -> NSPersistentStore {
        guard let storeClass = Self.registeredStoreClass(forType: storeType) else {
            throw CoreDataError.make(.persistentStoreInvalidType,
                "Unsupported store type '\(storeType)'; this Core Data supports \(NSSQLiteStoreType), \(NSInMemoryStoreType) and the types registered with registerStoreClass(_:forStoreType:)")
        }
        let incrementalClass = storeClass as? NSIncrementalStore.Type, atomicClass = storeClass as? NSAtomicStore.Type
        guard incrementalClass != nil || atomicClass != nil else {
            throw CoreDataError.make(.persistentStoreInvalidType,
                "The class registered for the store type '\(storeType)', \(storeClass), is not an NSIncrementalStore or NSAtomicStore subclass")
        }
        guard let storeURL else {
            throw CoreDataError.make(.persistentStoreOpen, "A store of type '\(storeType)' needs a URL")
        }
        if let incrementalClass {
            let store = incrementalClass.init(persistentStoreCoordinator: self, configurationName: configuration, at: storeURL, options: options)
            store.addedType = storeType
            return store
        }
        let store = atomicClass!.init(persistentStoreCoordinator: self, configurationName: configuration, at: storeURL, options: options)
        store.addedType = storeType
        return store
    }
}
