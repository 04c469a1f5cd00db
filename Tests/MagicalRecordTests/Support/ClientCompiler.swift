import Foundation
import Testing

/// Type-checks a client's source with `swiftc` against the MagicalRecord and CoreData modules this test binary was
/// built with: what a client's compiler says about code written against the package.
enum ClientCompiler {
    /// `swiftc` and the built modules, or `nil` when this machine can't type-check snippets.
    private static let toolchain: (swiftc: String, modules: String, cModules: [String], plugins: [String])? = {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = binary.deletingLastPathComponent()
        while folder.path != "/" && !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Modules/MagicalRecord.swiftmodule").path) {
            folder = folder.deletingLastPathComponent()
        }
        let modules = folder.appendingPathComponent("Modules").path
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        // The C modules the library imports, as SwiftPM passes them to a client's build.
        let cModules = ["Sources/CSQLite", "Sources/CoreDataShims/include"].map { packageRoot.appendingPathComponent($0).path }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        guard FileManager.default.fileExists(atPath: modules),
              let swiftc = path.split(separator: ":").map({ "\($0)/swiftc" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { return nil }
        // The `@Managed` macro's plugin, as SwiftPM passes it to a client's build.
        let macroTool = folder.appendingPathComponent("CoreDataMacros-tool").path
        let plugins = FileManager.default.isExecutableFile(atPath: macroTool) ? ["-load-plugin-executable", "\(macroTool)#CoreDataMacros"] : []
        return (swiftc, modules, cModules, plugins)
    }()

    /// Type-checks `source` in `languageMode`; the compiler's diagnostics, and whether it succeeded.
    static func typecheck(_ source: String, languageMode: String = "6") throws -> (ok: Bool, output: String) {
        let toolchain = try #require(Self.toolchain, "swiftc or the built MagicalRecord module not found")
        // The driver leaves a `TemporaryDirectory.*` folder in its TMPDIR: this folder, removed after.
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("client.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: toolchain.swiftc)
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": folder.path]) { _, new in new }
        process.arguments = ["-typecheck", "-swift-version", languageMode, "-I", toolchain.modules]
            + toolchain.cModules.flatMap { ["-I", $0] } + toolchain.plugins + [file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus == 0, output)
    }
}
