import Foundation

/// The key of the migration manager in a mapping's expressions (`$manager`).
public let NSMigrationManagerKey = "manager"
/// The key of the source instance in a mapping's expressions (`$source`).
public let NSMigrationSourceObjectKey = "source"
/// The key of the destination instance in a mapping's expressions (`$destination`).
public let NSMigrationDestinationObjectKey = "destination"
/// The key of the entity mapping in a mapping's expressions (`$entityMapping`).
public let NSMigrationEntityMappingKey = "entityMapping"
/// The key of the property mapping in a mapping's expressions (`$propertyMapping`).
public let NSMigrationPropertyMappingKey = "propertyMapping"
/// The key of the entity migration policy in a mapping's expressions (`$entityPolicy`).
public let NSMigrationEntityPolicyKey = "entityPolicy"

/// The stages an ``NSMigrationManager`` runs for one entity mapping, in Apple's order:
/// ``begin(_:with:)``, ``createDestinationInstances(forSource:in:manager:)`` for each source
/// instance, ``endInstanceCreation(forMapping:manager:)``,
/// ``createRelationships(forDestination:in:manager:)`` for each destination instance,
/// ``endRelationshipCreation(forMapping:manager:)``, ``performCustomValidation(forMapping:manager:)``
/// and ``end(_:manager:)``.
///
/// Subclass it to change how objects migrate, and name the subclass in the entity mapping's
/// `entityMigrationPolicyClassName` with its module (`MyApp.AttachmentPolicy`): the manager
/// finds it by that name (`NSClassFromString`, no Objective-C runtime needed) and makes one
/// instance per entity mapping with `init()`.
///
/// Linux has no Objective-C message sending, so `FUNCTION($entityPolicy, "toInt16WithValue:", $source.x)`
/// in a mapping's value expression calls ``perform(_:arguments:)`` with the selector's name and
/// the evaluated arguments; a subclass overrides it to answer its selectors:
///
/// ```swift
/// final class AttachmentPolicy: NSEntityMigrationPolicy {
///     override func perform(_ selector: String, arguments: [Any?]) throws -> Any? {
///         switch selector {
///         case "toInt16WithValue:": return NSNumber(value: Int16(truncatingIfNeeded: (arguments[0] as? NSNumber)?.intValue ?? 0))
///         default: return try super.perform(selector, arguments: arguments)
///         }
///     }
///     override func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping,
///                                              manager: NSMigrationManager) throws {
///         try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
///         let note = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance]).first
///         note?.setValue("migrated", forKey: "title")
///     }
/// }
/// ```
open class NSEntityMigrationPolicy: NSObject {
    /// The manager running the migration: set while it runs, for ``perform(_:arguments:)``'s errors.
    internal weak var runningManager: NSMigrationManager?
    /// The attribute whose value is being computed (for `_nonNilValueOrDefaultValueForAttribute:source:destination:`).
    internal var currentAttribute: NSAttributeDescription?

    /// Makes a policy; the manager makes one per entity mapping.
    ///
    /// ```swift
    /// let policy = NSEntityMigrationPolicy()
    /// ```
    public required override init() {
        super.init()
    }

    /// Called before anything else of the entity mapping. Does nothing by default.
    ///
    /// ```swift
    /// override func begin(_ mapping: NSEntityMapping, with manager: NSMigrationManager) throws { count = 0 }
    /// ```
    open func begin(_ mapping: NSEntityMapping, with manager: NSMigrationManager) throws {}

    /// Makes the destination instances of one source instance. By default: inserts one object
    /// of the mapping's destination entity into `manager.destinationContext`, sets each attribute
    /// from its property mapping's `valueExpression` (evaluated with `$source`, `$destination`,
    /// `$manager`, `$entityMapping`, `$propertyMapping` and `$entityPolicy`; a mapping without an
    /// expression copies the source's attribute of the same name, if any), and associates the two.
    /// An override that does not call `super` must call
    /// ``NSMigrationManager/associate(sourceInstance:withDestinationInstance:for:)`` itself.
    ///
    /// ```swift
    /// try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    /// ```
    open func createDestinationInstances(forSource sInstance: NSManagedObject, in mapping: NSEntityMapping,
                                         manager: NSMigrationManager) throws {
        guard let entity = manager.destinationEntity(for: mapping) else {
            throw MigrationErrors.policy("Entity mapping \(mapping.name ?? "nil") has no destination entity \(mapping.destinationEntityName ?? "nil") in the destination model")
        }
        let destination = NSManagedObject(entity: entity, insertInto: manager.destinationContext)
        for property in mapping.attributeMappings ?? [] {
            guard let name = property.name, let attribute = entity.attributesByName[name] else { continue }
            // A composite's dictionary fits the destination's elements (CompositeValues.migrated).
            func fitted(_ value: Any?) -> Any? {
                guard let composite = attribute as? NSCompositeAttributeDescription else { return value }
                let source = (sInstance.entity.attributesByName[property.sourcePropertyName ?? name] as? NSCompositeAttributeDescription)?.elements
                return CompositeValues.migrated(value, from: source, to: composite.elements, over: destination.value(forKey: name) as? [String: Any])
            }
            if let expression = property.valueExpression {
                let context = expressionContext(source: sInstance, destination: destination, mapping: mapping, property: property, manager: manager)
                currentAttribute = attribute
                destination.setValue(fitted(expression.value(with: nil, variables: context)), forKey: name)
                currentAttribute = nil
                try manager.throwIfCancelled()
            } else if sInstance.entity.attributesByName[name] != nil {
                destination.setValue(fitted(sInstance.value(forKey: name)), forKey: name)
            }
        }
        manager.associate(sourceInstance: sInstance, withDestinationInstance: destination, for: mapping)
    }

