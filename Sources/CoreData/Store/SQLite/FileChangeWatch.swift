#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation

/// Wakes a queue when files of one folder are written: how a store notices that another process
/// may have committed to its file (`SQLiteRemoteChanges.swift` then asks SQLite whether one
/// did). No thread of its own and no polling: the kernel's file events arrive through a
/// dispatch source on the caller's queue.
///
/// - Linux: one `inotify` descriptor watching the folder for writes, creations and moves;
///   events for other files of the folder are read and dropped.
/// - Apple platforms: vnode sources (`DispatchSource.makeFileSystemObjectSource`) on the folder
///   (entries created or removed) and on each watched file that exists, armed again when a file
///   appears or is replaced.
///
/// ``stop()`` (or the last reference going away) cancels the sources; their descriptors close
/// in the cancel handlers.
internal final class FileChangeWatch: @unchecked Sendable {
    private let folder: String
    private let names: Set<String>
    private let queue: DispatchQueue
    private let onChange: @Sendable () -> Void
    /// The live sources (confined to ``queue`` once started).
    private var sources: [String: DispatchSourceProtocol] = [:]
    private var stopped = false

    /// Starts watching `names` (file names) in `folder`; `onChange` runs on `queue` after each
    /// batch of events that concerns one of them. Throws when the folder can't be watched.
    init(folder: String, names: Set<String>, queue: DispatchQueue, onChange: @escaping @Sendable () -> Void) throws {
        self.folder = folder
        self.names = names
        self.queue = queue
        self.onChange = onChange
        // Every source is made and stored before any is resumed: their handlers, which run on
        // `queue`, find the table complete.
        try start()
        for source in sources.values { source.resume() }
    }

    deinit {
        for source in sources.values { source.cancel() }
    }

    /// Cancels the sources (their descriptors close once the cancel handlers have run).
    func stop() {
        queue.async { [self] in
            stopped = true
            for source in sources.values { source.cancel() }
            sources.removeAll()
        }
    }

    /// The error of a system call that failed.
    private func failure(_ call: String) -> NSError {
        let code = errno
        return NSError(domain: NSPOSIXErrorDomain, code: Int(code), userInfo: [
            NSLocalizedDescriptionKey: "Can't watch \(folder) for changes (\(call): \(String(cString: strerror(code))))",
            NSFilePathErrorKey: folder])
    }

    #if os(Linux)
    private func start() throws {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { throw failure("inotify_init1") }
        let mask = UInt32(IN_MODIFY) | UInt32(IN_CREATE) | UInt32(IN_MOVED_TO) | UInt32(IN_CLOSE_WRITE)
        guard inotify_add_watch(descriptor, folder, mask) >= 0 else {
            let error = failure("inotify_add_watch")
            close(descriptor)
            throw error
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in self?.readEvents(descriptor) }
        source.setCancelHandler { close(descriptor) }
        sources[folder] = source
    }

    /// Reads every pending event (`struct inotify_event`: descriptor, mask, cookie, name length,
    /// then the name) and calls ``onChange`` once if one names a watched file, or if the
    /// kernel's queue overflowed (events were dropped).
    private func readEvents(_ descriptor: Int32) {
        var relevant = false
        let capacity = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, capacity)
            guard count > 0 else { break }
            var offset = 0
            while offset + 16 <= count {
                let nameLength = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
                // The kernel's queue overflowed: events were lost, maybe a watched file's.
                if buffer.load(fromByteOffset: offset + 4, as: UInt32.self) & UInt32(IN_Q_OVERFLOW) != 0 { relevant = true }
                if nameLength > 0 && !relevant {
                    let start = buffer.advanced(by: offset + 16).assumingMemoryBound(to: CChar.self)
                    relevant = names.contains(String(cString: start))
                }
                offset += 16 + nameLength
            }
        }
        if relevant && !stopped { onChange() }
    }
    #else
    private func start() throws {
        guard let source = watch(folder, mask: [.write, .link, .rename]) else { throw failure("open") }
        sources[folder] = source
        armFiles(resume: false)
    }

    /// A vnode source on `path`, reporting to ``changed(_:)``, not resumed; `nil` when it can't be opened.
    private func watch(_ path: String, mask: DispatchSource.FileSystemEvent) -> DispatchSourceFileSystemObject? {
        let descriptor = open(path, O_EVTONLY)
        guard descriptor >= 0 else { return nil }
        let source = DispatchSource.makeFileSystemObjectSource(fileDescriptor: descriptor, eventMask: mask, queue: queue)
        source.setEventHandler { [weak self] in self?.changed(path) }
        source.setCancelHandler { close(descriptor) }
        return source
    }

    /// A source on each watched file that exists and has none (again after a delete or a rename).
    private func armFiles(resume: Bool) {
        for name in names where sources[name] == nil {
            let path = (folder as NSString).appendingPathComponent(name)
            guard let source = watch(path, mask: [.write, .extend, .delete, .rename]) else { continue }
            sources[name] = source
            if resume { source.resume() }
        }
    }

    private func changed(_ path: String) {
        guard !stopped else { return }
        if path != folder, let name = names.first(where: { (folder as NSString).appendingPathComponent($0) == path }),
           let source = sources[name] as? DispatchSourceFileSystemObject,
           !source.data.intersection([.delete, .rename]).isEmpty {
            source.cancel()
            sources[name] = nil
        }
        armFiles(resume: true)
        onChange()
    }
    #endif
}
