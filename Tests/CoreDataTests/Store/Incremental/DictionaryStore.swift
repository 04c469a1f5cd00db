import CoreData
import Foundation

// A store written the way an app writes one for Apple's Core Data: only the public API (this
// file does not import CoreData with @testable). Its records live in dictionaries, keyed by
// reference objects that are UUID strings; each record holds its attributes, its to-ones as
// references and its to-manys as lists of references, and a version it adds one to at each save.
// It answers fetches itself (predicate, sort descriptors, offset, limit), as Apple requires.

/// An `NSIncrementalStore` of dictionaries.
final class DictionaryStore: NSIncrementalStore, @unchecked Sendable {
    static let storeType = "DictionaryStore"

    struct Record {
        var entityName: String
        var values: [String: Any] = [:]
        /// To-one relationships by name: the related record's reference; to-many: the references in order.
        var toOne: [String: String] = [:]
        var toMany: [String: [String]] = [:]
        var version: UInt64 = 1
    }

    /// The records, by reference.
    var records: [String: Record] = [:]
    /// How many times each callback ran (for the tests).
    var calls: [String: Int] = [:]
    /// The context each callback was last handed (for the tests).
    var contexts: [String: ObjectIdentifier] = [:]
    /// The entity of each ID `newValuesForObject` was asked for, in order (for the tests).
    var askedEntities: [String] = []
    /// Thrown by the next save's `execute`, before it writes anything (for the tests).
    var failNextSave: NSError?
    /// Whether nodes leave out to-one relationships, for `newValue(forRelationship:…)` to give them.
    var lazyToOnes = false
    /// Whether to-many relationships come back as `NSOrderedSet`s, and nil values (attributes
    /// and to-ones) as Swift `nil`s in the node's `Any` values (as a store built on optionals does).
    var swiftyValues = false
    /// Whether every record stays at version 1, as many stores written for Apple's Core Data do.
    var constantVersions = false
    /// How many contexts use each record (`managedObjectContextDidRegisterObjects(with:)` adds one
    /// per ID, `…DidUnregister…` takes one); a record at 0 is left out (for the tests).
    var interest: [String: Int] = [:]
    /// Temporary IDs, or counts that went below 0, that the registration callbacks met (for the tests).
    var registrationMistakes: [String] = []
    /// Run at each registration callback, after counting (for the tests: a store that calls back).
    var onRegistration: (@Sendable () -> Void)?
    /// Run at the start of each `execute` (for the tests: something that happens inside a store request).
    var onExecute: (@Sendable () -> Void)?
    /// Returned by the next `execute` in place of its answer (for the tests: a store that answers wrongly).
    var nextResult: Any?
    /// The `lockedObjects` of the last save request, by reference (for the tests).
    var lastLocked: [String] = []
    /// The transactions the store makes up, one per save and batch insert, for history requests.
    var transactions: [Transaction] = []

    static func register() {
        NSPersistentStoreCoordinator.registerStoreClass(DictionaryStore.self, forStoreType: storeType)
    }

    override func loadMetadata() throws {
        calls["loadMetadata", default: 0] += 1
        metadata = [NSStoreTypeKey: Self.storeType, NSStoreUUIDKey: Self.identifierForNewStore(at: url!)]
    }

    private var model: NSManagedObjectModel { persistentStoreCoordinator!.managedObjectModel }

    private func reference(_ id: NSManagedObjectID) -> String { referenceObject(for: id) as! String }

    private func id(_ reference: String) -> NSManagedObjectID {
        newObjectID(for: model.entitiesByName[records[reference]!.entityName]!, referenceObject: reference)
    }

    // MARK: Fetching

