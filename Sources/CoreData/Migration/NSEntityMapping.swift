import Foundation

/// What an entity mapping does with its entity: Apple's `NSEntityMappingType`, with Apple's values.
///
/// ```swift
/// if mapping.mappingType == .addEntityMappingType { print("new entity", mapping.destinationEntityName ?? "") }
/// ```
public enum NSEntityMappingType: UInt, Sendable {
    /// A mapping whose type has not been set.
    case undefinedEntityMappingType = 0x00
    /// A mapping whose instances a custom migration policy makes.
    case customEntityMappingType = 0x01
    /// An entity new in the destination model.
    case addEntityMappingType = 0x02
    /// An entity of the source model that the destination model lacks.
    case removeEntityMappingType = 0x03
    /// An entity copied unchanged.
    case copyEntityMappingType = 0x04
    /// An entity whose instances are copied with changes (a property added, removed, renamed…).
    case transformEntityMappingType = 0x05
}

/// How the instances of one source entity become instances of one destination entity in a
/// migration: Apple's `NSEntityMapping`.
///
/// ```swift
/// let model = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
/// for mapping in model.entityMappings {
///     print(mapping.name ?? "", mapping.mappingType, mapping.sourceEntityName ?? "-", "→", mapping.destinationEntityName ?? "-")
/// }
/// ```
open class NSEntityMapping: NSObject {
    /// The mapping's name: in an inferred mapping `<Source>To<Destination>` for a kept entity,
    /// the destination entity's name for an added one, the source entity's for a removed one.
    open var name: String!
    /// What the mapping does.
    open var mappingType: NSEntityMappingType = .undefinedEntityMappingType
    /// The name of the source entity (`nil` for an added entity).
    open var sourceEntityName: String?
    /// The version hash of the source entity.
    open var sourceEntityVersionHash: Data?
    /// The name of the destination entity (`nil` for a removed entity).
    open var destinationEntityName: String?
    /// The version hash of the destination entity.
    open var destinationEntityVersionHash: Data?
    /// The mappings of the destination entity's attributes.
    open var attributeMappings: [NSPropertyMapping]?
    /// The mappings of the destination entity's relationships.
    open var relationshipMappings: [NSPropertyMapping]?
    /// The expression that fetches the source instances (`nil` in an inferred mapping: the
    /// in-place migration reads the source entity's rows itself). The migration manager runs the
    /// form Xcode writes, `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:",
    /// "Note", "archived == NO"), $manager.sourceContext, NO)`, and refuses another (134110).
    open var sourceExpression: NSExpression?
    /// The filter of the source instances a mapping model file gives (`sourcefilterpredicatestring`),
    /// kept as written for the migration manager: Apple's compiled model folds it into
    /// ``sourceExpression`` (`FETCH(…)`), which this package leaves `nil`.
    internal var sourceFilterPredicate: String?
    /// Information of the mapping's author.
    open var userInfo: [AnyHashable: Any]?
    /// The name of the `NSEntityMigrationPolicy` subclass that runs the mapping (`nil` for the default).
    open var entityMigrationPolicyClassName: String?

    /// An empty entity mapping.
    ///
    /// ```swift
    /// let mapping = NSEntityMapping()
    /// mapping.name = "CarToAutomobile"
    /// mapping.mappingType = .transformEntityMappingType
    /// ```
    public override init() {
        super.init()
    }

    open override var description: String {
        "(<NSEntityMapping>) name: \(name ?? "nil"), mappingType: \(mappingType.rawValue), sourceEntityName: \(sourceEntityName ?? "nil"), destinationEntityName: \(destinationEntityName ?? "nil")"
    }
}
