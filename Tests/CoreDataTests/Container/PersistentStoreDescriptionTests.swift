import Foundation
import Testing
@testable import CoreData

@Suite("NSPersistentStoreDescription")
struct PersistentStoreDescriptionTests {
    @Test func defaultsAreApples() {
        let description = NSPersistentStoreDescription()
        #expect(description.type == NSSQLiteStoreType)
        #expect(description.url == URL(fileURLWithPath: "/dev/null")) // Apple's: a SQLite store in memory
        #expect(description.configuration == nil)
        #expect(description.isReadOnly == false)
        #expect(description.timeout == 240)
        #expect(description.shouldAddStoreAsynchronously == false)
        #expect(description.shouldMigrateStoreAutomatically == true)
        #expect(description.shouldInferMappingModelAutomatically == true)
        #expect(description.sqlitePragmas.isEmpty)
        #expect(description.options.keys.sorted() == [NSInferMappingModelAutomaticallyOption, NSMigratePersistentStoresAutomaticallyOption])
        let url = URL(fileURLWithPath: "/tmp/Cars.sqlite")
        #expect(NSPersistentStoreDescription(url: url).url == url)
    }

    /// The copy a load hands its handler equals the description it was made from, as Apple
    /// compares descriptions (URL, type, configuration, options); the asynchronous flag is the
    /// option Apple keeps it under.
    @Test func equalityAndTheAsynchronousOption() {
        let a = NSPersistentStoreDescription(url: URL(fileURLWithPath: "/tmp/x/../Cars.sqlite"))
        let copy = a.copy() as! NSPersistentStoreDescription
        #expect(copy == a && copy.hash == a.hash)
        #expect(Set([a, copy]).count == 1)
        copy.configuration = "Cloud"
        #expect(copy != a)
        #expect(NSPersistentStoreDescription(url: URL(fileURLWithPath: "/tmp/Cars.sqlite")) == NSPersistentStoreDescription(url: URL(fileURLWithPath: "/tmp/x/../Cars.sqlite")))
        let b = NSPersistentStoreDescription()
        b.setOption(true as NSNumber, forKey: "NSAddStoreAsynchronouslyOption")
        #expect(b.shouldAddStoreAsynchronously)
        b.shouldAddStoreAsynchronously = false
        #expect((b.options["NSAddStoreAsynchronouslyOption"] as? NSNumber)?.boolValue == false)
    }

    @Test func propertiesAreOptions() {
        let description = NSPersistentStoreDescription()
        description.isReadOnly = true
        description.timeout = 5
        description.shouldMigrateStoreAutomatically = false
        description.shouldInferMappingModelAutomatically = false
        let options = description.options
        #expect((options[NSReadOnlyPersistentStoreOption] as? NSNumber)?.boolValue == true)
        #expect((options[NSPersistentStoreTimeoutOption] as? NSNumber)?.doubleValue == 5)
        #expect((options[NSMigratePersistentStoresAutomaticallyOption] as? NSNumber)?.boolValue == false)
        #expect((options[NSInferMappingModelAutomaticallyOption] as? NSNumber)?.boolValue == false)

        description.setOption(nil, forKey: NSReadOnlyPersistentStoreOption)
        #expect(description.isReadOnly == false)
        description.setOption(true as NSNumber, forKey: NSReadOnlyPersistentStoreOption)
        #expect(description.isReadOnly == true)
        description.setOption("custom" as NSString, forKey: "MyOption")
        #expect(description.options["MyOption"] as? String == "custom")
    }

    @Test func pragmasAreAnOption() {
        let description = NSPersistentStoreDescription()
        description.setValue("DELETE" as NSString, forPragmaNamed: "journal_mode")
        description.setValue(7 as NSNumber, forPragmaNamed: "user_version")
        #expect(description.sqlitePragmas.count == 2)
        #expect(description.sqlitePragmas["journal_mode"] as? String == "DELETE")
        #expect((description.sqlitePragmas["user_version"] as? NSNumber)?.intValue == 7)
        #expect((description.options[NSSQLitePragmasOption] as? NSDictionary)?.count == 2)
        description.setValue(nil, forPragmaNamed: "journal_mode")
        #expect(description.sqlitePragmas.keys.sorted() == ["user_version"])
        description.setValue(nil, forPragmaNamed: "user_version")
        #expect(description.options[NSSQLitePragmasOption] == nil)
    }

    @Test func copiesAreIndependent() {
        let description = NSPersistentStoreDescription(url: URL(fileURLWithPath: "/tmp/a.sqlite"))
        description.setValue("FULL" as NSString, forPragmaNamed: "synchronous")
        let copy = description.copy() as! NSPersistentStoreDescription
        copy.url = URL(fileURLWithPath: "/tmp/b.sqlite")
        copy.isReadOnly = true
        copy.shouldAddStoreAsynchronously = true
        #expect(description.url?.lastPathComponent == "a.sqlite")
        #expect(!description.isReadOnly && !description.shouldAddStoreAsynchronously)
        #expect(copy.sqlitePragmas["synchronous"] as? String == "FULL")
        #expect(description.description.contains("type: SQLite"))
    }

    @Test func aCoordinatorAddsTheStoreADescriptionNames() throws {
        let directory = try ModelTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let description = NSPersistentStoreDescription(url: directory.appendingPathComponent("new/folder/Test.sqlite"))
        var result: (NSPersistentStoreDescription, NSError?)?
        coordinator.addPersistentStore(with: description) { result = ($0, $1 as NSError?) }
        #expect(result?.0 === description) // called before returning
        #expect(result?.1 == nil)
        #expect(coordinator.persistentStores.first?.url?.lastPathComponent == "Test.sqlite")
    }

    @Test(.timeLimit(.minutes(1)))
    func aCoordinatorAddsAnAsynchronousDescriptionsStoreInTheBackground() async throws {
        let directory = try ModelTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let description = NSPersistentStoreDescription(url: directory.appendingPathComponent("Test.sqlite"))
        description.shouldAddStoreAsynchronously = true
        let returned = DispatchSemaphore(value: 0)
        let (error, waited) = await withCheckedContinuation { (continuation: CheckedContinuation<(NSError?, Bool), Never>) in
            coordinator.addPersistentStore(with: description) { _, error in
                // Times out (false) if the handler runs on the calling thread, before the return.
                continuation.resume(returning: (error as NSError?, returned.wait(timeout: .now() + 20) == .success))
            }
            returned.signal()
        }
        #expect(error == nil)
        #expect(waited)
        #expect(coordinator.persistentStores.count == 1)
    }

    @Test func aDescriptionWithoutAURLIsAnError() {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        var error: NSError?
        let description = NSPersistentStoreDescription()
        description.url = nil
        coordinator.addPersistentStore(with: description) { error = $1 as NSError? }
        #expect(error?.code == NSPersistentStoreOpenError)
        #expect(coordinator.persistentStores.isEmpty)
    }
}
