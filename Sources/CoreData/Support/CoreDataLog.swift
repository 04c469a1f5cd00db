import Foundation

/// Messages for the developer, on standard error, in the form Apple's framework logs them
/// (`CoreData: error: …`). For what goes wrong without an error to throw to anyone: a fault
/// that could not be fulfilled (the next save throws it), a clean-up left for later.
internal enum CoreDataLog {
    static func error(_ message: String) { write("error", message) }
    static func warning(_ message: String) { write("warning", message) }

    private static func write(_ level: String, _ message: String) {
        FileHandle.standardError.write(Data("CoreData: \(level):  \(message)\n".utf8))
    }
}
