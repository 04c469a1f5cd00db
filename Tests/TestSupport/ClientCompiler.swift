import Foundation

/// Type-checks a client's source with `swiftc` against the package's modules this test binary
/// was built with (`CoreData`, `MagicalRecord`, …): what a client's compiler says about code
/// written against the package.
///
/// ```swift
/// let result = try ClientCompiler.typecheck("import CoreData\nlet c: NSManagedObjectContext? = nil")
/// #expect(result.ok, "\(result.output)")
/// ```
public enum ClientCompiler {
    /// Thrown when this machine can't type-check snippets (no `swiftc` on `PATH`, or no built modules).
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String { "swiftc or the built CoreData module not found" }
    }

    /// `swiftc` and the built modules, or `nil` when this machine can't type-check snippets.
    private static let toolchain: (swiftc: String, modules: String, cModules: [String], plugins: [String])? = {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = binary.deletingLastPathComponent()
        while folder.path != "/" && !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Modules/CoreData.swiftmodule").path) {
            folder = folder.deletingLastPathComponent()
        }
        let modules = folder.appendingPathComponent("Modules").path
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent() // Tests/TestSupport/ClientCompiler.swift
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
    public static func typecheck(_ source: String, languageMode: String = "6") throws -> (ok: Bool, output: String) {
        guard let toolchain = Self.toolchain else { throw Unavailable() }
        // The driver leaves a `TemporaryDirectory.*` folder in its TMPDIR: this folder, removed after.
        let folder = try TemporaryFolder("client")
        let file = folder.url.appendingPathComponent("client.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let (status, output) = try runToEnd(
            URL(fileURLWithPath: toolchain.swiftc),
            ["-typecheck", "-swift-version", languageMode, "-I", toolchain.modules]
                + toolchain.cModules.flatMap { ["-I", $0] } + toolchain.plugins + [file.path],
            environment: ProcessInfo.processInfo.environment.merging(["TMPDIR": folder.path]) { _, new in new })
        return (status == 0, output)
    }
}
