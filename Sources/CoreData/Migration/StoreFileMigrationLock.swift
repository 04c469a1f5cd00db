import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on the folder of a SQLite store's file, held by a staged migration from
/// its reading of the store's version to its last handler: another process's (or coordinator's)
/// staged migration of a store there waits for it, then finds the store migrated, so that no
/// step and no handler runs twice. The folder, not the file: closing a descriptor of the file
/// would drop the `fcntl` locks SQLite's connections of this process hold on it. The lock goes
/// when the value does.
///
/// ```swift
/// guard let lock = try StoreFileMigrationLock(path: url.path) else { return } // no file: nothing to migrate
/// defer { withExtendedLifetime(lock) {} }
/// ```
internal final class StoreFileMigrationLock {
    private let descriptor: Int32

    /// Waits for the lock on the folder of the store file at `path`; `nil` if there is no file.
    init?(path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        descriptor = open(URL(fileURLWithPath: path).deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CoreDataError.make(.migration, "Can't open the store at \(path) to migrate it: \(String(cString: strerror(errno)))",
                                     extra: [NSFilePathErrorKey: path])
        }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                throw CoreDataError.make(.migration, "Can't lock the store at \(path) to migrate it: \(reason)", extra: [NSFilePathErrorKey: path])
            }
        }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
