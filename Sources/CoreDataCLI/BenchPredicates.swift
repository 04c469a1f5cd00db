import CoreDataExamples
import Foundation

// Issue 4's predicate workloads, the parts every engine shares: the data set, the queries and
// the checks. The engines are in BenchPredicates{CoreData,Raw,GRDB}.swift.
//
// One table of `rows` products (a full run: 100,000):
// - `code`, text, indexed: `K0000`…, `rows / 20` distinct values (5,000), so `code == ?` finds 20 rows,
//   spread over the table (row i has code i mod 5,000);
// - `name`, text, not indexed: a given name and a surname, in mixed case and with diacritics
//   ("ÉMILE Dupont", "zoe Müller", "Zoë garcía"); given names follow a Zipf law, so a prefix
//   search stops after a few rows for common names and after a few thousand for rare ones;
// - `category`, text, 50 values `C00`…`C49`;
// - `amount`, Integer 64, 1…99,999.
//
// Every engine reads `amount` of each row it returns; a repetition's checksum is the sum of those
// (for (g): of each group's weighted sum and its average), compared with the one computed here.

enum PredicateBench {
    static let workloads: [BenchWorkload] = [.equalityFetch, .prefixSearch, .lookupByID, .groupedAggregates]

    /// `BEGINSWITH[cd]`'s limit.
    static let prefixLimit = 7
    static let categoryCount = 50

    /// The data set for a table of `rows` rows, made once per run.
    static func data(rows: Int, folder: BenchFolder) -> DataSet {
        folder.prepared("predicate-data-\(rows)") { DataSet(rows: rows) }
    }

