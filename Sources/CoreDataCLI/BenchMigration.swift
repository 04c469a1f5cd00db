import CSQLite
import CoreData
import Foundation

// Issue 22's migration workloads: a store of 1,000,000 `Item` rows written with version 1 of a
// model, opened with a later version and migrated in place.
//
// - (m1) version 2 adds an optional attribute (`flag`): swift-coredata infers the mapping and
//   migrates; raw SQLite runs `ALTER TABLE … ADD COLUMN`.
// - (m2) version 3 renames `n` to `count` (its renaming identifier is `n`) and makes it
//   non-optional with the default 0: raw SQLite renames the column and fills its NULLs.
// - (m3) the same change through an inferred mapping run by `NSMigrationManager`, as a mapping
//   model at store open runs (object by object, in batches, into a new file whose contents then
//   replace the store's): raw SQLite copies the table (`INSERT … SELECT` into a new one).
//
// Every engine migrates a fresh copy of the same version-1 file (copied before the timed part)
// and is checked afterwards, outside the timed part, by one query over the migrated table. This
// file must not import GRDB (see BenchRawSQLite.swift); the GRDB engines are in BenchGRDB.swift.

enum MigrationBench {
    /// Every tenth row has no `n` (NULL), for (m2)'s fill.
    static func value(_ i: Int) -> Int64? { i % 10 == 0 ? nil : Int64(i) }

    /// The checksum every engine must report: the rows, plus the sum of the migrated column
    /// ((m2): `count`, its NULLs filled with 0) or the rows whose new column is NULL ((m1)).
    static func expectedChecksum(_ workload: BenchWorkload, size: Int) -> Int {
        switch workload {
        case .migrationAddAttribute: 2 * size
        default: size + (0..<size).reduce(0) { $0 + Int(value($1) ?? 0) }
        }
    }

    /// The query that checks a migrated file (the same for every engine).
    static func checkSQL(_ workload: BenchWorkload) -> String {
        switch workload {
        case .migrationAddAttribute: #"SELECT count(*) + sum("ZFLAG" IS NULL) FROM "ZITEM""#
        default: #"SELECT count(*) + sum("ZCOUNT") FROM "ZITEM" WHERE "ZCOUNT" IS NOT NULL"#
        }
    }

