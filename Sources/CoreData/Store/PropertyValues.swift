import Foundation

/// How an entity's values are laid out in a ``PropertyValues`` buffer: one slot per property
/// index, either **narrow** (an 8-byte payload and a tag byte: attributes of kind Integer
/// 16/32/64, Double, Float, Boolean, Date) or **wide** (a whole ``StoreValue``: every other
/// property). Narrow slots hold no references (but for the rare overflow value, in a box:
/// ``NarrowTag/overflow``), so a buffer of them needs no destruction and is a third of the size.
///
/// The buffer's tail, in bytes: the wide slots first (24 bytes each), then the narrow payloads
/// (8 each), then the narrow slots' tag bytes (``NarrowTag``), rounded up to 8.
///
/// Shapes are immortal (never freed): buffers refer to theirs without a retain. One is made per
/// pattern of narrow and wide slots, when a model whose entity has that pattern first freezes,
/// and one per count for values built without an entity (``PropertyValues/init(_:)``): their
/// number is bounded by the models' shapes, not by how many models a process builds.
@usableFromInline
internal final class ValueShape: @unchecked Sendable {
    /// Where one property's value lives: the byte offset of its payload (a whole `StoreValue`
    /// for a wide slot) and of its tag byte (-1: wide).
    @usableFromInline
    internal struct Slot {
        @usableFromInline let payload: Int32
        @usableFromInline let tag: Int32
    }

    /// The number of slots (property indexes).
    @usableFromInline let count: Int
    /// The slots by property index.
    @usableFromInline let slots: UnsafeMutablePointer<Slot>
    /// The number of wide slots (the first `wideCount * 24` bytes of the tail).
    let wideCount: Int
    /// The tail's size in 8-byte words.
    let wordCount: Int
    /// The tail of an all-null buffer: wide slots `.null`, tags `.null`, payloads 0.
    private let nullImage: UnsafeMutablePointer<UInt64>

