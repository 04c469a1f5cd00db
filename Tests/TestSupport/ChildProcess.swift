import Foundation

// What the test targets share (a library target of its own, linked by each of them): running
// another program to the end, as the tests of the `coredata` executable and of a client's
// compiler do.

/// Runs `executable` with `arguments` (and `environment`, when given, instead of this
/// process's; in `directory`, when given) to its end; its exit status and what it wrote, standard output and standard
/// error together.
///
/// ```swift
/// let run = try runToEnd(builtProduct("coredata"), ["inspect", url])
/// #expect(run.status == 0, "\(run.output)")
/// ```
public func runToEnd(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                     in directory: URL? = nil) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = executable
    if let directory { process.currentDirectoryURL = directory }
    process.arguments = arguments
    if let environment { process.environment = environment }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text)
}

/// The package's product `name` (an executable), in the folder of the test binary, where
/// `swift build --build-tests` (which `swift test` runs) puts it.
public func builtProduct(_ name: String) -> URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
}
