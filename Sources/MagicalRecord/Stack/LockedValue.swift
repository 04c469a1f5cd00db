import Foundation

/// One value behind a lock (`NSLock`, which ThreadSanitizer understands: docs/TESTING.md), for
/// MagicalRecord's process-wide state.
internal final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock. `body` must not call back into MagicalRecord.
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
