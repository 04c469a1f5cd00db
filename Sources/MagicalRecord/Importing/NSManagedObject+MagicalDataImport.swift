import CoreData
import Foundation

// MagicalRecord's `NSManagedObject (MagicalRecord_DataImport)` category (2.3): objects made or
// updated from imported data (dictionaries and arrays, as `JSONSerialization` gives them), as the
// model's user info describes it (`MagicalImportFunctions.swift` lists the keys). Only the forms
// that take a context are here.

extension NSManagedObject {
    /// Sets this object's attributes and relationships from `objectData` (a dictionary), as
    /// MagicalRecord imports: each attribute from the key its `mappedKeyName` names (else its
    /// name), converted to its type (see the user-info keys in `MagicalImportFunctions.swift`);
    /// each relationship from its key, each related object found by its primary attribute
    /// (`relatedByAttribute`, else `<entityName>ID`) and updated, or inserted, and imported in
    /// turn. Returns false when the object's ``MagicalRecordDataImportProtocol/shouldImport(_:)``
    /// declined.
    ///
    /// ```swift
    /// let data = try JSONSerialization.jsonObject(with: json)
    /// person.mr_importValuesForKeys(with: data)
    /// ```
    ///
    /// Bad data never stops the process: a key the data lacks leaves its property as it is, a date
    /// string that does not parse sets nil, a string where a number belongs sets its leading
    /// number (0 if none), and a value of another type is set as given, for the save's validation
    /// to refuse (`NSValidationErrorKey` names it). Related data that is neither a dictionary, a
    /// string nor a number is skipped and logged. Call it on the object's context's queue.
    @discardableResult
    public func mr_importValuesForKeys(with objectData: Any) -> Bool {
        let hooks = self as? any MagicalRecordDataImportProtocol
        if let hooks, !hooks.shouldImport(objectData) { return false }
        hooks?.willImport(objectData)
        for (name, attribute) in entity.attributesByName.sorted(by: { $0.key < $1.key }) {
            if let keyPath = attribute.mr_lookupKey(in: objectData) {
                setValue(attribute.mr_importedValue(atKeyPath: keyPath, in: objectData), forKey: name)
            } else if MagicalStringValue.bool("\(attribute.userInfo?[kMagicalRecordImportAttributeUseDefaultValueWhenNotPresent] ?? "")") {
                setValue(attribute.defaultValue, forKey: name)
            }
        }
        for (name, relationship) in entity.relationshipsByName.sorted(by: { $0.key < $1.key }) {
            let key = relationship.userInfo?[kMagicalRecordImportRelationshipMapKey] as? String ?? name
            guard let relatedData = MagicalImportFunctions.value(atKeyPath: key, in: objectData), !(relatedData is NSNull) else { continue }
            if relationship.isToMany, let list = relatedData as? [Any] {
                for element in list { importRelated(element, for: relationship) }
            } else {
                importRelated(relatedData, for: relationship)
            }
        }
        hooks?.didImport(objectData)
        return true
    }

    /// Finds (by its primary attribute) or inserts the object `data` describes and relates it.
    private func importRelated(_ data: Any, for relationship: NSRelationshipDescription) {
        let isDictionary = MagicalImportFunctions.isDictionary(data)
        guard isDictionary || MagicalImportFunctions.isNumber(data) || MagicalImportFunctions.isString(data),
              let destination = relationship.destinationEntity, let destinationName = destination.name,
              let context = managedObjectContext else {
            MagicalRecordErrorReport.problem("Importing \(entity.name ?? "").\(relationship.name): skipped \(type(of: data)) data (a dictionary, a string or a number was expected, for an object in a context)")
            return
        }
        let primaryKey = relationship.mr_primaryKey()
        let primary = destination.attributesByName[primaryKey]
        if !isDictionary && primary == nil {
            MagicalRecordErrorReport.problem("Importing \(entity.name ?? "").\(relationship.name): skipped \(data): \(destinationName) has no attribute \(primaryKey) to relate it by")
            return
        }
        var related: NSManagedObject?
        if primary != nil, let value = relationship.mr_relatedValue(in: data) {
            let request = NSFetchRequest<NSFetchRequestResult>()
            request.entity = destination
            request.predicate = MagicalPredicates.attribute(primaryKey, equals: value)
            request.fetchLimit = 1
            related = MagicalFetch.results(of: request, in: context)?.first as? NSManagedObject
        }
        let object = related ?? NSEntityDescription.insertNewObject(forEntityName: destinationName, into: context)
        if isDictionary {
            object.mr_importValuesForKeys(with: data)
        } else if let primary {
            object.setValue(primary.mr_converted(data), forKey: primaryKey)
        }
        if !relationship.isToMany {
            setValue(object, forKey: relationship.name)
        } else if relationship.isOrdered {
            mutableOrderedSetValue(forKey: relationship.name).add(object)
        } else {
            mutableSetValue(forKey: relationship.name).add(object)
        }
    }

