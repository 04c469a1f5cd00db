extension Array where Element: AnyObject {
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

    /// The element at `offset`, handed to `body` borrowed, without a retain and release (see
    /// ``forEachUnretained(_:)``).
    @inline(__always)
    internal func withUnretained<R>(at offset: Int, _ body: (Element) throws -> R) rethrows -> R {
        try withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: Unmanaged<Element>.self) { try $0[offset]._withUnsafeGuaranteedRef(body) }
        }
    }
}
