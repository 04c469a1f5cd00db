import CSQLite
import Dispatch
import Foundation
import Synchronization

// Remote change notifications (`NSPersistentStoreRemoteChangeNotificationPostOptionKey`): a
// store added with the option makes its coordinator post `.NSPersistentStoreRemoteChange` after
// every commit to its file, by any connection of any process, its own included, as Apple's
// framework does (its SQLite stores post a Darwin notification after each write, which every
// coordinator observing the file receives, the writer's own too).
//
// Every SQLite store of a file in this process shares one `SQLiteChangeChannel`. Commits are
// noticed two ways, both ending in one check on the channel's private queue:
// - in this process, the committing store tells the channel (``SQLiteChangeChannel/noteCommit()``:
//   one atomic load when no store of the file observes, else a flag and a block queued); the
//   writer never waits for the observers;
// - from other processes, a `FileChangeWatch` on the file and its `-wal` wakes the queue, and
//   the channel's own read-only connection asks SQLite whether anyone committed: `PRAGMA
//   data_version` changes exactly when another connection committed (a checkpoint, a reader, a
//   rolled-back write change nothing). The file event can come before the writer has published
//   its commit in the WAL index, so a check that finds nothing looks again after 50 ms, then
//   200 ms, 1 s and 3 s after each check that still finds nothing (``recheckDelays``); a file
//   event whose check finds nothing starts that chain again.
// Either way the check posts only if `data_version` moved since the last check, so a commit of
// this process, which the watch reports too, is posted once. Commits that come close together
// are posted once: each post reads the history token after the check, so it covers every
// commit before it.
internal final class SQLiteChangeChannel: @unchecked Sendable {
    /// The database file's path, symbolic links resolved.
    let path: String
    /// Where checks run and notifications are posted (Apple posts on a private queue too).
    private let queue: DispatchQueue
    /// How many stores observe the file: a commit with none costs one atomic load.
    private let observerCount = Atomic<Int>(0)

    private struct State {
        /// The observing stores, by subscription number (weak: a store that goes away without
        /// being removed leaves with its subscription).
        var observers: [Int: WeakStore] = [:]
        var nextSubscription = 0
        /// The connection that reads `data_version`, and the watch: only while observed.
        var connection: SQLiteConnection?
        var watch: FileChangeWatch?
        var lastDataVersion: Int64 = 0
        /// A store of this process committed since the last check.
        var localCommit = false
        var checkQueued = false
        /// The recheck chain under way: its number (a newer chain ends older ones) and the index
        /// in ``recheckDelays`` of its next check; `nil` when none is.
        var recheckChain = 0
        var recheckAttempt: Int?
    }
    private let state = Locked(State())

    private struct WeakStore { weak var store: SQLiteStore? }

    private init(path: String) {
        self.path = path
        queue = DispatchQueue(label: "NSPersistentStoreRemoteChangeNotification")
    }

    /// The channels of this process, by path.
    private static let channels = Locked<[String: WeakChannel]>([:])
    private struct WeakChannel { weak var channel: SQLiteChangeChannel? }

    /// The channel of the database file at `path` (held by the stores of the file).
    static func forFile(atPath databasePath: String) -> SQLiteChangeChannel {
        let path = URL(fileURLWithPath: databasePath).resolvingSymlinksInPath().standardizedFileURL.path
        return channels.withLock { channels in
            if let channel = channels[path]?.channel { return channel }
            channels = channels.filter { $0.value.channel != nil }
            let channel = SQLiteChangeChannel(path: path)
            channels[path] = WeakChannel(channel: channel)
            return channel
        }
    }

    /// Whether the file is being watched for other processes' commits (for tests).
    var isWatching: Bool { state.withLock { $0.watch != nil } }

    // MARK: Observers

    /// Makes `store`'s coordinator post a notification after each commit to the file, until the
    /// subscription goes away. The first observer opens the channel's connection and starts
    /// the watch; should either fail (the error is logged), commits of this process are still
    /// posted.
    func subscribe(_ store: SQLiteStore) -> RemoteChangeSubscription {
        let number = state.withLock { state -> Int in
            let number = state.nextSubscription
            state.nextSubscription += 1
            state.observers[number] = WeakStore(store: store)
            if state.connection == nil || state.watch == nil { startWatching(&state) }
            return number
        }
        observerCount.add(1, ordering: .relaxed)
        return RemoteChangeSubscription(channel: self, number: number)
    }

    /// Opens the connection and starts the watch (under the state's lock), whichever is missing:
    /// a watch that could not start (the inotify instance limit) is tried again by the next
    /// subscriber.
    private func startWatching(_ state: inout State) {
        do {
            if state.connection == nil {
                let connection = try SQLiteConnection(path: path, readOnly: true, create: false)
                state.lastDataVersion = try connection.dataVersion()
                state.connection = connection
            }
            let file = URL(fileURLWithPath: path)
            state.watch = try FileChangeWatch(folder: file.deletingLastPathComponent().path,
                                              names: [file.lastPathComponent, file.lastPathComponent + "-wal"],
                                              queue: queue) { [weak self] in self?.fileChanged() }
        } catch {
            CoreDataLog.error("Remote change notifications for \(path) will miss other processes' writes: \(error.localizedDescription)")
        }
    }