    /// A shape for `count` properties; `isNarrow(index)` says which slots are narrow.
    private init(count: Int, isNarrow: (Int) -> Bool) {
        self.count = count
        slots = .allocate(capacity: max(count, 1))
        let narrow = (0..<count).filter(isNarrow)
        let wide = (0..<count).filter { !isNarrow($0) }
        wideCount = wide.count
        let wideBytes = wide.count * MemoryLayout<StoreValue>.stride
        let payloadBytes = narrow.count * 8
        let tagBytes = (narrow.count + 7) / 8 * 8
        wordCount = (wideBytes + payloadBytes + tagBytes) / 8
        for (n, index) in wide.enumerated() {
            (slots + index).initialize(to: Slot(payload: Int32(n * MemoryLayout<StoreValue>.stride), tag: -1))
        }
        for (n, index) in narrow.enumerated() {
            (slots + index).initialize(to: Slot(payload: Int32(wideBytes + n * 8), tag: Int32(wideBytes + payloadBytes + n)))
        }
        nullImage = .allocate(capacity: max(wordCount, 1))
        nullImage.initialize(repeating: 0, count: max(wordCount, 1))
        let raw = UnsafeMutableRawPointer(nullImage)
        for n in 0..<wide.count {
            // The bit pattern of `.null` (trivial: no payload), whatever the enum's layout.
            withUnsafeBytes(of: StoreValue.null) { raw.advanced(by: n * MemoryLayout<StoreValue>.stride).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
    }

    /// The immortal shape for an entity layout's properties, narrow where `storageKinds` allows.
    /// A shape depends only on which slots are narrow, so entities (of any model) with the same
    /// pattern share one: a process that builds models again and again makes no new shapes.
    static func make(storageKinds: ContiguousArray<ManagedStorageKind>) -> ValueShape {
        checkOffsets
        let narrow = storageKinds.map { kind in
            switch kind {
            case .integer16, .integer32, .integer64, .double, .bool, .date: return true
            default: return false
            }
        }
        return entityShapes.withLock { shapes in
            if let shape = shapes[narrow] { return shape }
            let shape = Unmanaged.passRetained(ValueShape(count: narrow.count) { narrow[$0] }).takeUnretainedValue()
            shapes[narrow] = shape
            return shape
        }
    }

    /// The entities' shapes, by their pattern of narrow slots.
    private static let entityShapes = Locked<[[Bool]: ValueShape]>([:]) // not `Mutex`: see `Locked`

    /// Checks once that ``ValuesStorage/headerOffset`` and ``ValuesStorage/tailOffset`` are
    /// where `ManagedBuffer` puts the header and the tail.
    private static let checkOffsets: Void = {
        let shape = ValueShape.wide(count: 1) // immortal: outlives the buffer
        let storage = shape.newNulls()
        let address = Unmanaged.passUnretained(storage).toOpaque()
        storage.withUnsafeMutablePointers { header, elements in
            precondition(UnsafeMutableRawPointer(header) == address + ValuesStorage.headerOffset
                         && UnsafeMutableRawPointer(elements) == address + ValuesStorage.tailOffset,
                         "CoreData: unexpected ManagedBuffer layout")
        }
        // `PropertyValues.prefetch(at:)` reads the values as the buffer's address.
        precondition(MemoryLayout<PropertyValues>.size == MemoryLayout<UnsafeRawPointer>.size,
                     "CoreData: unexpected PropertyValues layout")
    }()

    private static let wideShapes = Locked<[Int: ValueShape]>([:])

    /// The immortal all-wide shape of `count` slots (values built without an entity layout).
    static func wide(count: Int) -> ValueShape {
        wideShapes.withLock { shapes in
            if let shape = shapes[count] { return shape }
            let shape = Unmanaged.passRetained(ValueShape(count: count) { _ in false }).takeUnretainedValue()
            shapes[count] = shape
            return shape
        }
    }

    /// Writes the all-null tail at `tail` (uninitialized memory of ``wordCount`` words).
    @inline(__always)
    func initializeNulls(_ tail: UnsafeMutableRawPointer) {
        tail.copyMemory(from: nullImage, byteCount: wordCount * 8)
    }

    /// A new buffer holding `.null` in every slot.
    @inline(__always)
    func newNulls() -> ValuesStorage {
        let storage = unsafeDowncast(ValuesStorage.create(minimumCapacity: wordCount) { _ in ValuesHeader(shape: self) }, to: ValuesStorage.self)
        initializeNulls(storage.tail)
        return storage
    }
}

/// What a narrow slot holds, in its tag byte.
@usableFromInline
internal enum NarrowTag {
    @usableFromInline static let null: UInt8 = 0
    @usableFromInline static let int: UInt8 = 1
    @usableFromInline static let bool: UInt8 = 2
    @usableFromInline static let double: UInt8 = 3
    @usableFromInline static let date: UInt8 = 4
    /// Any other value (a mistyped one, kept for validation to report): in a box its payload
    /// holds (``OverflowBox``).
    @usableFromInline static let overflow: UInt8 = 5
}

/// Where some property indexes' values are in buffers of one shape
/// (``PropertyValues/slotPlan(for:)``).
internal struct SlotPlan {
    let shape: ObjectIdentifier
    let slots: [ValueShape.Slot]
}

@usableFromInline
internal struct ValuesHeader {
    /// The shape's address (immortal: not retained), with bit 0 set once a narrow slot of the
    /// buffer has held an overflow value (``NarrowTag/overflow``): only then may narrow payloads
    /// hold references (see ``ValuesStorage/set(_:at:)``). One word, not a shape and a separate
    /// table: the buffer of ten integers (GRDB's `Item`) is then 120 bytes, within glibc's
    /// fast bins (128-byte chunks), which allocate and free with much less work than 144-byte ones.
    @usableFromInline var shapeBits: UInt

    @usableFromInline init(shape: ValueShape) {
        shapeBits = UInt(bitPattern: Unmanaged.passUnretained(shape).toOpaque())
    }

    /// The flag of ``shapeBits``.
    @usableFromInline static let overflowFlag: UInt = 1

    /// The shape, without its flag.
    @inlinable var shape: ValueShape {
        @inline(__always) get { Self.shape(fromBits: shapeBits).takeUnretainedValue() }
    }

    /// The shape whose address, with the flag, is `bits`.
    @inlinable @inline(__always)
    static func shape(fromBits bits: UInt) -> Unmanaged<ValueShape> {
        Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits & ~overflowFlag).unsafelyUnwrapped)
    }

