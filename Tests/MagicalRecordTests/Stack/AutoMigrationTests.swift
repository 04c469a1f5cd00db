import CoreData
import Foundation
import Testing
@testable import MagicalRecord
import TestSupport

extension DefaultStackSuite {
    /// The auto-migrating set-ups across two versions of a model (`ModelFiles`: v2 adds `color`).
    @Suite struct AutoMigrationTests {
        /// Writes two cars with model v1 into the store at `url`, through MagicalRecord.
        private static func writeVersion1Store(at url: URL, bundle: URL) async throws {
            let v1 = try #require(NSManagedObjectModel(contentsOf: ModelFiles.firstVersion(of: bundle)))
            try await withDefaultStack(model: v1, { MagicalRecord.setupCoreDataStackWithAutoMigratingSqliteStore(at: url) }) {
                MagicalRecord.save(blockAndWait: { context in
                    for name in ["Model T", "Beetle"] {
                        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue(name, forKey: "name")
                    }
                })
            }
            // The merges of its saves into the default context, queued on the main queue, hold the
            // old stack; once they have run it closes (checkpointing its write-ahead log).
            await drainMainQueue()
        }

        @Test func aStoreWrittenWithVersion1OpensWithVersion2AndKeepsItsData() async throws {
            let folder = try TemporaryFolder()
            let bundle = try ModelFiles.writeCars(in: folder.url)
            let url = folder.url.appendingPathComponent("Cars.sqlite")
            try await Self.writeVersion1Store(at: url, bundle: bundle)
            let v2 = try #require(NSManagedObjectModel(contentsOf: bundle))
            try await withDefaultStack(model: v2, { MagicalRecord.setupCoreDataStackWithAutoMigratingSqliteStore(at: url) }) {
                #expect(NSPersistentStoreCoordinator.mr_default()?.persistentStores.count == 1)
                #expect(carsInStore() == 2)
                MagicalRecord.save(blockAndWait: { context in
                    let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
                    request.predicate = NSPredicate(format: "name == %@", "Beetle")
                    let beetle = try? context.fetch(request).first
                    beetle?.setValue("yellow", forKey: "color")
                })
                let context = NSManagedObjectContext.mr_()
                let colors = try context.performAndWait {
                    let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
                    request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
                    return try context.fetch(request).map { "\($0.value(forKey: "name") ?? "-") \($0.value(forKey: "color") ?? "-")" }
                }
                #expect(colors == ["Beetle yellow", "Model T -"])
            }
        }

        @Test func withoutAutoMigrationTheStoreIsRefusedLoggedAndLeftAsItWas() async throws {
            let folder = try TemporaryFolder()
            let bundle = try ModelFiles.writeCars(in: folder.url)
            let url = folder.url.appendingPathComponent("Cars.sqlite")
            try await Self.writeVersion1Store(at: url, bundle: bundle)
            let before = try Data(contentsOf: url)
            let v2 = try #require(NSManagedObjectModel(contentsOf: bundle))
            let capture = LogCapture()
            try await capture.capturing(level: .error) {
                try await withDefaultStack(model: v2, level: .error, { MagicalRecord.setupCoreDataStackWithStore(at: url) }) {
                    #expect(NSPersistentStoreCoordinator.mr_default()?.persistentStores.isEmpty == true)
                }
            }
            #expect(capture.text.contains("Could not add the SQLite store at \(url.path)"))
            #expect(capture.text.contains("NSCocoaErrorDomain \(NSPersistentStoreIncompatibleVersionHashError)"))
            #expect(try Data(contentsOf: url) == before)
        }

        @Test func deletingMismatchedStoresMakesANewEmptyStoreWhenAsked() async throws {
            let folder = try TemporaryFolder()
            let bundle = try ModelFiles.writeCars(in: folder.url)
            let url = folder.url.appendingPathComponent("Cars.sqlite")
            try await Self.writeVersion1Store(at: url, bundle: bundle)
            let v2 = try #require(NSManagedObjectModel(contentsOf: bundle))
            #expect(!MagicalRecord.shouldDeleteStoreOnModelMismatch(), "off by default")
            MagicalRecord.setShouldDeleteStoreOnModelMismatch(true)
            defer { MagicalRecord.setShouldDeleteStoreOnModelMismatch(false) }
            let capture = LogCapture()
            let count = try await capture.capturing(level: .warn) {
                try await withDefaultStack(model: v2, level: .warn, { MagicalRecord.setupCoreDataStackWithStore(at: url) }) {
                    carsInStore()
                }
            }
            #expect(count == 0, "a new, empty store of version 2")
            #expect(capture.text.contains("Removing the store at \(url.path)"))
            #expect(capture.text.contains("NSCocoaErrorDomain \(NSPersistentStoreIncompatibleVersionHashError)"))
            #expect(!capture.text.contains("Could not add"))
        }

        /// The named set-up, `setupAutoMigratingCoreDataStack()`, in a child process that sets
        /// `XDG_DATA_HOME` for itself.
        @Test func setupAutoMigratingCoreDataStackMigratesTheDefaultStore() async throws {
            let folder = try TemporaryFolder()
            try ModelFiles.writeCars(in: folder.url)
            await #expect(processExitsWith: .success) { [path = folder.path as String] in
                setenv("XDG_DATA_HOME", path + "/data", 1)
                MagicalRecord.setLoggingLevel(.off)
                let bundle = URL(fileURLWithPath: path).appendingPathComponent("Cars.xcdatamodeld")
                NSManagedObjectModel.mr_setDefaultManagedObjectModel(NSManagedObjectModel(contentsOf: ModelFiles.firstVersion(of: bundle)))
                MagicalRecord.setupAutoMigratingCoreDataStack()
                MagicalRecord.save(blockAndWait: { NSEntityDescription.insertNewObject(forEntityName: "Car", into: $0).setValue("kept", forKey: "name") })
                MagicalRecord.cleanUp()
                NSManagedObjectModel.mr_setDefaultManagedObjectModel(NSManagedObjectModel(contentsOf: bundle))
                MagicalRecord.setupAutoMigratingCoreDataStack()
                guard NSPersistentStore.mr_default()?.url?.lastPathComponent == "CoreDataStore.sqlite",
                      carsInStore(named: "kept") == 1,
                      NSPersistentStoreCoordinator.mr_default()?.managedObjectModel.entitiesByName["Car"]?.attributesByName["color"] != nil
                else { exit(1) }
            }
            withExtendedLifetime(folder) {} // removed once the child has exited, not before
        }
    }
}
