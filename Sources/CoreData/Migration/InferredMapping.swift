import Foundation

// Lightweight migration's inference (`NSMappingModel.inferredMappingModel`): the destination
// model's entities and properties matched to the source model's, with Apple's rules, before
// anything is touched. What cannot be inferred throws `NSInferredMappingModelError` (134190)
// naming the entity and property.

/// The inference of one mapping model from a source and a destination model.
internal struct InferredMapping {
    let source: NSManagedObjectModel
    let destination: NSManagedObjectModel

    /// The name an entity or property is matched by: its renaming identifier, else its name.
    private static func canonical(_ name: String, _ renamingIdentifier: String?) -> String {
        renamingIdentifier.flatMap { $0.isEmpty ? nil : $0 } ?? name
    }

    /// For each of `destinations`, its match among `sources` (by canonical name, then by name),
    /// each source matched at most once.
    static func match<T: AnyObject>(_ destinations: [T], in sources: [T], name: (T) -> String,
                                    renamingIdentifier: (T) -> String?) -> [ObjectIdentifier: T] {
        var matches: [ObjectIdentifier: T] = [:]
        var used = Set<ObjectIdentifier>()
        for pass in 0..<2 {
            func key(_ item: T) -> String { pass == 0 ? canonical(name(item), renamingIdentifier(item)) : name(item) }
            for destination in destinations where matches[ObjectIdentifier(destination)] == nil {
                if let found = sources.first(where: { !used.contains(ObjectIdentifier($0)) && key($0) == key(destination) }) {
                    matches[ObjectIdentifier(destination)] = found
                    used.insert(ObjectIdentifier(found))
                }
            }
        }
        return matches
    }

    /// The error of a change that cannot be inferred.
    /// `reason` goes under the user-info key `reason`; the message says `detail` when given.
    static func refusal(_ reason: String, entity: String, property: String? = nil, detail: String? = nil) -> NSError {
        let subject = property.map { "\(entity).\($0)" } ?? entity
        var extra: [String: Any] = ["reason": reason, "entity": entity]
        if let property { extra["property"] = property }
        return CoreDataError.make(.inferredMappingModel,
            "Can't infer a mapping model for \(subject): \(detail.map { "\(reason): \($0)" } ?? reason)", extra: extra)
    }

    /// The destination entities' matches in the source model, by destination entity.
    func entityMatches() -> [ObjectIdentifier: NSEntityDescription] {
        Self.match(destination.entities.sorted { ($0.name ?? "") < ($1.name ?? "") },
                   in: source.entities.sorted { ($0.name ?? "") < ($1.name ?? "") },
                   name: { $0.name ?? "" }, renamingIdentifier: \.renamingIdentifier)
    }

