import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Code written for Apple's framework, type-checked as a client's (``ClientCompiler``): the class
/// Xcode generates for an entity, and Apple's names for what the package does.
@Suite("Apple's names in client code")
struct ApplesNamesClientTests {
    /// What Xcode's "Manual/None" code generation writes for an entity `Item`, with `@Managed`
    /// for `@NSManaged` and without `@objc(Item)` (docs/PORTING.md), and how apps use it.
    @Test func xcodesGeneratedFetchRequestIsNotAmbiguous() throws {
        let result = try ClientCompiler.typecheck("""
            import Foundation
            import CoreData

            public class Item: NSManagedObject {
            }

            extension Item {
                @nonobjc public class func fetchRequest() -> NSFetchRequest<Item> {
                    return NSFetchRequest<Item>(entityName: "Item")
                }

                @Managed public var timestamp: Date?
                @Managed public var name: String?
            }

            extension Item : Identifiable {
            }

            public class Folder: NSManagedObject {}

            func items(_ context: NSManagedObjectContext) throws -> [Item] {
                let request = Item.fetchRequest()
                request.predicate = NSPredicate(format: "name == %@", "x")
                request.sortDescriptors = [NSSortDescriptor(keyPath: \\Item.timestamp, ascending: true)]
                let typed: NSFetchRequest<Item> = Item.fetchRequest()
                let folders: NSFetchRequest<NSFetchRequestResult> = Folder.fetchRequest()
                _ = (typed, folders)
                return try context.fetch(request) + context.fetch(Item.fetchRequest())
            }
            """)
        #expect(result.ok, "\(result.output)")
    }

    @Test func applesNamesCompile() throws {
        let result = try ClientCompiler.typecheck("""
            import Foundation
            import CoreData

            func stack(_ model: NSManagedObjectModel, _ url: URL, _ object: NSManagedObject) throws {
                let type: NSManagedObjectContextConcurrencyType = .privateQueueConcurrencyType
                let context = NSManagedObjectContext(concurrencyType: type)
                let same: NSManagedObjectContext.ConcurrencyType = NSManagedObjectContextConcurrencyType.mainQueueConcurrencyType
                _ = (context, same)

                let options: [AnyHashable: Any] = [
                    NSSQLiteManualVacuumOption: true, NSSQLiteAnalyzeOption: true, NSIgnorePersistentStoreVersioningOption: true,
                    NSReadOnlyPersistentStoreOption: false, NSPersistentStoreTimeoutOption: 10, NSSQLitePragmasOption: [:] as [String: Any],
                    NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
                    NSPersistentStoreDeferredLightweightMigrationOptionKey: true, NSPersistentStoreStagedMigrationManagerOptionKey: 1,
                    NSPersistentHistoryTrackingKey: true, NSPersistentStoreRemoteChangeNotificationPostOptionKey: true,
                    NSPersistentStoreFileProtectionKey: "complete", NSPersistentStoreForceDestroyOption: true,
                    NSValidateXMLStoreOption: true, NSBinaryStoreSecureDecodingClasses: 1,
                    NSBinaryStoreInsecureDecodingCompatibilityOption: true, NSCoreDataCoreSpotlightExporter: 1,
                    NSPersistentStoreConnectionPoolMaxSizeKey: 4, NSPersistentStoreUbiquitousContentNameKey: "old",
                    NSPersistentStoreUbiquitousContentURLKey: "old", NSPersistentStoreUbiquitousPeerTokenOption: "old",
                    NSPersistentStoreRemoveUbiquitousMetadataOption: true, NSPersistentStoreUbiquitousContainerIdentifierKey: "old",
                    NSPersistentStoreRebuildFromUbiquitousContentOption: true, NSExternalRecordsDirectoryOption: "old",
                    NSExternalRecordExtensionOption: "old", NSExternalRecordsFileFormatOption: "old",
                ]
                let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
                let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
                let location: URL = coordinator.url(for: store)
                var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: location)
                metadata["checksum"] = metadata[NSPersistentStoreModelVersionChecksumKey]
                try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSSQLiteStoreType, at: url, options: nil)
                try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSSQLiteStoreType, at: url)
                _ = NSXMLStoreType

                let merged: NSManagedObjectModel? = NSManagedObjectModel.mergedModel(from: [Bundle.main])
                let forStore: NSManagedObjectModel? = NSManagedObjectModel.mergedModel(from: nil, forStoreMetadata: metadata)
                _ = (merged, forStore)

                let conflict = NSConstraintConflict(constraint: ["email"], database: nil, databaseSnapshot: nil,
                                                    conflicting: [object], conflictingSnapshots: [[:] as [String: Any]])
                _ = conflict
            }

            func predicate(_ format: String, _ args: CVarArg...) -> NSPredicate {
                withVaList(args) { NSPredicate(format: format, arguments: $0) }
            }
            """, languageMode: "5")
        #expect(result.ok, "\(result.output)")
    }

