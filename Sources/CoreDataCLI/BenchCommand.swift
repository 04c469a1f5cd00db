import ArgumentParser

/// `coredata bench`: placeholder until the benchmark lands.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench", abstract: "Benchmarks against raw SQLite and GRDB.")
    @Flag(help: "A small run, for CI.") var quick = false
    func run() throws { print("bench: not yet") }
}
