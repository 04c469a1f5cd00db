import Foundation
import Testing
@testable import CoreData

/// A SQLite store at `/dev/null` is an in-memory database of its own, as on Apple platforms
/// (SwiftUI previews and tests set `description.url = URL(fileURLWithPath: "/dev/null")`).
@Suite("/dev/null as a store URL")
struct DevNullStoreTests {
    static let devNull = URL(fileURLWithPath: "/dev/null")

    /// `/dev/null` is still the character device it was (nothing was written or removed there).
    private func expectDevNullUntouched() throws {
        let attributes = try FileManager.default.attributesOfItem(atPath: "/dev/null")
        #expect(attributes[.type] as? FileAttributeType == .typeCharacterSpecial)
        #expect(!FileManager.default.fileExists(atPath: "/dev/null-wal"))
        #expect(!FileManager.default.fileExists(atPath: "/dev/null-journal"))
    }

    private func coordinator(_ model: NSManagedObjectModel = TestModel.make()) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: Self.devNull, options: nil)
        return coordinator
    }

    private func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    @Test func addPersistentStoreKeepsTheStoreInMemory() throws {
        let coordinator = try coordinator()
        let store = try #require(coordinator.persistentStores.first)
        #expect(store.type == NSSQLiteStoreType)
        #expect(store.url == Self.devNull)
        let writer = context(coordinator)
        let owner = NSEntityDescription.insertNewObject(forEntityName: "Person", into: writer)
        owner.setValue("Ada", forKey: "name")
        for index in 0..<30 {
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: writer)
            car.setValue("car \(index)", forKey: "name")
            car.setValue(owner, forKey: "owner")
        }
        try writer.save()

        // Another context reads through the store's reader connections: the same database.
        let reader = context(coordinator)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.predicate = NSPredicate(format: "owner.name == 'Ada'")
        request.fetchBatchSize = 7
        #expect(try reader.fetch(request).count == 30)
        #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == 30)
        let person = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).first)
        #expect((person.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 30, "a to-many fault read by a reader")
        let fault = reader.object(with: owner.objectID)
        reader.refresh(fault, mergeChanges: false)
        #expect(fault.value(forKey: "name") as? String == "Ada")

        // Reads from other threads while this one saves.
        let failures = Failures()
        let readers = (0..<3).map { _ in
            onNewThread("reader") {
                let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                context.persistentStoreCoordinator = coordinator
                context.performAndWait {
                    for _ in 0..<20 {
                        do {
                            if try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) < 30 { failures.add("fewer cars") }
                        } catch {
                            failures.add("\(error)")
                        }
                    }
                }
            }
        }
        for index in 0..<10 {
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: writer).setValue("more \(index)", forKey: "name")
            try writer.save()
        }
        for thread in readers { #expect(finished(thread)) }
        #expect(failures.all.isEmpty, "\(failures.all)")
        #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == 40)
        try expectDevNullUntouched()
    }

    @Test func eachCoordinatorGetsItsOwnEmptyDatabase() throws {
        let first = try coordinator()
        let firstContext = context(first)
        NSEntityDescription.insertNewObject(forEntityName: "Car", into: firstContext).setValue("only here", forKey: "name")
        try firstContext.save()
        let second = try coordinator()
        #expect(try context(second).count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == 0)
        #expect(try context(first).count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == 1)
        #expect(first.persistentStores[0].identifier != second.persistentStores[0].identifier)

        // Two in-memory stores in one coordinator, one per configuration, as an app with two
        // stores sets both descriptions to /dev/null in its previews.
        let model = TestModel.makeWithConfigurations()
        let both = NSPersistentStoreCoordinator(managedObjectModel: model)
        try both.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Music", at: Self.devNull, options: nil)
        try both.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: "Garage", at: Self.devNull, options: nil)
        #expect(both.persistentStores.count == 2)
        let context = context(both)
        NSEntityDescription.insertNewObject(forEntityName: "Playlist", into: context).setValue("mix", forKey: "title")
        NSEntityDescription.insertNewObject(forEntityName: "Garage", into: context).setValue("Oslo", forKey: "city")
        try context.save()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Playlist")) == 1)
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Garage")) == 1)
    }

    /// Removing or destroying the store at `/dev/null` drops its database and touches no file.
    @Test func removingAndDestroyingLeaveDevNullAlone() throws {
        let coordinator = try coordinator()
        let writer = context(coordinator)
        NSEntityDescription.insertNewObject(forEntityName: "Car", into: writer).setValue("gone", forKey: "name")
        try writer.save()
        try coordinator.destroyPersistentStore(at: Self.devNull, ofType: NSSQLiteStoreType, options: nil)
        #expect(coordinator.persistentStores.isEmpty)
        try expectDevNullUntouched()
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: Self.devNull, options: nil)
        #expect(try context(coordinator).count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == 0)
        #expect(throws: NSError.self) {
            try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: Self.devNull)
        }
        try expectDevNullUntouched()
    }

    @Test func aContainerWhoseDescriptionIsDevNull() throws {
        let container = NSPersistentContainer(name: "Car", managedObjectModel: TestModel.make())
        let description = NSPersistentStoreDescription()
        description.url = Self.devNull
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil, "\(String(describing: loadError))")
        let background = container.newBackgroundContext()
        try background.performAndWait {
            for index in 0..<5 { NSEntityDescription.insertNewObject(forEntityName: "Car", into: background).setValue("car \(index)", forKey: "name") }
            try background.save()
        }
        let names = try container.viewContext.performAndWait {
            try container.viewContext.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).compactMap { $0.value(forKey: "name") as? String }
        }
        #expect(names.sorted() == (0..<5).map { "car \($0)" })
        try expectDevNullUntouched()
    }
}

private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [String] = []
    func add(_ failure: String) { lock.withLock { failures.append(failure) } }
    var all: [String] { lock.withLock { failures } }
}
