import Foundation

/// What a save may skip, in one place, so that `NSManagedObjectContext.save()` reads as Core
/// Data's save: process pending changes, `willSave`, validate, write, `didSave`, notify.
///
/// A bulk import saves tens of thousands of plain `NSManagedObject`s, written long before the
/// save and no longer in the processor's cache: each pass over them costs about a millisecond
/// (BENCHMARKS.md, "How the hot paths are built"). Each shortcut skips only work that would do
/// nothing:
/// - **`willSave` and `didSave`** are called only if an object of a subclass has been inserted,
///   updated or deleted since a save last left the change sets empty (the sets' sticky
///   `mayHoldSubclassObjects` flags): a plain `NSManagedObject`'s are empty.
/// - **Validation** walks the inserted and updated objects only if the model has rules
///   (``NSManagedObjectModel/objectsHaveNoValidationRules``), an object is of a subclass (it may
///   override `validateForInsert`), or an object has held a value of the wrong type since the
///   context last saved (`heldMistypedValue`).
/// - **The notifications' sets of objects** are made once per save (`ObjectSetMemo`): the
///   did-save notification reuses those of `ObjectsDidChange` when they hold the same objects.
/// - **Letting go of the saved objects** (a save's lists are often the last to hold them) happens
///   under one hold of the registry's lock, which their `deinit`s then do not take each, when
///   their going runs no app code: plain objects of a model whose objects hold only plain values
///   (``NSManagedObjectModel/objectsHoldOnlyValues``), none of which held a mistyped value.
internal struct SaveShortcuts {
    /// The saving context (unretained: `save()` holds it for the whole save).
    private unowned(unsafe) let context: NSManagedObjectContext
    /// Whether letting go of the saved objects may run app code (a `deinit` of a subclass, an
    /// app's value held mistyped), as found once they were written.
    private var goingMayRunAppCode = true

    /// Starts a save of `context`.
    init(beginning context: NSManagedObjectContext) {
        self.context = context
        context.saveSetMemo = ObjectSetMemo()
    }

    /// Ends the save, whether it wrote or threw.
    func end() {
        context.saveSetMemo = nil
    }

    /// Whether `willSave` must be called on the changed objects (read after the will-save
    /// notification, whose observers may insert objects).
    var callsWillSave: Bool { context.savesSubclassObjects }

    /// Once the objects were written (to the store or to the parent): calls their `didSave` if
    /// any may do something, and forgets the sets' subclass flags if the sets are empty again (a
    /// `didSave` may have changed objects).
    mutating func didSave(_ saved: SavedObjects) {
        let callsDidSave = context.savesSubclassObjects
        goingMayRunAppCode = callsDidSave || context.heldMistypedValue
        context.heldMistypedValue = false // the saved values were valid (a `didSave` may set another)
        if callsDidSave {
            for objects in [saved.inserted, saved.updated, saved.deleted] {
                objects.forEachUnretainedPrefetching { $1.didSave() }
            }
        }
        context.forgetSubclassObjects()
    }

    /// Lets go of the saved objects of a save to the store, under one hold of the registry's lock
    /// when their going runs no app code; otherwise they go with `saved`, each taking the lock.
    func letGo(of saved: inout SavedObjects) {
        guard !goingMayRunAppCode, context.parent == nil, context.withModel({ $0?.objectsHoldOnlyValues ?? false }) else { return }
        context.lettingGoOfSavedObjects { saved = SavedObjects() }
    }
}

/// The objects a save wrote, by change.
internal struct SavedObjects {
    var inserted: [NSManagedObject] = []
    var updated: [NSManagedObject] = []
    var deleted: [NSManagedObject] = []
}

extension NSManagedObjectContext {
    /// Whether an object of a subclass of `NSManagedObject` has been inserted, updated or
    /// deleted since a save last left the change sets empty (or may have been: the sets' flags
    /// are sticky, and `rollback()` and `reset()` leave them). Without one, every changed object
    /// is a plain `NSManagedObject`, whose `willSave`, `didSave` and validation methods are Core
    /// Data's own.
    internal var savesSubclassObjects: Bool {
        inserted.mayHoldSubclassObjects || updated.mayHoldSubclassObjects || deleted.mayHoldSubclassObjects
    }

    /// After a save: clears the change sets' sticky flags, if the sets are empty (a `didSave`
    /// hook may have changed objects again).
    internal func forgetSubclassObjects() {
        guard inserted.isEmpty, updated.isEmpty, deleted.isEmpty else { return }
        inserted.forgetSubclassObjects()
        updated.forgetSubclassObjects()
        deleted.forgetSubclassObjects()
    }

    /// Whether the inserted and updated objects need no validation pass: plain objects holding
    /// values of their attributes' types, of a model without rules (see ``SaveShortcuts``).
    internal var changedObjectsAreValid: Bool {
        !savesSubclassObjects && !heldMistypedValue && withModel({ $0?.objectsHaveNoValidationRules ?? false })
    }
}
