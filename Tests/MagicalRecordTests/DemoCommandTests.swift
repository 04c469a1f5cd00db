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

    /// A count below 1 is refused with a message, not a crash.
    @Test(arguments: ["0", "-1"])
    func aCountBelowOneIsRefused(_ count: String) throws {
        let executable = builtProduct("coredata")
        try #require(FileManager.default.isExecutableFile(atPath: executable.path))
        let folder = try TemporaryFolder()
        let (status, text) = try runToEnd(executable, ["demo", "--count=\(count)", "--store", folder.url.appendingPathComponent("Car.sqlite").path])
        #expect(status == 64, "\(text)") // argument-parser's validation failure (EX_USAGE)
        #expect(text.contains("--count must be at least 1"), "\(text)")
    }
}
