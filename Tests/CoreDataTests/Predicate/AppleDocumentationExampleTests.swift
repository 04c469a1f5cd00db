import Foundation
import Testing
@testable import CoreData

/// The examples of Apple's predicate documentation (the `NSPredicate` overview, the Predicate
/// Programming Guide's "Creating Predicates", "Predicate Format String Syntax" and "Using
/// Predicates" articles), each fetched from a SQLite store and evaluated in memory, against the
/// answer Apple's text gives.
@Suite("Predicates: the examples of Apple's documentation")
struct AppleDocumentationExampleTests {
    /// People (first and last name, birthday, grade, age, active) in groups, with children and
    /// orders of items; cities with residents.
    private static func model() -> NSManagedObjectModel {
        let person = NSEntityDescription(); person.name = "Person"
        let group = NSEntityDescription(); group.name = "Group"
        let item = NSEntityDescription(); item.name = "Item"
        let city = NSEntityDescription(); city.name = "City"
        let groupOf = relationship("group", group, toMany: false)
        let members = relationship("members", person, toMany: true)
        groupOf.inverseRelationship = members; members.inverseRelationship = groupOf
        let parent = relationship("parent", person, toMany: false)
        let children = relationship("children", person, toMany: true)
        parent.inverseRelationship = children; children.inverseRelationship = parent
        let items = relationship("items", item, toMany: true)
        let owner = relationship("owner", person, toMany: false)
        items.inverseRelationship = owner; owner.inverseRelationship = items
        let residents = relationship("residents", person, toMany: true)
        let home = relationship("city", city, toMany: false)
        residents.inverseRelationship = home; home.inverseRelationship = residents
        person.properties = [attribute("firstName", .stringAttributeType), attribute("lastName", .stringAttributeType),
                             attribute("birthday", .dateAttributeType), attribute("grade", .stringAttributeType),
                             attribute("age", .integer64AttributeType), attribute("isActive", .booleanAttributeType),
                             attribute("email", .stringAttributeType), groupOf, parent, children, items, home]
        group.properties = [attribute("name", .stringAttributeType), members]
        item.properties = [attribute("price", .doubleAttributeType), owner]
        city.properties = [attribute("name", .stringAttributeType), residents]
        let model = NSManagedObjectModel()
        model.entities = [person, group, item, city]
        return model
    }

    static let now = Date(timeIntervalSinceReferenceDate: 800_000_000)

    private func world() throws -> (TestStack, [NSManagedObject]) {
        let stack = try TestStack(model: Self.model())
        let work = stack.insert("Group", ["name": "workplace"])
        let home = stack.insert("Group", ["name": "home"])
        let springfield = stack.insert("City", ["name": "Springfield"])
        let day = 86_400.0
        let rows: [(String, String, Double, String, Int, Bool, String, NSManagedObject?)] = [
            ("Juan", "García", -40 * 365 * day, "7", 40, true, "juan@example.com", work),
            ("Mei", "Lin", -30 * 365 * day, "8", 30, false, "mei@example", home),
            ("Adam", "Chen", -1 * day, "7", 12, true, "adam@example.org", work),
            ("Jane", "Doe", 0.5 * day, "9", 13, true, "JANE@EXAMPLE.COM", nil),
            ("Matthew", "Frankenstein", -20 * 365 * day, "10", 20, false, "not an email", home),
            ("Mark", "Adderley", -10 * 365 * day, "7", 10, true, "mark@example.co.uk", work),
        ]
        var people: [NSManagedObject] = []
        for (first, last, age, grade, years, active, email, group) in rows {
            let person = stack.insert("Person", ["firstName": first, "lastName": last, "grade": grade, "age": years,
                                                 "isActive": active, "email": email,
                                                 "birthday": Self.now.addingTimeInterval(age)])
            person.setValue(group, forKey: "group")
            people.append(person)
        }
        // Juan's children: Adam (12) and Jane (13); Mei's: Mark (10). Jane lives in Springfield.
        people[2].setValue(people[0], forKey: "parent")
        people[3].setValue(people[0], forKey: "parent")
        people[5].setValue(people[1], forKey: "parent")
        people[3].setValue(springfield, forKey: "city")
        people[0].setValue(springfield, forKey: "city")
        for (owner, prices) in [(0, [400.0, 500.5]), (1, [999.0, 2.0]), (4, [10.0])] {
            for price in prices {
                let item = stack.insert("Item", ["price": price])
                item.setValue(people[owner], forKey: "owner")
            }
        }
        try stack.context.save()
        return (stack, people)
    }

