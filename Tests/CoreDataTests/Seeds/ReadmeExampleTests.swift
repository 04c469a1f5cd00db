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
}
