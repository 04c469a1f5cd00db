import Foundation
import Testing
@testable import CoreData

@Suite struct InferredMappingTests {
    typealias M = MigrationModels

    private func infer(_ source: NSManagedObjectModel, _ destination: NSManagedObjectModel) throws -> NSMappingModel {
        try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
    }

    private func refusal(_ source: NSManagedObjectModel, _ destination: NSManagedObjectModel) -> NSError? {
        do {
            _ = try infer(source, destination)
            return nil
        } catch {
            return error as NSError
        }
    }

    @Test func anUnchangedModelCopiesEveryEntity() throws {
        let v1 = M.v1()
        let mapping = try infer(v1, M.v1())
        #expect(mapping.entityMappings.map(\.name) == ["CarToCar", "NoteToNote", "PersonToPerson"])
        #expect(mapping.entityMappings.allSatisfy { $0.mappingType == .copyEntityMappingType })
        let person = try #require(mapping.entityMappingsByName["PersonToPerson"])
        #expect(person.sourceEntityName == "Person" && person.destinationEntityName == "Person")
        #expect(person.sourceEntityVersionHash == v1.entitiesByName["Person"]!.versionHash)
        #expect(person.destinationEntityVersionHash == person.sourceEntityVersionHash)
        #expect(person.attributeMappings?.map(\.name) == ["age", "name"] || person.attributeMappings?.map(\.name) == ["name", "age"])
        let name = try #require(person.attributeMappings?.first { $0.name == "name" })
        #expect(name.valueExpression?.description == NSExpression(format: "$source.name").description)
        #expect(person.relationshipMappings?.map(\.name) == ["cars"])
    }

