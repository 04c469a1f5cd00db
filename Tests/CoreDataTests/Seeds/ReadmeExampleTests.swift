import CoreData
import CoreDataExamples
import Foundation
import Testing

/// The README's example, verbatim but for the file locations, so that it keeps compiling and working.
@Suite("README example")
struct ReadmeExampleTests {
    @Test func exampleRuns() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var printed: [String] = []

        let model = NSManagedObjectModel(contentsOf: CoreDataManager.bundledModelURL)!  // Xcode's format, read directly
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil,
                                           at: folder.appendingPathComponent("Cars.sqlite"), options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator

        try context.performAndWait {
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            car.setValue("Model T", forKey: "name")
            try context.save()                                   // one transaction; Z_PK in insertion order

            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            request.predicate = NSPredicate(format: "name = %@", "Model T")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            for car in try context.fetch(request) { printed.append("\(car.value(forKey: "name") ?? "")") }
        }
        #expect(printed == ["Model T"])
    }

    @Test(.timeLimit(.minutes(1)))
    @MainActor // as the README's top-level code is
    func containerExampleRuns() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }

        let container = NSPersistentContainer(name: "Car")
        container.persistentStoreDescriptions.first?.url = folder.appendingPathComponent("Car.sqlite") // not ~/.local/share
        container.loadPersistentStores { description, error in
            if let error { Issue.record("Can't open \(description): \(error)") } // the README stops the process here
        }
        let names = try await container.performBackgroundTask { @Sendable context in
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("Model T", forKey: "name")
            try context.save()
            return try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).compactMap { $0.value(forKey: "name") as? String }
        }
        #expect(names == ["Model T"])
    }
}
