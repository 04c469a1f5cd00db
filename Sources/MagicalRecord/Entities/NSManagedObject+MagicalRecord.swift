import CoreData
import Foundation

// MagicalRecord's `NSManagedObject (MagicalRecord)` category (2.3): the entity of a class,
// creating and deleting objects, running fetch requests, and moving an object to another
// context. Only the forms that take a context are here; the forms without one use
// MagicalRecord's default context.

extension NSManagedObject {
    /// The name of the entity MagicalRecord takes this class to be: the class's name without its
    /// module (`MyApp.Person` → `"Person"`), as MagicalRecord derives it from a Swift class.
    ///
    /// ```swift
    /// Person.mr_entityName()   // "Person"
    /// ```
    ///
    /// Linux difference: a class cannot supply its own `entityName` (mogenerator's class method,
    /// found through the Objective-C runtime on Apple platforms). The methods that take a context
    /// find the entity by its `managedObjectClassName` first (``mr_entityDescription(in:)``),
    /// so a class whose entity has another name still works there.
    public class func mr_entityName() -> String {
        String(describing: self)
    }

    /// The entity of this class in the context's model: the one whose `managedObjectClassName`
    /// names this class (as `init(context:)` finds it), else the one named ``mr_entityName()``;
    /// nil if there is neither.
    ///
    /// ```swift
    /// let entity = Person.mr_entityDescription(in: context)
    /// ```
    public class func mr_entityDescription(in context: NSManagedObjectContext) -> NSEntityDescription? {
        MagicalEntityLookup.noteClass(Self.self)
        guard let model = context.persistentStoreCoordinator?.managedObjectModel else { return nil }
        return MagicalEntityLookup.entity(of: self, in: model) ?? model.entitiesByName[mr_entityName()]
    }

    /// The descriptions of the named properties of this class's entity; a name the entity does not
    /// have is left out and logged, as MagicalRecord does.
    ///
    /// ```swift
    /// let properties = Person.mr_propertiesNamed(["name", "age"], in: context)
    /// ```
    public class func mr_propertiesNamed(_ properties: [String], in context: NSManagedObjectContext) -> [NSPropertyDescription]? {
        let byName = mr_entityDescription(in: context)?.propertiesByName ?? [:]
        return properties.compactMap { name in
            if let property = byName[name] { return property }
            MagicalRecordErrorReport.problem("Property '\(name)' not found in \(byName.count) properties for \(mr_entityName())")
            return nil
        }
    }

    /// Ascending sort descriptors, one per key, in order.
    ///
    /// ```swift
    /// request.sortDescriptors = Person.mr_ascendingSortDescriptors(["lastName", "firstName"])
    /// ```
    public class func mr_ascendingSortDescriptors(_ attributesToSortBy: [String]) -> [NSSortDescriptor] {
        attributesToSortBy.map { NSSortDescriptor(key: $0, ascending: true) }
    }

    /// Descending sort descriptors, one per key, in order.
    ///
    /// ```swift
    /// request.sortDescriptors = Person.mr_descendingSortDescriptors(["age"])
    /// ```
    public class func mr_descendingSortDescriptors(_ attributesToSortBy: [String]) -> [NSSortDescriptor] {
        attributesToSortBy.map { NSSortDescriptor(key: $0, ascending: false) }
    }

    // MARK: Fetching

    /// Runs a fetch request in the context, on the context's queue (`performAndWait`), and returns
    /// its results; nil if the fetch failed (its error is logged, as MagicalRecord's
    /// `handleErrors:` does).
    ///
    /// ```swift
    /// let people = Person.mr_executeFetchRequest(Person.mr_requestAll(in: context), in: context)
    /// ```
    public class func mr_executeFetchRequest(_ request: NSFetchRequest<NSFetchRequestResult>,
                                             in context: NSManagedObjectContext) -> [NSManagedObject]? {
        MagicalFetch.results(of: request, in: context)?.compactMap { $0 as? NSManagedObject }
    }

