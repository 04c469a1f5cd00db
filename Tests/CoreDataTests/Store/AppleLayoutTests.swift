import Foundation
import Testing
@testable import CoreData
import TestSupport

/// A store written with Apple's names (``AppleLayoutFixture``) opens, reads and writes through
/// the names the file has, not the ones the model alone would give.
@Suite("Stores laid out by Apple's framework")
struct AppleLayoutTests {
    /// A stack on a fresh copy of the fixture file.
    final class Fixture {
        let folder: TemporaryFolder
        let url: URL
        let model = AppleLayoutFixture.makeModel()
        let stack: TestStack

        init() throws {
            folder = try TemporaryFolder()
            url = folder.url.appendingPathComponent("Test.sqlite")
            try AppleLayoutFixture.write(to: url, model: model)
            stack = try TestStack(model: model, directory: folder.url)
        }

        func fetch(_ entity: String, _ format: String? = nil, _ arguments: [Any] = []) throws -> [NSManagedObject] {
            try stack.fetch(entity) { request in
                if let format { request.predicate = NSPredicate(format: format, argumentArray: arguments) }
                request.sortDescriptors = [NSSortDescriptor(key: entity == "User" ? "name" : entity == "Message" ? "text" : entity == "Account" ? "name" : "title", ascending: true)]
            }
        }
        func names(_ objects: Any?) -> [String] {
            let list: [NSManagedObject]
            switch objects {
            case let set as Set<NSManagedObject>: list = Array(set)
            case let set as NSSet: list = set.allObjects as! [NSManagedObject]
            case let ordered as NSOrderedSet: return ordered.array.map { ($0 as! NSManagedObject).value(forKey: "title") as! String }
            default: list = []
            }
            return list.map { $0.value(forKey: $0.entity.name == "Message" ? "text" : "name") as! String }.sorted()
        }
    }

    @Test func valuesAreReadFromTheFilesOwnColumns() throws {
        let f = try Fixture()
        let notes = try f.fetch("Note")
        #expect(notes.map { $0.value(forKey: "title") as? String } == ["Groceries", "Ideas"])
        #expect(notes.map { $0.entity.name } == ["Note", "Note"])
        #expect(notes[0].value(forKey: "created") as? Date == Date(timeIntervalSinceReferenceDate: 100))
        let folders = try f.fetch("Folder")
        #expect(folders.map { $0.value(forKey: "title") as? String } == ["Home"])
        // Items of both sub-entities, by the file's Z_ENT numbers.
        let items = try f.stack.fetch("Item") { $0.sortDescriptors = [NSSortDescriptor(key: "created", ascending: true)] }
        #expect(items.map { $0.entity.name } == ["Note", "Folder", "Note"])
        #expect(try f.stack.context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Folder")) == 1)
    }

    @Test func relationshipsAreReadThroughTheFilesNames() throws {
        let f = try Fixture()
        let account = try #require(try f.fetch("Account").first)
        #expect((account.value(forKey: "notes") as? Set<NSManagedObject>)?.count == 2)
        #expect((account.value(forKey: "folders") as? Set<NSManagedObject>)?.count == 1)
        let note = try #require(try f.fetch("Note", "title == 'Groceries'").first)
        #expect((note.value(forKey: "account") as? NSManagedObject)?.value(forKey: "name") as? String == "Work")
        let folder = try #require(note.value(forKey: "folder") as? NSManagedObject)
        #expect(folder.value(forKey: "title") as? String == "Home")
        // The order column, not the keys' order.
        #expect(f.names(folder.value(forKey: "notes")) == ["Ideas", "Groceries"])

        let message = try #require(try f.fetch("Message").first)
        #expect(f.names(message.value(forKey: "users")) == ["ann", "bob"])
        let attachment = try #require(message.value(forKey: "attachment") as? NSManagedObject)
        #expect(attachment.entity.name == "Note" && attachment.value(forKey: "title") as? String == "Groceries")
        let users = try f.fetch("User")
        #expect(f.names(users[0].value(forKey: "systemMessages")) == ["hello"])
        #expect(f.names(users[0].value(forKey: "ignoredClients")) == ["bob"])
        #expect(f.names(users[1].value(forKey: "ignoredBy")) == ["ann"])
        #expect(f.names(users[1].value(forKey: "friends")) == ["cy"])
        #expect(f.names(users[2].value(forKey: "friends")) == ["bob"])
    }

