import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on the folder of a SQLite store's file, held by a staged migration from
/// its reading of the store's version to its last handler: another process's (or another
/// thread's) staged migration of a store there waits for it, then finds the store migrated, so
/// that no step and no handler runs twice. The folder, not the file: closing a descriptor of the
/// file would drop the `fcntl` locks SQLite's connections of this process hold on it. A staged
/// migration a handler starts on its own thread (a container it loads) does not wait for the one
/// it runs in. The lock goes when the value does.
///
/// ```swift
/// guard let lock = try StoreFileMigrationLock(path: url.path) else { return } // no file: nothing to migrate
/// defer { withExtendedLifetime(lock) {} }
/// ```
internal final class StoreFileMigrationLock {
    /// The locked folder's descriptor; -1 when this thread held the lock already.
    private var descriptor: Int32 = -1
    private let folder: String
    private static let heldKey = "CoreData.StoreFileMigrationLock.held"

    /// The folders this thread holds the lock of.
    private static var held: Set<String> {
        get { Thread.current.threadDictionary[heldKey] as? Set<String> ?? [] }
        set { Thread.current.threadDictionary[heldKey] = newValue }
    }

    /// Waits for the lock on the folder of the store file at `path`; `nil` if there is no file.
    init?(path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        folder = URL(fileURLWithPath: path).deletingLastPathComponent().resolvingSymlinksInPath().path
        guard !Self.held.contains(folder) else { return }
        let opened = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard opened >= 0 else {
            throw CoreDataError.make(.migration, "Can't open the folder of the store at \(path) to migrate it: \(String(cString: strerror(errno)))",
                                     extra: [NSFilePathErrorKey: path])
        }
        while flock(opened, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let reason = String(cString: strerror(errno))
                close(opened)
                throw CoreDataError.make(.migration, "Can't lock the store at \(path) to migrate it: \(reason)", extra: [NSFilePathErrorKey: path])
            }
        }
        descriptor = opened
        Self.held.insert(folder)
    }

    deinit {
        guard descriptor >= 0 else { return }
        Self.held.remove(folder)
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