    /// The folding of `[cd]`, as the library's `cd_strop` applies it (`PredicateStrings.fold`):
    /// Foundation's case and diacritic folding, locale-independent.
    static func folded(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    /// Whether `text`, folded, starts with the bytes of an already folded, non-empty prefix:
    /// what raw SQLite's and GRDB's `bench_begins_cd(name, ?)` return.
    @inline(__always)
    static func hasFoldedPrefix(_ text: String, _ foldedPrefix: UnsafeRawBufferPointer) -> Bool {
        !foldedPrefix.isEmpty && folded(text).utf8.starts(with: foldedPrefix)
    }

    /// The same for a folded prefix given as a string.
    static func hasFoldedPrefix(_ text: String, _ foldedPrefix: String) -> Bool {
        var prefix = foldedPrefix
        return prefix.withUTF8 { hasFoldedPrefix(text, UnsafeRawBufferPointer($0)) }
    }

    /// The checksum of one group of (g): its sum weighted by its category's number, plus its
    /// average in hundredths.
    @inline(__always)
    static func groupChecksum(category: String, sum: Int64, average: Double) -> Int {
        let weight = Int(category.dropFirst()) ?? -1_000_000
        return (weight + 1) &* Int(sum) &+ Int((average * 100).rounded())
    }

    /// The SQL table of raw SQLite and GRDB (Core Data's `ZPRODUCT` has the same columns under
    /// its own names, plus `Z_ENT` and `Z_OPT`), and the index on `code`.
    static let createTable = "CREATE TABLE product (id INTEGER PRIMARY KEY, code TEXT, name TEXT, category TEXT, amount INTEGER)"
    static let createIndex = "CREATE INDEX product_code ON product (code)"
    static let insertSQL = "INSERT INTO product (id, code, name, category, amount) VALUES (?, ?, ?, ?, ?)"
    /// The queries of raw SQLite and GRDB statements. Core Data returns objects in primary-key
    /// order without sort descriptors (its SQL ends in `ORDER BY t0.Z_PK`), so these do too;
    /// the `ORDER BY` costs nothing (the index on `code` holds the rowid in order).
    static let selectColumns = "SELECT id, code, name, category, amount FROM product"
    static let equalitySQL = selectColumns + " WHERE code = ? ORDER BY id"
    static let prefixSQL = selectColumns + " WHERE bench_begins_cd(name, ?) ORDER BY id LIMIT \(prefixLimit)"
    static let lookupSQL = selectColumns + " WHERE id = ?"
    static let groupSQL = "SELECT category, SUM(amount), AVG(amount) FROM product GROUP BY category"

    /// A fetched row of raw SQLite and GRDB statements: a small class, as an app would have.
    final class ProductRow {
        let id: Int64
        let code: String
        let name: String
        let category: String
        let amount: Int64

        init(id: Int64, code: String, name: String, category: String, amount: Int64) {
            (self.id, self.code, self.name, self.category, self.amount) = (id, code, name, category, amount)
        }
    }

    /// A group of (g), as raw SQLite and GRDB statements read it.
    struct GroupRow {
        var category: String
        var sum: Int64
        var average: Double
    }

    /// The table's rows and the queries of each workload, deterministic for a row count.
    struct DataSet: Sendable {
        let rows: Int
        /// Row i has primary key i + 1.
        let codes: [String]
        let names: [String]
        let categories: [String]
        let amounts: [Int64]
        /// (d): distinct codes, in random order.
        let equalityCodes: [String]
        /// (e): prefixes of given names in random case and with or without their diacritics
        /// ("ÉMI", "zo", "Ång"), as the user typed them (each engine folds them).
        let prefixes: [String]
        /// (f): distinct primary keys, in random order.
        let lookupKeys: [Int64]
        /// (e): the rows each prefix finds (indexes, at most ``PredicateBench/prefixLimit``, in
        /// table order), computed in Swift with the same folding.
        let prefixMatches: [[Int]]

        init(rows: Int) {
            self.rows = rows
            var random = SplitMix64(seed: 4)
            let codeCount = max(1, rows / 20)
            codes = (0..<rows).map { "K" + Self.padded($0 % codeCount, 4) }
            let weights = Self.givenNames.indices.map { 1.0 / Double($0 + 1) }
            let total = weights.reduce(0, +)
            var cumulative: [Double] = []
            var running = 0.0
            for weight in weights { running += weight / total; cumulative.append(running) }
            var names: [String] = []
            names.reserveCapacity(rows)
            for _ in 0..<rows {
                let draw = random.unit()
                let stem = cumulative.firstIndex { draw < $0 } ?? cumulative.count - 1
                let given = Self.spelling(of: stem, &random)
                let surname = Self.cased(Self.surnames[random.below(Self.surnames.count)], &random)
                names.append(given + " " + surname)
            }
            self.names = names
            categories = (0..<rows).map { _ in "C" + Self.padded(random.below(PredicateBench.categoryCount), 2) }
            amounts = (0..<rows).map { _ in Int64(1 + random.below(99_999)) }

            let codeOrder = Self.shuffled(codeCount, &random)
            equalityCodes = (0..<BenchWorkload.equalityFetch.queries(size: rows)).map { "K" + Self.padded(codeOrder[$0 % codeCount], 4) }
            prefixes = (0..<BenchWorkload.prefixSearch.queries(size: rows)).map { _ in
                let spelling = Self.spelling(of: random.below(Self.givenNames.count), &random)
                return String(spelling.prefix(2 + random.below(3)))
            }
            let lookupCount = min(rows, BenchWorkload.lookupByID.queries(size: rows))
            lookupKeys = Self.shuffled(rows, &random).prefix(lookupCount).map { Int64($0 + 1) }
            prefixMatches = Self.matches(of: prefixes, in: names)
        }

        /// What every engine must report for `workload` (see the file's comment).
        func expectedChecksum(_ workload: BenchWorkload) -> Int {
            switch workload {
            case .equalityFetch:
                var sumByCode: [String: Int] = [:]
                for row in 0..<rows { sumByCode[codes[row], default: 0] += Int(amounts[row]) }
                return equalityCodes.reduce(0) { $0 + sumByCode[$1, default: 0] }
            case .prefixSearch:
                return prefixMatches.reduce(0) { total, matches in total + matches.reduce(0) { $0 + Int(amounts[$1]) } }
            case .lookupByID:
                return lookupKeys.reduce(0) { $0 + Int(amounts[Int($1) - 1]) }
            case .groupedAggregates:
                var sums: [String: (sum: Int64, count: Int)] = [:]
                for row in 0..<rows { sums[categories[row], default: (0, 0)].sum += amounts[row]; sums[categories[row]]!.count += 1 }
                let one = sums.reduce(0) { $0 + PredicateBench.groupChecksum(category: $1.key, sum: $1.value.sum, average: Double($1.value.sum) / Double($1.value.count)) }
                return one * workload.queries(size: rows)
            default:
                return 0
            }
        }

        /// The rows each prefix finds among `names` (indexes, at most ``PredicateBench/prefixLimit``).
        private static func matches(of prefixes: [String], in names: [String]) -> [[Int]] {
            let foldedNames = names.map { Array(PredicateBench.folded($0).utf8) }
            return prefixes.map { prefix in
                let folded = Array(PredicateBench.folded(prefix).utf8)
                var found: [Int] = []
                for row in names.indices where foldedNames[row].starts(with: folded) {
                    found.append(row)
                    if found.count == PredicateBench.prefixLimit { break }
                }
                return found
            }
        }

        /// How many rows a search of (e) reads on average before it has its 7 (or the table ends).
        func averagePrefixScan() -> Double {
            let scans = prefixMatches.map { $0.count == PredicateBench.prefixLimit ? $0.last! + 1 : rows }
            return Double(scans.reduce(0, +)) / Double(max(1, scans.count))
        }

        /// Given names, each with its spelling without diacritics where it has some: `[cd]`
        /// makes them one name. The order is their frequency (Zipf: the first is the most common).
        static let givenNames: [[String]] = [
            ["Emma"], ["Noah"], ["Émile", "Emile"], ["Zoë", "Zoe"], ["Léa", "Lea"], ["Lucas"],
            ["Chloé", "Chloe"], ["José", "Jose"], ["Inès", "Ines"], ["Mia"], ["Noël", "Noel"],
            ["Hélène", "Helene"], ["Jürgen", "Jurgen"], ["Björn", "Bjorn"], ["Åsa", "Asa"],
            ["François", "Francois"], ["Anaïs", "Anais"], ["Oliver"], ["Loïc", "Loic"],
            ["André", "Andre"], ["Göran", "Goran"], ["Agnès", "Agnes"], ["Jérôme", "Jerome"],
            ["Benoît", "Benoit"], ["Cécile", "Cecile"], ["Sophia"], ["Maël", "Mael"],
            ["Raphaël", "Raphael"], ["Thaïs", "Thais"], ["Ángel", "Angel"], ["Renée", "Renee"],
            ["Ethan"], ["Çağla", "Cagla"], ["Ñuño", "Nuno"], ["Zoé", "Zoe"], ["Isla"],
            ["Mårten", "Marten"], ["Dorothée", "Dorothee"], ["Éléonore", "Eleonore"], ["Liam"],
        ]
        static let surnames = [
            "Dupont", "Müller", "García", "Nguyen", "Smith", "Løvaas", "Kowalski", "Jørgensen",
            "Núñez", "O'Brien", "Öztürk", "Lefèvre", "Rossi", "Andersson", "Çelik", "Schäfer",
        ]

        /// One of a given name's spellings, in one of three cases.
        private static func spelling(of stem: Int, _ random: inout SplitMix64) -> String {
            let spellings = givenNames[stem]
            return cased(spellings[random.below(spellings.count)], &random)
        }

        /// The name as written, in capitals or in lower case.
        private static func cased(_ name: String, _ random: inout SplitMix64) -> String {
            switch random.below(3) {
            case 0: name.uppercased()
            case 1: name.lowercased()
            default: name
            }
        }

        private static func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }

        /// 0..<count in random order.
        private static func shuffled(_ count: Int, _ random: inout SplitMix64) -> [Int] {
            var values = Array(0..<count)
            for index in stride(from: count - 1, to: 0, by: -1) { values.swapAt(index, random.below(index + 1)) }
            return values
        }
    }
}