    /// Called after every source instance of the mapping has its destination instances. Does nothing by default.
    ///
    /// ```swift
    /// override func endInstanceCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}
    /// ```
    open func endInstanceCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Sets the relationships of one destination instance. By default: finds its single source
    /// instance and sets each relationship from its property mapping's `valueExpression`; a mapping
    /// without an expression maps the source's relationship of the same name, if any, through
    /// every entity mapping its objects went through. Throws `NSMigrationError` (134110) when the
    /// destination has no source or several, or a to-one relationship gets several objects.
    ///
    /// ```swift
    /// try super.createRelationships(forDestination: dInstance, in: mapping, manager: manager)
    /// ```
    open func createRelationships(forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping,
                                  manager: NSMigrationManager) throws {
        let sources = manager.sourceInstances(forEntityMappingName: mapping.name, destinationInstances: [dInstance])
        guard sources.count == 1, let source = sources.first else {
            throw MigrationErrors.migration(sources.isEmpty ? "Can't find source for destination in default mapping policy"
                                                            : "More than one source for destination in default mapping policy",
                                            ["destination": dInstance])
        }
        for property in mapping.relationshipMappings ?? [] {
            guard let name = property.name, let relationship = dInstance.entity.relationshipsByName[name] else { continue }
            let value: Any?
            if let expression = property.valueExpression {
                let context = expressionContext(source: source, destination: dInstance, mapping: mapping, property: property, manager: manager)
                manager.currentDestinationRelationship = relationship
                value = expression.value(with: nil, variables: context)
                manager.currentDestinationRelationship = nil
                try manager.throwIfCancelled()
            } else if source.entity.relationshipsByName[name] != nil {
                value = manager.destinationInstances(forSourceRelationshipValue: source.value(forKey: name), to: relationship)
            } else {
                continue
            }
            try MigrationRelationships.set(value, of: relationship, on: dInstance, mapping: mapping, property: property)
        }
    }

    /// Called after every destination instance of the mapping has its relationships. Does nothing by default.
    ///
    /// ```swift
    /// override func endRelationshipCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}
    /// ```
    open func endRelationshipCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Checks the migrated objects beyond the model's own validation. Does nothing by default.
    ///
    /// ```swift
    /// override func performCustomValidation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}
    /// ```
    open func performCustomValidation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Called last for the mapping. Does nothing by default.
    ///
    /// ```swift
    /// override func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws {}
    /// ```
    open func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Answers `FUNCTION($entityPolicy, "selector:", arguments…)` in a mapping's expressions: the
    /// Linux stand-in for Objective-C's message sending. `arguments` are the evaluated arguments
    /// (numbers as `NSNumber`, to-many values as arrays). Throws `NSEntityMigrationPolicyError`
    /// (134170) by default; override it to answer the selectors your mapping model uses. An error
    /// it throws fails the migration with that error.
    ///
    /// ```swift
    /// override func perform(_ selector: String, arguments: [Any?]) throws -> Any? {
    ///     selector == "uppercase:" ? (arguments[0] as? String)?.uppercased() : try super.perform(selector, arguments: arguments)
    /// }
    /// ```
    open func perform(_ selector: String, arguments: [Any?]) throws -> Any? {
        throw MigrationErrors.policy("\(String(reflecting: type(of: self))) does not answer the selector '\(selector)' (override perform(_:arguments:))")
    }

    /// The variables of a value expression, by Apple's keys.
    private func expressionContext(source: NSManagedObject, destination: NSManagedObject, mapping: NSEntityMapping,
                                   property: NSPropertyMapping, manager: NSMigrationManager) -> [String: Any] {
        [NSMigrationManagerKey: manager, NSMigrationSourceObjectKey: source, NSMigrationDestinationObjectKey: destination,
         NSMigrationEntityMappingKey: mapping, NSMigrationPropertyMappingKey: property, NSMigrationEntityPolicyKey: self]
    }
}

extension NSEntityMigrationPolicy: ExpressionMethodReceiver {
    func invokeExpressionMethod(_ selector: String, arguments: [Any?]) -> Any? {
        // Apple's private method of inferred mappings (an optional attribute made non-optional):
        // the source's attribute, or the default of the attribute being set where it is nil.
        if selector == "_nonNilValueOrDefaultValueForAttribute:source:destination:", arguments.count == 3,
           let name = arguments[0] as? String, let source = arguments[1] as? NSManagedObject {
            return source.value(forKey: name) ?? currentAttribute?.defaultValue
        }
        do {
            return try perform(selector, arguments: arguments)
        } catch {
            runningManager?.cancelMigrationWithError(error)
            return nil
        }
    }
}