    /// The SQL raw SQLite (and GRDB's statements) run for the same change, in one transaction.
    static func rawSQL(_ workload: BenchWorkload) -> [String] {
        switch workload {
        case .migrationAddAttribute:
            [#"ALTER TABLE "ZITEM" ADD COLUMN "ZFLAG" INTEGER"#]
        case .migrationThroughManager:
            [#"CREATE TABLE "ZITEM_NEW" ("Z_PK" INTEGER PRIMARY KEY, "Z_ENT" INTEGER, "Z_OPT" INTEGER, "ZNAME" VARCHAR, "ZCOUNT" INTEGER)"#,
             #"INSERT INTO "ZITEM_NEW" SELECT "Z_PK", "Z_ENT", "Z_OPT", "ZNAME", coalesce("ZN", 0) FROM "ZITEM""#,
             #"DROP TABLE "ZITEM""#,
             #"ALTER TABLE "ZITEM_NEW" RENAME TO "ZITEM""#]
        default:
            [#"ALTER TABLE "ZITEM" RENAME COLUMN "ZN" TO "ZCOUNT""#,
             #"UPDATE "ZITEM" SET "ZCOUNT" = 0 WHERE "ZCOUNT" IS NULL"#]
        }
    }

    /// A fresh copy of the version-1 store of `size` rows (made once per run), and the models.
    static func freshSource(size: Int, folder: BenchFolder, stem: String) throws -> URL {
        let source = try folder.prepared("migration-source-\(size)") { try makeSource(size: size, folder: folder) }
        let copy = folder.freshFile(stem)
        try FileManager.default.copyItem(at: source, to: copy)
        return copy
    }

    /// The checksum of a migrated file, read outside the timed part.
    static func check(_ file: URL, _ workload: BenchWorkload) throws -> Int {
        try RawConnection(path: file.path).scalar(checkSQL(workload))
    }

    // MARK: The versioned model

    /// The `.xcdatamodeld` bundle: versions 1 (`name`, optional `n`), 2 (+ optional `flag`) and 3
    /// (`n` renamed `count`, non-optional, default 0).
    static func bundle(in folder: BenchFolder) throws -> URL {
        try folder.prepared("migration-model") {
            let bundle = folder.url.appendingPathComponent("BenchMigration.xcdatamodeld")
            let name = #"<attribute name="name" optional="YES" attributeType="String"/>"#
            let versions = [
                "BenchMigration 1": [name, #"<attribute name="n" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>"#],
                "BenchMigration 2": [name, #"<attribute name="n" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>"#,
                                     #"<attribute name="flag" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>"#],
                "BenchMigration 3": [name, #"<attribute name="count" attributeType="Integer 64" defaultValueString="0" renamingIdentifier="n" usesScalarValueType="YES"/>"#],
            ]
            for (version, attributes) in versions {
                let folder = bundle.appendingPathComponent("\(version).xcdatamodel")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let contents = """
                    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                        <entity name="Item" syncable="YES">
                            \(attributes.joined(separator: "\n        "))
                        </entity>
                    </model>
                    """
                try Data(contents.utf8).write(to: folder.appendingPathComponent("contents"))
            }
            return bundle
        }
    }

    /// Version `number` of the bench model, read from its `.xcdatamodel` folder.
    static func model(_ number: Int, folder: BenchFolder) throws -> NSManagedObjectModel {
        let url = try bundle(in: folder).appendingPathComponent("BenchMigration \(number).xcdatamodel")
        guard let model = NSManagedObjectModel(contentsOf: url) else { throw BenchFailure("cannot read \(url.path)") }
        return model
    }

    /// Writes the version-1 store: Core Data creates it (its tables and metadata), and the rows
    /// go in by SQL, the fastest way to make a large file (the bench does not time it).
    private static func makeSource(size: Int, folder: BenchFolder) throws -> URL {
        let file = folder.freshFile("migration-source")
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: try model(1, folder: folder))
            let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: file, options: nil)
            try coordinator.remove(store)
        }
        let db = try RawConnection(path: file.path)
        let entity = try db.scalar(#"SELECT "Z_ENT" FROM "Z_PRIMARYKEY" WHERE "Z_NAME" = 'Item'"#)
        try db.execute("BEGIN IMMEDIATE")
        let insert = try db.prepare(#"INSERT INTO "ZITEM" ("Z_PK", "Z_ENT", "Z_OPT", "ZNAME", "ZN") VALUES (?, ?, 1, ?, ?)"#)
        defer { sqlite3_finalize(insert) }
        for i in 0..<size {
            sqlite3_bind_int64(insert, 1, Int64(i + 1))
            sqlite3_bind_int64(insert, 2, Int64(entity))
            let name = "item \(i)"
            sqlite3_bind_text(insert, 3, name, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self)) // SQLITE_TRANSIENT
            if let n = value(i) { sqlite3_bind_int64(insert, 4, n) } else { sqlite3_bind_null(insert, 4) }
            try db.run(insert)
        }
        try db.execute(#"UPDATE "Z_PRIMARYKEY" SET "Z_MAX" = \#(size) WHERE "Z_ENT" = \#(entity)"#)
        try db.execute("COMMIT")
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return file
    }

    // MARK: Engines

    /// swift-coredata: `addPersistentStore` with the destination version and the automatic
    /// migration options (the mapping inferred, the source version found in the bundle).
    static func coreDataRepetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        let destination = try model(workload == .migrationAddAttribute ? 2 : 3, folder: folder)
        let options: [AnyHashable: Any] = [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true]
        if workload == .migrationThroughManager {
            let source = try model(1, folder: folder)
            let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
            return {
                let file = try freshSource(size: size, folder: folder, stem: "coredata-manager")
                defer { BenchFolder.remove(file) }
                var sample = try BenchMeter.measure {
                    try NSPersistentStoreCoordinator.migrateStore(at: file, from: source, to: destination, mapping: mapping)
                    return 0
                }
                sample.checksum = try check(file, workload)
                return sample
            }
        }
        return {
            let file = try freshSource(size: size, folder: folder, stem: "coredata-migrate")
            defer { BenchFolder.remove(file) }
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: destination)
            var sample = try BenchMeter.measure {
                _ = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: file, options: options)
                return 0
            }
            for store in coordinator.persistentStores { try coordinator.remove(store) }
            sample.checksum = try check(file, workload)
            return sample
        }
    }

    /// Raw SQLite: the same change in SQL, in one transaction.
    static func rawRepetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        {
            let file = try freshSource(size: size, folder: folder, stem: "raw-migrate")
            defer { BenchFolder.remove(file) }
            var sample = try BenchMeter.measure {
                let db = try RawConnection(path: file.path)
                try db.execute("BEGIN IMMEDIATE")
                for sql in rawSQL(workload) { try db.execute(sql) }
                try db.execute("COMMIT")
                return 0
            }
            sample.checksum = try check(file, workload)
            return sample
        }
    }
}