    /// Runs a fetch request limited to one result (it sets the request's `fetchLimit` to 1) and
    /// returns that result; nil if there is none or the fetch failed.
    ///
    /// ```swift
    /// let oldest = Person.mr_executeFetchRequestAndReturnFirstObject(request, in: context)
    /// ```
    public class func mr_executeFetchRequestAndReturnFirstObject(_ request: NSFetchRequest<NSFetchRequestResult>,
                                                                 in context: NSManagedObjectContext) -> Self? {
        request.fetchLimit = 1
        return MagicalFetch.results(of: request, in: context)?.first as? Self
    }

    // MARK: Creating and deleting

    /// Inserts a new object of this class's entity into the context; nil if the context's model
    /// has no entity for this class.
    ///
    /// ```swift
    /// let person = Person.mr_createEntity(in: context)
    /// ```
    ///
    /// Call it on the context's queue, as any insert (inside `perform`, or MagicalRecord's save
    /// blocks).
    @discardableResult
    public class func mr_createEntity(in context: NSManagedObjectContext) -> Self? {
        guard let entity = mr_entityDescription(in: context) else {
            MagicalRecordErrorReport.problem("No entity for class \(String(reflecting: self)) in the context's model")
            return nil
        }
        return self.init(entity: entity, insertInto: context)
    }

    /// Deletes the object from `context`: the object with the same ID there (this object itself
    /// when it lives there). Returns false, with the error logged, when the context has no such
    /// object (an object never saved, asked of another context).
    ///
    /// ```swift
    /// person.mr_deleteEntity(in: context)
    /// ```
    @discardableResult
    public func mr_deleteEntity(in context: NSManagedObjectContext) -> Bool {
        let target: NSManagedObject
        do {
            target = try context.existingObject(with: objectID)
        } catch {
            MagicalRecordErrorReport.handle(error, while: "Deleting \(objectID) in another context")
            return false
        }
        context.delete(target)
        return true
    }

    /// Deletes the object from its own context.
    ///
    /// ```swift
    /// person.mr_deleteEntity()
    /// ```
    @discardableResult
    public func mr_deleteEntity() -> Bool {
        guard let context = managedObjectContext else { return false }
        return mr_deleteEntity(in: context)
    }

    /// Deletes every object of this class's entity that matches the predicate (objects fetched as
    /// faults, without their values). Returns false when the fetch failed (its error is logged).
    ///
    /// ```swift
    /// Person.mr_deleteAll(matching: NSPredicate(format: "age < 18"), in: context)
    /// ```
    @discardableResult
    public class func mr_deleteAll(matching predicate: NSPredicate, in context: NSManagedObjectContext) -> Bool {
        deleteAll(fetchedBy: mr_requestAll(with: predicate, in: context), in: context)
    }

    /// Deletes every object of this class's entity in the context. Returns false when the fetch
    /// failed (its error is logged).
    ///
    /// ```swift
    /// Person.mr_truncateAll(in: context)
    /// ```
    @discardableResult
    public class func mr_truncateAll(in context: NSManagedObjectContext) -> Bool {
        deleteAll(fetchedBy: mr_requestAll(in: context), in: context)
    }

    private class func deleteAll(fetchedBy request: NSFetchRequest<NSFetchRequestResult>, in context: NSManagedObjectContext) -> Bool {
        request.returnsObjectsAsFaults = true
        request.includesPropertyValues = false
        guard let objects = mr_executeFetchRequest(request, in: context) else { return false }
        context.performAndWait {
            for object in objects { context.delete(object) }
        }
        return true
    }

    // MARK: Other contexts

