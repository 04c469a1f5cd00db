import Foundation
@testable import CoreData

/// Authors and books (many-to-many), built in code, with fetched properties on Author; Editor is
/// a sub-entity of Author that inherits them.
enum FetchedPropertyTestModel {
    static func make() -> NSManagedObjectModel {
        func fetched(_ name: String, _ entity: String, _ format: String?, sortedBy key: String? = "title") -> NSFetchedPropertyDescription {
            let property = NSFetchedPropertyDescription()
            property.name = name
            let request = NSFetchRequest<NSFetchRequestResult>(entityName: entity)
            request.predicate = format.map { NSPredicate(format: $0) }
            request.sortDescriptors = key.map { [NSSortDescriptor(key: $0, ascending: true)] }
            property.fetchRequest = request
            return property
        }
        let author = NSEntityDescription(); author.name = "Author"
        let editor = NSEntityDescription(); editor.name = "Editor"
        let book = NSEntityDescription(); book.name = "Book"

        let books = NSRelationshipDescription()
        books.name = "books"; books.destinationEntity = book; books.maxCount = 0
        let authors = NSRelationshipDescription()
        authors.name = "authors"; authors.destinationEntity = author; authors.maxCount = 0
        books.inverseRelationship = authors; authors.inverseRelationship = books

        let longBooks = fetched("longBooks", "Book", "pages >= $FETCHED_PROPERTY.userInfo.minimumPages")
        longBooks.userInfo = ["minimumPages": 300]
        let namesakes = fetched("namesakes", "Author", "name == $FETCH_SOURCE.name AND SELF != $FETCH_SOURCE", sortedBy: nil)
        // `$b` is the SUBQUERY's own variable, not one the fetched property must bind.
        let prolific = fetched("prolific", "Author", "SUBQUERY(books, $b, $b.pages >= $FETCHED_PROPERTY.userInfo.minimumPages).@count >= 2", sortedBy: "name")
        prolific.userInfo = ["minimumPages": 300]
        // A fetched property among the attributes: it must not move their indexes.
        author.properties = [attribute("name", .stringAttributeType), fetched("booksByMe", "Book", "ANY authors == $FETCH_SOURCE"),
                             attribute("born", .integer32AttributeType), books, longBooks, namesakes,
                             fetched("unbound", "Book", "pages > $MINIMUM"),
                             fetched("malformed", "Book", "title =="),
                             fetched("allBooks", "Book", nil, sortedBy: nil), prolific]
        editor.properties = [attribute("imprint", .stringAttributeType)]
        author.subentities = [editor]
        book.properties = [attribute("title", .stringAttributeType), attribute("pages", .integer32AttributeType), authors]

        let model = NSManagedObjectModel()
        model.entities = [author, editor, book]
        return model
    }
}
