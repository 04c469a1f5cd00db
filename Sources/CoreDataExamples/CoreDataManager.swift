import CoreData
import Foundation

/// Seed 000's `CoreDataManager`, translated to Swift the way an iOS developer would write it:
/// a shared stack with a private-queue context on a SQLite store, and CRUD on `Car(name)`.
public final class CoreDataManager: @unchecked Sendable {
    /// The model loaded from the model URL.
    public let managedObjectModel: NSManagedObjectModel
    /// The coordinator, with the store added.
    public let persistentStoreCoordinator: NSPersistentStoreCoordinator
    /// The private-queue context the CRUD methods work in.
    public let managedObjectContext: NSManagedObjectContext

    /// The stack on a SQLite store at `storeURL` (seed's `init`).
    public convenience init(modelURL: URL, storeURL: URL) throws {
        try self.init(modelURL: modelURL, storeType: NSSQLiteStoreType, storeURL: storeURL)
    }

    /// The same stack on a store of another type (the PostgreSQL store's tests run the seed on it).
    public init(modelURL: URL, storeType: String, storeURL: URL, options: [AnyHashable: Any]? = nil) throws {
        managedObjectModel = try NSManagedObjectModel(validatingContentsOf: modelURL)
        persistentStoreCoordinator = NSPersistentStoreCoordinator(managedObjectModel: managedObjectModel)
        try persistentStoreCoordinator.addPersistentStore(ofType: storeType, configurationName: nil, at: storeURL, options: options)
        managedObjectContext = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        managedObjectContext.persistentStoreCoordinator = persistentStoreCoordinator
    }

    /// The model shipped with the command (Xcode's source format, loaded directly).
    public static var bundledModelURL: URL {
        Bundle.module.url(forResource: "Car", withExtension: "xcdatamodeld")!
    }

    /// Inserts one car and saves (seed's `insertData:`).
    public func insertData(_ name: String) throws {
        try managedObjectContext.performAndWait {
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: managedObjectContext)
            car.setValue(name, forKey: "name")
            try managedObjectContext.save()
        }
    }

    /// Inserts many cars and saves once (seed's `insertDatas:`).
    public func insertDatas(_ names: [String]) throws {
        try managedObjectContext.performAndWait {
            for name in names {
                let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: managedObjectContext)
                car.setValue(name, forKey: "name")
            }
            try managedObjectContext.save()
        }
    }

    /// Deletes every car (seed's `deleteData`); returns how many.
    @discardableResult
    public func deleteData() throws -> Int { try delete(named: nil) }

    /// Deletes the cars with a name (seed's `deleteData:`); returns how many.
    @discardableResult
    public func deleteData(_ name: String) throws -> Int { try delete(named: name) }

    /// All car names in fetch order (seed's `queryData`).
    public func queryData() throws -> [String] { try names(named: nil) }

    /// The cars with a name (seed's `queryData:`).
    public func queryData(_ name: String) throws -> [String] { try names(named: name) }

    /// Renames the cars with a name to "test" (seed's `updateData:`); returns how many.
    @discardableResult
    public func updateData(_ name: String) throws -> Int {
        try managedObjectContext.performAndWait {
            let cars = try self.cars(named: name)
            for car in cars { car.setValue("test", forKey: "name") }
            try managedObjectContext.save()
            return cars.count
        }
    }

    /// The cars with a name (all cars for `nil`), fetched as the seed does; call on the context's queue.
    private func cars(named name: String?) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        if let name { request.predicate = NSPredicate(format: "name = %@", name) }
        return try managedObjectContext.fetch(request)
    }

    private func delete(named name: String?) throws -> Int {
        try managedObjectContext.performAndWait {
            let cars = try self.cars(named: name)
            for car in cars { managedObjectContext.delete(car) }
            try managedObjectContext.save()
            return cars.count
        }
    }

    private func names(named name: String?) throws -> [String] {
        try managedObjectContext.performAndWait {
            try cars(named: name).map { $0.value(forKey: "name") as? String ?? "" }
        }
    }

    /// The number of cars.
    public func count() throws -> Int {
        try managedObjectContext.performAndWait {
            try managedObjectContext.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car"))
        }
    }
}
