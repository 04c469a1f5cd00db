import CoreData
import CoreDataExamples
import Foundation
import MagicalRecord

/// `coredata demo --magicalrecord`: seed 000's scenario written the way a MagicalRecord app
/// writes it (seeds 001 and 003): the default stack, `MagicalRecord.save(blockAndWait:)` for every
/// change, reads in the default context. It runs on the main thread, which is the default
/// context's queue, and uses only the synchronous save forms: a command-line program does not
/// run the main queue, where MagicalRecord's completion handlers would be called.
struct MagicalRecordDemo {
    let storeURL: URL
    let modelURL: URL
    let count: Int

    func run() throws {
        print("swift-coredata demo: seed 000's scenario on MagicalRecord for Linux")
        print("model: \(modelURL.lastPathComponent) (Xcode source format)")
        print("store: \(storeURL.path)")
        print("")
        // What an app sets before launching its stack; errors (a save that fails) still print.
        MagicalRecord.setLoggingLevel(.warn)
        try setUp()
        defer { MagicalRecord.cleanUp() }
        let names = (0..<count).map { String($0) }
        let existing = try carCount()
        if existing > 0 { print("The store already holds \(existing) cars; the counts below include them.\n") }

        let oneByOne = try DemoCommand.step("insert \(count), save after each") {
            for name in names {
                MagicalRecord.save(blockAndWait: { context in
                    NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue(name, forKey: "name")
                })
            }
            return try checked(named: nil, expected: existing + count)
        }
        try DemoCommand.step("delete all") {
            let deleted = try change(named: nil) { $1.delete($0) }
            _ = try checked(named: nil, expected: 0)
            return deleted
        }
        let once = try DemoCommand.step("insert \(count), one save") {
            MagicalRecord.save(blockAndWait: { context in
                for name in names {
                    NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue(name, forKey: "name")
                }
            })
            return try checked(named: nil, expected: count)
        }
        var inOrder = false
        try DemoCommand.step("query all (order kept?)") {
            let fetched = try carNames(named: nil)
            inOrder = Array(fetched.suffix(names.count)) == names
            return fetched.count
        }
        print("    order after the one-save insert: \(inOrder ? "insertion order kept" : "SCRAMBLED")")
        let probe = names[names.count / 2]
        try DemoCommand.step("query name = \"\(probe)\"") { try carNames(named: probe).count }
        try DemoCommand.step("update name = \"\(probe)\" to \"test\"") {
            let updated = try change(named: probe) { car, _ in car.setValue("test", forKey: "name") }
            _ = try checked(named: probe, expected: 0)
            return updated
        }
        try DemoCommand.step("query name = \"test\"") { try carNames(named: "test").count }
        try DemoCommand.step("delete name = \"test\"") {
            let deleted = try change(named: "test") { $1.delete($0) }
            _ = try checked(named: "test", expected: 0)
            return deleted
        }
        try DemoCommand.step("clean up, set up again and count") {
            MagicalRecord.cleanUp()
            try setUp()
            return try carCount()
        }
        print("")
        print("Insert timings beside seed 000's (an iOS device, 2016):")
        print("    save after each insert: \(DemoCommand.seconds(oneByOne))   (seed: 8.408 s, one context save each)")
        print("    one save:               \(DemoCommand.seconds(once))   (seed: 0.162 s, with scrambled order)")
    }

    /// How many cars named `name` (all for `nil`) the store holds, if `expected`: MagicalRecord's
    /// save blocks only log a failed save (the lines above), so the demo checks the store itself
    /// (the default context would count what its parent, the root saving context, failed to save).
    private func checked(named name: String?, expected: Int) throws -> Int {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = NSPersistentStoreCoordinator.mr_default()
        let count = try context.performAndWait { try context.count(for: request(named: name)) }
        guard count == expected else {
            throw CommandFailure("a MagicalRecord save failed (its error is logged above): the store holds \(count) where the step should leave \(expected)")
        }
        return count
    }

    /// The default stack on the demo's store, with the Car model.
    private func setUp() throws {
        guard let model = NSManagedObjectModel(contentsOf: modelURL) else {
            throw CommandFailure("can't read the model at \(modelURL.path)")
        }
        NSManagedObjectModel.mr_setDefaultManagedObjectModel(model)
        MagicalRecord.setupCoreDataStackWithStore(at: storeURL)
        guard NSPersistentStore.mr_default() != nil else {
            throw CommandFailure("MagicalRecord could not open the store at \(storeURL.path) (see the error above)")
        }
    }

    /// A fetch of the cars named `name` (all for `nil`).
    private func request(named name: String?) -> NSFetchRequest<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        if let name { request.predicate = NSPredicate(format: "name = %@", name) }
        return request
    }

    /// The number of cars, counted in the default context (the caller is on the main thread).
    private func carCount() throws -> Int {
        try NSManagedObjectContext.mr_default().count(for: request(named: nil))
    }

    /// The names of the cars named `name`, read in the default context.
    private func carNames(named name: String?) throws -> [String] {
        try NSManagedObjectContext.mr_default().fetch(request(named: name)).map { $0.value(forKey: "name") as? String ?? "" }
    }

    /// Applies `change` to each car named `name` in a save block; returns how many there were.
    private func change(named name: String?, _ change: (NSManagedObject, NSManagedObjectContext) -> Void) throws -> Int {
        var result: Result<Int, any Error> = .success(0)
        MagicalRecord.save(blockAndWait: { context in
            result = Result { try context.fetch(request(named: name)) }.map { cars in
                for car in cars { change(car, context) }
                return cars.count
            }
        })
        return try result.get()
    }
}
