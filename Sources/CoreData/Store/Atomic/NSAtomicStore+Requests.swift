import Foundation

// How an `NSAtomicStore` answers the internal store API from its cache nodes: fetches are
// evaluated in memory over records of the nodes (as the in-memory store evaluates its rows),
// faults and to-manys read the nodes, and a save updates the nodes through the subclass's
// `newCacheNode(for:)` / `updateCacheNode(_:from:)` and calls its `save()`, putting the nodes
// back as they were if that throws. Called holding the store's lock.

extension NSAtomicStore {
    /// A node as a record for predicates and sorts: attributes by name, to-ones as IDs,
    /// to-manys as arrays of IDs, the node's own ID under `"self"`.
    func record(of node: NSAtomicStoreCacheNode) -> [String: Any] {
        var record: [String: Any] = ["self": node.objectID]
        for property in node.objectID.entity.layout.properties where !property.isTransient && !(property is CompositeLeafAttribute) {
            guard let value = node.value(forKey: property.name) else { continue }
            if let relationship = property as? NSRelationshipDescription {
                // (A member that is not a node names no object; reading the relationship throws for it.)
                record[property.name] = relationship.isToMany
                    ? members(of: value).compactMap { ($0 as? NSAtomicStoreCacheNode)?.objectID }
                    : (value as? NSAtomicStoreCacheNode)?.objectID
            } else {
                record[property.name] = value
            }
        }
        return record
    }

    func resolve(_ id: NSManagedObjectID) -> [String: Any]? {
        nodes[id.key].map(record(of:))
    }

    /// The nodes a plan matches, in its order, with its offset and limit.
    func matching(_ plan: FetchPlan) throws -> [NSAtomicStoreCacheNode] {
        let entity = plan.entity
        var matched: [(node: NSAtomicStoreCacheNode, record: [String: Any])] = []
        for node in nodes.values.sorted(by: { $0.objectID.key.value < $1.objectID.key.value }) {
            let nodeEntity = node.objectID.entity
            guard nodeEntity === entity || (plan.includesSubentities && nodeEntity.isKindOf(entity: entity)) else { continue }
            let record = record(of: node)
            if let predicate = plan.predicate, !(try InMemoryEvaluation.matches(predicate, record: record, resolve: resolve)) { continue }
            matched.append((node, record))
        }
        if !plan.sortKeys.isEmpty {
            matched.sort { a, b in
                InMemoryEvaluation.orderedBefore(a.record, b.record, keys: plan.sortKeys,
                                                 tieBreak: a.node.objectID.key.value < b.node.objectID.key.value, resolve: resolve)
            }
        }
        var nodes = matched.map(\.node)
        if plan.offset > 0 { nodes = Array(nodes.dropFirst(plan.offset)) }
        if plan.limit > 0 { nodes = Array(nodes.prefix(plan.limit)) }
        return nodes
    }

    /// A dictionary fetch, grouped and aggregated in memory.
    func dictionaryRows(_ plan: DictionaryPlan) throws -> [ContiguousArray<StoreValue>] {
        var rowsPlan = plan.fetch
        rowsPlan.limit = 0
        rowsPlan.offset = 0
        if DictionaryEvaluation.sortsResults(plan) { rowsPlan.sortKeys = [] }
        let matched = try matching(rowsPlan).map { node in
            (snapshot: try snapshot(of: node), object: StoreRecordObject(record(of: node), resolve: resolve))
        }
        var failure: (any Error)?
        let rows = DictionaryEvaluation.answer(plan, rows: matched) { id in
            do { return try nodes[id.key].map(snapshot(of:)) } catch { failure = error; return nil }
        }
        if let failure { throw failure }
        return rows
    }

    /// A node as a row: attributes converted to their types, to-ones as IDs.
    func snapshot(of node: NSAtomicStoreCacheNode) throws -> RowSnapshot {
        let entity = node.objectID.entity
        let layout = entity.layout
        var values = layout.nullValues()
        for index in layout.rowIndexes {
            let property = layout.properties[index]
            // A composite's element: from the composite's dictionary.
            let leaf = property as? CompositeLeafAttribute
            guard let value = leaf.map({ node.compositeElement($0) }) ?? node.value(forKey: property.name) else { continue }
            if property is NSRelationshipDescription {
                guard let target = value as? NSAtomicStoreCacheNode else {
                    throw wrongNodeValue(value, property, node.objectID, "an NSAtomicStoreCacheNode")
                }
                values[index] = .objectID(target.objectID)
            } else if let attribute = property as? NSAttributeDescription {
                guard let stored = StoreValue.storage(of: value, for: attribute.attributeType) else {
                    throw wrongNodeValue(value, property, node.objectID, "a value of the attribute's type")
                }
                values[index] = stored
            }
        }
        return RowSnapshot(entity: entity, values: values, version: versions[node.objectID.key] ?? 1)
    }

