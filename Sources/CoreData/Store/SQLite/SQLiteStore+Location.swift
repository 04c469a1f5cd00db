import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Where a SQLite store lives: a regular file (or a path where one will be made), or, for the URL
// `/dev/null`, an in-memory database of the store's own.

extension SQLiteStore {
    /// Whether `url` is `/dev/null`, which names an in-memory SQLite store, as on Apple
    /// platforms (SwiftUI previews and tests use `URL(fileURLWithPath: "/dev/null")`).
    static func isInMemory(_ url: URL) -> Bool {
        url.isFileURL && url.standardizedFileURL.path == "/dev/null"
    }

    /// What SQLite opens for the store at `url`: the file's path, or for `/dev/null` a new
    /// in-memory database. Its name is unique, so each store (each coordinator) starts empty;
    /// SQLite's `memdb` VFS lets all the store's connections (its writer and its readers) open
    /// that one database by name, with the usual locking, and keeps it while a connection to it
    /// is open (the writer, until the store closes).
    static func databaseName(for url: URL) -> String {
        isInMemory(url) ? "file:/coredata-\(UUID().uuidString)?vfs=memdb" : url.path
    }

    /// Refuses, before SQLite touches it, a path that holds something other than a regular file
    /// (a link to one is fine) or a regular file that is not a SQLite database. A path with
    /// nothing there, and an empty file, become a new store (an empty file is Apple's sign that
    /// a store is to be made there).
    ///
    /// A directory, a FIFO (SQLite would wait forever to read its header), a device or a socket
    /// is `NSFileReadUnknownError` (256) with `NSSQLiteErrorDomain` 14 (`SQLITE_CANTOPEN`), the
    /// error Apple's store reports for a store file SQLite cannot open; a file that is not a
    /// SQLite database is `NSFileReadCorruptFileError` (259).
    static func checkFile(at url: URL) throws {
        try checkRegularFile(at: url)
        let path = url.path
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        let header = handle.readData(ofLength: 16)
        guard !header.isEmpty else { return } // an empty file becomes a new store
        if header != Data("SQLite format 3\0".utf8) {
            throw CoreDataError.make(.fileReadCorruptFile,
                "The file at \(path) is not a SQLite database, so it can't be opened as a Core Data store; it was left untouched.",
                extra: [NSFilePathErrorKey: path, NSSQLiteErrorDomain: 26])
        }
    }

    /// The first half of ``checkFile(at:)``: throws 256 when something is at `url` that is not a
    /// regular file (a directory, a FIFO, a device, a socket).
    static func checkRegularFile(at url: URL) throws {
        let path = url.path
        var info = stat()
        guard stat(path, &info) == 0 else { return } // nothing there: a new store (SQLite reports other failures)
        guard info.st_mode & S_IFMT == S_IFREG else {
            let kind: String
            switch info.st_mode & S_IFMT {
            case S_IFDIR: kind = "a directory"
            case S_IFIFO: kind = "a FIFO"
            case S_IFSOCK: kind = "a socket"
            case S_IFCHR, S_IFBLK: kind = "a device"
            default: kind = "something other than a regular file"
            }
            throw CoreDataError.make(.fileReadUnknown,
                "The store at \(path) can't be used: it is \(kind), not a store file; it was left untouched",
                extra: [NSFilePathErrorKey: path, NSSQLiteErrorDomain: 14])
        }
    }
}
