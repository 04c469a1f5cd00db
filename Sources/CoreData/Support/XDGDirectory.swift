import Foundation

/// The XDG Base Directory folders Linux uses where Apple platforms have Application Support and
/// Caches: `$XDG_DATA_HOME` (`~/.local/share`) and `$XDG_CACHE_HOME` (`~/.cache`).
internal enum XDGDirectory {
    case data
    case cache

    /// The folder: the variable when it is an absolute path, else its default under `$HOME`.
    func url(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let (variable, fallback) = self == .data ? ("XDG_DATA_HOME", ".local/share") : ("XDG_CACHE_HOME", ".cache")
        if let value = environment[variable], value.hasPrefix("/") {
            return URL(fileURLWithPath: value, isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(fallback, isDirectory: true)
    }
}
