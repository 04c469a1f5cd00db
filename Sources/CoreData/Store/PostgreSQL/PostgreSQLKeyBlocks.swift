import Foundation

/// The option key of how many keys a PostgreSQL store takes from `Z_PRIMARYKEY` at a time for
/// a table (an integer from 1 to 1,000,000; 100 when absent).
///
/// A save that inserts rows needs their keys. Rather than taking exactly those from the
/// database each time (a statement and a commit of its own on the server), the store takes a
/// block of at least this many and hands the rest to its next saves. Within one store (one
/// coordinator), keys still follow insertion order. Across servers they do not: each server's
/// rows take the keys of its own block, as with a PostgreSQL sequence's `CACHE`; keys a store
/// held when it closed are never used. `1` takes exactly the keys each save needs, so keys
/// follow the order in which saves began on every server.
///
/// ```swift
/// try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil,
///     at: URL(string: "postgres://app@db.example.com/cars")!,
///     options: [NSPostgreSQLKeyBlockSizeOption: 1])
/// ```
public let NSPostgreSQLKeyBlockSizeOption = "NSPostgreSQLKeyBlockSizeOption"

/// Keys a PostgreSQL store took from `Z_PRIMARYKEY` (``NSPostgreSQLKeyBlockSizeOption``) and
/// has not given to a row yet, by root entity number: one range a table, above every key the
/// store gave before. Keys taken are never given twice, even by a save that then fails.
internal final class PostgreSQLKeyBlocks: Sendable {
    /// The fewest keys taken at a time.
    let size: Int
    private let blocks = Locked<[Int: Range<Int64>]>([:])

    /// The block size when ``NSPostgreSQLKeyBlockSizeOption`` is absent.
    static let defaultSize = 100
    /// The largest block size the option may ask for.
    static let maximumSize = 1_000_000

    /// The statement that makes a key transaction's commit wait for the disk, as the database's
    /// setting says (the pool turns that off for it: `PostgreSQLTimeouts.keyTransactionStatement`).
    static let durableCommit = PostgreSQLStatement(sql: "SET LOCAL synchronous_commit TO DEFAULT")

    /// The block size `options` ask for; throws 134080 when the option is not an integer from 1
    /// to ``maximumSize``.
    init(options: [AnyHashable: Any]?) throws {
        guard let value = options?[NSPostgreSQLKeyBlockSizeOption] else {
            size = Self.defaultSize
            return
        }
        // A Swift `true` is no size (an NSNumber of 1 is).
        let size = type(of: value) == Bool.self ? nil : integerOptionValue(value)
        guard let size, size > 0, size <= Self.maximumSize else {
            throw CoreDataError.make(.persistentStoreOpen,
                "\(NSPostgreSQLKeyBlockSizeOption) must be an integer from 1 to \(Self.maximumSize) (how many keys the store takes at a time), not '\(value)'")
        }
        self.size = size
    }

    /// The first of `count` keys of table `number` (they follow each other), taken from its
    /// block; `nil` when the block holds fewer (the store then takes ``reservation(for:)`` from
    /// the database and keeps the rest: ``keep(reservedFrom:reserved:used:of:)``).
    func take(_ count: Int, of number: Int) -> Int64? {
        blocks.withLock { blocks in
            guard let block = blocks[number], block.count >= count else { return nil }
            blocks[number] = block.lowerBound + Int64(count)..<block.upperBound
            return block.lowerBound
        }
    }

    /// How many keys to take from the database for a save that needs `count`.
    func reservation(for count: Int) -> Int { max(count, size) }

    /// Keeps what a reservation of `reserved` keys from `first` left after its save's `used` as
    /// table `number`'s block; the keys of the block before, if any, are never used. A block
    /// above them (another save's reservation that finished first) stays: the next rows never
    /// take keys below a save's.
    func keep(reservedFrom first: Int64, reserved: Int, used: Int, of number: Int) {
        let keys = first + Int64(used)..<first + Int64(reserved)
        blocks.withLock { blocks in
            if let block = blocks[number], block.lowerBound > keys.lowerBound { return }
            blocks[number] = keys
        }
    }

    /// Forgets table `number`'s block, after the store gave keys above it another way (a batch
    /// insert), so that the next save's rows come after those in key order.
    func discard(_ number: Int) {
        _ = blocks.withLock { $0.removeValue(forKey: number) }
    }
}