    /// The same object in another context (MagicalRecord's `MR_inContext:`): an object not yet
    /// saved first gets its permanent ID in its own context, then `otherContext` gives its object
    /// for that ID (`existingObject(with:)`). Nil, with the error logged, when that fails.
    ///
    /// ```swift
    /// let personInBackground = person.mr_(in: backgroundContext)
    /// ```
    @discardableResult
    public func mr_(in otherContext: NSManagedObjectContext) -> Self? {
        if objectID.isTemporaryID, let own = managedObjectContext {
            do {
                try own.performAndWait { try own.obtainPermanentIDs(for: [self]) }
            } catch {
                MagicalRecordErrorReport.handle(error, while: "Obtaining a permanent ID for \(objectID)")
                return nil
            }
        }
        let id = objectID
        do {
            return try otherContext.performAndWait { try otherContext.existingObject(with: id) } as? Self
        } catch {
            MagicalRecordErrorReport.handle(error, while: "Finding \(id) in another context")
            return nil
        }
    }
}

/// How the finders find a class's entity in a model: by `managedObjectClassName`, with the rule
/// `init(context:)` uses (the module-qualified name, or the bare name, Xcode's `.Name` spelling
/// included; the qualified one wins when several entities name the class).
internal enum MagicalEntityLookup {
    /// Makes `objectClass` known to Core Data, as a typed request does: an entity whose class
    /// name is the class's bare name (`representedClassName="Person"`, as Xcode writes it) then
    /// makes instances of it, so the finders' `as? Self` keeps what they fetch. (Without it, a
    /// MagicalRecord request, untyped, would make plain `NSManagedObject`s, and an import would
    /// insert a second object for a record the store has.)
    static func noteClass<T: NSManagedObject>(_ objectClass: T.Type) {
        _ = NSFetchRequest<T>(entityName: "")
    }

    static func entity(of objectClass: NSManagedObject.Type, in model: NSManagedObjectModel) -> NSEntityDescription? {
        guard objectClass != NSManagedObject.self else { return nil }
        let qualified = String(reflecting: objectClass)
        let bare = String(describing: objectClass)
        func className(_ entity: NSEntityDescription) -> String? {
            guard let name = entity.managedObjectClassName else { return nil }
            return name.hasPrefix(".") ? String(name.dropFirst()) : name
        }
        let matches = model.entities.filter { className($0) == qualified || className($0) == bare }
        return matches.count == 1 ? matches[0] : matches.first { className($0) == qualified }
    }
}

/// Fetches as MagicalRecord runs them: on the context's queue, errors logged, nil for a failure.
internal enum MagicalFetch {
    static func results(of request: NSFetchRequest<NSFetchRequestResult>, in context: NSManagedObjectContext) -> [Any]? {
        do {
            return try context.performAndWait { try context.fetch(request) }
        } catch {
            MagicalRecordErrorReport.handle(error, while: "Fetching \(request.entityName ?? "an entity")")
            return nil
        }
    }

    static func count(of request: NSFetchRequest<NSFetchRequestResult>, in context: NSManagedObjectContext) -> Int {
        do {
            return try context.performAndWait { try context.count(for: request) }
        } catch {
            MagicalRecordErrorReport.handle(error, while: "Counting \(request.entityName ?? "an entity")")
            return 0
        }
    }
}

// MagicalRecord 2.3's deprecated names (`NSManagedObject (MagicalRecordDeprecated)`), which
// code written before 2.3 still calls.
extension NSManagedObject {
    /// MagicalRecord's deprecated name of ``mr_createEntity(in:)``.
    ///
    /// ```swift
    /// let person = Person.mr_create(in: context)
    /// ```
    @available(*, deprecated, renamed: "mr_createEntity(in:)", message: "Will be removed in MagicalRecord 4.0")
    public class func mr_create(in context: NSManagedObjectContext) -> Self? {
        mr_createEntity(in: context)
    }

    /// MagicalRecord's deprecated name of ``mr_deleteEntity(in:)``.
    ///
    /// ```swift
    /// person.mr_delete(in: context)
    /// ```
    @available(*, deprecated, renamed: "mr_deleteEntity(in:)", message: "Will be removed in MagicalRecord 4.0")
    @discardableResult
    public func mr_delete(in context: NSManagedObjectContext) -> Bool {
        mr_deleteEntity(in: context)
    }
}
