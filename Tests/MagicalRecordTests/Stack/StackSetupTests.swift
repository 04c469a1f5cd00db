import CoreData
import Foundation
import Testing
@testable import MagicalRecord
import TestSupport

extension DefaultStackSuite {
    /// The set-up methods, the default model, coordinator and store, and `cleanUp()`.
    @Suite struct StackSetupTests {
        @Test func theInMemoryStackHasTheDefaultCoordinatorStoreAndModel() async throws {
            let model = CarModel.make()
            try await withDefaultStack(model: model) {
                let coordinator = try #require(NSPersistentStoreCoordinator.mr_default())
                #expect(NSManagedObjectModel.mr_default() === model)
                #expect(coordinator.managedObjectModel === model)
                #expect(coordinator.persistentStores.count == 1)
                #expect(coordinator.persistentStores.first?.type == NSInMemoryStoreType)
                #expect(NSPersistentStore.mr_default() === coordinator.persistentStores.first)
            }
        }

        @Test func aSecondSetUpKeepsTheFirstStack() async throws {
            try await withDefaultStack {
                let coordinator = NSPersistentStoreCoordinator.mr_default()
                let context = NSManagedObjectContext.mr_default()
                MagicalRecord.setupCoreDataStackWithInMemoryStore()
                #expect(NSPersistentStoreCoordinator.mr_default() === coordinator)
                #expect(NSManagedObjectContext.mr_default() === context)
            }
        }

        @Test func cleanUpForgetsTheStackAndANewSetUpMakesAnother() async throws {
            let first = try await withDefaultStack { NSManagedObjectContext.mr_default() }
            #expect(NSPersistentStoreCoordinator.mr_default() == nil)
            #expect(NSPersistentStore.mr_default() == nil)
            let second = try await withDefaultStack { NSManagedObjectContext.mr_default() }
            #expect(first !== second)
        }

