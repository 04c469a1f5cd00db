import Foundation

/// A new folder under the temporary directory, removed with its contents when the value goes.
///
/// For exit tests: the child stops before any `deinit` runs, so the parent test makes the folder,
/// passes its `path` in the capture list, and keeps the folder until the child has exited
/// (`withExtendedLifetime(folder) {}` after the `#expect`).
final class TemporaryFolder {
    let url: URL
    var path: String { url.path }

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("magicalrecord-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
