import Foundation

// Linux-only: Foundation on Linux (swift-corelibs-foundation) has no `UndoManager`, which
// `NSManagedObjectContext.undoManager` takes. This is Apple's API, so code that sets up undo
// compiles unchanged. On Apple platforms Foundation's own class is used and this file is empty.
#if !canImport(ObjectiveC)

/// A recorder of operations that can be undone and redone, in groups: Apple's `UndoManager`,
/// for Linux, whose Foundation has none.
///
/// ```swift
/// let undoManager = UndoManager()
/// context.undoManager = undoManager
/// car.name = "Model A"
/// context.undo()            // car.name is back to what it was
/// undoManager.redo()        // and "Model A" again
/// ```
///
/// Linux differences:
/// - **Grouping by event.** There is no run loop to close a group at the end of each event.
///   With ``groupsByEvent`` (the default), the first registration outside any group opens one,
///   as on Apple platforms; it is closed by ``undo()`` or ``redo()`` (as Apple's are when the
///   grouping level is 1), and by `processPendingChanges()` of a managed object context that
///   uses this undo manager: each of a context's change-processing passes (its "event") is one
///   undo step, unless an explicit ``beginUndoGrouping()`` is open, which then takes the
///   changes.
/// - **Registration by selector** (`registerUndo(withTarget:selector:object:)`) and
///   `prepare(withInvocationTarget:)` need the Objective-C runtime and are not provided:
///   register a closure with ``registerUndo(withTarget:handler:)``.
/// - Not bound to the main actor (Apple's is `@MainActor`): use an undo manager on one thread
///   or queue at a time — a context's, when a context uses it.
open class UndoManager: NSObject {
    /// One registered operation: a closure and the target it was registered with, which the
    /// undo manager does not keep alive (as Apple's keeps an unowned reference).
    private struct Action {
        weak var target: AnyObject?
        let targetID: ObjectIdentifier
        let handler: (AnyObject) -> Void
    }

    /// A group's contents, in registration order: operations and nested groups.
    private enum Entry {
        case action(Action)
        case group(Group)
    }

    /// An undo (or redo) group.
    private final class Group {
        var entries: [Entry] = []
        var actionName = ""
        var isDiscardable = false

        var isEmpty: Bool {
            entries.allSatisfy { if case .group(let group) = $0 { return group.isEmpty } else { return false } }
        }

        /// Drops the operations registered with a target (``removeAllActions(withTarget:)``).
        func removeActions(of target: ObjectIdentifier) {
            entries.removeAll { entry in
                switch entry {
                case .action(let action): return action.targetID == target
                case .group(let group): group.removeActions(of: target); return group.isEmpty
                }
            }
        }
    }

    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    /// The groups open now, outermost first (``groupingLevel`` is their number).
    private var openGroups: [Group] = []
    /// Whether the outermost open group was opened by a registration (``groupsByEvent``) rather
    /// than by ``beginUndoGrouping()``.
    private var outermostGroupIsEvent = false
    private var disableCount = 0
    private enum Performing { case none, undo, redo }
    private var performing = Performing.none

    /// Creates an undo manager with empty stacks.
    public override init() { super.init() }

    // MARK: Registering

    /// Registers `handler`, which undoes an operation on `target`, in the open group.
    ///
    /// While the undo manager undoes, the operation goes on the redo stack; otherwise on the undo
    /// stack, and the redo stack is cleared. Nothing is registered while registration is
    /// disabled. The undo manager does not keep `target` alive: the handler is not called if
    /// the target is gone.
    ///
    /// With no group open and ``groupsByEvent`` off, registering is a programmer error and stops
    /// the process, as Apple raises `NSInternalInconsistencyException`.
    ///
    /// ```swift
    /// undoManager.registerUndo(withTarget: document) { document in document.title = oldTitle }
    /// ```
    open func registerUndo<TargetType: AnyObject>(withTarget target: TargetType, handler: @escaping (TargetType) -> Void) {
        guard disableCount == 0 else { return }
        if openGroups.isEmpty {
            precondition(groupsByEvent, "UndoManager: must begin a group before registering undo (groupsByEvent is off)")
            openGroup(byEvent: true)
        }
        if performing == .none { redoStack.removeAll() }
        let action = Action(target: target, targetID: ObjectIdentifier(target), handler: { handler($0 as! TargetType) })
        openGroups[openGroups.count - 1].entries.append(.action(action))
    }

    /// Whether registration is enabled (it is unless ``disableUndoRegistration()`` was called
    /// more often than ``enableUndoRegistration()``).
    open var isUndoRegistrationEnabled: Bool { disableCount == 0 }

    /// Stops registering operations until a matching ``enableUndoRegistration()``; calls nest.
    ///
    /// ```swift
    /// context.processPendingChanges()
    /// undoManager.disableUndoRegistration()
    /// importDefaults(into: context)      // not undoable
    /// context.processPendingChanges()
    /// undoManager.enableUndoRegistration()
    /// ```
    open func disableUndoRegistration() { disableCount += 1 }

