import CoreData
import Foundation
import Testing
import MagicalRecord

extension DefaultStackSuite {
    /// MagicalRecord 2.3's contexts: which queue each has, and which parent.
    @Suite struct ContextTests {
        @Test func theRootSavingContextIsAPrivateQueueOnTheCoordinator() async throws {
            try await withDefaultStack {
                let root = NSManagedObjectContext.mr_rootSaving()
                #expect(root.concurrencyType == .privateQueueConcurrencyType)
                #expect(root.parent == nil)
                #expect(root.persistentStoreCoordinator === NSPersistentStoreCoordinator.mr_default())
                #expect((root.mergePolicy as? NSMergePolicy)?.mergeType == .mergeByPropertyObjectTrumpMergePolicyType)
                #expect(root.mr_workingName() == "MagicalRecord Root Saving Context")
            }
        }

        @Test func theDefaultContextIsAMainQueueChildOfTheRoot() async throws {
            try await withDefaultStack {
                let main = NSManagedObjectContext.mr_default()
                #expect(main.concurrencyType == .mainQueueConcurrencyType)
                #expect(main.parent === NSManagedObjectContext.mr_rootSaving())
                #expect(main.mr_workingName() == "MagicalRecord Default Context")
                #expect(main.mr_parentChain().contains("- MagicalRecord Default Context"))
                #expect(main.mr_parentChain().contains("- MagicalRecord Root Saving Context"))
            }
        }

        @Test func newContextsAreChildrenOfTheRootSavingContext() async throws {
            try await withDefaultStack {
                let context = NSManagedObjectContext.mr_()
                #expect(context.concurrencyType == .privateQueueConcurrencyType)
                #expect(context.parent === NSManagedObjectContext.mr_rootSaving(), "2.3: the root, not the default context")
                #expect(context !== NSManagedObjectContext.mr_())
                let child = NSManagedObjectContext.mr_context(withParent: .mr_default())
                #expect(child.concurrencyType == .privateQueueConcurrencyType)
                #expect(child.parent === NSManagedObjectContext.mr_default())
                let onCoordinator = NSManagedObjectContext.mr_context(with: NSPersistentStoreCoordinator.mr_default()!)
                #expect(onCoordinator.parent == nil)
                #expect(onCoordinator.persistentStoreCoordinator === NSPersistentStoreCoordinator.mr_default())
            }
        }

        @Test func newMainAndPrivateQueueContextsHaveNeitherParentNorCoordinator() {
            let main = NSManagedObjectContext.mr_newMainQueue()
            let background = NSManagedObjectContext.mr_newPrivateQueue()
            #expect(main.concurrencyType == .mainQueueConcurrencyType)
            #expect(background.concurrencyType == .privateQueueConcurrencyType)
            #expect(main.parent == nil && main.persistentStoreCoordinator == nil)
            #expect(background.parent == nil && background.persistentStoreCoordinator == nil)
        }

        @Test func aWorkingNameNamesTheContext() {
            let context = NSManagedObjectContext.mr_newPrivateQueue()
            #expect(context.mr_workingName() == "Untitled Context")
            context.mr_setWorkingName("Importer")
            #expect(context.mr_workingName() == "Importer")
            #expect(context.name == "Importer", "the concurrency checker's messages name it too")
            #expect(context.mr_description().contains(": Importer> on "))
        }

        @Test func theDefaultContextReadsWhatTheSaveBlocksSaved() async throws {
            try await withDefaultStack {
                MagicalRecord.save(blockAndWait: { context in
                    NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("Model T", forKey: "name")
                })
                let main = NSManagedObjectContext.mr_default()
                let names = try main.performAndWait {
                    try main.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).map { $0.value(forKey: "name") as? String }
                }
                #expect(names == ["Model T"])
            }
        }

        @Test func theRootsSavesAreMergedIntoTheDefaultContextOnTheMainQueue() async throws {
            try await withDefaultStack {
                MagicalRecord.save(blockAndWait: { NSEntityDescription.insertNewObject(forEntityName: "Car", into: $0).setValue("old", forKey: "name") })
                let main = NSManagedObjectContext.mr_default()
                let car = try main.performAndWait { try #require(main.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).first) }
                #expect(main.performAndWait { car.value(forKey: "name") as? String } == "old")
                MagicalRecord.save(blockAndWait: { context in
                    let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
                    (try? context.fetch(request))?.first?.setValue("new", forKey: "name")
                })
                await drainMainQueue()
                #expect(main.performAndWait { car.value(forKey: "name") as? String } == "new")
            }
        }
    }
}
