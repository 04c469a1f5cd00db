import Foundation

/// How a store written with one model (the source) becomes a store of another (the destination):
/// Apple's `NSMappingModel`, a list of entity mappings.
///
/// Core Data infers one for simple changes (lightweight migration): see
/// ``inferredMappingModel(forSourceModel:destinationModel:)``. A store added with
/// `NSMigratePersistentStoresAutomaticallyOption` and `NSInferMappingModelAutomaticallyOption`
/// is migrated with it, in place, when it was written with another version of the model.
///
/// ```swift
/// let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
/// print(mapping.entityMappingsByName.keys.sorted())
/// ```
open class NSMappingModel: NSObject {
    /// The entity mappings, in order.
    open var entityMappings: [NSEntityMapping]! = []

    /// The entity mappings by name.
    open var entityMappingsByName: [String: NSEntityMapping] {
        var byName: [String: NSEntityMapping] = [:]
        for mapping in entityMappings ?? [] {
            if let name = mapping.name, byName[name] == nil { byName[name] = mapping }
        }
        return byName
    }

    /// An empty mapping model.
    ///
    /// ```swift
    /// let mapping = NSMappingModel()
    /// mapping.entityMappings = [NSEntityMapping()]
    /// ```
    public override init() {
        super.init()
    }

    /// The mapping model Core Data infers from the differences between two models, with Apple's
    /// rules for lightweight migration.
    ///
    /// Entities and properties are matched by their `renamingIdentifier` (or name, when they have
    /// none), then by name. Inferred: entities added, removed or renamed; attributes and
    /// relationships added, removed or renamed; optionality changes; relationships changing
    /// between to-one and to-many, or ordered and unordered; an entity moving out of its
    /// hierarchy or into a new parent. An attribute's type may change from any number type
    /// (Integer 16, 32, 64, Decimal, Double, Float) to another, or between a number and a Boolean.
    ///
    /// Throws `NSInferredMappingModelError` (134190) for anything else, naming the entity and
    /// property in its message and under the user-info keys `entity`, `property` and `reason`:
    /// another attribute type change ("Source and destination attribute types are
    /// incompatible"), a relationship pointing to another entity, two entities of separate
    /// hierarchies brought into one.
    ///
    /// ```swift
    /// do {
    ///     let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
    ///     print(mapping.entityMappings.count)
    /// } catch let error as NSError where error.code == NSInferredMappingModelError {
    ///     print(error.userInfo["reason"] ?? "")
    /// }
    /// ```
    open class func inferredMappingModel(forSourceModel sourceModel: NSManagedObjectModel,
                                         destinationModel: NSManagedObjectModel) throws -> NSMappingModel {
        try InferredMapping(source: sourceModel, destination: destinationModel).mappingModel()
    }

    open override var description: String {
        "(<NSMappingModel>) entityMappings: \((entityMappings ?? []).map { $0.name ?? "nil" })"
    }
}
