internal import CoreDataShims

extension Array where Element: AnyObject {
    /// How many elements ahead the prefetching walks (``forEachUnretainedPrefetchingHeaders(_:)``,
    /// ``forEachUnretainedPrefetching(_:)``) hint the processor to bring one in.
    @inline(__always) static var prefetchDistance: Int { 8 }

    /// Calls `body` with each element in order, borrowed without a retain and release per
    /// element (a plain `for` loop over an array of class references retains each one).
    ///
    /// Safe as long as `body` does not remove elements from this very array value: the array,
    /// which the caller holds for the duration of the call, keeps every element alive.
    @inline(__always)
    internal func forEachUnretained(_ body: (_ offset: Int, _ element: Element) throws -> Void) rethrows {
        try withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: Unmanaged<Element>.self) { references in
                for offset in references.indices {
                    try references[offset]._withUnsafeGuaranteedRef { try body(offset, $0) }
                }
            }
        }
    }

    /// ``forEachUnretained(_:)``, hinting the processor to bring in the first cache line of the
    /// element ``prefetchDistance`` places ahead (`coredata_prefetch`), for a walk that reads each
    /// element's header and little else (hashing objects into a set). A hint reads nothing, never
    /// faults. (Its loop is written out, as ``forEachUnretainedPrefetching(_:)``'s is: one loop
    /// shared through a hint closure changed what the optimizer inlines into the save's ID walk,
    /// about 30 more instructions per object.)
    @inline(__always)
    internal func forEachUnretainedPrefetchingHeaders(_ body: (_ offset: Int, _ element: Element) throws -> Void) rethrows {
        try withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: Unmanaged<Element>.self) { references in
                let count = references.count
                let ahead = Self.prefetchDistance
                for offset in 0..<count {
                    if offset + ahead < count { coredata_prefetch(UnsafeRawPointer(references[offset + ahead].toOpaque())) }
                    try references[offset]._withUnsafeGuaranteedRef { try body(offset, $0) }
                }
            }
        }
    }

    /// The element at `offset`, handed to `body` borrowed, without a retain and release (see
    /// ``forEachUnretained(_:)``).
    @inline(__always)
    internal func withUnretained<R>(at offset: Int, _ body: (Element) throws -> R) rethrows -> R {
        try withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: Unmanaged<Element>.self) { try $0[offset]._withUnsafeGuaranteedRef(body) }
        }
    }
}

extension Array where Element == NSManagedObject {
    /// ``forEachUnretained(_:)``, hinting the processor to bring each object ``prefetchDistance``
    /// objects before `body` gets to it, and its values buffer half as far ahead, once the
    /// object's own line is there (`coredata_prefetch`).
    ///
    /// For the walks of a bulk save over objects made thousands of objects earlier: each object
    /// and its values are cache misses by then, and walked one after the other (with atomic
    /// retains and releases and SQLite's locks between them, which wait for earlier reads) each
    /// miss stalled in turn. The hints only ask for memory; they read nothing themselves except
    /// the values pointer of an object a few places ahead, which the array keeps alive.
    @inline(__always)
    internal func forEachUnretainedPrefetching(_ body: (_ offset: Int, _ element: NSManagedObject) throws -> Void) rethrows {
        try withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: Unmanaged<NSManagedObject>.self) { references in
                let count = references.count
                let ahead = Self.prefetchDistance
                for offset in 0..<count {
                    if offset + ahead < count { references[offset + ahead].prefetchObject() }
                    if offset + ahead / 2 < count {
                        references[offset + ahead / 2]._withUnsafeGuaranteedRef { $0._values.prefetchInPlace() }
                    }
                    try references[offset]._withUnsafeGuaranteedRef { try body(offset, $0) }
                }
            }
        }
    }

    /// Calls `body` with each position in `0..<count` and the object at `offset(position)`,
    /// borrowed as ``withUnretained(at:_:)`` lends it, hinting the processor to bring the object
    /// ``prefetchDistance`` positions ahead in: for a save's walks over its objects by their
    /// positions in its per-store lists.
    @inline(__always)
    internal func forEachUnretainedPrefetching(positions count: Int, offset: (Int) -> Int,
                                               _ body: (_ position: Int, _ element: NSManagedObject) throws -> Void) rethrows {
        let ahead = Self.prefetchDistance
        for position in 0..<count {
            if position + ahead < count {
                withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: Unmanaged<NSManagedObject>.self) { $0[offset(position + ahead)].prefetchObject() }
                }
            }
            try withUnretained(at: offset(position)) { try body(position, $0) }
        }
    }
}

/// Hints the processor to bring the three cache lines from `base` in (`coredata_prefetch`): an
/// `NSManagedObject` or a values buffer of ten narrow values (120 bytes each), wherever it
/// starts. A hint reads nothing and never faults.
@inline(__always)
internal func prefetchThreeLines(from base: UnsafeRawPointer) {
    coredata_prefetch(base)
    coredata_prefetch(base + 64)
    coredata_prefetch(base + 128)
}

extension Unmanaged where Instance: AnyObject {
    /// Hints the processor to bring the object in (``prefetchThreeLines(from:)``).
    @inline(__always)
    internal func prefetchObject() { prefetchThreeLines(from: UnsafeRawPointer(toOpaque())) }
}
