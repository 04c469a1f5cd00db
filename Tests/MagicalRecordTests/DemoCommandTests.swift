import Foundation
import Testing
import TestSupport

/// `coredata demo --magicalrecord` (issue 25): the executable, built with the tests, runs seed 000's
/// scenario on MagicalRecord against a store in a temporary folder.
@Suite struct DemoCommandTests {
    @Test func theMagicalRecordDemoRunsSeed000sScenario() throws {
        let executable = builtProduct("coredata")
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "coredata is built beside the tests (swift build --build-tests)")
        let folder = try TemporaryFolder()
        let (status, text) = try runToEnd(executable, ["demo", "--magicalrecord", "--count", "200", "--store", folder.url.appendingPathComponent("Car.sqlite").path])
        #expect(status == 0, "\(text)")
        #expect(text.contains("insertion order kept"), "\(text)")
        let last = text.split(separator: "\n").first { $0.contains("clean up, set up again and count") }
        #expect(last?.split(separator: " ").contains("199") == true, "200 inserted, one deleted, after a new set-up: \(text)")
    }
}