    /// Balances a ``disableUndoRegistration()``. Enabling registration that is not disabled is a
    /// programmer error and stops the process (Apple raises `NSInternalInconsistencyException`).
    open func enableUndoRegistration() {
        precondition(disableCount > 0, "UndoManager: enableUndoRegistration() without a matching disableUndoRegistration()")
        disableCount -= 1
    }

    // MARK: Groups

    /// Whether a registration outside any group opens one (`true`, the default). On Linux such a
    /// group closes at the next ``undo()``, ``redo()``, or `processPendingChanges()` of a context
    /// using this undo manager (see the class's Linux differences).
    open var groupsByEvent = true

    /// The number of open groups (0: none).
    ///
    /// ```swift
    /// undoManager.beginUndoGrouping()
    /// undoManager.groupingLevel // 1
    /// ```
    open var groupingLevel: Int { openGroups.count }

    /// Opens a group, nested in the one open if any: the operations registered until the
    /// matching ``endUndoGrouping()`` are undone together. Posts `.NSUndoManagerCheckpoint`
    /// (so that a context registers its pending changes first, in their own group) and
    /// `.NSUndoManagerDidOpenUndoGroup`.
    ///
    /// ```swift
    /// undoManager.beginUndoGrouping()
    /// car.name = "Model A"; car.year = 1927
    /// undoManager.endUndoGrouping()
    /// undoManager.setActionName("Edit Car")
    /// ```
    open func beginUndoGrouping() {
        if performing == .none { post(.NSUndoManagerCheckpoint) }
        openGroup(byEvent: false)
    }

    /// Closes the innermost open group. Posts `.NSUndoManagerCheckpoint`,
    /// `.NSUndoManagerWillCloseUndoGroup` and `.NSUndoManagerDidCloseUndoGroup`. An empty
    /// top-level group is dropped.
    ///
    /// With no group open this is a programmer error and stops the process, as Apple raises
    /// `NSInternalInconsistencyException`.
    ///
    /// ```swift
    /// undoManager.endUndoGrouping()
    /// ```
    open func endUndoGrouping() {
        precondition(!openGroups.isEmpty, "UndoManager: endUndoGrouping() without beginUndoGrouping()")
        post(.NSUndoManagerCheckpoint)
        // (The checkpoint's observers may have registered operations, or closed groups of their own.)
        guard let group = openGroups.last else { return }
        post(.NSUndoManagerWillCloseUndoGroup, userInfo: group.isDiscardable ? [NSUndoManagerGroupIsDiscardableKey: true] : nil)
        closeGroup()
        post(.NSUndoManagerDidCloseUndoGroup)
    }

    /// Closes the group a registration opened (``groupsByEvent``) when it is the only one open:
    /// the end of an "event" on Linux (a context's `processPendingChanges()`).
    internal func closeEventGroup() {
        guard openGroups.count == 1, outermostGroupIsEvent, performing == .none else { return }
        endUndoGrouping()
    }

    private func openGroup(byEvent: Bool) {
        if openGroups.isEmpty { outermostGroupIsEvent = byEvent }
        openGroups.append(Group())
        post(.NSUndoManagerDidOpenUndoGroup)
    }

    private func closeGroup() {
        let group = openGroups.removeLast()
        if let parent = openGroups.last {
            if !group.isEmpty { parent.entries.append(.group(group)) }
            return
        }
        guard !group.isEmpty else { return }
        switch performing {
        case .undo: push(group, onto: &redoStack)
        case .none, .redo: push(group, onto: &undoStack)
        }
    }

    private func push(_ group: Group, onto stack: inout [Group]) {
        stack.append(group)
        if levelsOfUndo > 0 && stack.count > levelsOfUndo { stack.removeFirst(stack.count - levelsOfUndo) }
    }

    /// The most top-level groups kept on the undo stack (and on the redo stack); the oldest go
    /// first. 0, the default, keeps them all.
    ///
    /// ```swift
    /// undoManager.levelsOfUndo = 20
    /// ```
    open var levelsOfUndo: Int = 0 {
        didSet {
            guard levelsOfUndo > 0 else { return }
            if undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
            if redoStack.count > levelsOfUndo { redoStack.removeFirst(redoStack.count - levelsOfUndo) }
        }
    }

    // MARK: Undoing and redoing

    /// Whether there is something to undo: a group on the undo stack, or operations in the open
    /// groups (which ``undo()`` closes first, if it can).
    open var canUndo: Bool {
        !undoStack.isEmpty || (performing == .none && openGroups.contains { !$0.isEmpty })
    }

