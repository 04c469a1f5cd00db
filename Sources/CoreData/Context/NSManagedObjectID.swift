import Foundation
import Synchronization

/// The identity of a managed object: its entity, its store and its primary key. Safe to pass
/// between queues and contexts; fetch the object in another context with
/// ``NSManagedObjectContext/object(with:)`` or ``NSManagedObjectContext/existingObject(with:)``.
///
/// An object inserted into a context has a *temporary* ID until it is saved (or
/// ``NSManagedObjectContext/obtainPermanentIDs(for:)`` is called); then it gets a permanent one.
///
/// ```swift
/// let id = car.objectID            // x-coredata://<store UUID>/Car/p1 once saved
/// let same = try context.existingObject(with: id)
/// ```
open class NSManagedObjectID: NSObject, NSCopying, @unchecked Sendable {
    /// The entity of the object.
    public var entity: NSEntityDescription { _entity.takeUnretainedValue() }
    /// The store that holds the object; `nil` while the ID is temporary. (Kept strongly: a
    /// weak reference costs a side-table operation per ID.)
    public var persistentStore: NSPersistentStore? { _persistentStore?.takeUnretainedValue() }
    internal let key: IDKey

    /// The references behind ``entity`` and ``persistentStore``, each owning one retain that
    /// `deinit` gives back. Not stored as references: Swift destroys the stored references of
    /// an `NSObject` subclass that has no `deinit` of its own with a retain and a release of
    /// the dying object around them, two atomic operations more per ID (a save's did-save
    /// notification carries the IDs of all its objects, and they go with the objects).
    private let _entity: Unmanaged<NSEntityDescription>
    private let _persistentStore: Unmanaged<NSPersistentStore>?

    internal convenience init(entity: NSEntityDescription, store: NSPersistentStore, primaryKey: Int64) {
        self.init(entity: entity, store: store, key: IDKey(store: store.tag, root: entity.layout.rootNumber, value: primaryKey))
    }

    /// The permanent ID whose key (`store`'s tag, the root entity's number, the primary key) is already known.
    internal init(entity: __owned NSEntityDescription, store: __owned NSPersistentStore, key: IDKey) {
        _entity = .passRetained(entity)
        _persistentStore = .passRetained(store)
        self.key = key
        super.init()
    }

    /// The temporary ID numbered `serial` (by default a new number from ``IDKey/nextTemporary()``).
    internal init(temporaryFor entity: __owned NSEntityDescription, serial: Int64 = IDKey.nextTemporary()) {
        self.key = IDKey(store: IDKey.temporaryStore, root: entity.layout.rootNumber, value: serial)
        _entity = .passRetained(entity)
        _persistentStore = nil
        super.init()
    }

    deinit {
        _entity.release()
        _persistentStore?.release()
    }

    /// Whether the ID is temporary: the object has not been saved yet.
    open var isTemporaryID: Bool { key.store == IDKey.temporaryStore }

    /// The primary key (`Z_PK`) of a permanent ID; `nil` for a temporary one.
    internal var primaryKey: Int64? { isTemporaryID ? nil : key.value }

    /// A URL that identifies the object across launches:
    /// `x-coredata://<store UUID>/<Entity>/p<primary key>` (temporary: `x-coredata:///<Entity>/t<number>`).
    /// ``NSPersistentStoreCoordinator/managedObjectID(forURIRepresentation:)`` turns it back into an ID.
    open func uriRepresentation() -> URL {
        let name = entity.name ?? ""
        if isTemporaryID {
            return URL(string: "x-coredata:///\(name)/t\(IDKey.processToken)\(key.value)")!
        }
        // (A negative key stands for a reference object of a store you write that is not a positive integer.)
        let host = Self.uriHost(persistentStore?.identifier ?? "")
        if key.value < 0, let store = persistentStore, let reference = store.uriReference(of: self) {
            return URL(string: "x-coredata://\(host)/\(name)/p\(reference)")!
        }
        return URL(string: "x-coredata://\(host)/\(name)/p\(key.value)")!
    }

