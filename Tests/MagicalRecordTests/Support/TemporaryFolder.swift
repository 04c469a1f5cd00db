import Foundation

/// A new folder under the temporary directory, removed with its contents when the value goes
/// (a copy of CoreDataTests' own, for this test target).
final class TemporaryFolder {
    let url: URL

    init(_ prefix: String = "magicalrecord-tests") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
