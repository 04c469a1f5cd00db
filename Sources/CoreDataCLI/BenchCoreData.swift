import CoreData
import CoreDataExamples
import Foundation

// swift-coredata doing the benchmark's work through Apple's API, as an app would write it:
// a coordinator with a SQLite store (the library opens it in WAL mode with
// `synchronous = NORMAL`), a private-queue context, `insertNewObject` + `setValue(_:forKey:)`
// + `save()`, and `NSFetchRequest<BenchItem>` + the typed `@Managed` accessors.

enum CoreDataBench {
    /// One repetition of `workload` for `size` rows; `folder` hands out fresh files.
    static func repetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        switch workload {
        case .equalityFetch, .prefixSearch, .lookupByID, .groupedAggregates:
            return try predicateRepetition(workload, size: size, folder: folder)
        case .migrationAddAttribute, .migrationRenameAttribute, .migrationThroughManager:
            return try MigrationBench.coreDataRepetition(workload, size: size, folder: folder)
        case .batchInsert, .batchUpdate, .batchDelete:
            return try BatchBench.coreDataRepetition(workload, size: size, folder: folder)
        case .historySave:
            return BatchBench.historySaveRepetition(history: true, size: size, folder: folder)
        case .fetchedResults:
            return FetchedResultsBench.coreDataRepetition(size: size, folder: folder)

        case .carsSavedOneByOne, .carsSavedOnce:
            let model = try NSManagedObjectModel(validatingContentsOf: CoreDataManager.bundledModelURL)
            let names = (0..<size).map { String($0) }
            let oneByOne = workload == .carsSavedOneByOne
            return {
                try timedOnFreshStack(folder, "coredata-car", model: model, entity: "Car", rows: names.count) { context in
                    for name in names {
                        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
                        car.setValue(name, forKey: "name")
                        if oneByOne { try context.save() }
                    }
                    if !oneByOne { try context.save() }
                    return names.count
                }
            }

        case .insertItems:
            let model = itemModel(className: "NSManagedObject") // (b) is key-value coding on plain objects
            return {
                try timedOnFreshStack(folder, "coredata-item", model: model, entity: "Item", rows: size) { context in
                    for i in 0..<size {
                        let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                        for key in itemKeys { item.setValue(i, forKey: key) }
                    }
                    try context.save()
                    return size
                }
            }

        case .insertItemsBoxed:
            let model = itemModel(className: "NSManagedObject")
            return {
                try timedOnFreshStack(folder, "coredata-item-boxed", model: model, entity: "Item", rows: size) { context in
                    for i in 0..<size {
                        let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                        for key in itemKeys { item.setValue(NSNumber(value: i), forKey: key) }
                    }
                    try context.save()
                    return size
                }
            }

        case .fetchItemsBoxed:
            let model = itemModel(className: "NSManagedObject") // (c′) reads plain objects by key
            let file = try filledItemFile(folder, "coredata-fetch-boxed", model: model, size: size)
            return {
                let stack = try Stack(model: model, url: file)
                let context = stack.context
                return try context.performAndWait {
                    try BenchMeter.measure {
                        let items = try context.fetch(NSFetchRequest<NSFetchRequestResult>(entityName: "Item"))
                        var sum = 0
                        for case let item as NSManagedObject in items {
                            for key in itemKeys { sum &+= (item.value(forKey: key) as! NSNumber).intValue }
                        }
                        return sum
                    }
                }
            }

        case .fetchItems:
            let model = itemModel(className: String(reflecting: BenchItem.self)) // (c) reads through @Managed
            let file = try filledItemFile(folder, "coredata-fetch", model: model, size: size)
            return {
                // A new coordinator and context each time: nothing is cached in memory.
                let stack = try Stack(model: model, url: file)
                let context = stack.context
                return try context.performAndWait {
                    try BenchMeter.measure {
                        let request = NSFetchRequest<BenchItem>(entityName: "Item")
                        let items = try context.fetch(request)
                        var sum = 0
                        for item in items { sum &+= readItem(item) }
                        return sum
                    }
                }
            }
        }
    }

    /// A file of `size` `Item` rows, written beforehand (not timed).
    static func filledItemFile(_ folder: BenchFolder, _ prefix: String, model: NSManagedObjectModel, size: Int) throws -> URL {
        let file = try folder.freshStore(prefix)
        let stack = try Stack(model: model, url: file)
        let context = stack.context
        try context.performAndWait {
            for i in 0..<size {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                for key in itemKeys { item.setValue(i, forKey: key) }
            }
            try context.save()
        }
        return file
    }

    /// The keys as an app writes them: string literals (immortal, never retained), not ten
    /// strings built at run time.
    static let itemKeys = ["i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8", "i9"]

    /// One timed run on a fresh file: the stack is opened untimed, `work` is timed inside one
    /// `performAndWait` of the context, then the rows are counted (untimed).
    static func timedOnFreshStack(_ folder: BenchFolder, _ prefix: String, model: NSManagedObjectModel, entity: String, rows: Int,
                                  options: [AnyHashable: Any]? = nil, _ work: (NSManagedObjectContext) throws -> Int) throws -> BenchSample {
        let file = try folder.freshStore(prefix)
        defer { folder.removeStore(file) }
        let stack = try Stack(model: model, url: file, options: options)
        let context = stack.context
        let sample = try context.performAndWait { try BenchMeter.measure { try work(context) } }
        try stack.check(rows: rows, entity: entity)
        return sample
    }

    /// Reads the ten values of a fetched `Item` through its typed accessors (as an app with a
    /// generated subclass does) and returns their sum.
    @inline(__always)
    static func readItem(_ item: BenchItem) -> Int {
        Int(item.i0 &+ item.i1 &+ item.i2 &+ item.i3 &+ item.i4 &+ item.i5 &+ item.i6 &+ item.i7 &+ item.i8 &+ item.i9)
    }

    /// GRDB's `PerformanceModel`: an `Item` entity with ten optional Integer 64 attributes, built in code.
    static func itemModel(className: String) -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "Item"
        entity.managedObjectClassName = className
        entity.properties = itemKeys.map { key in
            let attribute = NSAttributeDescription()
            attribute.name = key
            attribute.attributeType = .integer64AttributeType
            attribute.isOptional = true
            return attribute
        }
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    /// A coordinator with one store and a private-queue context: a SQLite store, or a PostgreSQL
    /// store for a `postgres://` URL (`--store`).
    struct Stack {
        let coordinator: NSPersistentStoreCoordinator
        let context: NSManagedObjectContext

        init(model: NSManagedObjectModel, url: URL, options: [AnyHashable: Any]? = nil) throws {
            coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            let type = ["postgres", "postgresql"].contains(url.scheme?.lowercased()) ? NSPostgreSQLStoreType : NSSQLiteStoreType
            try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: options)
            context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
        }

        /// Checks (untimed) that the store holds `rows` objects of `entity`.
        func check(rows: Int, entity: String) throws {
            let count = try context.performAndWait {
                try context.count(for: NSFetchRequest<NSManagedObject>(entityName: entity))
            }
            guard count == rows else { throw BenchFailure("coredata: \(count) \(entity) rows in the store, expected \(rows)") }
        }
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The `Item` entity's class, as Xcode's code generation would write it (with `@Managed`).
final class BenchItem: NSManagedObject {
    @Managed var i0: Int64
    @Managed var i1: Int64
    @Managed var i2: Int64
    @Managed var i3: Int64
    @Managed var i4: Int64
    @Managed var i5: Int64
    @Managed var i6: Int64
    @Managed var i7: Int64
    @Managed var i8: Int64
    @Managed var i9: Int64
}
