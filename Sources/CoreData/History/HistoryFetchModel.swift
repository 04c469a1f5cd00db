import Foundation

// The model behind `NSPersistentHistoryTransaction.fetchRequest` and
// `NSPersistentHistoryChange.fetchRequest`: Apple's public "PersistentFetchHistory" entities,
// `Transaction` and `Change`, whose keys a history request's fetch request filters on. The
// predicate is evaluated on the fetched transactions and changes (``PredicateKeyValueCoding``).

/// The two entities history fetch requests name; the model is frozen and never changes.
internal enum HistoryFetchModel {
    static let model: NSManagedObjectModel = {
        func entity(_ name: String, _ attributes: [(String, NSAttributeType)]) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.properties = attributes.map { name, type in
                let attribute = NSAttributeDescription()
                attribute.name = name
                attribute.attributeType = type
                return attribute
            }
            return entity
        }
        let model = NSManagedObjectModel()
        model.entities = [
            entity("Transaction", [("author", .stringAttributeType), ("bundleID", .stringAttributeType), ("contextName", .stringAttributeType),
                                   ("processID", .stringAttributeType), ("timestamp", .dateAttributeType),
                                   ("token", .integer64AttributeType), ("transactionNumber", .integer64AttributeType)]),
            entity("Change", [("changeID", .integer64AttributeType), ("changeType", .integer64AttributeType),
                              ("changedEntity", .integer64AttributeType), ("changedObjectID", .objectIDAttributeType)]),
        ]
        model.freeze()
        return model
    }()

    static var transaction: NSEntityDescription { model.entitiesByName["Transaction"]! }
    static var change: NSEntityDescription { model.entitiesByName["Change"]! }

    /// A fetch request for `entity`.
    static func request(_ entity: NSEntityDescription) -> NSFetchRequest<NSFetchRequestResult> {
        let request = NSFetchRequest<NSFetchRequestResult>()
        request.entity = entity
        return request
    }
}

extension NSPersistentHistoryTransaction: PredicateKeyValueCoding {
    func predicateValue(forKey key: String) -> Any? {
        switch key {
        case "author": return author
        case "bundleID": return bundleID
        case "contextName": return contextName
        case "processID": return processID
        case "timestamp": return timestamp
        case "token", "transactionNumber": return NSNumber(value: transactionNumber)
        default: return nil
        }
    }
    var predicateObjectID: NSManagedObjectID? { nil }
}

extension NSPersistentHistoryChange: PredicateKeyValueCoding {
    func predicateValue(forKey key: String) -> Any? {
        switch key {
        case "changeID": return NSNumber(value: changeID)
        case "changeType": return NSNumber(value: changeType.rawValue)
        case "changedEntity": return NSNumber(value: changedEntityNumber)
        case "changedObjectID": return changedObjectID
        case Self.changedEntityNameKey: return changedObjectID.entity.name
        default: return nil
        }
    }
    var predicateObjectID: NSManagedObjectID? { nil }

    /// The key a history filter compares `changedEntity` by when the predicate names entity
    /// descriptions: the changed entity's name (a control character first: no user key).
    static let changedEntityNameKey = "\u{1}changedEntityName"
}
