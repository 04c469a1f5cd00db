import Foundation

/// MagicalRecord's logging, Linux version: each message is one line on standard error,
/// `MagicalRecord: <message>`, written at once (no logging package).
///
/// The Objective-C framework logs through its own macros over `NSLog` (or CocoaLumberjack when
/// the app links it); this module keeps that shape without a dependency. The level is
/// process-wide, as MagicalRecord's is. The default is MagicalRecord's: `.debug` in a debug
/// build, `.error` in a release build.
extension MagicalRecord {
    /// Sets how much MagicalRecord logs, for the whole process.
    ///
    /// ```swift
    /// MagicalRecord.setLoggingLevel(.warn)     // errors and warnings only
    /// MagicalRecord.setLoggingLevel(.off)      // nothing
    /// ```
    public static func setLoggingLevel(_ level: MagicalRecordLoggingLevel) {
        MagicalRecordLog.level.withLock { $0 = level }
    }

    /// How much MagicalRecord logs (``setLoggingLevel(_:)``).
    ///
    /// ```swift
    /// if MagicalRecord.loggingLevel() == .off { print("MagicalRecord is quiet") }
    /// ```
    public static func loggingLevel() -> MagicalRecordLoggingLevel {
        MagicalRecordLog.level.withLock { $0 }
    }
}

/// Where MagicalRecord's messages go.
internal enum MagicalRecordLog {
    #if DEBUG
    static let level = LockedValue(MagicalRecordLoggingLevel.debug)
    #else
    static let level = LockedValue(MagicalRecordLoggingLevel.error)
    #endif

    /// Writes the line; tests replace it to read what was logged.
    static let sink = LockedValue<@Sendable (String) -> Void>({ line in
        FileHandle.standardError.write(Data(line.utf8))
    })

    static func error(_ message: @autoclosure () -> String) { log(.error, message) }
    static func warn(_ message: @autoclosure () -> String) { log(.warn, message) }
    static func info(_ message: @autoclosure () -> String) { log(.info, message) }
    static func verbose(_ message: @autoclosure () -> String) { log(.verbose, message) }

    private static func log(_ messageLevel: MagicalRecordLoggingLevel, _ message: () -> String) {
        guard level.withLock({ $0 }).logs(messageLevel) else { return }
        let write = sink.withLock { $0 }
        write("MagicalRecord: \(message())\n")
    }
}
