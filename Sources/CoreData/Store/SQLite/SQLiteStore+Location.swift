import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Where a SQLite store lives: a regular file, or a path where one will be made.

extension SQLiteStore {
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
            default: kind = "not a regular file"
            }
            throw CoreDataError.make(.fileReadUnknown,
                "The store at \(path) can't be opened: it is \(kind), not a store file; it was left untouched",
                extra: [NSFilePathErrorKey: path, NSSQLiteErrorDomain: 14])
        }
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
}