    func wrongNodeValue(_ value: Any, _ property: NSPropertyDescription, _ id: NSManagedObjectID, _ expected: String) -> NSError {
        CoreDataError.make(.persistentStoreOperation,
            "\(Swift.type(of: self)): the cache node of \(id) holds \(Swift.type(of: value)) for '\(property.name)'; expected \(expected)")
    }

    /// The IDs of a to-many value of a node: a set, ordered set or array of cache nodes.
    func relatedIDs(_ value: Any, of relationship: NSRelationshipDescription, owner: NSManagedObjectID) throws -> [NSManagedObjectID] {
        let members = members(of: value)
        guard !members.isEmpty || value is NSSet || value is NSOrderedSet || value is [Any] || value is Set<NSAtomicStoreCacheNode> else {
            throw wrongNodeValue(value, relationship, owner, "a set or array of NSAtomicStoreCacheNodes")
        }
        let nodes = members.compactMap { $0 as? NSAtomicStoreCacheNode }
        guard nodes.count == members.count else { throw wrongNodeValue(value, relationship, owner, "NSAtomicStoreCacheNodes") }
        let ids = nodes.map(\.objectID)
        // A set has no order: the members in key order, as the other stores give them.
        return relationship.isOrdered ? ids : ids.sorted { $0.key.value < $1.key.value }
    }

    /// The members of a to-many value: a set, ordered set or array (empty for anything else).
    func members(of value: Any) -> [Any] {
        if let set = value as? Set<NSAtomicStoreCacheNode> { return Array(set) }
        if let array = value as? [Any] { return array }
        if let ordered = value as? NSOrderedSet { return ordered.array }
        if let set = value as? NSSet { return set.allObjects }
        return []
    }

    /// One save: versions checked, the nodes updated through the subclass, then its `save()`;
    /// if anything throws, the nodes and versions are put back as they were.
    func write(_ changes: SaveChanges, beforeCommitting: () throws -> Void) throws -> SaveResult {
        guard let context = changes.context else {
            throw CoreDataError.make(.persistentStoreSave, "The \(type) store saves a context's changes only; nothing was saved")
        }
        var conflicts: [StoreConflict] = []
        func check(_ id: NSManagedObjectID, expectedVersion: Int64?) throws {
            guard let expectedVersion else { return }
            let current = try nodes[id.key].map(snapshot(of:))
            if current?.version != expectedVersion {
                conflicts.append(StoreConflict(id: id, expectedVersion: expectedVersion, persisted: current))
            }
        }
        for update in changes.updates { try check(update.id, expectedVersion: update.expectedVersion) }
        for delete in changes.deletes { try check(delete.id, expectedVersion: delete.expectedVersion) }
        for lock in changes.locks { try check(lock.id, expectedVersion: lock.expectedVersion) }
        if !conflicts.isEmpty { throw StoreConflictError(conflicts: conflicts) }
        var inserted: [NSManagedObject] = []
        for insert in changes.inserts {
            guard !insert.isTemporary, let object = context.registeredObject(for: NSManagedObjectID(entity: insert.entity, store: self, key: insert.key)) else {
                throw CoreDataError.make(.persistentStoreSave, "A new object of \(insert.entity.name ?? "") has no permanent ID of the \(type) store; nothing was saved")
            }
            inserted.append(object)
        }
        let updated = changes.updates.compactMap { context.registeredObject(for: $0.id) }
        try beforeCommitting()
        if changes.writesNothing { return SaveResult() } // only versions checked: no file to write

        let savedNodes = nodes, savedVersions = versions
        let savedCaches = nodes.mapValues { $0.propertyCache?.mutableCopy() as? NSMutableDictionary }
        do {
            for object in inserted {
                let node = newCacheNode(for: object)
                guard node.objectID == object.objectID else {
                    throw CoreDataError.make(.persistentStoreSave,
                        "\(Swift.type(of: self)).newCacheNode(for:) made a node for \(node.objectID), not for \(object.objectID); nothing was saved")
                }
                nodes[object.objectID.key] = node
                versions[object.objectID.key] = 1
            }
            for object in inserted + updated {
                if let node = nodes[object.objectID.key] { updateCacheNode(node, from: object) }
            }
            for update in changes.updates { versions[update.id.key] = update.nextVersion }
            let removed = Set(changes.deletes.compactMap { nodes[$0.id.key] })
            if !removed.isEmpty { willRemoveCacheNodes(removed) }
            for delete in changes.deletes {
                nodes[delete.id.key] = nil
                versions[delete.id.key] = nil
            }
            try save()
        } catch {
            nodes = savedNodes
            versions = savedVersions
            for (key, cache) in savedCaches { nodes[key]?.propertyCache = cache }
            throw error
        }
        return SaveResult(insertedKeys: changes.inserts.map(\.key.value))
    }
}

extension NSAtomicStoreCacheNode {
    /// The value of a composite's element in the node's dictionary of the composite.
    func compositeElement(_ leaf: CompositeLeafAttribute) -> Any? {
        leaf.composite.flatMap { CompositeValues.value(of: leaf, in: value(forKey: $0.name)) }
    }
}
