import CoreData
import Foundation
import Testing
@testable import MagicalRecord

extension DefaultStackSuite {
    /// `MagicalRecord.setLoggingLevel(_:)`: which messages each level lets through.
    @Suite struct LoggingTests {
        @Test func theLevelIsWhatWasSet() {
            let previous = MagicalRecord.loggingLevel()
            defer { MagicalRecord.setLoggingLevel(previous) }
            for level in [MagicalRecordLoggingLevel.off, .error, .warn, .info, .debug, .verbose, .all] {
                MagicalRecord.setLoggingLevel(level)
                #expect(MagicalRecord.loggingLevel() == level)
            }
        }

        @Test func eachLevelLogsItselfAndTheLevelsAboveIt() {
            #expect(MagicalRecordLoggingLevel.verbose.logs(.error) && MagicalRecordLoggingLevel.verbose.logs(.info))
            #expect(MagicalRecordLoggingLevel.error.logs(.error) && !MagicalRecordLoggingLevel.error.logs(.warn))
            #expect(!MagicalRecordLoggingLevel.off.logs(.error))
            #expect(MagicalRecordLoggingLevel.all.logs(.verbose))
        }

        /// A save logged at `level`.
        private static func logOfASave(at level: MagicalRecordLoggingLevel) async throws -> String {
            let capture = LogCapture()
            try await capture.capturing(level: level) {
                try await withDefaultStack(level: level) {
                    MagicalRecord.save(blockAndWait: { _ = NSEntityDescription.insertNewObject(forEntityName: "Car", into: $0) })
                    NSManagedObjectContext.mr_().mr_saveToPersistentStoreAndWait() // nothing to save
                }
            }
            return capture.text
        }

        @Test func verboseLogsEachSaveAndTheSavesSkipped() async throws {
            let log = try await Self.logOfASave(at: .verbose)
            #expect(log.contains("MagicalRecord: → Saving <NSManagedObjectContext (0x"))
            #expect(log.contains(": saveWithBlockAndWait:> on "))
            #expect(log.contains(": MagicalRecord Root Saving Context> on "))
            #expect(log.contains("NO CHANGES IN ** Untitled Context ** CONTEXT - NOT SAVING"))
        }

        @Test func infoLogsTheSavesButNotTheVerboseDetails() async throws {
            let log = try await Self.logOfASave(at: .info)
            #expect(log.contains("→ Saving"))
            #expect(!log.contains("NO CHANGES"))
            #expect(!log.contains("→ Save Parents?"))
        }

        @Test func errorAndOffLogNothingForASuccessfulSave() async throws {
            #expect(try await Self.logOfASave(at: .error).isEmpty)
            #expect(try await Self.logOfASave(at: .off).isEmpty)
        }

        @Test func aFailedSaveIsLoggedAsAnError() async throws {
            let capture = LogCapture()
            try await capture.capturing(level: .error) {
                try await withDefaultStack(model: CarModel.make(requireName: true), level: .error) {
                    MagicalRecord.save(blockAndWait: { _ = NSEntityDescription.insertNewObject(forEntityName: "Car", into: $0) })
                }
            }
            #expect(capture.text.contains("MagicalRecord: Unable to save saveWithBlockAndWait:"))
            #expect(capture.text.contains("NSCocoaErrorDomain \(NSValidationMissingMandatoryPropertyError)"))
        }
    }
}
