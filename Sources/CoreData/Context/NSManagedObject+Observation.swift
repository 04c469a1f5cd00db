import Foundation
import Observation

// Swift's `Observation` framework for managed objects: a class that conforms to `Observable`
// has its property reads seen by `withObservationTracking` and its changes reported, whatever
// changed them (a setter, a merge, a refresh, a rollback, an undo, a derived attribute at save).
//
// Cost. Observation keys what a tracking read by registrar, so each observed object needs a
// registrar of its own (one shared by many objects would report any one's change to all).
// Swift has no public way to ask whether a tracking runs (the thread-local that says so is not
// exported), so an object of an `Observable` class takes its registrar at its first read through
// `@Managed` or `value(forKey:)` (an allocation, as an `@Observable` class pays at init), and each
// read then calls `access(_:keyPath:)` (about 110 instructions, counted with callgrind: its
// thread-local read), as an `@Observable` class's reads do.
// - An object of a class that is not `Observable` pays one load and branch per read
//   (``EntityLayout/observesReads``); a change of any object pays a `nil` check of
//   ``NSManagedObject/_extras`` (and of its registrar, for the few objects with extras).
// - The key paths are made once per property index (``ObservedProperty/keyPath(at:)``).

/// The subject of the key paths observed properties are registered under: one per property
/// index, not per class, since each object has a registrar of its own.
internal struct ObservedProperties: Observable {
    /// What the key paths of observed properties read: the index; only their identity matters.
    subscript(property property: ObservedProperty) -> Int { property.index }
}

/// A property index as the argument of an observed key path.
internal struct ObservedProperty: Hashable, Sendable {
    let index: Int

    /// The key path Observation registers a property under.
    typealias KeyPathType = KeyPath<ObservedProperties, Int> & Sendable

    /// The key paths of the first property indexes, made once.
    private static let keyPaths: [KeyPathType] = (0..<128).map(makeKeyPath)

    private static func makeKeyPath(_ index: Int) -> KeyPathType {
        \ObservedProperties.[property: ObservedProperty(index: index)]
    }

    /// The key path of the property at `index` (one made for it, past the first 128: equal to any other).
    static func keyPath(at index: Int) -> KeyPathType {
        index < keyPaths.count ? keyPaths[index] : makeKeyPath(index)
    }
}

/// An object's registrar, boxed (see ``NSManagedObject/Extras/observation``).
internal final class ObservedObjectRegistrar {
    let registrar = ObservationRegistrar()
}

extension NSManagedObject {
    /// The registrar of an object of an `Observable` class that has been read, else `nil`.
    internal var observationRegistrar: ObservationRegistrar? { _extras?.observation?.registrar }

    /// Tells a running `withObservationTracking` (if any) that the property at `index` was read:
    /// called by `@Managed` getters and `value(forKey:)` for objects whose layout
    /// ``EntityLayout/observesReads``. The object takes its registrar at its first such read.
    /// Fetched properties (negative indexes) are not observed.
    @usableFromInline @inline(never)
    internal func _observeRead(at index: Int) {
        guard index >= 0 else { return }
        let box: ObservedObjectRegistrar
        if let existing = _extras?.observation {
            box = existing
        } else {
            box = ObservedObjectRegistrar()
            extras.observation = box
        }
        box.registrar.access(ObservedProperties(), keyPath: ObservedProperty.keyPath(at: index))
    }

    /// Reports a change of the property at `index` to the trackings that read it (after the
    /// change: an `onChange` reads the new value). Called by ``markChanged(_:)`` when the object
    /// has a registrar.
    @inline(never)
    internal func observedPropertyDidChange(at index: Int) {
        guard let registrar = _extras?.observation?.registrar else { return } // (not a hot path: a change of an observed object)
        // A composite's element: the composite changed too.
        let composite = reportedProperty(at: index).index
        for changed in composite == index ? [index] : [index, composite] {
            let keyPath = ObservedProperty.keyPath(at: changed)
            registrar.willSet(ObservedProperties(), keyPath: keyPath)
            registrar.didSet(ObservedProperties(), keyPath: keyPath)
        }
    }

    /// Whether Observation tracks the object's properties (a view or `withObservationTracking`
    /// read them).
    internal var isObserved: Bool { _extras?.observation != nil }

    /// Runs `body`, which replaces many of the object's values at once (a merge, a refresh, a
    /// rollback, an undo), and then reports each property whose value it changed. Objects no
    /// tracking has read pay a `nil` check.
    @inline(__always)
    internal func changingObservedValues(_ body: () -> Void) {
        guard let box = _extras?.observation else { return body() }
        reportChanges(to: box.registrar, of: body)
    }

    /// ``changingObservedValues(_:)`` for an observed object: the values before and after
    /// compared property by property. Attributes compare by value; a to-one by the related
    /// object's ID; a to-many whose loaded objects `body` replaced by their objects, and one it
    /// dropped (to be read again from the store, as a merge does) counts as changed, since telling
    /// would take a query. A value the object did not have before or has not after (a fault
    /// without data) counts as changed.
    @inline(never)
    private func reportChanges(to registrar: ObservationRegistrar, of body: () -> Void) {
        let values = _values, relations = _relations
        body()
        var reported = Set<Int>()
        for index in 0..<layout.properties.count
        where valueChanged(at: index, values: values, relations: relations) {
            // A composite's element: the composite changed too (once).
            for changed in [index, reportedProperty(at: index).index] where reported.insert(changed).inserted {
                let keyPath = ObservedProperty.keyPath(at: changed)
                registrar.willSet(ObservedProperties(), keyPath: keyPath)
                registrar.didSet(ObservedProperties(), keyPath: keyPath)
            }
        }
    }

    /// Whether the property at `index` differs from what `values` and `relations` had.
    private func valueChanged(at index: Int, values: PropertyValues, relations: [Int: RelationshipValue]) -> Bool {
        switch layout.storageKinds[index] {
        case .toOne:
            return relatedID(at: index, values: values, relations: relations) != relatedID(at: index, values: _values, relations: _relations)
        case .toMany, .orderedToMany:
            guard case .toMany(let before)? = relations[index] else { return false }
            guard case .toMany(let after)? = _relations[index] else { return true }
            return !before.objects.elementsEqual(after.objects, by: ===)
        default:
            if values.count == 0 || _values.count == 0 { return values.count != _values.count }
            return values[index] != _values[index]
        }
    }

    /// A to-one's object ID as `values` and `relations` hold it: `.some(nil)` for none, `nil`
    /// when the object had no data.
    private func relatedID(at index: Int, values: PropertyValues, relations: [Int: RelationshipValue]) -> NSManagedObjectID?? {
        if case .toOne(let object)? = relations[index] { return .some(object?.objectID) }
        guard values.count != 0 else { return nil }
        if case .objectID(let id) = values[index] { return .some(id) }
        return .some(nil)
    }
}

#if !canImport(ObjectiveC)
/// How a set-valued property changes, as key-value observing names it (Foundation declares it on
/// Apple platforms only): the argument of `willChangeValue(forKey:withSetMutation:using:)`.
public enum NSKeyValueSetMutationKind: UInt, Sendable {
    /// The objects are added.
    case union = 1
    /// The objects are removed.
    case minus = 2
    /// Only the objects are kept.
    case intersect = 3
    /// The set becomes the objects.
    case set = 4
}
#endif