    /// Whether a narrow slot has held an overflow value.
    @inlinable var mayHaveOverflow: Bool {
        @inline(__always) get { shapeBits & Self.overflowFlag != 0 }
    }
}

/// An overflow value of a narrow slot (``NarrowTag/overflow``), held by the slot's payload as an
/// owned reference.
internal final class OverflowBox {
    let value: StoreValue
    init(_ value: StoreValue) { self.value = value }

    /// The box whose address is the payload `bits`.
    @inline(__always)
    static func at(_ bits: UInt) -> Unmanaged<OverflowBox> {
        Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped)
    }
}

/// The buffer of a ``PropertyValues``: a header and the shape's tail.
///
/// The header is read through its address, never through `header` (a class property: every
/// access would be checked for exclusivity at run time).
@usableFromInline
internal final class ValuesStorage: ManagedBuffer<ValuesHeader, UInt64> {
    /// The buffer's shape.
    @inlinable var shape: ValueShape {
        @inline(__always) get { withUnsafeMutablePointerToHeader { $0.pointee.shape } }
    }
    /// Whether a narrow slot has held an overflow value (its payload may then be a reference).
    @inlinable var mayHaveOverflow: Bool {
        @inline(__always) get { withUnsafeMutablePointerToHeader { $0.pointee.mayHaveOverflow } }
    }
    /// Where the header starts in the object (after the object header: metadata and reference
    /// counts, two words), as `ManagedBuffer` places it.
    @inlinable static var headerOffset: Int {
        let align = MemoryLayout<ValuesHeader>.alignment
        return (2 * MemoryLayout<Int>.size + align - 1) & ~(align - 1)
    }
    /// Where the tail starts in the object.
    @inlinable static var tailOffset: Int {
        let align = MemoryLayout<UInt64>.alignment
        return (headerOffset + MemoryLayout<ValuesHeader>.size + align - 1) & ~(align - 1)
    }

    /// The start of the tail.
    @inlinable var tail: UnsafeMutableRawPointer {
        @inline(__always) get { withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0) } }
    }
    deinit {
        // The shape read without a retain and release (shapes are never freed: `ValueShape.make`
        // and `wide` keep every shape they make).
        Self.shape(at: Unmanaged.passUnretained(self).toOpaque())._withUnsafeGuaranteedRef { shape in
            let wide = shape.wideCount
            if wide > 0 { tail.assumingMemoryBound(to: StoreValue.self).deinitialize(count: wide) }
            if mayHaveOverflow { forEachOverflowBox(of: shape) { $0.release() } }
        }
    }

    /// Calls `body` with each overflow value's box (a narrow slot tagged ``NarrowTag/overflow``).
    private func forEachOverflowBox(of shape: ValueShape, _ body: (Unmanaged<OverflowBox>) -> Void) {
        let raw = tail
        for index in 0..<shape.count {
            let slot = shape.slots[index]
            guard slot.tag >= 0, raw.load(fromByteOffset: Int(slot.tag), as: UInt8.self) == NarrowTag.overflow else { continue }
            body(OverflowBox.at(raw.load(fromByteOffset: Int(slot.payload), as: UInt.self)))
        }
    }

    /// Sets the header's flag: a narrow slot holds, or has held, an overflow value's box.
    private func setOverflowFlag() {
        withUnsafeMutablePointerToHeader { $0.pointee.shapeBits |= ValuesHeader.overflowFlag }
    }

    /// The shape of the buffer at `address`, read from its header without a retain.
    @inlinable @inline(__always)
    static func shape(at address: UnsafeMutableRawPointer) -> Unmanaged<ValueShape> {
        ValuesHeader.shape(fromBits: address.load(fromByteOffset: headerOffset, as: UInt.self))
    }

    /// A copy of this buffer (the wide values retained).
    @usableFromInline @inline(never)
    final func copy() -> ValuesStorage {
        let shape = self.shape
        let copy = unsafeDowncast(ValuesStorage.create(minimumCapacity: shape.wordCount) { _ in ValuesHeader(shape: shape) }, to: ValuesStorage.self)
        let source = tail, target = copy.tail
        let wideBytes = shape.wideCount * MemoryLayout<StoreValue>.stride
        target.assumingMemoryBound(to: StoreValue.self).initialize(from: source.assumingMemoryBound(to: StoreValue.self), count: shape.wideCount)
        (target + wideBytes).copyMemory(from: source + wideBytes, byteCount: shape.wordCount * 8 - wideBytes)
        if mayHaveOverflow {
            // The copy's narrow payloads share the boxes: one more reference each.
            copy.setOverflowFlag()
            forEachOverflowBox(of: shape) { _ = $0.retain() }
        }
        return copy
    }
}