    func mappingModel() throws -> NSMappingModel {
        let matches = entityMatches()
        try checkHierarchies(matches)
        var mappings: [NSEntityMapping] = []
        var matchedSources = Set<ObjectIdentifier>()
        for entity in destination.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            let mapping = NSEntityMapping()
            let name = entity.name ?? ""
            mapping.destinationEntityName = name
            mapping.destinationEntityVersionHash = entity.versionHash
            guard let from = matches[ObjectIdentifier(entity)] else {
                mapping.name = name
                mapping.mappingType = .addEntityMappingType
                mapping.attributeMappings = storedAttributes(of: entity).map { Self.propertyMapping($0.name, from: nil) }
                mapping.relationshipMappings = storedRelationships(of: entity).map { Self.propertyMapping($0.name, from: nil) }
                mappings.append(mapping)
                continue
            }
            matchedSources.insert(ObjectIdentifier(from))
            mapping.name = "\(from.name ?? "")To\(name)"
            mapping.sourceEntityName = from.name
            mapping.sourceEntityVersionHash = from.versionHash
            mapping.mappingType = from.name == entity.name && from.versionHash == entity.versionHash
                ? .copyEntityMappingType : .transformEntityMappingType
            mapping.attributeMappings = try attributeMappings(entity, from: from)
            mapping.relationshipMappings = try relationshipMappings(entity, from: from, entities: matches)
            mappings.append(mapping)
        }
        for entity in source.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) where !matchedSources.contains(ObjectIdentifier(entity)) {
            let mapping = NSEntityMapping()
            mapping.name = entity.name
            mapping.mappingType = .removeEntityMappingType
            mapping.sourceEntityName = entity.name
            mapping.sourceEntityVersionHash = entity.versionHash
            mappings.append(mapping)
        }
        let model = NSMappingModel()
        model.entityMappings = mappings
        return model
    }

    /// Refuses two destination entities of one hierarchy whose source entities are in separate
    /// hierarchies: Core Data does not merge hierarchies (their rows live in separate tables,
    /// with keys that may collide).
    private func checkHierarchies(_ matches: [ObjectIdentifier: NSEntityDescription]) throws {
        var sourceRoots: [ObjectIdentifier: (root: NSEntityDescription, entity: NSEntityDescription)] = [:]
        for entity in destination.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            guard let from = matches[ObjectIdentifier(entity)] else { continue }
            let root = ObjectIdentifier(entity.rootEntity)
            if let seen = sourceRoots[root], seen.root !== from.rootEntity {
                throw Self.refusal(
                    "it shares the hierarchy of \(entity.rootEntity.name ?? "") with \(seen.entity.name ?? "") in the destination model, but their source entities (\(from.name ?? ""), \(seen.entity.name ?? "")'s) are in separate hierarchies, which can't be merged",
                    entity: entity.name ?? "")
            }
            sourceRoots[root] = (from.rootEntity, entity)
        }
    }

    private func storedAttributes(of entity: NSEntityDescription) -> [NSAttributeDescription] {
        entity.properties.compactMap { $0 as? NSAttributeDescription }.filter { !$0.isTransient }
    }

    private func storedRelationships(of entity: NSEntityDescription) -> [NSRelationshipDescription] {
        entity.properties.compactMap { $0 as? NSRelationshipDescription }.filter { !$0.isTransient }
    }

    private static func propertyMapping(_ name: String, from source: String?) -> NSPropertyMapping {
        let mapping = NSPropertyMapping()
        mapping.name = name
        mapping.sourcePropertyName = source
        mapping.valueExpression = source.map { NSExpression(format: "$source.\($0)") }
        return mapping
    }

    /// Whether lightweight migration converts an attribute of type `from` to type `to`, as
    /// Apple's inference does: the same type, any number type (Integer 16, 32 or 64, Decimal,
    /// Double, Float) to another, or a number to a Boolean and back.
    static func isInferable(_ from: NSAttributeType, to: NSAttributeType) -> Bool {
        let numbers: Set<NSAttributeType> = [.integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
                                             .decimalAttributeType, .doubleAttributeType, .floatAttributeType, .booleanAttributeType]
        return from == to || (numbers.contains(from) && numbers.contains(to))
    }

    private func attributeMappings(_ entity: NSEntityDescription, from: NSEntityDescription) throws -> [NSPropertyMapping] {
        let attributes = storedAttributes(of: entity)
        let matches = Self.match(attributes, in: storedAttributes(of: from), name: \.name, renamingIdentifier: \.renamingIdentifier)
        return try attributes.map { attribute in
            guard let old = matches[ObjectIdentifier(attribute)] else { return Self.propertyMapping(attribute.name, from: nil) }
            guard Self.isInferable(old.attributeType, to: attribute.attributeType) else {
                throw Self.refusal("Source and destination attribute types are incompatible", entity: entity.name ?? "", property: attribute.name,
                    detail: "its type changed from \(old.attributeType.typeName) to \(attribute.attributeType.typeName) (from \(from.name ?? "").\(old.name)); lightweight migration converts only numbers and Booleans")
            }
            if let composite = attribute as? NSCompositeAttributeDescription, let oldComposite = old as? NSCompositeAttributeDescription {
                try Self.checkElements(composite.elements, from: oldComposite.elements, path: attribute.name, entity: entity.name ?? "")
            }
            let mapping = Self.propertyMapping(attribute.name, from: old.name)
            if !attribute.isOptional, old.isOptional {
                // Apple's: the source's value, or the destination's default where it has none.
                mapping.valueExpression = NSExpression(format: #"FUNCTION($entityPolicy, "_nonNilValueOrDefaultValueForAttribute:source:destination:", %@, $source, $destination)"#, old.name)
            }
            return mapping
        }
    }

    /// Refuses a composite's element (matched at the same depth by renaming identifier, then by
    /// name) whose type changed in a way lightweight migration does not convert, or that became
    /// or stopped being a composite.
    private static func checkElements(_ elements: [NSAttributeDescription], from old: [NSAttributeDescription], path: String, entity: String) throws {
        let matches = elementMatches(elements, in: old)
        for element in elements {
            guard let match = matches[ObjectIdentifier(element)] else { continue }
            let elementPath = path + "." + element.name
            switch (element as? NSCompositeAttributeDescription, match as? NSCompositeAttributeDescription) {
            case let (nested?, oldNested?):
                try checkElements(nested.elements, from: oldNested.elements, path: elementPath, entity: entity)
            case (nil, nil) where isInferable(match.attributeType, to: element.attributeType):
                continue
            default:
                throw refusal("Source and destination attribute types are incompatible", entity: entity, property: elementPath,
                    detail: "the element's type changed from \(match.attributeType.typeName) to \(element.attributeType.typeName); lightweight migration converts only numbers and Booleans")
            }
        }
    }

    private func relationshipMappings(_ entity: NSEntityDescription, from: NSEntityDescription,
                                      entities: [ObjectIdentifier: NSEntityDescription]) throws -> [NSPropertyMapping] {
        let relationships = storedRelationships(of: entity)
        let matches = Self.match(relationships, in: storedRelationships(of: from), name: \.name, renamingIdentifier: \.renamingIdentifier)
        return try relationships.map { relationship in
            guard let old = matches[ObjectIdentifier(relationship)] else { return Self.propertyMapping(relationship.name, from: nil) }
            let target = relationship.destinationEntity.flatMap { entities[ObjectIdentifier($0)] }
            guard let target, let oldTarget = old.destinationEntity, target === oldTarget else {
                throw Self.refusal(
                    "it points to \(relationship.destinationEntity?.name ?? "nil"), whose source entity is not \(old.destinationEntity?.name ?? "nil"), the destination of \(from.name ?? "").\(old.name)",
                    entity: entity.name ?? "", property: relationship.name)
            }
            let mapping = Self.propertyMapping(relationship.name, from: old.name)
            // Apple's inferred relationship: the source's objects, through the migration's entity mappings.
            mapping.valueExpression = NSExpression(format: #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", %@, $source.\#(old.name))"#, old.name)
            return mapping
        }
    }
}

extension NSAttributeType {
    /// The type's name in Xcode's model editor, for messages.
    var typeName: String {
        switch self {
        case .undefinedAttributeType: return "Undefined"
        case .integer16AttributeType: return "Integer 16"
        case .integer32AttributeType: return "Integer 32"
        case .integer64AttributeType: return "Integer 64"
        case .decimalAttributeType: return "Decimal"
        case .doubleAttributeType: return "Double"
        case .floatAttributeType: return "Float"
        case .stringAttributeType: return "String"
        case .booleanAttributeType: return "Boolean"
        case .dateAttributeType: return "Date"
        case .binaryDataAttributeType: return "Binary Data"
        case .UUIDAttributeType: return "UUID"
        case .URIAttributeType: return "URI"
        case .transformableAttributeType: return "Transformable"
        case .objectIDAttributeType: return "Object ID"
        case .compositeAttributeType: return "Composite"
        }
    }
}
