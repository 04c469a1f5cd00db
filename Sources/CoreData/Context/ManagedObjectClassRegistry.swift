import Foundation
import Synchronization

/// Maps `managedObjectClassName`s to Swift classes.
///
/// Linux has no Objective-C runtime to look classes up by their bare name, so a name resolves if
/// it is module-qualified (`MyApp.Car`), if the class has been seen by a typed API
/// (`Car(context:)`, `NSFetchRequest<Car>`, `Car.entity()`, `Car.fetchRequest()`), or if it names
/// a class in a module that a class seen before lives in. Otherwise it falls back to
/// `NSManagedObject`, as Apple's framework does for a name with no class behind it.
internal enum ManagedObjectClassRegistry {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var byName: [String: NSManagedObject.Type] = [:]
    nonisolated(unsafe) private static var modules: Set<String> = []
    /// The classes registered so far, by identity: registering one again (every
    /// `NSFetchRequest<Car>(entityName:)`) is a set lookup, not a `String(reflecting:)`.
    nonisolated(unsafe) private static var seen: Set<ObjectIdentifier> = []
    private static let _generation = Atomic<Int>(0)

    /// Changes whenever a class is registered: a name that did not resolve may resolve now.
    /// (An atomic: read for every new object of an entity whose class name has not resolved.)
    static var generation: Int { _generation.load(ordering: .acquiring) }

    /// Records a class so that models naming it, qualified or not, resolve to it.
    static func register(_ cls: NSManagedObject.Type) {
        guard cls != NSManagedObject.self else { return }
        lock.lock()
        let known = seen.contains(ObjectIdentifier(cls))
        lock.unlock()
        if known { return }
        let qualified = String(reflecting: cls)
        lock.lock(); defer { lock.unlock() }
        seen.insert(ObjectIdentifier(cls))
        if byName[qualified] != nil { return }
        _generation.add(1, ordering: .releasing)
        byName[qualified] = cls
        if let dot = qualified.firstIndex(of: ".") {
            let bare = String(qualified[qualified.index(after: dot)...])
            if byName[bare] == nil { byName[bare] = cls }
            modules.insert(String(qualified[..<dot]))
        }
    }

    /// A class name as it is looked up: Xcode's "current module" spelling (`.Car`, which Xcode's
    /// model compiler prefixes with the app's module) is the bare name (`Car`), found as any
    /// unqualified name is.
    static func lookupName(_ name: String) -> String {
        name.hasPrefix(".") ? String(name.dropFirst()) : name
    }

    /// Whether `name` can name a Swift class: identifiers joined by dots (`Car`, `MyApp.Car`).
    /// Other text is never passed to the runtime's lookup, which may stop the process on it.
    static func isClassName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.allSatisfy { part in
            guard let first = part.unicodeScalars.first, first == "_" || CharacterSet.letters.contains(first) else { return false }
            return part.unicodeScalars.allSatisfy { $0 == "_" || CharacterSet.alphanumerics.contains($0) }
        }
    }

    /// The class for a name, or `NSManagedObject`.
    static func resolve(_ written: String?) -> NSManagedObject.Type {
        guard let written else { return NSManagedObject.self }
        let name = lookupName(written)
        guard !name.isEmpty, name != "NSManagedObject", isClassName(name) else { return NSManagedObject.self }
        lock.lock()
        let known = byName[name]
        let candidates = modules
        lock.unlock()
        if let known { return known }
        if let cls = NSClassFromString(name) as? NSManagedObject.Type {
            register(cls)
            return cls
        }
        for module in candidates {
            if let cls = NSClassFromString(module + "." + name) as? NSManagedObject.Type {
                register(cls)
                return cls
            }
        }
        return NSManagedObject.self
    }
}