/// An object's, snapshot's or row's values by property index: what `ContiguousArray<StoreValue>`
/// was, in a buffer laid out by the entity's ``ValueShape`` (integers, numbers, Booleans and dates
/// in 8 bytes each, no destruction for them but for an overflow value's box). Copy-on-write: an
/// object, its snapshot and the store's row share one buffer until one of them writes.
///
/// Read and written as `StoreValue`s through the subscript; the typed accessors
/// (``int64(at:)``, ``setInt64(_:at:)``) skip the enum on the hot paths.
@usableFromInline
internal struct PropertyValues: @unchecked Sendable {
    /// `nil`: no slots.
    @usableFromInline internal var storage: ValuesStorage?

    /// No values (count 0).
    @inlinable init() { storage = nil }

    /// Hints the processor to bring the buffer in (``prefetchThreeLines(from:)``), for a walk
    /// that will read it soon. `mutating` only so that a call on an object's values reads them in
    /// place (a read would copy them: a retain and release of the buffer); changes nothing.
    @inline(__always)
    mutating func prefetchInPlace() {
        withUnsafeMutablePointer(to: &self) { Self.prefetch(at: $0) }
    }

    /// Hints the processor to bring in the buffer of the values at `address` (in an array's
    /// element), read as the buffer's address alone: no copy of the values, so no retain and
    /// release.
    @inline(__always)
    static func prefetch(at address: UnsafePointer<PropertyValues>) {
        // The struct is its storage reference: one word, the buffer's address or 0.
        guard let base = UnsafeRawPointer(address).load(as: UnsafeRawPointer?.self) else { return }
        prefetchThreeLines(from: base)
    }

    /// `.null` in every slot of `shape`.
    @inline(__always)
    init(nullsOf shape: ValueShape) { storage = shape.count == 0 ? nil : shape.newNulls() }

    /// `values` in an all-wide buffer (values made without an entity layout).
    init<S: Sequence>(_ values: S) where S.Element == StoreValue {
        let array = ContiguousArray(values)
        guard !array.isEmpty else { storage = nil; return }
        let shape = ValueShape.wide(count: array.count)
        storage = shape.newNulls()
        for (index, value) in array.enumerated() { self[index] = value }
    }

    /// The number of slots.
    @inlinable var count: Int { storage?.shape.count ?? 0 }

    /// The buffer's address: hot paths read and write through it, so that reading a slot of an
    /// object's or a save's values retains nothing (the reference is turned into an address at
    /// once, before anything that could release it; these values keep the buffer alive).
    @inlinable @inline(__always)
    internal var _address: UnsafeMutableRawPointer {
        precondition(storage != nil, "PropertyValues index out of range")
        return Unmanaged.passUnretained(storage.unsafelyUnwrapped).toOpaque()
    }