    /// Whether there is a group on the redo stack. Posts `.NSUndoManagerCheckpoint` first (outside
    /// an undo or redo), as Apple's does: a context registers its pending changes, which clear
    /// the redo stack, so a change made since the last undo leaves nothing to redo.
    open var canRedo: Bool {
        if performing == .none { post(.NSUndoManagerCheckpoint) }
        return !redoStack.isEmpty
    }

    /// Whether ``undo()`` or ``undoNestedGroup()`` is running.
    open var isUndoing: Bool { performing == .undo }

    /// Whether ``redo()`` is running.
    open var isRedoing: Bool { performing == .redo }

    /// Undoes the last top-level group, recording what its operations register as one group on
    /// the redo stack. Posts `.NSUndoManagerCheckpoint` first (a context registers its pending
    /// changes, which are then what is undone), closes the open group if there is one (as
    /// Apple's calls `endUndoGrouping()` at nesting level 1), then posts
    /// `.NSUndoManagerWillUndoChange` and `.NSUndoManagerDidUndoChange`.
    ///
    /// Undoing with more than one group open, or during another undo or redo, is a programmer
    /// error and stops the process, as Apple raises `NSInternalInconsistencyException`.
    ///
    /// ```swift
    /// if undoManager.canUndo { undoManager.undo() }
    /// ```
    open func undo() { performTopLevel(.undo) }

    /// Undoes the last group, top-level or nested in the open group, recording its operations'
    /// registrations as one group on the redo stack. Posts `.NSUndoManagerCheckpoint`,
    /// `.NSUndoManagerWillUndoChange` and `.NSUndoManagerDidUndoChange`.
    ///
    /// ```swift
    /// undoManager.beginUndoGrouping()
    /// undoManager.beginUndoGrouping(); edit(); undoManager.endUndoGrouping()
    /// undoManager.undoNestedGroup() // undoes edit() only
    /// ```
    open func undoNestedGroup() {
        precondition(performing == .none, "UndoManager: undoNestedGroup() during an undo or redo")
        post(.NSUndoManagerCheckpoint)
        if let open = openGroups.last {
            guard case .group(let nested)? = open.entries.last else { return }
            open.entries.removeLast()
            perform(nested, as: .undo)
        } else if let group = undoStack.popLast() {
            perform(group, as: .undo)
        }
    }

    /// Redoes the last undone group, recording what its operations register as one group on
    /// the undo stack. Posts `.NSUndoManagerCheckpoint`, `.NSUndoManagerWillRedoChange` and
    /// `.NSUndoManagerDidRedoChange`.
    ///
    /// Redoing during an undo or redo, or with an explicit group open, is a programmer error
    /// and stops the process, as Apple raises `NSInternalInconsistencyException`.
    ///
    /// ```swift
    /// if undoManager.canRedo { undoManager.redo() }
    /// ```
    open func redo() { performTopLevel(.redo) }

    /// ``undo()`` or ``redo()``: the top group of the undo or redo stack, once the group a
    /// registration opened is closed.
    private func performTopLevel(_ kind: Performing) {
        let name = kind == .undo ? "undo()" : "redo()"
        precondition(performing == .none, "UndoManager: \(name) during an undo or redo")
        post(.NSUndoManagerCheckpoint)
        if openGroups.count == 1 && (kind == .undo || groupsByEvent && outermostGroupIsEvent) { endUndoGrouping() }
        precondition(openGroups.isEmpty, "UndoManager: \(name) with \(openGroups.count) undo groups open (call endUndoGrouping() first)")
        guard let group = kind == .undo ? undoStack.popLast() : redoStack.popLast() else { return }
        perform(group, as: kind)
    }

    /// Runs a group's operations, last first, collecting what they register in a new group
    /// that carries the group's action name.
    private func perform(_ group: Group, as kind: Performing) {
        post(kind == .undo ? .NSUndoManagerWillUndoChange : .NSUndoManagerWillRedoChange)
        let saved = (openGroups, outermostGroupIsEvent)
        performing = kind
        openGroups = [Group()]
        outermostGroupIsEvent = false
        run(group)
        let collected = openGroups[0]
        collected.actionName = group.actionName
        closeGroup()
        (openGroups, outermostGroupIsEvent) = saved
        performing = .none
        post(kind == .undo ? .NSUndoManagerDidUndoChange : .NSUndoManagerDidRedoChange)
    }

    private func run(_ group: Group) {
        for entry in group.entries.reversed() {
            switch entry {
            case .action(let action):
                if let target = action.target { action.handler(target) }
            case .group(let nested):
                run(nested)
            }
        }
    }

    // MARK: Removing operations

