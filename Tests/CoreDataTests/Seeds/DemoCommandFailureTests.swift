import Foundation
import Testing
import TestSupport

/// `coredata demo` when it can't do its job: an error of one line and a failing exit status.
@Suite("coredata demo: failures")
struct DemoCommandFailureTests {
    /// MagicalRecord's save blocks only log a failed save: the demo checks what the store holds,
    /// and exits with a failure (it reported counts and exit status 0).
    @Test func theMagicalRecordDemoFailsWhenItsSavesFail() throws {
        let executable = builtProduct("coredata")
        try #require(FileManager.default.isExecutableFile(atPath: executable.path))
        let folder = try TemporaryFolder()
        let store = folder.url.appendingPathComponent("Car.sqlite")
        // A store whose Car table refuses every insert.
        let (created, createdText) = try runToEnd(executable, ["demo", "--count", "1", "--store", store.path])
        #expect(created == 0, "\(createdText)")
        try RawSQLite.execute(store.path, "CREATE TRIGGER refuse BEFORE INSERT ON ZCAR BEGIN SELECT RAISE(ABORT, 'refused'); END")
        let (status, text) = try runToEnd(executable, ["demo", "--magicalrecord", "--count", "5", "--store", store.path])
        #expect(status != 0, "\(text)")
        #expect(text.contains("a MagicalRecord save failed"), "\(text)")
    }

    /// A PostgreSQL URL is refused (it made a SQLite file under a folder named after the URL), its
    /// password not shown; a store of another model is one line, not an error's dump.
    @Test func theDemoRefusesAURLAndSaysWhyAStoreCantBeUsed() throws {
        let executable = builtProduct("coredata")
        try #require(FileManager.default.isExecutableFile(atPath: executable.path))
        let folder = try TemporaryFolder()
        let (status, text) = try runToEnd(executable, ["demo", "--store", "postgres://bob:secret@127.0.0.1:1/db"], in: folder.url)
        #expect(status == 64, "\(text)")
        #expect(!text.contains("secret") && text.contains("postgres://bob:***@127.0.0.1:1/db"), "\(text)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)

        let other = folder.url.appendingPathComponent("Other.sqlite")
        try RawSQLite.execute(other.path, "CREATE TABLE T (x)")
        let (refused, message) = try runToEnd(executable, ["demo", "--count", "1", "--store", other.path])
        #expect(refused != 0, "\(message)")
        #expect(message.contains("The demo stopped on \(other.path)") && !message.contains("UserInfo="), "\(message)")
    }
}