    /// Makes the buffer this value's own before a write.
    @inlinable @inline(__always)
    internal mutating func _makeUnique() {
        if !isKnownUniquelyReferenced(&storage!) { storage = storage!.copy() }
    }

    /// The slot of `index` in the buffer at `address`, bounds-checked.
    @inlinable @inline(__always)
    internal static func _slot(_ address: UnsafeMutableRawPointer, _ index: Int) -> ValueShape.Slot {
        return ValuesStorage.shape(at: address)._withUnsafeGuaranteedRef { shape in
            precondition(index >= 0 && index < shape.count, "PropertyValues index out of range")
            return shape.slots[index]
        }
    }

    /// The value at `index`.
    @inlinable
    subscript(index: Int) -> StoreValue {
        @inline(__always) get {
            let address = _address
            let slot = Self._slot(address, index)
            let tail = address + ValuesStorage.tailOffset
            if slot.tag < 0 { return tail.advanced(by: Int(slot.payload)).assumingMemoryBound(to: StoreValue.self).pointee }
            let payload = tail.load(fromByteOffset: Int(slot.payload), as: UInt64.self)
            switch tail.load(fromByteOffset: Int(slot.tag), as: UInt8.self) {
            case NarrowTag.null: return .null
            case NarrowTag.int: return .int(Int64(bitPattern: payload))
            case NarrowTag.bool: return .bool(payload != 0)
            case NarrowTag.double: return .double(Double(bitPattern: payload))
            case NarrowTag.date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: payload)))
            default: return ValuesStorage._overflowValue(address, at: index)
            }
        }
        set {
            _makeUnique()
            let address = _address
            let slot = Self._slot(address, index)
            if slot.tag < 0 {
                // A wide slot: the old value is destroyed and the new one moved in, inline.
                (address + ValuesStorage.tailOffset + Int(slot.payload)).assumingMemoryBound(to: StoreValue.self).pointee = newValue
            } else {
                ValuesStorage._set(address, newValue, at: index)
            }
        }
    }

    /// Calls `body` with the value at `index`, borrowed in place when the slot holds a whole
    /// `StoreValue` (a string is not retained to be read): binding at save.
    @inlinable @inline(__always)
    func withValue<R>(at index: Int, _ body: (borrowing StoreValue) -> R) -> R {
        let address = _address
        let slot = Self._slot(address, index)
        if slot.tag < 0 {
            return body((address + ValuesStorage.tailOffset + Int(slot.payload)).assumingMemoryBound(to: StoreValue.self).pointee)
        }
        return body(self[index])
    }

    /// The slots of `indexes` in this buffer's shape, looked up once for many buffers of that
    /// shape (a save's rows of one entity): ``forEachInteger(_:integer:other:)`` then reads
    /// each buffer's values with no lookup per slot. `nil` for empty values.
    func slotPlan(for indexes: [Int]) -> SlotPlan? {
        guard let storage else { return nil }
        let address = Unmanaged.passUnretained(storage).toOpaque()
        return SlotPlan(shape: ObjectIdentifier(storage.shape), slots: indexes.map { Self._slot(address, $0) })
    }

    /// For each slot of `plan` in order, in the values at `address` (an array's element):
    /// `integer(value)` if the slot holds an integer, else `other(n)` (`n`: the slot's position
    /// in the plan; the caller reads the value by index). Returns `false`, having called neither,
    /// if the buffer's shape is not the plan's. The values are read as the buffer's address
    /// alone, as ``prefetch(at:)`` reads them: no copy, so no retain and release of a buffer
    /// that a save's walk over its rows finds no longer cached (three atomic operations a row).
    /// The values at `address` must stay alive and unchanged for the whole call.
    @inline(__always)
    static func forEachInteger(at address: UnsafePointer<PropertyValues>, _ plan: SlotPlan,
                               integer: (Int64) -> Void, other: (Int) -> Void) -> Bool {
        guard let base = UnsafeRawPointer(address).load(as: UnsafeMutableRawPointer?.self),
              UInt(bitPattern: ValuesStorage.shape(at: base).toOpaque()) == UInt(bitPattern: plan.shape) else { return false }
        let tail = base + ValuesStorage.tailOffset
        plan.slots.withUnsafeBufferPointer { slots in
            for n in slots.indices {
                if let int = Self._int64(tail, slots[n]) { integer(int) } else { other(n) }
            }
        }
        return true
    }

    /// The integer at `index`, or `nil` if the slot holds anything else (the caller then reads
    /// the `StoreValue`): the `@Managed` integer getters' fast path.
    @inlinable @inline(__always)
    func int64(at index: Int) -> Int64? {
        let address = _address
        return Self._int64(address + ValuesStorage.tailOffset, Self._slot(address, index))
    }

    /// The integer in `slot` of the tail at `tail`, or `nil` if it is wide or holds anything else.
    @inlinable @inline(__always)
    internal static func _int64(_ tail: UnsafeMutableRawPointer, _ slot: ValueShape.Slot) -> Int64? {
        guard slot.tag >= 0, tail.load(fromByteOffset: Int(slot.tag), as: UInt8.self) == NarrowTag.int else { return nil }
        return tail.load(fromByteOffset: Int(slot.payload), as: Int64.self)
    }

    /// Stores `.int(value)` at `index`.
    @inlinable @inline(__always)
    mutating func setInt64(_ value: Int64, at index: Int) {
        _makeUnique()
        let address = _address
        let slot = Self._slot(address, index)
        let tail = address + ValuesStorage.tailOffset
        if slot.tag >= 0 && tail.load(fromByteOffset: Int(slot.tag), as: UInt8.self) != NarrowTag.overflow {
            tail.storeBytes(of: value, toByteOffset: Int(slot.payload), as: Int64.self)
            tail.storeBytes(of: NarrowTag.int, toByteOffset: Int(slot.tag), as: UInt8.self)
        } else {
            ValuesStorage._set(address, .int(value), at: index)
        }
    }

    /// Values in `storage` (moved in).
    @inline(__always)
    init(_ storage: consuming ValuesStorage) { self.storage = storage }

    /// Direct writes into a buffer just made by ``ValueShape/newNulls()`` and not yet shared (a
    /// decoded row), whose slots still hold `.null`: valid while the buffer is alive.
    struct Initializer {
        let address: UnsafeMutableRawPointer
        let slots: UnsafeMutablePointer<ValueShape.Slot>
        var tail: UnsafeMutableRawPointer { address + ValuesStorage.tailOffset }

        @inline(__always)
        init(_ storage: borrowing ValuesStorage) {
            address = Unmanaged.passUnretained(copy storage).toOpaque()
            slots = ValuesStorage.shape(at: address)._withUnsafeGuaranteedRef { $0.slots }
        }

        /// Stores `.int(value)` over the `.null` at `index`.
        @inline(__always)
        func initializeInt64(_ value: Int64, at index: Int) {
            let slot = slots[index]
            if slot.tag >= 0 {
                tail.storeBytes(of: value, toByteOffset: Int(slot.payload), as: Int64.self)
                tail.storeBytes(of: NarrowTag.int, toByteOffset: Int(slot.tag), as: UInt8.self)
            } else {
                ValuesStorage._set(address, .int(value), at: index)
            }
        }

        /// Stores `value` over the `.null` at `index`.
        @inline(__always)
        func initialize(_ value: StoreValue, at index: Int) {
            ValuesStorage._set(address, value, at: index)
        }
    }

    /// Writes `value` at `index` of a buffer just made by ``init(nullsOf:)`` and not yet shared,
    /// whose slot still holds `.null`: no uniqueness check, nothing destroyed.
    @inline(__always)
    mutating func initialize(_ value: StoreValue, at index: Int) {
        ValuesStorage._set(_address, value, at: index)
    }
}

