import Foundation
@testable import MagicalRecord

/// Collects what MagicalRecord logs while ``capturing(level:_:)`` runs.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    /// Everything logged, in order.
    var text: String { lock.withLock { lines.joined() } }

    /// Runs `body` logging at `level` into this capture, then puts back the level and the sink.
    func capturing<T>(level: MagicalRecordLoggingLevel, _ body: () async throws -> T) async throws -> T {
        let previousLevel = MagicalRecord.loggingLevel()
        let previousSink = MagicalRecordLog.sink.withLock { sink in
            let previous = sink
            sink = { [self] line in lock.withLock { lines.append(line) } }
            return previous
        }
        MagicalRecord.setLoggingLevel(level)
        defer {
            MagicalRecord.setLoggingLevel(previousLevel)
            MagicalRecordLog.sink.withLock { $0 = previousSink }
        }
        return try await body()
    }
}
