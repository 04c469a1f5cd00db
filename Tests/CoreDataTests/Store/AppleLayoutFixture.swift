import Foundation
@testable import CoreData

/// A store file laid out as Apple's framework lays out a store with history, for a model built
/// here: the names are not the ones this package would derive for a new file.
///
/// - `Z_ENT` numbers from `Z_PRIMARYKEY` that differ from the model's own order (Account 1,
///   Item 5 with Note 6 and Folder 7, Message 9, User 14).
/// - Colliding columns of the `Item` hierarchy numbered against the file's `Z_ENT` order:
///   `ZACCOUNT` is Folder's and `ZACCOUNT1` Note's (told apart by the rows that use them),
///   `ZPINNED` is Folder's (a string) and `ZPINNED1` Note's (a Boolean; both empty: told apart by
///   their declared types); `ZTITLE` is Note's and `ZTITLE1` Folder's.
/// - `ZPINNED1` appended at the end by an `ALTER TABLE`, and `ZLEGACY`, a column no entity has.
/// - The join table `Z_9USERS (Z_9SYSTEMMESSAGES, Z_14USERS1)`, with Apple's `1` suffix.
/// - The self-referential `User.ignoredClients`/`ignoredBy` in a table named after
///   `ignoredClients` (this package would name it after `ignoredBy`), and the self-inverse
///   `User.friends` in `Z_14FRIENDS (Z_14FRIENDS, Z_14FRIENDS1)`.
/// - `Message.attachment`, a to-one into the `Item` hierarchy, with its entity column `Z5_ATTACHMENT`.
enum AppleLayoutFixture {
    static func makeModel() -> NSManagedObjectModel {
        func entity(_ name: String, _ properties: [NSPropertyDescription]) -> NSEntityDescription {
            let e = NSEntityDescription()
            e.name = name
            e.properties = properties
            return e
        }
        let account = entity("Account", [attribute("name", .stringAttributeType)])
        let item = entity("Item", [attribute("created", .dateAttributeType)])
        item.isAbstract = true
        let note = entity("Note", [attribute("title", .stringAttributeType), attribute("pinned", .booleanAttributeType)])
        let folder = entity("Folder", [attribute("title", .stringAttributeType), attribute("pinned", .stringAttributeType)])
        let message = entity("Message", [attribute("text", .stringAttributeType)])
        let user = entity("User", [attribute("name", .stringAttributeType)])

        func pair(_ a: NSRelationshipDescription, _ b: NSRelationshipDescription) {
            a.inverseRelationship = b
            b.inverseRelationship = a
        }
        let noteAccount = relationship("account", account, toMany: false), accountNotes = relationship("notes", note, toMany: true)
        pair(noteAccount, accountNotes)
        let folderAccount = relationship("account", account, toMany: false), accountFolders = relationship("folders", folder, toMany: true)
        pair(folderAccount, accountFolders)
        let noteFolder = relationship("folder", folder, toMany: false), folderNotes = relationship("notes", note, toMany: true)
        folderNotes.isOrdered = true
        pair(noteFolder, folderNotes)
        let users = relationship("users", user, toMany: true), systemMessages = relationship("systemMessages", message, toMany: true)
        pair(users, systemMessages)
        let ignoredClients = relationship("ignoredClients", user, toMany: true), ignoredBy = relationship("ignoredBy", user, toMany: true)
        pair(ignoredClients, ignoredBy)
        let friends = relationship("friends", user, toMany: true)
        friends.inverseRelationship = friends
        let attachment = relationship("attachment", item, toMany: false)

        account.properties += [accountNotes, accountFolders]
        note.properties += [noteAccount, noteFolder]
        folder.properties += [folderAccount, folderNotes]
        message.properties += [users, attachment]
        user.properties += [systemMessages, ignoredClients, ignoredBy, friends]
        item.subentities = [note, folder]
        let model = NSManagedObjectModel()
        model.entities = [account, item, note, folder, message, user]
        return model
    }

    /// Writes the file at `url` for `model` (made by ``makeModel()``), with its rows.
    static func write(to url: URL, model: NSManagedObjectModel) throws {
        let metadata = SQLiteStore.makeMetadata(model: model, uuid: "0A6C1D62-6E9B-4C5E-9E7A-3A3C2F1B9D10")
        var plist = metadata
        plist[NSStoreUUIDKey] = nil
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        let hex = data.map { String(format: "%02X", $0) }.joined()
        try RawSQLite.execute(url.path, """
            CREATE TABLE ZACCOUNT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
            CREATE TABLE ZITEM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZACCOUNT INTEGER, ZACCOUNT1 INTEGER,
                ZFOLDER INTEGER, Z_FOK_FOLDER INTEGER, ZCREATED TIMESTAMP, ZPINNED VARCHAR, ZTITLE VARCHAR, ZTITLE1 VARCHAR,
                ZLEGACY VARCHAR );
            ALTER TABLE ZITEM ADD COLUMN ZPINNED1 INTEGER;
            CREATE TABLE ZMESSAGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZATTACHMENT INTEGER, Z5_ATTACHMENT INTEGER,
                ZTEXT VARCHAR );
            CREATE TABLE ZUSER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
            CREATE TABLE Z_9USERS ( Z_9SYSTEMMESSAGES INTEGER, Z_14USERS1 INTEGER, PRIMARY KEY (Z_9SYSTEMMESSAGES, Z_14USERS1) );
            CREATE TABLE Z_14IGNOREDCLIENTS ( Z_14IGNOREDBY INTEGER, Z_14IGNOREDCLIENTS INTEGER,
                PRIMARY KEY (Z_14IGNOREDBY, Z_14IGNOREDCLIENTS) );
            CREATE TABLE Z_14FRIENDS ( Z_14FRIENDS INTEGER, Z_14FRIENDS1 INTEGER, PRIMARY KEY (Z_14FRIENDS, Z_14FRIENDS1) );
            CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
            CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
            CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
            INSERT INTO Z_PRIMARYKEY VALUES (1, 'Account', 0, 1), (5, 'Item', 0, 3), (6, 'Note', 5, 0), (7, 'Folder', 5, 0),
                (9, 'Message', 0, 1), (14, 'User', 0, 3);
            INSERT INTO Z_METADATA VALUES (1, '\(metadata[NSStoreUUIDKey]!)', X'\(hex)');
            INSERT INTO ZACCOUNT VALUES (1, 1, 1, 'Work');
            INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZACCOUNT1, ZFOLDER, Z_FOK_FOLDER, ZCREATED, ZTITLE)
                VALUES (1, 6, 1, 1, 2, 2, 100, 'Groceries'), (3, 6, 1, 1, 2, 1, 300, 'Ideas');
            INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZACCOUNT, ZCREATED, ZTITLE1) VALUES (2, 7, 1, 1, 200, 'Home');
            INSERT INTO ZUSER VALUES (1, 14, 1, 'ann'), (2, 14, 1, 'bob'), (3, 14, 1, 'cy');
            INSERT INTO ZMESSAGE VALUES (1, 9, 1, 1, 6, 'hello');
            INSERT INTO Z_9USERS VALUES (1, 1), (1, 2);
            INSERT INTO Z_14IGNOREDCLIENTS VALUES (1, 2);
            INSERT INTO Z_14FRIENDS VALUES (2, 3), (3, 2);
            """)
    }
}