extension ValuesStorage {
    /// Stores `value` at `index` of the buffer at `address` (unique).
    @usableFromInline
    static func _set(_ address: UnsafeMutableRawPointer, _ value: StoreValue, at index: Int) {
        Unmanaged<ValuesStorage>.fromOpaque(address)._withUnsafeGuaranteedRef { $0.set(value, at: index) }
    }

    /// The overflow value of narrow slot `index` of the buffer at `address` (tagged
    /// ``NarrowTag/overflow``: its payload is the box's address).
    @usableFromInline @inline(never)
    static func _overflowValue(_ address: UnsafeMutableRawPointer, at index: Int) -> StoreValue {
        let slot = PropertyValues._slot(address, index)
        return OverflowBox.at((address + tailOffset).load(fromByteOffset: Int(slot.payload), as: UInt.self)).takeUnretainedValue().value
    }

    /// Stores `value` at `index` (the buffer is unique).
    final func set(_ value: StoreValue, at index: Int) {
        let shape = self.shape
        precondition(index >= 0 && index < shape.count, "PropertyValues index out of range")
        let slot = shape.slots[index]
        let raw = tail
        if slot.tag < 0 {
            raw.advanced(by: Int(slot.payload)).assumingMemoryBound(to: StoreValue.self).pointee = value
            return
        }
        // An overflow value this write replaces: its box's reference, given back once the slot is written.
        var replacedBox: UInt = 0
        if raw.load(fromByteOffset: Int(slot.tag), as: UInt8.self) == NarrowTag.overflow {
            replacedBox = raw.load(fromByteOffset: Int(slot.payload), as: UInt.self)
        }
        let tag: UInt8
        switch value {
        case .null: tag = NarrowTag.null
        case .int(let v): tag = NarrowTag.int; raw.storeBytes(of: v, toByteOffset: Int(slot.payload), as: Int64.self)
        case .bool(let v): tag = NarrowTag.bool; raw.storeBytes(of: v ? 1 : 0, toByteOffset: Int(slot.payload), as: UInt64.self)
        case .double(let v): tag = NarrowTag.double; raw.storeBytes(of: v, toByteOffset: Int(slot.payload), as: Double.self)
        case .date(let v): tag = NarrowTag.date; raw.storeBytes(of: v.timeIntervalSinceReferenceDate, toByteOffset: Int(slot.payload), as: Double.self)
        default:
            tag = NarrowTag.overflow
            let box = UInt(bitPattern: Unmanaged.passRetained(OverflowBox(value)).toOpaque())
            raw.storeBytes(of: box, toByteOffset: Int(slot.payload), as: UInt.self)
            setOverflowFlag()
        }
        raw.storeBytes(of: tag, toByteOffset: Int(slot.tag), as: UInt8.self)
        if replacedBox != 0 { OverflowBox.at(replacedBox).release() }
    }
}

extension PropertyValues: RandomAccessCollection, MutableCollection {
    @inlinable var startIndex: Int { 0 }
    @inlinable var endIndex: Int { count }
    @inlinable var indices: Range<Int> { 0..<count }
    @inlinable func index(after i: Int) -> Int { i + 1 }
    @inlinable func index(before i: Int) -> Int { i - 1 }
}

extension PropertyValues: Equatable, Hashable {
    @usableFromInline static func == (lhs: PropertyValues, rhs: PropertyValues) -> Bool {
        if lhs.storage === rhs.storage { return true }
        guard lhs.count == rhs.count else { return false }
        for index in 0..<lhs.count where lhs[index] != rhs[index] { return false }
        return true
    }

    @usableFromInline func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for value in self { hasher.combine(value) }
    }
}

extension PropertyValues: ExpressibleByArrayLiteral {
    @usableFromInline init(arrayLiteral elements: StoreValue...) { self.init(elements) }
}