    /// A store identifier as the host of a URI: as it is when it can be one (a UUID, as Core Data
    /// makes them), percent-encoded otherwise (an identifier set by hand, or read from a store
    /// another tool wrote). ``NSPersistentStoreCoordinator/managedObjectID(forURIRepresentation:)``
    /// decodes it.
    internal static func uriHost(_ identifier: String) -> String {
        func isPlain(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): return true
            default: return false
            }
        }
        if identifier.utf8.allSatisfy(isPlain) { return identifier }
        return identifier.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? ""
    }

    /// A cheap mix of the key (sets and dictionaries of IDs hash it again with their own seed).
    open override var hash: Int {
        Int(truncatingIfNeeded: UInt64(bitPattern: key.value) &* 0x9E37_79B9_7F4A_7C15)
            ^ (key.root &* 31 &+ key.store)
    }

    /// Equal IDs name the same object: same store, same entity hierarchy, same key. (Decided
    /// without a dynamic cast when `object` is an `NSManagedObjectID`: sets of IDs compare on
    /// every hash collision.)
    open override func isEqual(_ object: Any?) -> Bool {
        // What `==` of sets of IDs passes: an ID boxed as `NSObject`, read in place.
        if let address = ExistentialPeek.object(in: object, boxedAs: NSManagedObjectID.self) {
            if address == UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) { return true }
            return Unmanaged<NSObject>.fromOpaque(address)._withUnsafeGuaranteedRef { other in
                guard let other = other as? NSManagedObjectID else { return false }
                return other.key == key
            }
        }
        guard let object else { return false }
        if Swift.type(of: object) == NSManagedObjectID.self {
            // The existential holds the reference in its first word.
            let address = withUnsafeBytes(of: object) { $0.load(as: UnsafeRawPointer.self) }
            let other = Unmanaged<NSManagedObjectID>.fromOpaque(address).takeUnretainedValue()
            return other === self || other.key == key
        }
        guard let other = object as? NSManagedObjectID else { return false }
        return other === self || other.key == key
    }

    /// The ID itself: object IDs are immutable.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override var description: String { "<\(uriRepresentation().absoluteString)>" }
}

/// What makes two object IDs equal, in a form that hashes fast: the store, the root entity's
/// number, and the primary key (or a temporary serial number).
internal struct IDKey: Hashable, Sendable {
    var store: Int
    var root: Int
    var value: Int64

    static let temporaryStore = -1
    /// Set in the tag of a store that hears which of its objects contexts hold (an
    /// `NSIncrementalStore`: `NSPersistentStore.reportsRegistrations`), so that the registry
    /// tells such keys from the built-in stores' by their bits alone (`StoreRegistrations.swift`).
    static let reportedStoreFlag = 1 << 30
    /// Whether a registry owner (``packedOwner``) is that of a store whose registrations are
    /// reported: its tag has ``reportedStoreFlag`` and is not ``temporaryStore``.
    @inline(__always)
    static func isReported(owner: Int64) -> Bool { owner >> 62 == 1 }
    private static let counter = AtomicCounter()
    static func nextTemporary() -> Int64 { counter.next() }
    static let processToken = UUID().uuidString
}

/// A thread-safe counter.
internal final class AtomicCounter: Sendable {
    private let value = Atomic<Int64>(0)
    func next() -> Int64 { value.add(1, ordering: .relaxed).newValue }
}

/// Reads the reference inside an `Any?` without copying the existential (the `isEqual(_:)` of
/// sets' `==` gets the other element boxed as `NSObject`; a copy and a dynamic cast per hash
/// collision were most of the cost of building a set of objects).
internal enum ExistentialPeek {
    /// The address of the object in `value` if `value` holds a reference whose static type when
    /// boxed was `NSObject` or `type` (so its first word is the reference), else `nil`.
    @inline(__always)
    static func object(in value: borrowing Any?, boxedAs type: AnyClass) -> UnsafeRawPointer? {
        withUnsafeBytes(of: value) { bytes -> UnsafeRawPointer? in
            guard bytes.count == 4 * MemoryLayout<Int>.size else { return nil }
            let metadata = bytes.load(fromByteOffset: 3 * MemoryLayout<Int>.size, as: UnsafeRawPointer?.self)
            guard let metadata, UInt(bitPattern: metadata) == nsObjectMetadata
                    || metadata == unsafeBitCast(type, to: UnsafeRawPointer.self) else { return nil }
            return bytes.load(as: UnsafeRawPointer.self)
        }
    }

    private static let nsObjectMetadata = UInt(bitPattern: unsafeBitCast(NSObject.self as AnyClass, to: UnsafeRawPointer.self))
}
