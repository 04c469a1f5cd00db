import Foundation

// Derived attributes under batch requests. A context's save computes derived values on its
// objects (`NSManagedObjectContext+DerivedAttributes.swift`); a batch request writes rows with no
// objects, so each store keeps them right itself, in the request's transaction, as the triggers
// of Apple's SQLite store do:
// - `now()` is the request's time, written with the values of the rows it inserts or updates;
// - every other derived attribute the request may have changed is computed again, one statement
//   (or one pass) per attribute, after the request's own: for the rows a batch insert wrote when
//   the attribute is theirs, else for every row of its entity; only rows whose value changes are
//   written.
// Models without derived attributes pay nothing.

/// What a batch request did to the rows of one entity family, for ``BatchDerivedAttributes``.
internal enum BatchChange {
    /// Rows inserted and, under uniqueness constraints, stored rows updated by an upsert
    /// (`upserted`: whether any was).
    case insert(upserted: Bool)
    /// Rows given new values of these attributes.
    case update([NSAttributeDescription])
    /// Rows deleted (and those their delete rules reached).
    case delete
}

internal enum BatchDerivedAttributes {
    /// The derived attributes, other than `now()` ones, whose values `change` on the rows of
    /// `entities` (and their sub-entities) may have changed, anywhere in the model, each once.
    static func recomputed(after change: BatchChange, on entities: [NSEntityDescription]) -> [NSDerivedAttributeDescription] {
        guard let model = entities.first?.managedObjectModel else { return [] }
        let all = model.derivedAttributes
        guard !all.isEmpty else { return [] }
        return all.filter { attribute in entities.contains { affects(change, on: $0, attribute) } }
    }

    /// Whether `change` on the rows of `entity` may change the values of `attribute`.
    private static func affects(_ change: BatchChange, on entity: NSEntityDescription, _ attribute: NSDerivedAttributeDescription) -> Bool {
        let root = entity.rootEntity
        guard let derivation = attribute.derivation, let owner = attribute.entity else { return false }
        if case .now = derivation { return false }
        switch change {
        case .insert(let upserted):
            // The new rows' own values; an upsert's updated rows may be read by others (new rows
            // have no relationships: nothing reads them).
            return owner.rootEntity === root || (upserted && derivation.readsRelatedRows(of: root))
        case .update(let changed):
            guard let read = derivation.readAttribute, let reader = read.entity, reader.rootEntity === root else { return false }
            return changed.contains { written in
                guard written.name == read.name, let writer = written.entity else { return false }
                return writer.isKindOf(entity: reader) || reader.isKindOf(entity: writer)
            }
        case .delete:
            return derivation.readsRelatedRows(of: root)
        }
    }

    /// Whether the model of `entity` has derived attributes.
    static func exist(for entity: NSEntityDescription) -> Bool {
        entity.managedObjectModel?.derivedAttributes.isEmpty == false
    }

    /// The root entities of the rows `keys`, each once.
    static func families(of keys: [FetchedKey]) -> [NSEntityDescription] {
        var roots: [NSEntityDescription] = []
        for key in keys where !roots.contains(where: { $0 === key.entity.rootEntity }) { roots.append(key.entity.rootEntity) }
        return roots
    }

    /// The `now()` derived attributes of the rows of `entity` and its sub-entities (declared on
    /// it, on an ancestor, or on a sub-entity), which a batch insert or update sets to its time.
    static func stamped(on entity: NSEntityDescription) -> [NSDerivedAttributeDescription] {
        guard let model = entity.managedObjectModel else { return [] }
        return model.derivedAttributes.filter { attribute in
            guard case .now? = attribute.derivation, let owner = attribute.entity else { return false }
            return entity.isKindOf(entity: owner) || owner.isKindOf(entity: entity)
        }
    }
}
