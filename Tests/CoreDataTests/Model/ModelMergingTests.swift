import Foundation
import Testing
@testable import CoreData

@Suite("NSManagedObjectModel(byMerging:)")
struct ModelMergingTests {
    private func person() -> NSManagedObjectModel {
        let person = NSEntityDescription()
        person.name = "Author"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        name.isOptional = false
        person.properties = [name]
        let model = NSManagedObjectModel()
        model.entities = [person]
        return model
    }

    /// Sub-entities come along, and relationships point at the merged model's entities, not at
    /// the originals (the merge copied only root entities, without their sub-entities).
    @Test func mergesWholeModelsWithTheirSubentitiesAndRelationships() throws {
        let original = TestModel.make()
        let merged = try #require(NSManagedObjectModel(byMerging: [original, person()]))
        let names = Set(merged.entities.compactMap(\.name))
        #expect(names == Set(original.entities.compactMap(\.name)).union(["Author"]))
        let truck = try #require(merged.entitiesByName["Truck"])
        #expect(truck.superentity === merged.entitiesByName["Vehicle"])
        let garage = try #require(truck.relationshipsByName["garage"])
        #expect(garage.destinationEntity === merged.entitiesByName["Garage"])
        #expect(garage.inverseRelationship?.entity === merged.entitiesByName["Garage"])
        for entity in merged.entities { #expect(!original.entities.contains { $0 === entity }) }
        #expect(merged.entityVersionHashesByName["Truck"] == original.entityVersionHashesByName["Truck"])

        // The merged model runs a store.
        let stack = try TestStack(model: merged)
        let city = stack.insert("Garage", ["city": "Oslo"])
        stack.insert("Truck", ["load": 2.5]).setValue(city, forKey: "garage")
        stack.insert("Author", ["name": "Ada"])
        try stack.context.save()
        #expect(try stack.context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Vehicle")) == 1)
        #expect(try stack.context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author")) == 1)
    }

    @Test func twoEntitiesOfOneNameCannotBeMerged() {
        #expect(NSManagedObjectModel(byMerging: [person(), person()]) == nil)
        #expect(NSManagedObjectModel(byMerging: [])?.entities.isEmpty == true)
        #expect(NSManagedObjectModel(byMerging: nil)?.entities.isEmpty == true)
    }
}