    /// The first names of the people a predicate selects: fetched from SQLite, and evaluated in memory.
    private func firstNames(_ stack: TestStack, _ people: [NSManagedObject], _ predicate: NSPredicate,
                            sourceLocation: SourceLocation = #_sourceLocation) throws -> Set<String> {
        let fetched = Set(try stack.fetch("Person") { $0.predicate = predicate }.compactMap { $0.value(forKey: "firstName") as? String })
        let evaluated = Set(people.filter { predicate.evaluate(with: $0) }.compactMap { $0.value(forKey: "firstName") as? String })
        #expect(fetched == evaluated, "\(predicate.formatText): fetched \(fetched.sorted()), evaluated \(evaluated.sorted())",
                sourceLocation: sourceLocation)
        return fetched
    }

    @Test func theNSPredicateOverviewExamples() throws {
        let (stack, people) = try world()
        // Simple comparisons, such as grade == "7" or firstName like "Juan".
        #expect(try firstNames(stack, people, NSPredicate(format: "grade == \"7\"")) == ["Juan", "Adam", "Mark"])
        #expect(try firstNames(stack, people, NSPredicate(format: "firstName like \"Juan\"")) == ["Juan"])
        // Case- and diacritic-insensitive lookups, such as name contains[cd] "stein".
        #expect(try firstNames(stack, people, NSPredicate(format: "lastName contains[cd] \"STEÏN\"")) == ["Matthew"])
        #expect(try firstNames(stack, people, NSPredicate(format: "lastName contains[cd] \"garcia\"")) == ["Juan"])
        // Logical operations, such as (firstName like "Mei") OR (lastName like "Chen").
        #expect(try firstNames(stack, people, NSPredicate(format: "(firstName like \"Mei\") OR (lastName like \"Chen\")")) == ["Mei", "Adam"])
        // Temporal range constraints, such as date between {$YESTERDAY, $TOMORROW}.
        let template = NSPredicate(format: "birthday between {$YESTERDAY, $TOMORROW}")
        let range = template.withSubstitutionVariables(["YESTERDAY": Self.now.addingTimeInterval(-86_400),
                                                        "TOMORROW": Self.now.addingTimeInterval(86_400)])
        #expect(try firstNames(stack, people, range) == ["Adam", "Jane"])
        // Relational conditions, such as group.name like "work*".
        #expect(try firstNames(stack, people, NSPredicate(format: "group.name like \"work*\"")) == ["Juan", "Adam", "Mark"])
        // Aggregate operations, such as @sum.items.price < 1000 (a to-many key path's @sum).
        #expect(try firstNames(stack, people, NSPredicate(format: "items.@sum.price < 1000")) == ["Juan", "Adam", "Jane", "Matthew", "Mark"])
    }

    @Test func thePredicateProgrammingGuideExamples() throws {
        let (stack, people) = try world()
        // "(lastName like[cd] %@) AND (birthday > %@)"
        let born = NSPredicate(format: "(lastName like[cd] %@) AND (birthday > %@)", "*ENSTEIN", Self.now.addingTimeInterval(-25 * 365 * 86_400) as NSDate)
        #expect(try firstNames(stack, people, born) == ["Matthew"])
        // "%K like %@" with firstName and Adam: evaluates to firstName like "Adam".
        let dynamic = NSPredicate(format: "%K like %@", "firstName", "Adam")
        #expect(dynamic.formatText == "firstName LIKE \"Adam\"")
        #expect(try firstNames(stack, people, dynamic) == ["Adam"])
        // Quoted %@ is a literal, not a substitution.
        #expect(try firstNames(stack, people, NSPredicate(format: "firstName like '%@'")).isEmpty)
        // (firstName beginswith 'M') AND (lastName like 'Adderley')
        #expect(try firstNames(stack, people, NSPredicate(format: "(firstName beginswith 'M') AND (lastName like 'Adderley')")) == ["Mark"])
        // group.name matches 'work.*', ALL children.age > 12, ANY children.firstName like 'Jane'
        #expect(try firstNames(stack, people, NSPredicate(format: "group.name matches 'work.*'")) == ["Juan", "Adam", "Mark"])
        #expect(try firstNames(stack, people, NSPredicate(format: "ALL children.age > 11 AND children.@count > 0")) == ["Juan"])
        #expect(try firstNames(stack, people, NSPredicate(format: "ALL children.age > 12")) == ["Adam", "Jane", "Matthew", "Mark"])
        #expect(try firstNames(stack, people, NSPredicate(format: "ANY children.firstName like 'Jane'")) == ["Juan"])
        // SUBQUERY(residents, $x, $x.firstname == "Jane" && $x.lastname == "Doe").@count != 0, from the city's side.
        let cities = try stack.fetch("City") {
            $0.predicate = NSPredicate(format: "SUBQUERY(residents, $x, $x.firstName == \"Jane\" && $x.lastName == \"Doe\").@count != 0")
        }
        #expect(cities.map { $0.value(forKey: "name") as? String } == ["Springfield"])
        // BETWEEN, IN with a literal aggregate, and a number with the BETWEEN operator on the left.
        #expect(try firstNames(stack, people, NSPredicate(format: "age BETWEEN {10, 13}")) == ["Adam", "Jane", "Mark"])
        #expect(try firstNames(stack, people, NSPredicate(format: "firstName IN {'Milk', 'Mei', 'Bread'}")) == ["Mei"])
        #expect(try firstNames(stack, people, NSPredicate(format: "1 BETWEEN {0, 33}")).count == 6)
        // Booleans: "anAttribute == %@" with an NSNumber, and "anAttribute == YES".
        #expect(try firstNames(stack, people, NSPredicate(format: "isActive == %@", NSNumber(value: false))) == ["Mei", "Matthew"])
        #expect(try firstNames(stack, people, NSPredicate(format: "isActive == YES")) == ["Juan", "Adam", "Jane", "Mark"])
        // LIKE with ? and *: name LIKE '???er*' matches "Paper Plane"; here 'M??k' and '*a*'.
        #expect(try firstNames(stack, people, NSPredicate(format: "firstName LIKE 'M??k'")) == ["Mark"])
        #expect(try firstNames(stack, people, NSPredicate(format: "firstName LIKE[c] 'j*'")) == ["Juan", "Jane"])
        #expect(NSPredicate(format: "SELF LIKE '???er*'").evaluate(with: "Paper Plane"))
        // Regular expressions: SELF MATCHES %@ with an e-mail pattern (MATCHES is the whole string).
        let email = NSPredicate(format: "email MATCHES %@", "[A-Z0-9a-z._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,4}")
        #expect(try firstNames(stack, people, email) == ["Juan", "Adam", "Jane", "Mark"])
        // Null values: "firstName == nil", and comparisons with nil are never true for order.
        #expect(try firstNames(stack, people, NSPredicate(format: "city == nil")) == ["Mei", "Adam", "Matthew", "Mark"])
        #expect(try firstNames(stack, people, NSPredicate(format: "parent.firstName == 'Juan'")) == ["Adam", "Jane"])
        // String constants in single or double quotes, keywords in any case.
        #expect(try firstNames(stack, people, NSPredicate(format: "firstName == 'Mei' or firstName == \"x\" Or firstName == \"Jane\"")) == ["Mei", "Jane"])
    }

    @Test func substitutionVariablesAndTemplates() throws {
        let (stack, people) = try world()
        // Creating Predicates Using Predicate Templates: "lastName like[c] $LAST_NAME".
        let template = NSPredicate(format: "lastName like[c] $LAST_NAME")
        let filled = template.withSubstitutionVariables(["LAST_NAME": "doe"])
        #expect(try firstNames(stack, people, filled) == ["Jane"])
        #expect(people.filter { template.evaluate(with: $0, substitutionVariables: ["LAST_NAME": "CHEN"]) }
            .map { $0.value(forKey: "firstName") as? String } == ["Adam"])
        // A nil value through a variable: "date = $DATE" with NSNull means "date == nil".
        let nothing = NSPredicate(format: "city = $CITY").withSubstitutionVariables(["CITY": NSNull()])
        #expect(try firstNames(stack, people, nothing).count == 4)
    }
}
