import CoreData
import Foundation
import MagicalRecord
import Testing

/// A person's import hooks: data with `"skip": true` is not imported; `didImport` trims names.
extension Person: MagicalRecordDataImportProtocol {
    func shouldImport(_ data: Any) -> Bool {
        (data as? [String: Any])?["skip"] as? Bool != true
    }

    func didImport(_ data: Any) {
        if let name = value(forKey: "name") as? String { setValue(name.trimmingCharacters(in: .whitespaces), forKey: "name") }
    }
}

/// `NSManagedObject (MagicalRecord_DataImport)`: nested JSON with mapped keys, a date format,
/// related objects found by their primary attribute, and existing objects updated.
@Suite struct MagicalDataImportTests {
    static let people = """
        [
          {"personID": 1, "name": " Ada ", "age": "36", "birthday": "1815-12-10", "profile": {"nick": "Enchantress"},
           "active": "YES", "score": 9.5,
           "homes": [{"street": "St James's Square", "city": "London"}, {"street": "Ockham Park", "city": "Ockham"}],
           "company": {"id": 7, "name": "Analytical Engines", "founded": "1834-01-01T00:00:00Z"}},
          {"personID": 2, "name": "Charles", "nick": "Babbage", "birthday": "not a date", "age": "old",
           "company": {"id": 7, "name": "Analytical Engines Ltd"}, "homes": ["Dorset Street"]}
        ]
        """