    @Test func addedAndRemovedEntitiesAndAttributes() throws {
        let v2 = M.v1()
        let byName = v2.entitiesByName
        byName["Person"]!.properties = byName["Person"]!.properties.filter { $0.name != "age" } + [M.attribute("email", .stringAttributeType)]
        let tag = M.entity("Tag", [M.attribute("label", .stringAttributeType)])
        v2.entities = [byName["Car"]!, byName["Person"]!, tag]
        let mapping = try infer(M.v1(), v2)
        let types = Dictionary(uniqueKeysWithValues: mapping.entityMappings.map { ($0.name!, $0.mappingType) })
        #expect(types == ["CarToCar": .copyEntityMappingType, "PersonToPerson": .transformEntityMappingType,
                          "Tag": .addEntityMappingType, "Note": .removeEntityMappingType])
        let person = mapping.entityMappingsByName["PersonToPerson"]!
        let email = try #require(person.attributeMappings?.first { $0.name == "email" })
        #expect(email.valueExpression == nil)
        #expect(person.attributeMappings?.contains { $0.name == "age" } == false)
        let note = mapping.entityMappingsByName["Note"]!
        #expect(note.sourceEntityName == "Note" && note.destinationEntityName == nil)
        let added = mapping.entityMappingsByName["Tag"]!
        #expect(added.sourceEntityName == nil && added.destinationEntityName == "Tag")
    }

    @Test func renamesFollowTheRenamingIdentifier() throws {
        let person = M.entity("Human", [M.attribute("fullName", .stringAttributeType, renamedFrom: "name"),
                                        M.attribute("age", .integer16AttributeType)], renamedFrom: "Person")
        let car = M.entity("Car", [M.attribute("model", .stringAttributeType), M.attribute("year", .integer32AttributeType)])
        M.link(person, car)
        let mapping = try infer(M.v1(), M.model([car, person]))
        let human = try #require(mapping.entityMappingsByName["PersonToHuman"])
        #expect(human.mappingType == .transformEntityMappingType)
        #expect(human.sourceEntityName == "Person" && human.destinationEntityName == "Human")
        let fullName = try #require(human.attributeMappings?.first { $0.name == "fullName" })
        #expect(fullName.sourcePropertyName == "name")
        #expect(fullName.valueExpression?.description == NSExpression(format: "$source.name").description)
        // The relationship to the renamed entity still matches.
        #expect(mapping.entityMappingsByName["CarToCar"]?.relationshipMappings?.first?.sourcePropertyName == "owner")
    }

    @Test func optionalityAndWideningAreInferred() throws {
        let v2 = M.v1(personName: M.attribute("name", .stringAttributeType, optional: false, defaultValue: "?"))
        v2.entitiesByName["Person"]!.properties.compactMap { $0 as? NSAttributeDescription }.first { $0.name == "age" }!
            .attributeType = .integer64AttributeType
        let mapping = try infer(M.v1(), v2)
        #expect(mapping.entityMappingsByName["PersonToPerson"]?.mappingType == .transformEntityMappingType)
    }

    @Test func aToOneBecomingToManyIsInferred() throws {
        let v2 = M.v1()
        let owner = v2.entitiesByName["Car"]!.relationshipsByName["owner"]!
        owner.maxCount = 0
        #expect(try infer(M.v1(), v2).entityMappingsByName["CarToCar"]?.mappingType == .transformEntityMappingType)
    }

    @Test func aTypeChangeIsRefusedNamingEntityAndProperty() throws {
        let v2 = M.v1()
        v2.entitiesByName["Car"]!.attributesByName["year"]!.attributeType = .stringAttributeType
        let error = try #require(refusal(M.v1(), v2))
        #expect(error.domain == NSCocoaErrorDomain && error.code == NSInferredMappingModelError)
        #expect(error.userInfo["entity"] as? String == "Car")
        #expect(error.userInfo["property"] as? String == "year")
        #expect(error.localizedDescription.contains("Car.year"))
        #expect(error.localizedDescription.contains("Integer 32") && error.localizedDescription.contains("String"))
        #expect(error.userInfo["reason"] as? String == "Source and destination attribute types are incompatible")
        // And back: a String made a number; a Date made a number.
        let back = M.v1()
        back.entitiesByName["Car"]!.attributesByName["model"]!.attributeType = .integer64AttributeType
        #expect(refusal(M.v1(), back)?.userInfo["property"] as? String == "model")
        let date = M.model([M.entity("Event", [M.attribute("at", .dateAttributeType)])])
        let number = M.model([M.entity("Event", [M.attribute("at", .doubleAttributeType)])])
        #expect(refusal(date, number)?.code == NSInferredMappingModelError)
        #expect(refusal(number, date)?.code == NSInferredMappingModelError)
    }

    /// Apple's rule: any number type to any other (narrowing too), and a number to a Boolean and back.
    @Test func numbersAndBooleansChangeIntoEachOther() throws {
        let types: [NSAttributeType] = [.integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
                                        .decimalAttributeType, .doubleAttributeType, .floatAttributeType, .booleanAttributeType]
        for from in types {
            for to in types {
                let source = M.model([M.entity("Reading", [M.attribute("value", from)])])
                let destination = M.model([M.entity("Reading", [M.attribute("value", to)])])
                let mapping = try infer(source, destination).entityMappingsByName["ReadingToReading"]
                #expect(mapping?.attributeMappings?.first?.sourcePropertyName == "value", "\(from.typeName) → \(to.typeName)")
            }
        }
    }

    @Test func aRelationshipToAnotherEntityIsRefused() throws {
        let v2 = M.v1()
        let byName = v2.entitiesByName
        let owner = byName["Car"]!.relationshipsByName["owner"]!
        let cars = byName["Person"]!.relationshipsByName["cars"]!
        owner.destinationEntity = byName["Note"]!
        owner.inverseRelationship = nil
        cars.inverseRelationship = nil
        let error = try #require(refusal(M.v1(), v2))
        #expect(error.code == NSInferredMappingModelError)
        #expect(error.userInfo["entity"] as? String == "Car" && error.userInfo["property"] as? String == "owner")
    }

    @Test func mergingTwoHierarchiesIsRefused() throws {
        let v2 = M.v1()
        let byName = v2.entitiesByName
        byName["Person"]!.subentities = [byName["Note"]!]
        let error = try #require(refusal(M.v1(), v2))
        #expect(error.code == NSInferredMappingModelError)
        #expect(error.localizedDescription.contains("Note") && error.localizedDescription.contains("Person"))
    }

    @Test func anEntityMovedUnderANewParentIsInferred() throws {
        let v2 = M.v1()
        let byName = v2.entitiesByName
        let thing = M.entity("Thing", [M.attribute("created", .dateAttributeType)])
        thing.subentities = [byName["Note"]!]
        v2.entities = v2.entities + [thing]
        let mapping = try infer(M.v1(), v2)
        #expect(mapping.entityMappingsByName["NoteToNote"]?.mappingType == .transformEntityMappingType)
        #expect(mapping.entityMappingsByName["Thing"]?.mappingType == .addEntityMappingType)
    }
}
