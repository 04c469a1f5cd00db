import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `NSPersistentStoreCoordinator.setMetadata(_:forPersistentStoreOfType:at:options:)` and
/// `NSPersistentStore.setMetadata(_:forPersistentStoreAt:)`: a store file's metadata written
/// without a coordinator; a refused file is left byte for byte as it was. And `url(for:)`.
@Suite("Store metadata without a coordinator")
struct SetMetadataTests {
    /// A saved store at `folder/Test.sqlite`, no longer added to any coordinator.
    private func closedStore(in folder: TemporaryFolder) throws -> URL {
        let stack = try TestStack(directory: folder.url)
        stack.insert("Person", ["name": "Ada"])
        try stack.context.save()
        try stack.coordinator.remove(stack.coordinator.persistentStores[0])
        return stack.url
    }

    /// A coordinator's `setMetadata(_:for:)` with the app's keys alone keeps the store's model
    /// keys: the store opens again with its model.
    @Test func theAppsKeysAloneKeepTheStoresModelKeys() throws {
        let folder = try TemporaryFolder()
        let stack = try TestStack(directory: folder.url)
        stack.insert("Person", ["name": "Ada"])
        try stack.context.save()
        let store = stack.coordinator.persistentStores[0]
        stack.coordinator.setMetadata(["lastImport": "2024-05-01"], for: store)
        #expect(store.metadata[NSStoreModelVersionHashesKey] != nil)
        try stack.coordinator.remove(store)
        let again = try TestStack(directory: folder.url)
        #expect(again.coordinator.persistentStores[0].metadata["lastImport"] as? String == "2024-05-01")
        #expect(try again.fetch("Person").count == 1)
    }

    @Test func replacesTheMetadataKeepingTypeAndUUID() throws {
        let folder = try TemporaryFolder()
        let url = try closedStore(in: folder)
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let uuid = try #require(metadata[NSStoreUUIDKey] as? String)
        metadata["lastImport"] = "2024-05-01"
        metadata[NSStoreUUIDKey] = nil
        metadata[NSStoreTypeKey] = nil
        try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSSQLiteStoreType, at: url)

        let read = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(read["lastImport"] as? String == "2024-05-01")
        #expect(read[NSStoreUUIDKey] as? String == uuid)
        #expect(read[NSStoreTypeKey] as? String == NSSQLiteStoreType)
        // The version hashes came along, so the store still opens with its model, metadata and rows.
        let stack = try TestStack(directory: folder.url)
        #expect(stack.coordinator.persistentStores[0].metadata["lastImport"] as? String == "2024-05-01")
        #expect(stack.coordinator.persistentStores[0].identifier == uuid)
        #expect(try stack.fetch("Person").count == 1)
    }

    @Test func aUUIDInTheMetadataReplacesTheStoresAndTheStoreClassMethodWritesToo() throws {
        let folder = try TemporaryFolder()
        let url = try closedStore(in: folder)
        var metadata = try NSPersistentStore.metadataForPersistentStore(with: url)
        metadata[NSStoreUUIDKey] = "8D1A0A5E-2D2B-4E33-9C0B-2A1B4F6A7C11"
        try NSPersistentStoreCoordinator.setMetadata(metadata, type: .sqlite, at: url)
        #expect(try NSPersistentStore.metadataForPersistentStore(with: url)[NSStoreUUIDKey] as? String == "8D1A0A5E-2D2B-4E33-9C0B-2A1B4F6A7C11")
        metadata["flag"] = true
        try NSPersistentStore.setMetadata(metadata, forPersistentStoreAt: url)
        #expect(try NSPersistentStore.metadataForPersistentStore(with: url)["flag"] as? Bool == true)
    }

    /// Each refusal throws its code and leaves the folder as it was, byte for byte.
    @Test func aRefusedFileIsLeftByteIdentical() throws {
        let folder = try TemporaryFolder()
        let store = try closedStore(in: folder)
        let text = folder.url.appendingPathComponent("notes.sqlite")
        try Data("not a database, just text that is long enough".utf8).write(to: text)
        let plain = folder.url.appendingPathComponent("plain.sqlite")
        try RawSQLite.execute(plain.path, "CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        let missing = folder.url.appendingPathComponent("missing.sqlite")

        func snapshot() throws -> [String: Data] {
            var files: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                files[name] = try Data(contentsOf: folder.url.appendingPathComponent(name))
            }
            return files
        }
        let before = try snapshot()
        let cases: [(URL, [String: Any], String, Int)] = [
            (text, ["k": "v"], NSSQLiteStoreType, 259),
            (plain, ["k": "v"], NSSQLiteStoreType, NSPersistentStoreIncompatibleSchemaError),
            (missing, ["k": "v"], NSSQLiteStoreType, 260),
            (store, ["k": NSObject()], NSSQLiteStoreType, NSPropertyListWriteInvalidError),
            (store, ["k": "v"], NSInMemoryStoreType, NSPersistentStoreInvalidTypeError),
        ]
        for (url, metadata, type, code) in cases {
            let error = #expect(throws: NSError.self) {
                try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: type, at: url)
            }
            #expect(error?.domain == NSCocoaErrorDomain)
            #expect(error?.code == code, "\(url.lastPathComponent): \(error?.localizedDescription ?? "")")
            let after = try snapshot()
            #expect(after == before, "\(url.lastPathComponent) changed: \(before.mapValues(\.count)) → \(after.mapValues(\.count))")
        }
        #expect(try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: store)["k"] == nil)
    }

    @Test func urlForAStoreIsItsLocation() throws {
        let stack = try TestStack()
        #expect(stack.coordinator.url(for: stack.coordinator.persistentStores[0]) == stack.url)
        let memory = try stack.coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        #expect(stack.coordinator.url(for: memory) == memory.url)
    }
}