    @Test func aRelatedObjectIsFoundByItsPrimaryAttributeUnderABackupKey() throws {
        let stack = try MagicalTestStack()
        let data = try json(#"[{"personID": 1, "company": {"company_id": 7, "name": "A"}}, {"personID": 2, "company": {"company_id": 7, "name": "B"}}]"#)
        _ = stack.run { Person.mr_import(from: data as! [Any], in: stack.context) }
        let companies = try stack.context.performAndWait { try stack.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Company")) }
        #expect(companies.count == 1, "the second person's company is the first's, found under mappedKeyName.1")
    }

    private func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    private func utc(_ year: Int, _ month: Int, _ day: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        return calendar.date(from: DateComponents(year: year, month: month, day: day))!
    }

    /// A Swift dictionary built from optional properties holds `Optional.none` in `Any`: imported
    /// as nil, as Apple's bridging to `NSNull` gives MagicalRecord (not "nil", 0 or false).
    @Test func nilOptionalsInASwiftDictionaryImportAsNil() throws {
        let stack = try MagicalTestStack()
        let nickname: String? = nil, age: Int? = nil, active: Bool? = nil, name: String? = "Ada"
        let data: [String: Any] = ["personID": (1 as Int?) as Any, "name": name as Any, "nick": nickname as Any, "age": age as Any, "active": active as Any]
        let person = stack.run { Person.mr_import(from: data, in: stack.context) }
        stack.run {
            #expect(person.value(forKey: "name") as? String == "Ada")
            #expect(person.value(forKey: "nickname") == nil)
            #expect(person.value(forKey: "age") == nil)
            #expect(person.value(forKey: "active") == nil)
            #expect((person.value(forKey: "personID") as? NSNumber)?.intValue == 1)
        }
    }

    @Test("A nil optional in a Swift dictionary clears an existing object's value, as Apple's bridging to NSNull does")
    func nilOptionalsClearAnExistingObjectsValues() throws {
        let stack = try MagicalTestStack()
        let ada = stack.run { Person.mr_import(from: ["personID": 1, "name": "Ada", "nick": "E"], in: stack.context) }
        let none: String? = nil
        _ = stack.run { Person.mr_import(from: ["personID": 1, "name": none as Any, "nick": none as Any], in: stack.context) }
        stack.run {
            #expect(ada.value(forKey: "name") == nil)
            #expect(ada.value(forKey: "nickname") == nil)
        }
    }

    @Test func importsNestedJSONWithMappedKeysAndADateFormat() throws {
        let stack = try MagicalTestStack()
        let list = try #require(try json(Self.people) as? [Any])
        let imported = Person.mr_import(from: list, in: stack.context)
        #expect(imported.count == 2)
        #expect(imported is [Person])
        try stack.save()

        // Read back in another context, from the store.
        let reader = stack.newContext()
        let ada = try #require(Person.mr_findFirst(byAttribute: "personID", withValue: 1, in: reader))
        let charles = try #require(Person.mr_findFirst(byAttribute: "personID", withValue: 2, in: reader))
        reader.performAndWait {
            #expect(ada.value(forKey: "name") as? String == "Ada")                // trimmed by didImport
            #expect((ada.value(forKey: "age") as? NSNumber)?.intValue == 36)        // a string's number
            #expect(ada.value(forKey: "birthday") as? Date == utc(1815, 12, 10))  // dateFormat yyyy-MM-dd, UTC
            #expect(ada.value(forKey: "nickname") as? String == "Enchantress")    // mappedKeyName profile.nick
            #expect((ada.value(forKey: "active") as? NSNumber)?.boolValue == true)
            #expect((ada.value(forKey: "score") as? NSNumber)?.doubleValue == 9.5)
            let streets = ((ada.value(forKey: "addresses") as? Set<NSManagedObject>) ?? []).compactMap { $0.value(forKey: "street") as? String }
            #expect(streets.sorted() == ["Ockham Park", "St James's Square"])

            #expect(charles.value(forKey: "nickname") as? String == "Babbage")    // mappedKeyName.1 nick
            #expect(charles.value(forKey: "birthday") == nil)                      // a date that does not parse
            #expect((charles.value(forKey: "age") as? NSNumber)?.intValue == 0)    // no number in "old"
            let home = ((charles.value(forKey: "addresses") as? Set<NSManagedObject>) ?? []).first
            #expect(home?.value(forKey: "street") as? String == "Dorset Street")  // a string: its relatedByAttribute

            // One company, found the second time by its primary attribute and updated.
            let company = ada.value(forKey: "employer") as? Employer
            #expect(company != nil)
            #expect(company === charles.value(forKey: "employer") as? Employer)
            #expect(company?.value(forKey: "name") as? String == "Analytical Engines Ltd")
            #expect((company?.value(forKey: "companyID") as? NSNumber)?.intValue == 7)
            // The default date format, yyyy-MM-dd'T'HH:mm:ssz.
            #expect(company?.value(forKey: "founded") as? Date == utc(1834, 1, 1))
        }
        #expect(Employer.mr_countOfEntities(with: reader) == 1)
        #expect(Address.mr_countOfEntities(with: reader) == 3)
    }

    @Test func importUpdatesTheObjectWithTheSamePrimaryAttribute() throws {
        let stack = try MagicalTestStack()
        _ = Person.mr_import(from: try #require(try json(Self.people) as? [Any]), in: stack.context)
        try stack.save()
        let update = try json(#"{"personID": 1, "name": "Ada Lovelace", "age": 37, "company": 7}"#)
        let ada = Person.mr_import(from: update, in: stack.context)
        #expect(Person.mr_countOfEntities(with: stack.context) == 2)
        stack.run {
            #expect(ada.isInserted == false)
            #expect(ada.value(forKey: "name") as? String == "Ada Lovelace")
            #expect((ada.value(forKey: "age") as? NSNumber)?.intValue == 37)
            #expect(ada.value(forKey: "nickname") as? String == "Enchantress")   // not in the data: kept
            // A number for a to-one: the company with that primary attribute.
            #expect((ada.value(forKey: "employer") as? NSManagedObject)?.value(forKey: "name") as? String == "Analytical Engines Ltd")
        }
        #expect(Employer.mr_countOfEntities(with: stack.context) == 1)
        try stack.save()
    }

    @Test func importValuesForKeysSetsAnExistingObject() throws {
        let stack = try MagicalTestStack()
        let data = try json(#"{"name": "Grace", "age": 85.0, "active": 0, "nick": "Amazing"}"#)
        let grace = stack.run { Person.mr_createEntity(in: stack.context)! }
        #expect(stack.run { grace.mr_importValuesForKeys(with: data) })
        stack.run {
            #expect(grace.value(forKey: "name") as? String == "Grace")
            #expect((grace.value(forKey: "age") as? NSNumber)?.intValue == 85)
            #expect((grace.value(forKey: "active") as? NSNumber)?.boolValue == false)
            #expect(grace.value(forKey: "nickname") as? String == "Amazing")
        }
        try stack.save()
    }

    @Test func aTypedArrayOfDictionariesTakesTheArrayForm() throws {
        let stack = try MagicalTestStack()
        let list: [[String: Any]] = [["personID": 1, "name": "A"], ["personID": 2, "name": "B"]]
        let imported: [NSManagedObject] = Person.mr_import(from: list, in: stack.context)
        #expect(stack.values(imported, "name") == ["A", "B"])
        let one: Person = Person.mr_import(from: ["personID": 3, "name": "C"], in: stack.context)
        #expect(stack.values([one], "name") == ["C"])
    }

    @Test func shouldImportCanDecline() throws {
        let stack = try MagicalTestStack()
        let data = try json(#"{"name": "Nobody", "skip": true}"#)
        let person = stack.run { Person.mr_createEntity(in: stack.context)! }
        #expect(stack.run { person.mr_importValuesForKeys(with: data) } == false)
        #expect(stack.run { person.value(forKey: "name") } == nil)
    }

    @Test func dataWithoutAPrimaryValueMakesNewObjects() throws {
        let stack = try MagicalTestStack()
        let list = try #require(try json(#"[{"name": "A"}, {"name": "B"}]"#) as? [Any])
        let imported = Person.mr_import(from: list, in: stack.context)
        #expect(imported.count == 2)
        #expect(imported[0] !== imported[1])
        #expect(stack.values(imported, "name") == ["A", "B"])
    }

    @Test func badRelatedDataIsSkippedNotACrash() throws {
        let stack = try MagicalTestStack()
        // A to-one given an array, a to-many given null and nested arrays: skipped.
        let data = try json(#"{"personID": 9, "name": "Odd", "company": [1, 2], "homes": [[1], null, "Real Street"]}"#)
        let odd = Person.mr_import(from: data, in: stack.context)
        stack.run {
            #expect(odd.value(forKey: "employer") == nil)
            #expect((odd.value(forKey: "addresses") as? Set<NSManagedObject>)?.count == 1)
        }
        try stack.save()
    }

    @Test func numbersAreDatesInSecondsOrInMilliseconds() throws {
        let model = MagicalTestModel.make()
        model.entitiesByName["Person"]!.attributesByName["birthday"]!.userInfo = ["dateFormat": "UnixTime"]
        model.entitiesByName["Company"]!.attributesByName["founded"]!.userInfo = [:]
        let stack = try MagicalTestStack(model: model)
        let person = Person.mr_import(from: try json(#"{"personID": 1, "birthday": 86400000}"#), in: stack.context)
        let company = Employer.mr_import(from: try json(#"{"id": 1, "founded": 86400}"#), in: stack.context)
        stack.run {
            #expect(person.value(forKey: "birthday") as? Date == Date(timeIntervalSince1970: 86400))
            #expect(company.value(forKey: "founded") as? Date == Date(timeIntervalSince1970: 86400))
        }
    }

    @Test func anOrderedToManyKeepsTheDataOrder() throws {
        let model = MagicalTestModel.make()
        model.entitiesByName["Person"]!.relationshipsByName["addresses"]!.isOrdered = true
        let stack = try MagicalTestStack(model: model)
        let data = try json(#"{"personID": 1, "homes": ["C Street", {"street": "A Street", "city": "X"}, "B Street"]}"#)
        let person = Person.mr_import(from: data, in: stack.context)
        stack.run {
            let streets = (person.value(forKey: "addresses") as? NSOrderedSet)?.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "street") as? String }
            #expect(streets == ["C Street", "A Street", "B Street"])
        }
        try stack.save()
    }

    @Test func useDefaultValueWhenNotPresentSetsTheDefault() throws {
        let model = MagicalTestModel.make()
        let age = model.entitiesByName["Person"]!.attributesByName["age"]!
        age.defaultValue = 18
        age.userInfo = ["useDefaultValueWhenNotPresent": "YES"]
        let stack = try MagicalTestStack(model: model)
        let person = stack.run { Person.mr_createEntity(in: stack.context)! }
        stack.run {
            person.setValue(40, forKey: "age")
            person.mr_importValuesForKeys(with: ["name": "Young again"])
            #expect((person.value(forKey: "age") as? NSNumber)?.intValue == 18)
        }
    }

    @Test func aValueOfAnAttributeValueClassNameIsSetAsGivenAndTheSaveRefusesAWrongType() throws {
        let model = MagicalTestModel.make()
        model.entitiesByName["Person"]!.attributesByName["score"]!.userInfo = ["attributeValueClassName": "NSNumber"]
        let stack = try MagicalTestStack(model: model)
        _ = Person.mr_import(from: try json(#"{"personID": 1, "score": "high"}"#), in: stack.context)
        let error = try #require(throws: NSError.self) { try stack.save() }
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "score")
        #expect(Person.mr_countOfEntities(with: stack.newContext()) == 0)
    }

    @Test func relatedDataWithoutAPrimaryAttributeToRelateByIsInsertedOrSkipped() throws {
        let model = MagicalTestModel.make()
        // addresses relate by addressID now, which Address lacks.
        model.entitiesByName["Person"]!.relationshipsByName["addresses"]!.userInfo = ["mappedKeyName": "homes"]
        let stack = try MagicalTestStack(model: model)
        let data = try json(#"{"personID": 1, "homes": ["Nowhere Street", {"street": "Real Street"}, {"street": "Real Street"}]}"#)
        let person = Person.mr_import(from: data, in: stack.context)
        stack.run {
            // A string cannot be related without the attribute: skipped (logged). A dictionary
            // is imported into a new object each time: nothing to find it by.
            let addresses = (person.value(forKey: "addresses") as? Set<NSManagedObject>) ?? []
            #expect(addresses.map { $0.value(forKey: "street") as? String } == ["Real Street", "Real Street"])
        }
        #expect(Address.mr_countOfEntities(with: stack.context) == 2)
        try stack.save()
    }
}

