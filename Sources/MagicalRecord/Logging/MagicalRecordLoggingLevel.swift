/// How much MagicalRecord logs, as Swift sees MagicalRecord 2.3's `MagicalRecordLoggingLevel`:
/// each level logs its own messages and those of every level above it.
///
/// ```swift
/// MagicalRecord.setLoggingLevel(.verbose)
/// ```
public enum MagicalRecordLoggingLevel: UInt, Sendable {
    /// Logs nothing.
    case off = 0
    /// Logs errors: a store that cannot be added, a save that fails.
    case error = 0b1
    /// Logs warnings and errors.
    case warn = 0b11
    /// Logs informative messages (each save, each context made), warnings and errors.
    case info = 0b111
    /// Logs debugging messages too.
    case debug = 0b1111
    /// Logs verbose diagnostics too (saves skipped because nothing changed, each step of a save).
    case verbose = 0b11111
    /// Logs everything.
    case all = 0xFFFF_FFFF_FFFF_FFFF

    /// Whether a message of `level` is logged at this level.
    internal func logs(_ level: MagicalRecordLoggingLevel) -> Bool {
        level != .off && rawValue & level.rawValue == level.rawValue
    }
}
