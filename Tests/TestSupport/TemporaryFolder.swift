import Foundation

/// A new folder under the temporary directory, removed with its contents when the value goes:
/// a test stack's own folder, or a test's that opens its stores itself.
///
/// For exit tests (`#expect(processExitsWith:)`): their child process stops before any `deinit`
/// can run, so a test stack made there with a folder of its own would leave it behind. The
/// parent test makes the folder, the child's closure captures its `path` (a capture list: exit
/// tests take only `Codable` captures) and opens its stack there, and the parent keeps the folder
/// until the child has exited (`withExtendedLifetime(folder) {}` after the `#expect`: the capture
/// copies only the path, so nothing else keeps the folder alive).
public final class TemporaryFolder {
    public let url: URL
    public var path: String { url.path }

    public init(_ prefix: String = "coredata-tests") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