        /// A programmer error, as MagicalRecord's assertion: the message says what to call.
        @Test func theDefaultContextBeforeAnySetUpStopsWithMagicalRecordsMessage() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                _ = NSManagedObjectContext.mr_default()
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("Did you forget to set up the Core Data stack?"))
        }

        @Test func aStoreAtAURLIsASQLiteFileThatKeepsTheData() async throws {
            let folder = try TemporaryFolder()
            let url = folder.url.appendingPathComponent("nested/Cars.sqlite")
            try await withDefaultStack({ MagicalRecord.setupCoreDataStackWithStore(at: url) }) {
                #expect(NSPersistentStore.mr_default()?.type == NSSQLiteStoreType)
                MagicalRecord.save(blockAndWait: { context in
                    NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("Model T", forKey: "name")
                })
            }
            #expect(FileManager.default.fileExists(atPath: url.path), "the folder is created")
            let count = try await withDefaultStack({ MagicalRecord.setupCoreDataStackWithStore(at: url) }) { carsInStore() }
            #expect(count == 1)
        }

        @Test func aStoreNamedLivesInTheXDGDataFolder() {
            #expect(NSPersistentStore.mr_url(forStoreName: "Cars.sqlite")
                    == NSPersistentContainer.defaultDirectoryURL().appendingPathComponent("Cars.sqlite"))
            #expect(MagicalRecord.defaultStoreName() == "CoreDataStore.sqlite")
        }

        /// In a child process, which may set `XDG_DATA_HOME` for itself.
        @Test func setupCoreDataStackWritesDefaultStoreNameUnderXDGDataHome() async throws {
            let folder = try TemporaryFolder()
            await #expect(processExitsWith: .success) { [path = folder.path as String] in
                setenv("XDG_DATA_HOME", path, 1)
                MagicalRecord.setLoggingLevel(.off)
                NSManagedObjectModel.mr_setDefaultManagedObjectModel(CarModel.make())
                MagicalRecord.setupCoreDataStack()
                MagicalRecord.save(blockAndWait: { _ = NSEntityDescription.insertNewObject(forEntityName: "Car", into: $0) })
                let expected = URL(fileURLWithPath: path).appendingPathComponent(ProcessInfo.processInfo.processName)
                    .appendingPathComponent("CoreDataStore.sqlite")
                guard NSPersistentStore.mr_default()?.url?.standardizedFileURL == expected.standardizedFileURL,
                      FileManager.default.fileExists(atPath: expected.path) else { exit(1) }
                MagicalRecord.cleanUp()
                MagicalRecord.setupCoreDataStack(withStoreNamed: "Other.sqlite")
                guard NSPersistentStore.mr_default()?.url?.lastPathComponent == "Other.sqlite",
                      carsInStore() == 0 else { exit(2) }
            }
            withExtendedLifetime(folder) {} // removed once the child has exited, not before
        }

        @Test func setDefaultModelNamedFindsTheXcodeModelForAMomdName() async throws {
            let folder = try TemporaryFolder()
            try ModelFiles.writeCars(in: folder.url)
            await #expect(processExitsWith: .success) { [path = folder.path as String] in
                NSPersistentContainer.modelSearchDirectories = [URL(fileURLWithPath: path)]
                MagicalRecord.setLoggingLevel(.off)
                MagicalRecord.setDefaultModelNamed("Cars.momd")
                guard let model = NSManagedObjectModel.mr_default(),
                      model.entitiesByName["Car"]?.attributesByName["color"] != nil else { exit(1) }
                MagicalRecord.setupCoreDataStackWithInMemoryStore()
                MagicalRecord.save(blockAndWait: { _ = NSEntityDescription.insertNewObject(forEntityName: "Car", into: $0) })
                guard carsInStore() == 1 else { exit(2) }
            }
            withExtendedLifetime(folder) {} // removed once the child has exited, not before
        }

        @Test func setDefaultModelNamedLogsAModelItCannotFind() async throws {
            let lines = LogCapture()
            try await lines.capturing(level: .error) {
                MagicalRecord.setDefaultModelNamed("NoSuchModelAnywhere.momd")
            }
            #expect(lines.text.contains("No model named NoSuchModelAnywhere.momd"))
            MagicalRecord.cleanUp()
        }

        @Test func withoutAModelNothingIsSetUpAndTheErrorIsLogged() async throws {
            MagicalRecord.setShouldAutoCreateManagedObjectModel(false)
            defer { MagicalRecord.setShouldAutoCreateManagedObjectModel(true) }
            NSManagedObjectModel.mr_setDefaultManagedObjectModel(nil)
            #expect(NSManagedObjectModel.mr_default() == nil, "no merged model either")
            let capture = LogCapture()
            try await capture.capturing(level: .error) {
                MagicalRecord.setupCoreDataStackWithInMemoryStore()
            }
            #expect(NSPersistentStoreCoordinator.mr_default() == nil)
            #expect(capture.text.contains("No managed object model"))
            MagicalRecord.cleanUp()
        }

        @Test func aStoreThatCannotBeAddedIsLoggedLeftAsItWasAndSavesFailWithItsError() async throws {
            let folder = try TemporaryFolder()
            let url = folder.url.appendingPathComponent("Garbage.sqlite")
            let garbage = Data("this is not a database, and must stay as it is".utf8)
            try garbage.write(to: url)
            let lines = LogCapture()
            let result = try await lines.capturing(level: .error) {
                try await withDefaultStack(level: .error, { MagicalRecord.setupCoreDataStackWithStore(at: url) }) {
                    #expect(NSPersistentStoreCoordinator.mr_default()?.persistentStores.isEmpty == true)
                    return await completion { done in
                        MagicalRecord.save({ _ = NSEntityDescription.insertNewObject(forEntityName: "Car", into: $0) }, completion: done)
                    }
                }
            }
            #expect(lines.text.contains("Could not add the SQLite store at \(url.path)"))
            #expect(result.contextDidSave == false)
            #expect(result.error?.domain == NSCocoaErrorDomain)
            #expect(result.onMainQueue)
            #expect(try Data(contentsOf: url) == garbage)
        }
    }
}