    override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        calls["execute", default: 0] += 1
        onExecute?()
        contexts["execute"] = context.map(ObjectIdentifier.init)
        if let result = nextResult {
            nextResult = nil
            return result
        }
        if let save = request as? NSSaveChangesRequest { return try execute(save, by: context) }
        if let delete = request as? NSBatchDeleteRequest { return try execute(delete) }
        if let update = request as? NSBatchUpdateRequest { return try execute(update) }
        if let insert = request as? NSBatchInsertRequest { return try execute(insert, by: context) }
        if let history = request as? NSPersistentHistoryChangeRequest { return try execute(history) }
        guard let fetch = request as? NSFetchRequest<NSFetchRequestResult>, let entity = fetch.entity, let context else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreInvalidTypeError)
        }
        var objects = records.filter { _, record in
            let recordEntity = model.entitiesByName[record.entityName]!
            return recordEntity === entity || (fetch.includesSubentities && recordEntity.isKindOf(entity: entity))
        }.keys.sorted().map { context.object(with: id($0)) }
        if let predicate = fetch.predicate { objects = objects.filter { predicate.evaluate(with: $0) } }
        if let sorts = fetch.sortDescriptors, !sorts.isEmpty {
            objects.sort { a, b in
                for sort in sorts {
                    let order = Self.compare(a.value(forKeyPath: sort.key!), b.value(forKeyPath: sort.key!))
                    if order != .orderedSame { return sort.ascending ? order == .orderedAscending : order == .orderedDescending }
                }
                return false
            }
        }
        objects = Array(objects.dropFirst(fetch.fetchOffset))
        if fetch.fetchLimit > 0 { objects = Array(objects.prefix(fetch.fetchLimit)) }
        switch fetch.resultType {
        case .countResultType: return [NSNumber(value: objects.count)]
        case .managedObjectIDResultType: return objects.map(\.objectID)
        case .managedObjectResultType: return objects
        case .dictionaryResultType:
            // Plain properties only (no grouping): each object's values by name, to-ones as IDs.
            let names = (fetch.propertiesToFetch ?? Array(entity.attributesByName.keys)).compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }
            return objects.map { object in
                var dictionary: [String: Any] = [:]
                for name in names {
                    dictionary[name] = (object.value(forKey: name) as? NSManagedObject)?.objectID ?? object.value(forKey: name)
                }
                return dictionary
            }
        default: throw NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreOperationError)
        }
    }

    static func compare(_ a: Any?, _ b: Any?) -> ComparisonResult {
        switch (a, b) {
        case (nil, nil): return .orderedSame
        case (nil, _): return .orderedAscending
        case (_, nil): return .orderedDescending
        case let (x as String, y as String): return x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending)
        case let (x as Date, y as Date): return x.compare(y)
        case let (x as NSNumber, y as NSNumber): return x.compare(y)
        default: return .orderedSame
        }
    }

    override func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext) throws -> NSIncrementalStoreNode {
        calls["newValuesForObject", default: 0] += 1
        contexts["newValuesForObject"] = ObjectIdentifier(context)
        askedEntities.append(objectID.entity.name ?? "?")
        guard let record = records[reference(objectID)] else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSManagedObjectReferentialIntegrityError)
        }
        var values = record.values
        for relationship in objectID.entity.relationshipsByName.values where !relationship.isToMany && !lazyToOnes {
            values[relationship.name] = record.toOne[relationship.name].map { id($0) } ?? (swiftyValues ? (nil as NSManagedObjectID?) as Any : NSNull())
        }
        if swiftyValues {
            for attribute in objectID.entity.attributesByName.keys where values[attribute] == nil || values[attribute] is NSNull {
                values[attribute] = (nil as String?) as Any
            }
        }
        return NSIncrementalStoreNode(objectID: objectID, withValues: values, version: record.version)
    }

    override func newValue(forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
                           with context: NSManagedObjectContext?) throws -> Any {
        calls["newValueForRelationship", default: 0] += 1
        contexts["newValueForRelationship"] = context.map(ObjectIdentifier.init)
        guard let record = records[reference(objectID)] else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSManagedObjectReferentialIntegrityError)
        }
        if relationship.isToMany {
            let ids = (record.toMany[relationship.name] ?? []).filter { records[$0] != nil }.map { id($0) }
            return swiftyValues ? NSOrderedSet(array: ids) : ids
        }
        return record.toOne[relationship.name].map { id($0) } ?? NSNull()
    }

    // MARK: Which objects contexts use

    override func managedObjectContextDidRegisterObjects(with objectIDs: [NSManagedObjectID]) {
        count(objectIDs, by: 1)
    }

    override func managedObjectContextDidUnregisterObjects(with objectIDs: [NSManagedObjectID]) {
        count(objectIDs, by: -1)
    }

    private func count(_ objectIDs: [NSManagedObjectID], by change: Int) {
        for id in objectIDs {
            guard !id.isTemporaryID, id.persistentStore === self else { registrationMistakes.append("\(id)"); continue }
            let key = reference(id)
            let count = interest[key, default: 0] + change
            if count < 0 { registrationMistakes.append("\(key) below 0") }
            interest[key] = count == 0 ? nil : count
        }
        onRegistration?()
    }

    // MARK: Batch requests (attribute predicates only, evaluated on the records' values)

    private func matching(_ entity: NSEntityDescription, _ predicate: NSPredicate?) -> [String] {
        records.filter { _, record in
            model.entitiesByName[record.entityName]!.isKindOf(entity: entity)
                && (predicate?.evaluate(with: record.values as NSDictionary) ?? true)
        }.keys.sorted()
    }

    private func execute(_ delete: NSBatchDeleteRequest) throws -> Any {
        let entity = delete.fetchRequest.entity ?? model.entitiesByName[delete.fetchRequest.entityName ?? ""]!
        let keys = matching(entity, delete.fetchRequest.predicate)
        let ids = keys.map { id($0) }
        for key in keys { records[key] = nil }
        switch delete.resultType {
        case .resultTypeObjectIDs: return ids
        case .resultTypeCount: return keys.count
        default: return true
        }
    }

    private func execute(_ update: NSBatchUpdateRequest) throws -> Any {
        let entity = update.entity ?? model.entitiesByName[update.entityName]!
        let keys = matching(entity, update.predicate)
        for key in keys {
            for (name, value) in update.propertiesToUpdate ?? [:] {
                let newValue = (value as? CoreData.NSExpression)?.expressionValue(with: records[key]!.values as NSDictionary, context: nil) ?? value
                records[key]!.values[(name as? String) ?? (name as? NSPropertyDescription)?.name ?? ""] = newValue
            }
            records[key]!.version += 1
        }
        switch update.resultType {
        case .updatedObjectIDsResultType: return keys.map { id($0) }
        case .updatedObjectsCountResultType: return keys.count
        default: return true
        }
    }

    /// Inserts the request's dictionaries (a list of objects only; a handler is not answered).
    private func execute(_ insert: NSBatchInsertRequest, by context: NSManagedObjectContext?) throws -> Any {
        guard let objects = insert.objectsToInsert else { throw NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreInvalidTypeError) }
        let entityName = insert.entity?.name ?? insert.entityName
        let keys = objects.map { values in
            let key = UUID().uuidString
            records[key] = Record(entityName: entityName, values: values)
            return key
        }
        log(by: context)
        switch insert.resultType {
        case .objectIDs: return keys.map { id($0) }
        case .count: return keys.count
        default: return true
        }
    }

    // MARK: History (the transactions the store makes up)

    /// A transaction of the store: what Apple's API lets a store report, by overriding.
    final class Transaction: NSPersistentHistoryTransaction {
        let number: Int64
        let store: String
        let date = Date()
        let madeBy: String?

        init(number: Int64, store: String, author: String?) {
            self.number = number
            self.store = store
            madeBy = author
            super.init()
        }

        override var transactionNumber: Int64 { number }
        override var storeID: String { store }
        override var timestamp: Date { date }
        override var author: String? { madeBy }
    }

    /// The store's answer to the default result type (transactions and changes; its transactions
    /// have none): a result of its own, as a store written for Apple's Core Data returns.
    final class HistoryResult: NSPersistentHistoryResult {
        let transactions: [Transaction]

        init(_ transactions: [Transaction]) {
            self.transactions = transactions
            super.init()
        }

        override var result: Any? { transactions }
        override var resultType: NSPersistentHistoryResultType { .transactionsAndChanges }
    }

    private func log(by context: NSManagedObjectContext?) {
        transactions.append(Transaction(number: Int64(transactions.count + 1), store: identifier, author: context?.transactionAuthor))
    }

    /// The transactions after the request's token (all without one): the default result type as
    /// a result of the store's own, the transactions, a count or a status as the value alone.
    private func execute(_ history: NSPersistentHistoryChangeRequest) throws -> Any {
        let start = history.token.flatMap { token in transactions.firstIndex { $0.token == token }.map { $0 + 1 } } ?? 0
        let after = Array(transactions[start...])
        switch history.resultType {
        case .transactionsAndChanges: return HistoryResult(after)
        case .transactionsOnly: return after
        case .count: return after.count
        case .statusOnly: return true
        default: throw NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreInvalidTypeError)
        }
    }

    // MARK: Saving

    override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        calls["obtainPermanentIDs", default: 0] += 1
        return array.map { newObjectID(for: $0.entity, referenceObject: UUID().uuidString) }
    }

    private func execute(_ save: NSSaveChangesRequest, by context: NSManagedObjectContext?) throws -> Any {
        if let failure = failNextSave {
            failNextSave = nil
            throw failure
        }
        log(by: context)
        lastLocked = (save.lockedObjects ?? []).map { reference($0.objectID) }
        for object in save.insertedObjects ?? [] {
            records[reference(object.objectID)] = record(of: object, version: 1)
        }
        for object in save.updatedObjects ?? [] {
            let key = reference(object.objectID)
            records[key] = record(of: object, version: constantVersions ? 1 : (records[key]?.version ?? 0) + 1)
        }
        for object in save.deletedObjects ?? [] { records[reference(object.objectID)] = nil }
        return [Any]()
    }

    private func record(of object: NSManagedObject, version: UInt64) -> Record {
        var record = Record(entityName: object.entity.name!, version: version)
        for (name, property) in object.entity.propertiesByName where !property.isTransient {
            switch (property, object.value(forKey: name)) {
            case (is NSAttributeDescription, let value?): record.values[name] = value
            case (let relationship as NSRelationshipDescription, let value?):
                if relationship.isToMany {
                    let members: [NSManagedObject]
                    if let ordered = value as? NSOrderedSet { members = ordered.array.compactMap { $0 as? NSManagedObject } }
                    else { members = ((value as? Set<NSManagedObject>) ?? []).sorted { reference($0.objectID) < reference($1.objectID) } }
                    record.toMany[name] = members.map { reference($0.objectID) }
                } else if let target = value as? NSManagedObject {
                    record.toOne[name] = reference(target.objectID)
                }
            default: break
            }
        }
        return record
    }
}
