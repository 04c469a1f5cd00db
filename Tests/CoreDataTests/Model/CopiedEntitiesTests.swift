import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Entities copied into a model of one's own (`entity.copy()`): their relationships find their
/// destinations and inverses in that model by name, as Apple's copies keep only the names,
/// whether the source model is still alive or gone.
@Suite struct CopiedEntitiesTests {
    /// A model of copies of `source`'s entities (of a model made and let go, for `nil`).
    private static func copiedModel(from source: NSManagedObjectModel?) -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        model.entities = (source ?? ReviewModel.make()).entities.map { $0.copy() as! NSEntityDescription }
        return model
    }

    @Test(arguments: [true, false])
    func copiedEntitiesWorkInTheirNewModel(sourceAlive: Bool) throws {
        let source: NSManagedObjectModel? = sourceAlive ? ReviewModel.make() : nil
        let model = Self.copiedModel(from: source)
        let stack = try TestStack(model: model)
        let wife = try #require(model.entitiesByName["Husband"]?.relationshipsByName["wife"])
        #expect(wife.destinationEntity === model.entitiesByName["Wife"])
        #expect(wife.inverseRelationship === model.entitiesByName["Wife"]?.relationshipsByName["husband"])
        let h = stack.insert("Husband", ["name": "h"])
        let w = stack.insert("Wife", ["name": "w"])
        h.setValue(w, forKey: "wife")
        #expect(w.value(forKey: "husband") as? NSManagedObject === h)
        try stack.context.save()
        #expect(model.entitiesByName["Husband"]?.versionHash == ReviewModel.make().entitiesByName["Husband"]?.versionHash)
        withExtendedLifetime(source) {}
    }

    /// An entity of a model a coordinator uses, put into another model, stops the process with
    /// a message naming it, as Apple's raises: its layout would be rebuilt under the first.
    @Test func anEntityOfAModelInUseCannotJoinAnother() async {
        await #expect(processExitsWith: .failure) {
            let model = ReviewModel.make()
            _ = NSPersistentStoreCoordinator(managedObjectModel: model)
            let other = NSManagedObjectModel()
            other.entities = [model.entitiesByName["Pet"]!]
        }
        let model = ReviewModel.make()
        let other = NSManagedObjectModel()
        other.entities = [model.entitiesByName["Pet"]!.copy() as! NSEntityDescription]
        _ = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = NSPersistentStoreCoordinator(managedObjectModel: other)
    }

    /// A relationship held after its model is gone reads nil, as Apple's weak reference does.
    @Test func aRelationshipOutlivingItsModelHasNoDestination() {
        var model: NSManagedObjectModel? = ReviewModel.make()
        let wife = model!.entitiesByName["Husband"]!.relationshipsByName["wife"]!
        model = nil
        #expect(wife.destinationEntity == nil)
        #expect(wife.inverseRelationship == nil)
    }
}