    fileprivate func unsubscribe(_ number: Int) {
        let stopped = state.withLock { state -> (FileChangeWatch?, SQLiteConnection?) in
            state.observers[number] = nil
            guard state.observers.isEmpty else { return (nil, nil) }
            defer { state.watch = nil; state.connection = nil }
            return (state.watch, state.connection)
        }
        observerCount.subtract(1, ordering: .relaxed)
        // The connection closes once the last check using it has ended.
        stopped.0?.stop()
    }

    // MARK: Commits

    /// Called by a store of this process after it committed to the file (off its write lock).
    func noteCommit() {
        guard observerCount.load(ordering: .relaxed) > 0 else { return }
        let enqueue = state.withLock { state -> Bool in
            state.localCommit = true
            guard !state.checkQueued else { return false }
            state.checkQueued = true
            return true
        }
        if enqueue { queue.async { self.check() } }
    }

    /// How long after a file event that showed no commit the check runs again, one after the
    /// other until one sees the commit: SQLite publishes a commit (in the `-shm` index, which
    /// raises no event) after it wrote the WAL frames the event reported, later still after a
    /// slow sync; a single recheck could miss it, and the commit was then posted only at the next
    /// unrelated write.
    static let recheckDelays: [Double] = [0.05, 0.2, 1, 3]

    /// The watch saw the file or its WAL written (on ``queue``). A check that finds nothing
    /// starts a new recheck chain from the shortest delay, ending the one under way: joining
    /// that one, the commit waited for its next delay (up to seconds), or for the next write if
    /// it was the last.
    func fileChanged() {
        if !check() {
            let chain = state.withLock { state -> Int in
                state.recheckChain += 1
                return state.recheckChain
            }
            scheduleRecheck(0, chain: chain)
        }
    }

    /// Checks again after ``recheckDelays``[`attempt`], and after the next delay if that check
    /// posted nothing, unless a newer chain has started.
    private func scheduleRecheck(_ attempt: Int, chain: Int) {
        guard state.withLock({ state -> Bool in
            guard state.recheckChain == chain else { return false }
            state.recheckAttempt = attempt
            return true
        }) else { return }
        queue.asyncAfter(deadline: .now() + Self.recheckDelays[attempt]) { [weak self] in
            guard let self, self.state.withLock({ $0.recheckChain == chain }) else { return }
            if !self.check(), attempt + 1 < Self.recheckDelays.count {
                self.scheduleRecheck(attempt + 1, chain: chain)
            } else {
                self.state.withLock { if $0.recheckChain == chain { $0.recheckAttempt = nil } }
            }
        }
    }

    /// The index in ``recheckDelays`` of the pending recheck's delay, if one is pending (for tests).
    var pendingRecheckAttempt: Int? { state.withLock { $0.recheckAttempt } }

    /// Posts the notification if `data_version` moved since the last check (on ``queue``),
    /// which every commit of another connection does, this process's stores' included: so a
    /// commit that both a store of this process and the watch reported is posted once. Without
    /// the connection (it could not be opened), a commit a store of this process noted is
    /// posted. Whether it posted.
    @discardableResult
    private func check() -> Bool {
        let (connection, local) = state.withLock { state -> (SQLiteConnection?, Bool) in
            defer { state.localCommit = false; state.checkQueued = false }
            return (state.connection, state.localCommit)
        }
        var changed = local
        if let connection {
            do {
                let version = try connection.dataVersion()
                changed = state.withLock { state -> Bool in
                    defer { state.lastDataVersion = version }
                    return version != state.lastDataVersion
                }
            } catch {
                CoreDataLog.error("Can't tell whether another process wrote \(path): \(error.localizedDescription)")
            }
        }
        guard changed else { return false }
        let stores = state.withLock { $0.observers.values.compactMap(\.store) }
        for store in stores { store.postRemoteChange() }
        return true
    }
}

/// A store's registration with its file's ``SQLiteChangeChannel``; deregisters when it goes
/// away (the store removed, or dropped with its coordinator).
internal final class RemoteChangeSubscription: Sendable {
    private let channel: SQLiteChangeChannel
    private let number: Int

    fileprivate init(channel: SQLiteChangeChannel, number: Int) {
        self.channel = channel
        self.number = number
    }

    deinit { channel.unsubscribe(number) }
}

extension SQLiteStore {
    /// Whether the store was added with ``NSPersistentStoreRemoteChangeNotificationPostOptionKey``.
    var postsRemoteChanges: Bool { flag(NSPersistentStoreRemoteChangeNotificationPostOptionKey) }

    /// Posts `.NSPersistentStoreRemoteChange` from the store's coordinator (on the channel's
    /// queue), with the current history token when the store records history.
    fileprivate func postRemoteChange() {
        guard let coordinator = persistentStoreCoordinator, let identifier else { return }
        var userInfo: [AnyHashable: Any] = [NSStoreUUIDKey: identifier]
        if let url { userInfo[NSPersistentStoreURLKey] = url }
        if history != nil {
            do {
                let transaction = try lastHistoryTransaction()
                if transaction > 0 { userInfo[NSPersistentHistoryTokenKey] = NSPersistentHistoryToken(storeTokens: [identifier: transaction]) }
            } catch {
                // The store was removed meanwhile (or can't be read): nothing to post for it.
                CoreDataLog.error("No remote change notification for the store at \(url?.path ?? ""): \(error.localizedDescription)")
                return
            }
        }
        CoreDataMessages.post(name: .NSPersistentStoreRemoteChange, object: coordinator, userInfo: userInfo)
    }
}
