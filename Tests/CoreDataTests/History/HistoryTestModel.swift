import Foundation
@testable import CoreData

/// A model for persistent-history tests: folders hold notes (one-to-many); a note's `title` is
/// kept in its deletion's tombstone (`preservesValueInHistoryOnDeletion`).
enum HistoryTestModel {
    static func make() -> NSManagedObjectModel {
        let folder = NSEntityDescription(); folder.name = "Folder"
        let note = NSEntityDescription(); note.name = "Note"
        let notes = relationship("notes", note, toMany: true)
        let owner = relationship("folder", folder, toMany: false)
        notes.inverseRelationship = owner; owner.inverseRelationship = notes
        let title = attribute("title", .stringAttributeType)
        title.preservesValueInHistoryOnDeletion = true
        let created = attribute("created", .dateAttributeType)
        created.preservesValueInHistoryOnDeletion = true
        note.properties = [title, attribute("body", .stringAttributeType), created, owner]
        folder.properties = [attribute("name", .stringAttributeType), notes]
        let model = NSManagedObjectModel()
        model.entities = [folder, note]
        return model
    }

    /// Store options that turn persistent history on.
    static var tracking: [AnyHashable: Any] { [NSPersistentHistoryTrackingKey: true as NSNumber] }
}
