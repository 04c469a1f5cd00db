import CoreData
import Foundation
import MagicalRecord
import Testing

/// `NSManagedObject (MagicalRequests)`: the fetch requests the finders run.
@Suite struct MagicalRequestTests {
    private func sorts(_ request: NSFetchRequest<NSFetchRequestResult>) -> [String] {
        (request.sortDescriptors ?? []).map { "\($0.key ?? "") \($0.ascending ? "ASC" : "DESC")" }
    }

    @Test func requestAllNamesTheEntityOfTheClass() throws {
        let stack = try MagicalTestStack()
        #expect(Person.mr_createFetchRequest(in: stack.context).entityName == "Person")
        #expect(Employer.mr_requestAll(in: stack.context).entity?.name == "Company")
        let request = Person.mr_requestAll(with: NSPredicate(format: "age > 3"), in: stack.context)
        #expect(request.predicate == NSPredicate(format: "age > 3"))
        #expect(request.fetchLimit == 0)
    }

    @Test func requestFirstFormsFetchOne() throws {
        let stack = try MagicalTestStack()
        let first = Person.mr_requestFirst(with: NSPredicate(format: "age > 3"), in: stack.context)
        #expect(first.fetchLimit == 1)
        let byAttribute = Person.mr_requestFirst(byAttribute: "name", withValue: "Ada", in: stack.context)
        #expect(byAttribute.fetchLimit == 1)
        #expect(byAttribute.predicate == NSPredicate(format: "name == %@", "Ada"))
        let whereEqual = Person.mr_requestAllWhere("age", isEqualTo: 7, in: stack.context)
        #expect(whereEqual.predicate == NSPredicate(format: "age == 7"))
        #expect(whereEqual.fetchLimit == 0)
    }

    @Test func sortedRequestsReadMagicalRecordsSortString() throws {
        let stack = try MagicalTestStack()
        #expect(sorts(Person.mr_requestAllSorted(by: "name", ascending: true, in: stack.context)) == ["name ASC"])
        #expect(sorts(Person.mr_requestAllSorted(by: "name,age", ascending: false, in: stack.context)) == ["name DESC", "age DESC"])
        // A key's own flag sets its direction, and (as MagicalRecord's loop does) the next keys'.
        #expect(sorts(Person.mr_requestAllSorted(by: "name:NO,age,score:YES", ascending: true, in: stack.context))
                == ["name DESC", "age DESC", "score ASC"])
        #expect(sorts(Person.mr_requestAllSorted(by: "name:1,age:false,score:t", ascending: false, in: stack.context))
                == ["name ASC", "age DESC", "score ASC"])
        let withPredicate = Person.mr_requestAllSorted(by: "name", ascending: true, with: NSPredicate(format: "age > 3"), in: stack.context)
        #expect(withPredicate.predicate == NSPredicate(format: "age > 3"))
        #expect(withPredicate.fetchBatchSize == 20)
    }

    @Test func theDefaultBatchSizeIsTwentyAndCanChange() throws {
        let stack = try MagicalTestStack()
        #expect(NSManagedObject.mr_defaultBatchSize() == 20)
        NSManagedObject.mr_setDefaultBatchSize(20)
        #expect(Person.mr_requestAllSorted(by: "name", ascending: true, in: stack.context).fetchBatchSize == 20)
    }

    @Test func aRequestForAClassWithoutEntityFailsWhenRun() throws {
        let stack = try MagicalTestStack()
        let request = NSManagedObject.mr_requestAll(in: stack.context)
        #expect(request.entityName == "NSManagedObject")
        #expect(NSManagedObject.mr_findAll(in: stack.context) == nil)
        #expect(NSManagedObject.mr_executeFetchRequest(request, in: stack.context) == nil)
    }
}
