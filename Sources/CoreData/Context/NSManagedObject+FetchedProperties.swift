import Foundation

// Fetched properties (`NSFetchedPropertyDescription`): fetched in the object's context on the
// first read, then cached in the object (`_fetchedValues`) until the object is refreshed.
extension NSManagedObject {
    /// The value of the fetched property named `key`: what `value(forKey:)` and
    /// `primitiveValue(forKey:)` return for a key that is not an attribute or a relationship.
    /// A key that names no property at all stops the process, as those methods do.
    internal func fetchedPropertyValue(forKey key: String) -> Any? {
        guard let property = fetchedProperty(named: key) else { return nil }
        if let cached = _fetchedValues?[property.fetchedIndex] { return cached }
        // An object in no context (never inserted, or deleted and saved) has nothing to fetch in.
        guard let context = _context else { return [NSManagedObject]() }
        do {
            let value = try evaluate(property, in: context)
            var values = _fetchedValues ?? [:]
            values[property.fetchedIndex] = value
            _fetchedValues = values
            return value
        } catch {
            // Not cached: the next read tries again.
            Self.logFetchedPropertyError((error as NSError).localizedDescription)
            return [NSManagedObject]()
        }
    }

    /// `setValue(_:forKey:)` and `setPrimitiveValue(_:forKey:)` for a key that is not an attribute
    /// or a relationship: a fetched property is read-only, so the value is ignored (and said so).
    internal func setFetchedPropertyValue(_ value: Any?, forKey key: String) {
        guard let property = fetchedProperty(named: key) else { return }
        Self.logFetchedPropertyError("The fetched property '\(entity.name ?? "").\(property.name)' is read-only: the value set was ignored")
    }

    /// Forgets the fetched properties' values: they are fetched again at their next read.
    internal func forgetFetchedPropertyValues() {
        _fetchedValues = nil
    }

    /// The fetched property named `key`; stops the process (Apple's `valueForUndefinedKey:`) when
    /// the entity has no property of that name.
    private func fetchedProperty(named key: String) -> NSFetchedPropertyDescription? {
        if let property = layout.propertiesByName[key] as? NSFetchedPropertyDescription { return property }
        _ = propertyIndex(forKey: key) // not a property of the entity: stops the process
        return nil
    }

    /// Runs the property's fetch request in `context` with `$FETCH_SOURCE` (this object) and
    /// `$FETCHED_PROPERTY` (the description) bound.
    internal func evaluate(_ property: NSFetchedPropertyDescription, in context: NSManagedObjectContext) throws -> Any {
        let what = "The fetched property '\(entity.name ?? "").\(property.name)'"
        guard let template = property.fetchRequest else {
            throw CoreDataError.make(.coreData, "\(what) has no fetch request")
        }
        // The destination in the context's model (a copied model's request may name another model's entity).
        let entityName = template.entity?.name ?? template.entityName
        guard let entityName, let destination = context.model?.entity(named: entityName) else {
            throw CoreDataError.make(.coreData, "\(what) fetches '\(entityName ?? "")', which is not an entity of the context's model")
        }
        var predicate: NSPredicate?
        if let template = template.predicate {
            let tree = try template.predicateTree() // a malformed format throws its parse error
            do {
                predicate = NSPredicate.make(from: try tree.binding(["FETCH_SOURCE": self, "FETCHED_PROPERTY": property]))
            } catch let unbound as UnboundPredicateVariable {
                throw CoreDataError.make(.coreData, "\(what) uses $\(unbound.name) in its predicate, which has no value: a fetched property's predicate can use only $FETCH_SOURCE and $FETCHED_PROPERTY")
            }
        }
        func fetch<T>(_ type: T.Type) throws -> [T] {
            let request = template.copiedRequest(as: T.self)
            request.entity = destination
            request.predicate = predicate
            return try context.fetch(request)
        }
        if template.resultType == .managedObjectResultType { return try fetch(NSManagedObject.self) }
        return try fetch(Any.self)
    }

    private static func logFetchedPropertyError(_ message: String) {
        FileHandle.standardError.write(Data("CoreData: error:  \(message)\n".utf8))
    }
}

/// How `@Managed` accessors (`Managed.swift`) name a fetched property: a negative number, which
/// no attribute or relationship index can be, made from its ``NSFetchedPropertyDescription/fetchedIndex``.
internal enum FetchedPropertyIndex {
    static func managedIndex(of property: NSFetchedPropertyDescription) -> Int { -2 - property.fetchedIndex }
    static func isFetched(_ managedIndex: Int) -> Bool { managedIndex < -1 }
    static func property(at managedIndex: Int, in layout: EntityLayout) -> NSFetchedPropertyDescription {
        layout.fetchedProperties[-2 - managedIndex]
    }
}