    /// Empties the undo and redo stacks (and the open groups, which stay open) and enables
    /// registration again.
    ///
    /// ```swift
    /// undoManager.removeAllActions()
    /// undoManager.canUndo // false
    /// ```
    open func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        for group in openGroups { group.entries.removeAll() }
        disableCount = 0
    }

    /// Removes every operation registered with `target` from the undo and redo stacks, and the
    /// groups left empty.
    ///
    /// ```swift
    /// undoManager.removeAllActions(withTarget: closedDocument)
    /// ```
    open func removeAllActions(withTarget target: Any) {
        guard let object = target as AnyObject? else { return }
        let id = ObjectIdentifier(object)
        for group in undoStack + redoStack + openGroups { group.removeActions(of: id) }
        undoStack.removeAll { $0.isEmpty }
        redoStack.removeAll { $0.isEmpty }
    }

    // MARK: Action names

    /// Names the group being built (the outermost open one; while undoing, the redo group), or
    /// else the last group on the undo stack: the name menus show as "Undo <name>".
    ///
    /// ```swift
    /// undoManager.setActionName("Rename Car")
    /// undoManager.undoMenuItemTitle // "Undo Rename Car"
    /// ```
    open func setActionName(_ actionName: String) {
        if let group = openGroups.first { group.actionName = actionName } else { undoStack.last?.actionName = actionName }
    }

    /// The name of the group ``undo()`` would undo ("" if none, or unnamed).
    open var undoActionName: String { undoStack.last?.actionName ?? "" }

    /// The name of the group ``redo()`` would redo ("" if none, or unnamed).
    open var redoActionName: String { redoStack.last?.actionName ?? "" }

    /// "Undo", followed by ``undoActionName`` if there is one.
    open var undoMenuItemTitle: String { undoMenuTitle(forUndoActionName: undoActionName) }

    /// "Redo", followed by ``redoActionName`` if there is one.
    open var redoMenuItemTitle: String { redoMenuTitle(forUndoActionName: redoActionName) }

    /// The undo menu title for an action name ("Undo" alone for an empty name).
    open func undoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Undo" : "Undo \(actionName)"
    }

    /// The redo menu title for an action name ("Redo" alone for an empty name).
    open func redoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Redo" : "Redo \(actionName)"
    }

    /// Marks the group being built as discardable (it changes no persistent data), as
    /// `.NSUndoManagerWillCloseUndoGroup` reports under `NSUndoManagerGroupIsDiscardableKey`.
    open func setActionIsDiscardable(_ discardable: Bool) {
        if let group = openGroups.last { group.isDiscardable = discardable } else { undoStack.last?.isDiscardable = discardable }
    }

    /// Whether the group ``undo()`` would undo was marked discardable.
    open var undoActionIsDiscardable: Bool { undoStack.last?.isDiscardable ?? false }

    /// Whether the group ``redo()`` would redo was marked discardable.
    open var redoActionIsDiscardable: Bool { redoStack.last?.isDiscardable ?? false }

    private func post(_ name: Notification.Name, userInfo: [AnyHashable: Any]? = nil) {
        NotificationCenter.default.post(name: name, object: self, userInfo: userInfo)
    }
}

/// The key of `.NSUndoManagerWillCloseUndoGroup`'s user info: `true` when the group closing
/// was marked discardable (``UndoManager/setActionIsDiscardable(_:)``).
public let NSUndoManagerGroupIsDiscardableKey = "NSUndoManagerGroupIsDiscardableKey"

extension Notification.Name {
    /// Posted by an undo manager before it opens or closes a group and before it undoes or
    /// redoes: a managed object context registers its pending changes then.
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(forName: .NSUndoManagerCheckpoint, object: undoManager, queue: nil) { _ in }
    /// ```
    public static let NSUndoManagerCheckpoint = Notification.Name("NSUndoManagerCheckpointNotification")
    /// Posted after an undo manager opened a group.
    public static let NSUndoManagerDidOpenUndoGroup = Notification.Name("NSUndoManagerDidOpenUndoGroupNotification")
    /// Posted before an undo manager closes a group.
    public static let NSUndoManagerWillCloseUndoGroup = Notification.Name("NSUndoManagerWillCloseUndoGroupNotification")
    /// Posted after an undo manager closed a group.
    public static let NSUndoManagerDidCloseUndoGroup = Notification.Name("NSUndoManagerDidCloseUndoGroupNotification")
    /// Posted before an undo manager undoes a group.
    public static let NSUndoManagerWillUndoChange = Notification.Name("NSUndoManagerWillUndoChangeNotification")
    /// Posted after an undo manager undid a group.
    public static let NSUndoManagerDidUndoChange = Notification.Name("NSUndoManagerDidUndoChangeNotification")
    /// Posted before an undo manager redoes a group.
    public static let NSUndoManagerWillRedoChange = Notification.Name("NSUndoManagerWillRedoChangeNotification")
    /// Posted after an undo manager redid a group.
    public static let NSUndoManagerDidRedoChange = Notification.Name("NSUndoManagerDidRedoChangeNotification")
}

#endif
