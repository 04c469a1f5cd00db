import CoreData
import Foundation

// MagicalRecord's entity, finder and import methods cannot throw (their Objective-C signatures
// have no `NSError **`): a fetch that fails returns nil, or 0 for a count, and its error goes to
// MagicalRecord's error handling (`+[MagicalRecord handleErrors:]`), which logs it. This is that
// one path for the methods of `Entities/`, `Finders/` and `Importing/`.

/// Where the entity, finder and import methods send the errors they cannot return.
internal enum MagicalRecordErrorReport {
    /// Logs `error`, as MagicalRecord's default error handling logs it
    /// (`MagicalRecord: error: …`), with what was being done.
    static func handle(_ error: any Error, while doing: String) {
        let nsError = error as NSError
        write("\(doing) failed: \(nsError.localizedDescription) (\(nsError.domain) \(nsError.code))")
    }

    /// Logs a problem that has no `NSError` (a key the data names that the model does not have).
    static func problem(_ message: String) {
        write(message)
    }

    /// Through MagicalRecord's log, at its error level (``MagicalRecord/setLoggingLevel(_:)``).
    private static func write(_ message: String) {
        MagicalRecordLog.error("error: \(message)")
    }
}