    /// Apps' batch deletes through the coordinator and the context, as public iOS projects write
    /// them (the result unused, without a warning), and the coordinator's `performAndWait`/`perform`
    /// that return a value (Swift 6 and 5 modes).
    @Test(arguments: ["6", "5"]) func theCoordinatorsExecuteAndPerformCompile(languageMode: String) throws {
        let result = try ClientCompiler.typecheck("""
            import Foundation
            import CoreData

            func clear(_ container: NSPersistentContainer, _ context: NSManagedObjectContext) throws -> [NSManagedObjectID] {
                let fetchRequest: NSFetchRequest<NSFetchRequestResult> = NSFetchRequest(entityName: "Item")
                let deleteRequest = NSBatchDeleteRequest(fetchRequest: fetchRequest)
                try container.persistentStoreCoordinator.execute(deleteRequest, with: context)
                deleteRequest.resultType = .resultTypeObjectIDs
                let result = try container.persistentStoreCoordinator.execute(deleteRequest, with: context) as? NSBatchDeleteResult
                let objects = try container.persistentStoreCoordinator.execute(fetchRequest, with: context) as? [NSManagedObject]
                _ = objects
                try context.execute(deleteRequest)
                return result?.result as? [NSManagedObjectID] ?? []
            }

            func move(_ coordinator: NSPersistentStoreCoordinator, _ store: NSPersistentStore, to url: URL) throws {
                try coordinator.migratePersistentStore(store, to: url, options: nil, withType: NSSQLiteStoreType)
            }

            func storeCount(_ coordinator: NSPersistentStoreCoordinator) async throws -> Int {
                let now = coordinator.performAndWait { coordinator.persistentStores.count }
                let later = await coordinator.perform { coordinator.persistentStores.count }
                let checked = try await coordinator.perform { () throws -> Int in coordinator.persistentStores.count }
                return now + later + checked
            }
            """, languageMode: languageMode)
        #expect(result.ok, "\(result.output)")
        // Apple's Objective-C methods' results may be discarded without a warning; so may ours.
        #expect(!result.output.contains("warning:"), "\(result.output)")
    }