    @Test func predicatesAndPrefetchingUseTheFilesNames() throws {
        let f = try Fixture()
        #expect(try f.fetch("Note", "account.name == 'Work' AND folder.title == 'Home'").count == 2)
        #expect(try f.fetch("Folder", "title == 'Home' AND notes.@count == 2").count == 1)
        #expect(try f.fetch("User", "ANY systemMessages.text == 'hello'").map { $0.value(forKey: "name") as? String } == ["ann", "bob"])
        #expect(try f.fetch("User", "ANY ignoredBy.name == 'ann'").map { $0.value(forKey: "name") as? String } == ["bob"])
        #expect(try f.fetch("User", "friends.@count == 1").count == 2)
        let messages = try f.stack.fetch("Message") { $0.relationshipKeyPathsForPrefetching = ["users", "attachment"] }
        #expect(f.names(messages.first?.value(forKey: "users")) == ["ann", "bob"])
        let dictionaries = try f.stack.context.fetch({
            let request = NSFetchRequest<NSDictionary>(entityName: "Note")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["title"]
            request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: false)]
            return request
        }())
        #expect(dictionaries.map { $0["title"] as? String } == ["Ideas", "Groceries"])
    }

    @Test func writesGoToTheFilesOwnColumnsAndNumbers() throws {
        let f = try Fixture()
        let context = f.stack.context
        let account = try #require(try f.fetch("Account").first)
        let folder = NSEntityDescription.insertNewObject(forEntityName: "Folder", into: context)
        folder.setValue("Work stuff", forKey: "title")
        folder.setValue("yes", forKey: "pinned")
        folder.setValue(account, forKey: "account")
        let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
        note.setValue("Plan", forKey: "title")
        note.setValue(true, forKey: "pinned")
        note.setValue(account, forKey: "account")
        note.setValue(folder, forKey: "folder")
        let users = try f.fetch("User")
        let carl = NSEntityDescription.insertNewObject(forEntityName: "User", into: context)
        carl.setValue("carl", forKey: "name")
        carl.mutableSetValue(forKey: "systemMessages").add(try #require(try f.fetch("Message").first))
        carl.mutableSetValue(forKey: "ignoredClients").add(users[0])
        carl.mutableSetValue(forKey: "friends").add(users[0])
        let message = NSEntityDescription.insertNewObject(forEntityName: "Message", into: context)
        message.setValue("bye", forKey: "text")
        message.setValue(folder, forKey: "attachment")
        try context.save()

        let rows = try f.stack.rows("SELECT Z_PK, Z_ENT, ZTITLE, ZTITLE1, ZPINNED, ZPINNED1, ZACCOUNT, ZACCOUNT1, ZFOLDER, Z_FOK_FOLDER, ZLEGACY FROM ZITEM WHERE Z_PK > 3 ORDER BY Z_PK")
        #expect(rows == [["4", "7", "NULL", "Work stuff", "yes", "NULL", "1", "NULL", "NULL", "NULL", "NULL"],
                         ["5", "6", "Plan", "NULL", "NULL", "1", "NULL", "1", "4", "1", "NULL"]])
        #expect(try f.stack.rows("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT IN (5, 9, 14) ORDER BY Z_ENT") == [["5", "5"], ["9", "2"], ["14", "4"]])
        #expect(try f.stack.rows("SELECT Z_ENT, ZATTACHMENT, Z5_ATTACHMENT FROM ZMESSAGE WHERE ZTEXT = 'bye'") == [["9", "4", "7"]])
        #expect(try f.stack.rows("SELECT Z_9SYSTEMMESSAGES, Z_14USERS1 FROM Z_9USERS ORDER BY 1, 2") == [["1", "1"], ["1", "2"], ["1", "4"]])
        #expect(try f.stack.rows("SELECT Z_14IGNOREDBY, Z_14IGNOREDCLIENTS FROM Z_14IGNOREDCLIENTS ORDER BY 1") == [["1", "2"], ["4", "1"]])
        #expect(try f.stack.rows("SELECT Z_14FRIENDS, Z_14FRIENDS1 FROM Z_14FRIENDS ORDER BY 1, 2") == [["1", "4"], ["2", "3"], ["3", "2"], ["4", "1"]])

        // Another stack on the file reads it all back.
        let again = try TestStack(model: f.model, directory: f.folder.url)
        let ann = try #require(try again.fetch("User") { $0.predicate = NSPredicate(format: "name == 'ann'") }.first)
        #expect(f.names(ann.value(forKey: "ignoredBy")) == ["carl"])
        #expect(f.names(ann.value(forKey: "friends")) == ["carl"])
        let plan = try #require(try again.fetch("Note") { $0.predicate = NSPredicate(format: "title == 'Plan'") }.first)
        #expect(plan.value(forKey: "pinned") as? Bool == true)
        #expect((plan.value(forKey: "folder") as? NSManagedObject)?.value(forKey: "pinned") as? String == "yes")

        // A delete removes the row and its join rows from the file's tables.
        again.context.delete(ann)
        try again.context.save()
        #expect(try f.stack.rows("SELECT count(*) FROM Z_9USERS WHERE Z_14USERS1 = 1") == [["0"]])
        #expect(try f.stack.rows("SELECT count(*) FROM Z_14IGNOREDCLIENTS WHERE Z_14IGNOREDBY = 1 OR Z_14IGNOREDCLIENTS = 1") == [["0"]])
        #expect(try f.stack.rows("SELECT count(*) FROM Z_14FRIENDS WHERE Z_14FRIENDS = 1 OR Z_14FRIENDS1 = 1") == [["0"]])
    }

    @Test func triggersOfApplesDerivedAttributesRunHere() throws {
        let f = try Fixture()
        // Triggers as Apple's store writes them for derived attributes, calling its functions.
        try RawSQLite.execute(f.url.path, """
            CREATE TRIGGER Z_DA_ZUSER_User_name_UPDATE AFTER UPDATE OF Z_OPT ON ZUSER FOR EACH ROW BEGIN
                UPDATE ZUSER SET ZNAME = lower(NEW.ZNAME) WHERE Z_PK = NEW.Z_PK;
                SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('ZUSER', Z_ENT, Z_PK, 'name', ZNAME) FROM ZUSER WHERE Z_PK = NEW.Z_PK; END;
            CREATE TRIGGER Z_DA_ZITEM_Item_created_INSERT AFTER INSERT ON ZITEM FOR EACH ROW BEGIN
                UPDATE ZITEM SET ZCREATED = NSCoreDataNow() WHERE Z_PK = NEW.Z_PK;
                SELECT NSCoreDataDATriggerInsertUpdatedAffectedObjectValue('ZITEM', Z_ENT, Z_PK, 'created', ZCREATED) FROM ZITEM WHERE Z_PK = NEW.Z_PK; END;
            CREATE TRIGGER Z_ZMESSAGE_UPDATE AFTER UPDATE OF Z_OPT ON ZMESSAGE FOR EACH ROW BEGIN
                SELECT NSCoreDataTriggerUpdateAffectedObjectValue('ZMESSAGE', Z_ENT, Z_PK, 'text', ZTEXT) FROM ZMESSAGE WHERE Z_PK = NEW.Z_PK; END
            """)
        let stack = try TestStack(model: f.model, directory: f.folder.url)
        let ann = try #require(try stack.fetch("User") { $0.predicate = NSPredicate(format: "name == 'ann'") }.first)
        ann.setValue("ANN", forKey: "name")
        let message = try #require(try stack.fetch("Message").first)
        message.setValue("hi", forKey: "text")
        NSEntityDescription.insertNewObject(forEntityName: "Note", into: stack.context).setValue("new", forKey: "title")
        let before = Date().timeIntervalSinceReferenceDate
        try stack.context.save()
        #expect(try stack.rows("SELECT ZNAME FROM ZUSER WHERE Z_PK = 1") == [["ann"]])
        let created = try #require(Double(try stack.rows("SELECT ZCREATED FROM ZITEM WHERE ZTITLE = 'new'").first?.first ?? ""))
        #expect(created >= before - 1 && created <= Date().timeIntervalSinceReferenceDate + 1)
    }

    /// The error of adding the fixture file once `damage` has run on it.
    private func openingError(after damage: String) throws -> NSError? {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Test.sqlite")
        let model = AppleLayoutFixture.makeModel()
        try AppleLayoutFixture.write(to: url, model: model)
        try RawSQLite.execute(url.path, damage)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let error = #expect(throws: NSError.self) {
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        }
        #expect(coordinator.persistentStores.isEmpty)
        return error
    }

    @Test func aFileWithoutAColumnTheModelNeedsIsRefusedNamingIt() throws {
        let error = try openingError(after: "ALTER TABLE ZMESSAGE DROP COLUMN ZTEXT")
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSPersistentStoreIncompatibleSchemaError)
        #expect(error?.localizedDescription.contains("ZTEXT") == true, "\(error?.localizedDescription ?? "")")
    }

    @Test func aFileWithoutAnEntitysPrimaryKeyRowIsRefused() throws {
        let error = try openingError(after: "DELETE FROM Z_PRIMARYKEY WHERE Z_NAME = 'Folder'")
        #expect(error?.code == NSPersistentStoreIncompatibleSchemaError)
        #expect(error?.localizedDescription.contains("Folder") == true)
    }

    @Test func aJoinTableWithoutItsColumnsIsRefused() throws {
        let error = try openingError(after: "DROP TABLE Z_9USERS; CREATE TABLE Z_9USERS (Z_9A INTEGER, Z_14B INTEGER)")
        #expect(error?.code == NSPersistentStoreIncompatibleSchemaError)
        #expect(error?.localizedDescription.contains("Z_9USERS") == true)
    }

    @Test func namesThatAreNotPlainIdentifiersAreQuotedInEveryStatement() throws {
        // A new file for a model whose derived names are plain: the DDL is Apple's text, bare.
        let stack = try TestStack()
        let ddl = try stack.rows("SELECT sql FROM sqlite_master WHERE name = 'ZPERSON'")
        #expect(ddl.first?.first?.hasPrefix("CREATE TABLE ZPERSON ( Z_PK") == true)
        #expect(SQLiteSchema.ddlName("ZCAR") == "ZCAR")
        #expect(SQLiteSchema.ddlName("ZCAR; DROP TABLE Z_METADATA") == "\"ZCAR; DROP TABLE Z_METADATA\"")
        #expect(SQLiteSchema.quoted("Z\"X") == "\"Z\"\"X\"")
    }
}
