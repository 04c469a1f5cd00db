import Foundation
import Testing
import TestSupport

/// What a client's compiler says: in Swift 6 an `NSManagedObject` can't cross an isolation
/// boundary while IDs, contexts, coordinators and containers can; a Swift 5 client written in the
/// seeds' style still compiles. The snippets are type-checked with `swiftc` against the module
/// this test binary was built with (``ClientCompiler``).
@Suite("Sendability for clients")
struct SendabilityTests {
    @Test func aManagedObjectCannotCrossAnIsolationBoundaryInSwift6() throws {
        let result = try ClientCompiler.typecheck("""
            import CoreData
            func needsSendable<T: Sendable>(_ value: T) {}
            func leak(_ car: NSManagedObject) { needsSendable(car) }
            """, languageMode: "6")
        #expect(!result.ok)
        #expect(result.output.contains("'NSManagedObject' does not conform to the 'Sendable' protocol"), "\(result.output)")
    }

    @Test func idsContextsCoordinatorsAndContainersCanInSwift6() throws {
        let result = try ClientCompiler.typecheck("""
            import CoreData
            func needsSendable<T: Sendable>(_ value: T) {}
            func pass(_ id: NSManagedObjectID, _ context: NSManagedObjectContext, _ coordinator: NSPersistentStoreCoordinator,
                      _ container: NSPersistentContainer) {
                needsSendable(id); needsSendable(context); needsSendable(coordinator); needsSendable(container)
            }
            func background(_ context: NSManagedObjectContext, _ id: NSManagedObjectID) async throws -> String? {
                try await context.perform { context.object(with: id).value(forKey: "name") as? String }
            }
            """, languageMode: "6")
        #expect(result.ok, "\(result.output)")
    }

    /// Seed 002's notification-merging code and seed 001's save chain, as Swift 5 clients write them.
    @Test func aSwift5ClientInTheSeedsStyleCompiles() throws {
        let result = try ClientCompiler.typecheck("""
            import CoreData
            import Foundation
            final class Stack {
                let mainMoc = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
                let persistingMoc = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                init(psc: NSPersistentStoreCoordinator) {
                    persistingMoc.persistentStoreCoordinator = psc
                    mainMoc.parent = persistingMoc
                    NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: nil, queue: nil) { note in
                        DispatchQueue.main.async { self.mainMoc.mergeChanges(fromContextDidSave: note) }
                    }
                }
                func save() {
                    guard mainMoc.hasChanges || persistingMoc.hasChanges else { return }
                    mainMoc.performAndWait {
                        do {
                            try self.mainMoc.save()
                            self.persistingMoc.perform {
                                do { try self.persistingMoc.save() } catch { print(error) }
                            }
                        } catch { print(error) }
                    }
                }
                func add(name: String) {
                    let worker = NSManagedObjectContext()
                    worker.persistentStoreCoordinator = mainMoc.persistentStoreCoordinator
                    let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: worker)
                    car.setValue(name, forKey: "name")
                    DispatchQueue.global().async { print(car.value(forKey: "name") ?? "") }
                    try? worker.save()
                }
            }
            """, languageMode: "5")
        #expect(result.ok, "\(result.output)")
    }
}