    /// The object of this class's entity that `data` (a dictionary) describes, updated from it:
    /// the object whose primary attribute (the entity's `relatedByAttribute`, else
    /// `<entityName>ID`) has the data's value for it, or a new one inserted into the context.
    /// Runs on the context's queue (`performAndWait`).
    ///
    /// ```swift
    /// let data = try JSONSerialization.jsonObject(with: json)
    /// let person = Person.mr_import(from: data, in: context)
    /// ```
    ///
    /// Data that is not a dictionary (an array, `NSNull`, a string) is logged and nothing is
    /// inserted: the object returned is in no context. (MagicalRecord raises.)
    ///
    /// Linux difference: data without a value for the primary attribute makes a new object
    /// (MagicalRecord would update the first object whose primary attribute is nil). A class with
    /// no entity in the context's model is a programmer error and stops the process
    /// (MagicalRecord's declared non-nil result would be nil). So is an object found that is not
    /// of this class (the entity's class name names another, or `NSManagedObject`; or the
    /// context made it before this class was known): Swift cannot return it as this class, and
    /// a stand-in would lose what the caller then does with it. The process stops naming both
    /// after the data is imported into the found object; import through the array form (which
    /// returns `NSManagedObject`s), or set the entity's class.
    @discardableResult
    public class func mr_import(from data: Any, in context: NSManagedObjectContext) -> Self {
        context.performAndWait {
            guard let entity = mr_entityDescription(in: context) else {
                preconditionFailure("mr_import: no entity for class \(String(reflecting: self)) in the context's model")
            }
            guard let object = mr_importedObject(from: data, entity: entity, in: context) else {
                return self.init(entity: entity, insertInto: nil) // (not a dictionary: logged, nothing imported)
            }
            guard let typed = object as? Self else {
                preconditionFailure("mr_import: the \(entity.name ?? "") object \(object.objectID) is a \(type(of: object)), not a \(String(reflecting: self)); set the entity's class to \(String(reflecting: self)), or import through the array form")
            }
            return typed
        }
    }

    /// The object `data` describes, found by its primary attribute and updated, or inserted;
    /// `nil` for data that is not a dictionary (logged: nothing is imported).
    private class func mr_importedObject(from data: Any, entity: NSEntityDescription, in context: NSManagedObjectContext) -> NSManagedObject? {
        guard MagicalImportFunctions.isDictionary(data) else {
            MagicalRecordErrorReport.problem("mr_import: the data for \(entity.name ?? "") is not a dictionary (\(type(of: data))); nothing was imported")
            return nil
        }
        var existing: NSManagedObject?
        if let primary = entity.mr_primaryAttributeToRelateBy(), let keyPath = primary.mr_lookupKey(in: data),
           let value = primary.mr_importedValue(atKeyPath: keyPath, in: data) {
            let request = mr_requestFirst(byAttribute: primary.name, withValue: value, in: context)
            request.fetchLimit = 1
            existing = MagicalFetch.results(of: request, in: context)?.first as? NSManagedObject
        }
        let object = existing ?? self.init(entity: entity, insertInto: context)
        object.mr_importValuesForKeys(with: data)
        return object
    }

    /// The objects an array of dictionaries describes, each found and updated or inserted as
    /// `mr_import(from:in:)` does for one dictionary, in the array's order. An element that is not
    /// a dictionary is logged and left out.
    ///
    /// ```swift
    /// let list = try JSONSerialization.jsonObject(with: json) as? [Any] ?? []
    /// let people = Person.mr_import(from: list, in: context)
    /// ```
    @discardableResult
    public class func mr_import(from listOfObjectData: [Any], in context: NSManagedObjectContext) -> [NSManagedObject] {
        context.performAndWait {
            guard let entity = mr_entityDescription(in: context) else {
                preconditionFailure("mr_import: no entity for class \(String(reflecting: self)) in the context's model")
            }
            return listOfObjectData.compactMap { mr_importedObject(from: $0, entity: entity, in: context) }
        }
    }
}
