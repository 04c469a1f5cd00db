import Foundation
import Testing
@testable import CoreData

/// Where the model tests find their files.
enum ModelTestSupport {
    /// The package root, derived from this file's path (`Tests/CoreDataTests/Model/…`).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent() // Model
        .deletingLastPathComponent() // CoreDataTests
        .deletingLastPathComponent() // Tests
        .deletingLastPathComponent()

    /// The test target's `Fixtures` resource folder.
    static var fixtures: URL {
        guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            preconditionFailure("The test bundle has no Fixtures folder")
        }
        return url
    }

    static func fixture(_ path: String) -> URL { fixtures.appendingPathComponent(path) }

    /// The public version-hash vectors shared next to the package (`../shared/fixtures/version-hashes`);
    /// read at run time, never copied into the repository.
    static let sharedVersionHashes: URL = packageRoot
        .deletingLastPathComponent()
        .appendingPathComponent("shared/fixtures/version-hashes")

    static var sharedVersionHashesAvailable: Bool {
        FileManager.default.fileExists(atPath: sharedVersionHashes.appendingPathComponent("LegacyEcosystemUserDataModel_v12.xcdatamodel/contents").path)
            && FileManager.default.fileExists(atPath: sharedVersionHashes.appendingPathComponent("LegacyPublicSubstrateDataModel_v8.xcdatamodel/contents").path)
    }

    static let sharedFixturesMissing: Comment = "Skipped: the shared version-hash fixtures (../shared/fixtures/version-hashes next to the package root) are absent"

    /// A scratch directory removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-model-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
