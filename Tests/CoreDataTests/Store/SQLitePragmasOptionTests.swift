import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `NSSQLitePragmasOption` at the edges: a page size asked for a new store, and Apple's recipe for
/// a bundled store (read-only, `journal_mode` `DELETE`) on a file in WAL mode.
@Suite struct SQLitePragmasOptionTests {
    @Test func aNewStoreTakesThePageSizeAskedFor() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Pages.sqlite")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                                           options: [NSSQLitePragmasOption: ["page_size": "8192"]])
        try coordinator.remove(coordinator.persistentStores[0])
        #expect(try RawSQLite.query(url.path, "PRAGMA page_size") == [["8192"]])
        let plain = folder.url.appendingPathComponent("Plain.sqlite")
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: plain, options: nil)
        try coordinator.remove(coordinator.persistentStores[0])
        #expect(try RawSQLite.query(plain.path, "PRAGMA page_size") == [["4096"]])
    }

    @Test func aReadOnlyStoreInWALModeOpensWithAJournalModePragma() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "kept"])
        try stack.context.save()
        try stack.coordinator.remove(stack.coordinator.persistentStores[0])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: stack.model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: stack.url, options: [
            NSReadOnlyPersistentStoreOption: true, NSSQLitePragmasOption: ["journal_mode": "DELETE"],
        ])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        #expect(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).map { $0.value(forKey: "name") as? String } == ["kept"])
    }
}
