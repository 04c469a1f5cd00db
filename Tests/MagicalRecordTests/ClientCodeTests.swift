import Foundation
import Testing
import TestSupport

/// Code written against MagicalRecord's Swift-imported API, shaped as real apps write it, compiles
/// against this module in Swift 6 mode (`swiftc -typecheck`): the spellings, and blocks that are
/// plain closures as Swift imports MagicalRecord's (they may capture and change local variables).
@Suite struct ClientCodeTests {
    static let client = """
        import CoreData
        import Foundation
        import MagicalRecord

        final class CarStore {
            let context = NSManagedObjectContext.mr_default()

            func setUp(_ model: NSManagedObjectModel) {
                NSManagedObjectModel.mr_setDefaultManagedObjectModel(model)
                MagicalRecord.setDefaultModelNamed("Car.momd")
                MagicalRecord.setLoggingLevel(.verbose)
                MagicalRecord.setupCoreDataStack()
                MagicalRecord.setupCoreDataStack(withStoreNamed: "Model.sqlite")
                MagicalRecord.setupAutoMigratingCoreDataStack()
                MagicalRecord.setupCoreDataStack(withAutoMigratingSqliteStoreNamed: "db.sqlite")
                MagicalRecord.setupCoreDataStackWithInMemoryStore()
                MagicalRecord.setShouldAutoCreateManagedObjectModel(false)
                MagicalRecord.setShouldDeleteStoreOnModelMismatch(true)
                let url = URL(fileURLWithPath: "/var/lib/cars/db.sqlite")
                MagicalRecord.setupCoreDataStackWithStore(at: url)
                MagicalRecord.setupCoreDataStackWithAutoMigratingSqliteStore(at: url)
                if MagicalRecord.loggingLevel() == .off { print(NSPersistentStore.mr_url(forStoreName: "db.sqlite")) }
            }

            func update(completion: ((Bool) -> Void)? = nil) {
                var didFindAndUpdate = false
                MagicalRecord.save({ (localContext) in
                    let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: localContext)
                    car.setValue("Model T", forKey: "name")
                    didFindAndUpdate = true
                }, completion: { (success, error) in
                    completion?(didFindAndUpdate && success)
                    print(String(describing: error?.localizedDescription))
                })
                MagicalRecord.save({ (localContext: NSManagedObjectContext) in _ = localContext })
                MagicalRecord.save(blockAndWait: { localContext in _ = localContext.hasChanges })
            }

            func saveAll() throws {
                let background = NSManagedObjectContext.mr_context(with: NSPersistentStoreCoordinator.mr_default()!)
                var savingError: Error?
                background.mr_save(options: [.parentContexts, .synchronously], completion: { (_, error) in
                    savingError = error
                })
                if let savingError { throw savingError }
                background.mr_save(options: MRSaveOptions.synchronously, completion: nil)
                NSManagedObjectContext.mr_default().mr_saveToPersistentStoreAndWait()
                NSManagedObjectContext.mr_rootSaving().mr_saveOnlySelfAndWait()
                NSManagedObjectContext.mr_().mr_saveToPersistentStore { saved, error in print(saved, error as Any) }
                NSManagedObjectContext.mr_newPrivateQueue().mr_saveOnlySelf(completion: { contextDidSave, _ in print(contextDidSave) })
                let child = NSManagedObjectContext.mr_context(withParent: context)
                child.mr_setWorkingName("child")
                print(child.mr_workingName(), NSManagedObjectContext.mr_newMainQueue())
                child.mr_save(blockAndWait: { (context) in _ = context })
                background.mr_save({ (inContext: NSManagedObjectContext) in _ = inContext }) { (state, error) in print(state) }
                MagicalRecord.cleanUp()
            }
        }
        """

    @Test func realClientCodeCompilesInSwift6() throws {
        let result = try ClientCompiler.typecheck(Self.client)
        #expect(result.ok, "\(result.output)")
    }
}
