// swift-tools-version:6.2
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "swift-coredata",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "CoreData", targets: ["CoreData"]),
        // MagicalRecord's API on top of CoreData (issue 25): `import MagicalRecord`.
        .library(name: "MagicalRecord", targets: ["MagicalRecord"]),
        // The PostgreSQL store (issue 26): `import CoreDataPostgreSQL`; links libpq, which
        // `CoreData` itself does not.
        .library(name: "CoreDataPostgreSQL", targets: ["CoreDataPostgreSQL"]),
        .executable(name: "coredata", targets: ["CoreDataCLI"]),
    ],
    dependencies: [
        // The `@Managed` accessor macro (docs/DEPENDENCIES.md).
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.0"),
        // The `coredata` command line (docs/DEPENDENCIES.md).
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Only the benchmark compares against GRDB; the library itself talks to SQLite's C API.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite3"])]
        ),
        // libpq, PostgreSQL's C client, for the PostgreSQL store's connections.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .macro(
            name: "CoreDataMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        // A cache prefetch hint for the save path's walks over cold buffers (BENCHMARKS.md),
        // and the reader of a C va_list for NSPredicate(format:arguments:).
        .target(name: "CoreDataShims"),
        .target(
            name: "CoreData",
            dependencies: ["CSQLite", "CoreDataShims", "CoreDataMacros"]
        ),
        // The PostgreSQL store's entry point and its libpq connection (docs/POSTGRESQL.md); the
        // store itself lives in CoreData (Store/PostgreSQL/), written against a connection protocol.
        .target(name: "CoreDataPostgreSQL", dependencies: ["CoreData", "CLibPQ"]),
        // MagicalRecord for Linux: depends only on CoreData.
        .target(name: "MagicalRecord", dependencies: ["CoreData"]),
        // Seed code translated to Swift, shared by the demo and the tests.
        .target(
            name: "CoreDataExamples",
            dependencies: ["CoreData", "CSQLite"],
            resources: [.copy("Resources/Car.xcdatamodeld")]
        ),
        .executableTarget(
            name: "CoreDataCLI",
            dependencies: [
                // CLibPQ: `bench --store postgres://` measures the store against libpq itself.
                "CoreData", "CoreDataExamples", "CoreDataPostgreSQL", "CLibPQ", "CSQLite", "MagicalRecord",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // What the test targets share: running another program to its end (Tests/TestSupport).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(
            name: "CoreDataTests",
            // CoreDataPostgreSQL: the predicate differential test runs on the PostgreSQL store too.
            dependencies: ["CoreData", "CoreDataExamples", "CSQLite", "CoreDataPostgreSQL", "TestSupport"],
            resources: [.copy("Fixtures")]
        ),
        // Needs a server: COREDATA_POSTGRES_URL (docs/POSTGRESQL.md); skips without one.
        .testTarget(
            name: "CoreDataPostgreSQLTests",
            dependencies: ["CoreDataPostgreSQL", "CoreData", "CoreDataExamples", "TestSupport"]
        ),
        .testTarget(
            name: "MagicalRecordTests",
            dependencies: ["MagicalRecord", "CoreData", "TestSupport"]
        ),
        // Expansion and diagnostics of `@Managed`, without the compiler (Swift Testing).
        .testTarget(
            name: "CoreDataMacrosTests",
            dependencies: [
                "CoreDataMacros",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
