import Foundation

/// Messages for the developer, on standard error, in the form Apple's framework logs them
/// (`CoreData: error: …`). For what goes wrong without an error to throw to anyone: a fault
/// that could not be fulfilled (the next save throws it), a clean-up left for later.
internal enum CoreDataLog {
    static func error(_ message: String) { write("error", message) }
    static func warning(_ message: String) { write("warning", message) }

    private static func write(_ level: String, _ message: String) {
        let line = "CoreData: \(level):  \(message)"
        recent.withLock { lines in
            if lines.count == 64 { lines.removeFirst() }
            lines.append(line)
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// The last 64 lines logged (for tests).
    static let recent = Locked<[String]>([])
}
