import CoreDataExamples
import Foundation
import Testing
@testable import CoreData

/// Models, folders and loading helpers for the container tests.
enum ContainerTestSupport {
    /// The folder holding `Car.xcdatamodeld` (the examples target's resources).
    static var carModelDirectory: URL { CoreDataManager.bundledModelURL.deletingLastPathComponent() }

    /// A fresh folder; the caller removes it.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-container-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A container on the Car model whose one store is `<directory>/<name>.sqlite`.
    static func carContainer(in directory: URL, name: String = "Car") -> NSPersistentContainer {
        let container = NSPersistentContainer(name: "Car", modelDirectory: carModelDirectory)
        container.persistentStoreDescriptions = [NSPersistentStoreDescription(url: directory.appendingPathComponent("\(name).sqlite"))]
        return container
    }

    /// A Car container on `<directory>/Car.sqlite` with its store loaded.
    static func loadedCarContainer(in directory: URL) throws -> NSPersistentContainer {
        let container = carContainer(in: directory)
        if let error = load(container).compactMap({ $0 }).first { throw error }
        return container
    }

    /// Loads synchronously and returns each description's error, in order.
    static func load(_ container: NSPersistentContainer) -> [NSError?] {
        var errors: [NSError?] = []
        container.loadPersistentStores { _, error in errors.append(error as NSError?) }
        return errors
    }

    /// Inserts cars named `names` in `context` (on its queue) and saves.
    static func insertCars(_ names: [String], in context: NSManagedObjectContext) throws {
        for name in names {
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue(name, forKey: "name")
        }
        try context.save()
    }

    /// The names of the cars `context` fetches, sorted (on its queue).
    static func carNames(in context: NSManagedObjectContext) throws -> [String] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
    }
}

/// A value set on one thread and read on another.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: Value
    init(_ value: Value) { storage = value }
    var value: Value {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }
}