    /// Apple's Swift spellings: the notification keys' enumeration, the attribute type structure,
    /// sub-entities by name, and the relationship questions that read no objects.
    @Test func applesSwiftSpellingsCompileAndWork() throws {
        let result = try ClientCompiler.typecheck("""
            import Foundation
            import CoreData

            func changed(_ notification: Notification) -> Int {
                let inserted = notification.userInfo?[NSManagedObjectContext.NotificationKey.insertedObjects.rawValue] as? Set<NSManagedObject>
                let updatedIDs = notification.userInfo?[NSManagedObjectContext.NotificationKey.updatedObjectIDs.rawValue] as? Set<NSManagedObjectID>
                return (inserted?.count ?? 0) + (updatedIDs?.count ?? 0)
            }

            func model() -> NSManagedObjectModel {
                let title = NSAttributeDescription()
                title.name = "title"
                title.type = .string
                let shape = NSEntityDescription()
                shape.name = "Shape"
                shape.properties = [title]
                let model = NSManagedObjectModel()
                model.entities = [shape]
                _ = shape.subentitiesByName["Circle"]
                return model
            }

            func ids(_ folder: NSManagedObject) -> [NSManagedObjectID] {
                folder.hasFault(forRelationshipNamed: "notes") ? [] : folder.objectIDs(forRelationshipNamed: "notes")
            }
            """)
        #expect(result.ok, "\(result.output)")

        let attribute = NSAttributeDescription()
        attribute.type = .integer64
        #expect(attribute.attributeType == .integer64AttributeType && attribute.type == .integer64)
        attribute.attributeType = .UUIDAttributeType
        #expect(attribute.type == .uuid && attribute.type == NSAttributeDescription.AttributeType(.UUIDAttributeType))
        let keys: [NSManagedObjectContext.NotificationKey: String] = [
            .insertedObjects: NSInsertedObjectsKey, .updatedObjects: NSUpdatedObjectsKey, .deletedObjects: NSDeletedObjectsKey,
            .refreshedObjects: NSRefreshedObjectsKey, .invalidatedObjects: NSInvalidatedObjectsKey, .invalidatedAllObjects: NSInvalidatedAllObjectsKey,
            .insertedObjectIDs: NSInsertedObjectIDsKey, .updatedObjectIDs: NSUpdatedObjectIDsKey, .deletedObjectIDs: NSDeletedObjectIDsKey,
            .refreshedObjectIDs: NSRefreshedObjectIDsKey, .invalidatedObjectIDs: NSInvalidatedObjectIDsKey,
            .queryGeneration: NSManagedObjectContextQueryGenerationKey,
        ]
        for (key, constant) in keys { #expect(key.rawValue == constant) }
        let model = TestModel.make()
        #expect(model.entitiesByName["Vehicle"]?.subentitiesByName.keys.sorted() == ["Bike", "Truck"])
    }

    /// Runs what the snippet above only compiles: the concurrency type's two spellings and the
    /// constraint conflict's initializer.
    @Test func applesNamesWork() throws {
        let type: NSManagedObjectContextConcurrencyType = .privateQueueConcurrencyType
        #expect(NSManagedObjectContext(concurrencyType: type).concurrencyType == NSManagedObjectContext.ConcurrencyType.privateQueueConcurrencyType)
        let stack = try TestStack()
        let person = stack.insert("Person", ["name": "Ada"])
        let conflict = NSConstraintConflict(constraint: ["name"], database: nil, databaseSnapshot: nil,
                                            conflicting: [person], conflictingSnapshots: [[String: Any]()])
        #expect(conflict.constraintValues["name"] as? String == "Ada")
        #expect(conflict.databaseObject == nil)
    }

    /// The Swift overlay's names that apps use (a sweep of Apple's API against this package):
    /// the iOS 15 context initializer, key-value coding setters, `CocoaError`'s Core Data codes
    /// and user-info accessors, and smaller spellings.
    @Test func theOverlaysNamesCompile() throws {
        let result = try ClientCompiler.typecheck("""
            import Foundation
            import CoreData

            func make(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
                let context = NSManagedObjectContext(.privateQueue)
                context.persistentStoreCoordinator = coordinator
                _ = NSManagedObjectContext(.mainQueue)
                return context
            }

            func importJSON(_ json: [String: Any], into note: NSManagedObject) {
                note.setValuesForKeys(json)
                note.setValue("Ada", forKeyPath: "author.name")
            }

            func save(_ context: NSManagedObjectContext) -> String {
                do {
                    try context.save()
                    return "saved"
                } catch let error as CocoaError where error.code == .validationMissingMandatoryProperty {
                    return error.validationKey ?? ""
                } catch let error as CocoaError where error.code == .managedObjectMerge {
                    return "\\(error.persistentStoreSaveConflicts?.count ?? 0)"
                } catch {
                    return "\\(error)"
                }
            }

            func describe(_ total: NSExpressionDescription, _ element: NSFetchIndexElementDescription) -> Bool {
                total.resultType = .double
                let type: NSFetchIndexElementType = element.collationType
                return type == .binary && CocoaError.Code.persistentStoreSave == CocoaError.persistentStoreSave
            }

            func id(_ coordinator: NSPersistentStoreCoordinator, _ string: String) -> NSManagedObjectID? {
                coordinator.managedObjectID(for: string)
            }

            final class Folder: NSManagedObject {
                func addToNotes(_ note: NSManagedObject) {
                    willChangeValue(forKey: "notes", withSetMutation: .union, using: [note])
                    mutableSetValue(forKey: "notes").add(note)
                    didChangeValue(forKey: "notes", withSetMutation: .union, using: [note])
                }
            }
            """)
        #expect(result.ok, "\(result.output)")
    }

    @Test func theOverlaysNamesWork() throws {
        #expect(NSManagedObjectContext(.privateQueue).concurrencyType == .privateQueueConcurrencyType)
        #expect(NSManagedObjectContext(.mainQueue).concurrencyType == .mainQueueConcurrencyType)

        let stack = try TestStack()
        let owner = stack.insert("Person", ["name": "Ann"])
        let car = stack.insert("Car", ["name": "a", "owner": owner])
        let other = stack.insert("Car", ["name": "b", "owner": owner])
        car.setValuesForKeys(["name": "renamed", "price": 3.5, "photo": NSNull()])
        #expect(car.value(forKey: "name") as? String == "renamed" && car.value(forKey: "price") as? Double == 3.5)
        #expect(car.value(forKey: "photo") == nil)
        car.setValue("Bea", forKeyPath: "owner.name")
        #expect(owner.value(forKey: "name") as? String == "Bea")
        owner.setValue(1999, forKeyPath: "cars.year") // into each car of the to-many
        #expect(car.value(forKey: "year") as? Int == 1999 && other.value(forKey: "year") as? Int == 1999)
        let loner = stack.insert("Car", ["name": "c"])
        loner.setValue("nobody", forKeyPath: "owner.name") // no owner: nothing set
        try stack.context.save()
        #expect(try stack.rows("SELECT ZNAME, ZYEAR FROM ZCAR ORDER BY ZNAME") == [["b", "1999"], ["c", "2000"], ["renamed", "1999"]])
        #expect(stack.coordinator.managedObjectID(for: car.objectID.uriRepresentation().absoluteString) == car.objectID)
        #expect(stack.coordinator.managedObjectID(for: "not a uri") == nil)

        // A thrown Core Data error is a CocoaError, with its codes and user-info accessors.
        let nameless = stack.insert("Person", [:])
        do {
            try stack.context.save()
            Issue.record("a person without a name saved")
        } catch let error as CocoaError where error.code == .validationMissingMandatoryProperty {
            #expect(error.validationKey == "name")
            #expect(error.validationObject as? NSManagedObject === nameless)
            #expect(CocoaError.validationMissingMandatoryProperty == error.code && error.code.rawValue == NSValidationMissingMandatoryPropertyError)
        }
        stack.context.delete(nameless)

        let description = NSExpressionDescription()
        description.resultType = .double
        #expect(description.expressionResultType == .doubleAttributeType && description.resultType == .double)
        let element: NSFetchIndexElementType = NSFetchIndexElementDescription.CollationType.rTree
        #expect(element.rawValue == 1)
    }
}
